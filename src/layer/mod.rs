//! What `generate` writes: the kas file over meta-qcom's own `ci/*.yml`, its includes, and the
//! layer with the kernel `.bbappend`, fragments and RT settings. [`render`] turns a plan into a
//! tree of files in memory (`crate::files::tree`) from the [`templates`] (and [`kas_yaml`] for
//! every kas file rtbuild writes); [`generate`] places that tree on disk with the atomic writer.

pub(crate) mod generate;
pub(crate) mod render;
