//! Names of files in the generated layer that several stages must agree on: `plan` refuses a
//! user fragment that would clash with them, `render` and `tune` write them.

/// rtbuild's own kernel fragment in the layer.
pub(crate) const RT_FRAGMENT_NAME: &str = "rtbuild-rt.cfg";

/// The boot-time tuning recipe, also put in `IMAGE_INSTALL`.
pub(crate) const TUNE_RECIPE_NAME: &str = "rtbuild-tune";
