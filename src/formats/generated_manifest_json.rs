//! `rtbuild-manifest.json`: which files rtbuild generated in an output folder, with their
//! sha256, so the next `generate` tells its own files from hand edits.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Versioned;

/// The schema this rtbuild writes.
pub(crate) const SCHEMA: u32 = 1;
/// The manifest's file name inside the output folder.
pub(crate) const FILE: &str = "rtbuild-manifest.json";

/// `Default` is no manifest at all (an empty generator): it equals no manifest rtbuild wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GeneratedManifest {
    /// Manifests written before the field existed have none: schema 1.
    #[serde(default = "super::first_schema")]
    schema: u32,
    generator: String,
    files: BTreeMap<PathBuf, String>,
}

impl Versioned for GeneratedManifest {
    const FILE: &'static str = FILE;
    const SCHEMA: u32 = SCHEMA;
}

impl GeneratedManifest {
    /// The manifest of the generated `files` (relative path → sha256).
    pub(crate) fn new(files: BTreeMap<PathBuf, String>) -> GeneratedManifest {
        GeneratedManifest { schema: SCHEMA, generator: "rtbuild".to_string(), files }
    }

    /// Reads a manifest, checking its schema.
    pub(crate) fn parse(bytes: &[u8]) -> Result<GeneratedManifest, super::FormatError> {
        let value: serde_json::Value = serde_json::from_slice(bytes)?;
        super::check_schema::<GeneratedManifest>(&value)?;
        Ok(serde_json::from_value(value)?)
    }

    pub(crate) fn hash_of(&self, relative: &Path) -> Option<&str> {
        self.files.get(relative).map(String::as_str)
    }

    pub(crate) fn files(&self) -> impl Iterator<Item = (&Path, &str)> {
        self.files.iter().map(|(p, h)| (p.as_path(), h.as_str()))
    }

    pub(crate) fn to_json(&self) -> String {
        super::to_json(self).unwrap_or_default()
    }
}
