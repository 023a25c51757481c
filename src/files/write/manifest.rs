//! Reading and making the [`GeneratedManifest`] of an output folder (the format is defined in
//! [`crate::formats::generated_manifest_json`]).

use std::path::Path;

use crate::files::document::LoadError;
use crate::files::tree::Tree;
pub(crate) use crate::formats::generated_manifest_json::{
    FILE as MANIFEST_FILE, GeneratedManifest,
};

pub(super) use crate::files::digest::sha256_hex as sha256;

/// The manifest of `tree`.
pub(crate) fn of(tree: &Tree) -> GeneratedManifest {
    GeneratedManifest::new(tree.iter().map(|(p, b)| (p.to_path_buf(), sha256(b))).collect())
}

/// Reads the manifest at `path`; a missing file is an empty manifest.
pub(crate) fn load(path: &Path) -> Result<GeneratedManifest, LoadError> {
    match super::current(path)? {
        Some(bytes) => Ok(GeneratedManifest::parse(&bytes)?),
        None => Ok(GeneratedManifest::default()),
    }
}
