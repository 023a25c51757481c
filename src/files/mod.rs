//! Files rtbuild is given or writes. Every file it reads may be hostile: [`input`] is the one
//! opener (no FIFO, device or symlink out of the tree; bounded reads). Every path it writes may
//! be a device: [`output`] checks a path before anything is written, and [`write`] replaces
//! files atomically, only when they change; a generated [`tree`] is what it writes in one go.
//! [`digest`] hashes, [`paths`] names the default folders.

pub(crate) mod digest;
pub(crate) mod document;
#[cfg(test)]
mod hostile_input_tests;
pub(crate) mod input;
pub(crate) mod limits;
pub(crate) mod output;
pub(crate) mod paths;
pub(crate) mod tree;
pub(crate) mod write;
