//! `history add --bundle FILE`: the build a run measured, from the bundle's manifest (the
//! `.manifest.json` `rtbuild bundle` writes beside the archive, byte for byte the one inside).

use std::io::Read;
use std::path::Path;

use super::HistoryError;
use crate::formats::history_json::RepoInput;
use crate::release::bundle::BundleManifest;

/// A manifest is a few kB; anything larger is not one.
const MAX_MANIFEST_BYTES: u64 = 16 << 20;

/// The build identity a bundle gives a run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BundleIdentity {
    /// sha256 of `manifest.json` (it lists every file's sha256).
    pub digest: String,
    pub lock_digest: Option<String>,
    pub kernel_config_digest: Option<String>,
    pub kernel_cmdline: Option<String>,
    pub repos: Vec<RepoInput>,
}

/// Reads FILE: a manifest, or an archive whose manifest lies beside it.
pub(crate) fn read(path: &Path) -> Result<BundleIdentity, HistoryError> {
    let bad = |message: String| HistoryError::Bundle { path: path.to_path_buf(), message };
    let manifest_path = if path.to_string_lossy().ends_with(".tar.zst") {
        crate::release::bundle::manifest_beside(path)
    } else {
        path.to_path_buf()
    };
    let meta = std::fs::metadata(&manifest_path)
        .map_err(|e| bad(format!("cannot read {}: {e}", manifest_path.display())))?;
    if !meta.is_file() {
        return Err(bad(format!("{} is not a regular file", manifest_path.display())));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(&manifest_path)
        .and_then(|f| f.take(MAX_MANIFEST_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| bad(format!("cannot read {}: {e}", manifest_path.display())))?;
    if bytes.len() as u64 > MAX_MANIFEST_BYTES {
        return Err(bad(format!("{} is larger than 16 MiB", manifest_path.display())));
    }
    let manifest = BundleManifest::parse(&bytes)
        .map_err(|e| bad(format!("not an rtbuild bundle manifest ({e})")))?;
    Ok(BundleIdentity {
        digest: crate::files::digest::sha256_hex(&bytes),
        lock_digest: manifest
            .lock
            .as_ref()
            .map(|l| crate::files::digest::sha256_hex(l.content.as_bytes())),
        kernel_config_digest: manifest.kernel.config_sha256.clone(),
        kernel_cmdline: manifest.kernel.cmdline.clone(),
        repos: manifest
            .repos
            .iter()
            .map(|r| RepoInput { name: r.name.clone(), commit: r.commit.clone() })
            .collect(),
    })
}
