//! Reading and making the [`GeneratedManifest`] of an output folder (the format is defined in
//! [`crate::formats::generated_manifest_json`]).

use std::path::Path;

pub(crate) use crate::formats::generated_manifest_json::{
    FILE as MANIFEST_FILE, GeneratedManifest,
};
use crate::tree::Tree;

pub(super) use crate::digest::sha256_hex as sha256;

/// The manifest of `tree`.
pub(crate) fn of(tree: &Tree) -> GeneratedManifest {
    GeneratedManifest::new(tree.iter().map(|(p, b)| (p.to_path_buf(), sha256(b))).collect())
}

/// Reads the manifest at `path`; a missing file is an empty manifest.
pub(crate) fn load(path: &Path) -> Result<GeneratedManifest, String> {
    match super::current(path) {
        Ok(Some(bytes)) => GeneratedManifest::parse(&bytes).map_err(|e| e.to_string()),
        Ok(None) => Ok(GeneratedManifest::default()),
        Err(e) => Err(e.to_string()),
    }
}
