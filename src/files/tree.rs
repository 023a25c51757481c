//! A generated file tree, held in memory: relative path → bytes, in a stable order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Files produced by [`crate::layer::render`], keyed by their path relative to the output folder.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Tree {
    files: BTreeMap<PathBuf, Vec<u8>>,
}

impl Tree {
    pub(crate) fn new() -> Tree {
        Tree::default()
    }

    /// Adds a file. `path` must be relative and must not contain `..`.
    pub(crate) fn insert(&mut self, path: impl Into<PathBuf>, contents: impl Into<Vec<u8>>) {
        let path = path.into();
        debug_assert!(path.is_relative() && !path.components().any(|c| c.as_os_str() == ".."));
        self.files.insert(path, contents.into());
    }

    pub(crate) fn get(&self, path: impl AsRef<Path>) -> Option<&[u8]> {
        self.files.get(path.as_ref()).map(Vec::as_slice)
    }

    /// The text of a file, for tests and display.
    #[cfg(test)]
    pub(crate) fn text(&self, path: impl AsRef<Path>) -> Option<&str> {
        self.get(path).and_then(|b| std::str::from_utf8(b).ok())
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&Path, &[u8])> {
        self.files.iter().map(|(p, b)| (p.as_path(), b.as_slice()))
    }
}
