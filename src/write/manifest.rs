//! [`GeneratedManifest`]: which files rtbuild generated in an output folder, with their sha256.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::tree::Tree;

/// The manifest's file name inside the output folder.
pub(crate) const MANIFEST_FILE: &str = "rtbuild-manifest.json";

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GeneratedManifest {
    generator: String,
    files: BTreeMap<PathBuf, String>,
}

pub(super) use crate::digest::sha256_hex as sha256;

impl GeneratedManifest {
    /// The manifest of `tree`.
    pub(crate) fn of(tree: &Tree) -> GeneratedManifest {
        GeneratedManifest {
            generator: "rtbuild".to_string(),
            files: tree.iter().map(|(p, b)| (p.to_path_buf(), sha256(b))).collect(),
        }
    }

    /// Reads a manifest; a missing file is an empty manifest.
    pub(crate) fn load(path: &Path) -> Result<GeneratedManifest, String> {
        match super::current(path) {
            Ok(Some(bytes)) => serde_json::from_slice(&bytes).map_err(|e| e.to_string()),
            Ok(None) => Ok(GeneratedManifest::default()),
            Err(e) => Err(e.to_string()),
        }
    }

    pub(crate) fn hash_of(&self, relative: &Path) -> Option<&str> {
        self.files.get(relative).map(String::as_str)
    }

    pub(crate) fn files(&self) -> impl Iterator<Item = (&Path, &str)> {
        self.files.iter().map(|(p, h)| (p.as_path(), h.as_str()))
    }

    pub(crate) fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}
