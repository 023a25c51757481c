//! `history add --bundle FILE`: the build a run measured, from the bundle's manifest (the
//! `.manifest.json` `rtbuild bundle` writes beside the archive, byte for byte the one inside).

use std::path::Path;

use super::HistoryError;
use crate::files::limits::MAX_MANIFEST_BYTES;
use crate::formats::history_json::RepoInput;
use crate::release::bundle::BundleManifest;

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
    // Through the one bounded opener: a FIFO, a device or a folder is refused on the open file.
    let bytes = crate::files::input::read(&manifest_path, MAX_MANIFEST_BYTES)
        .map_err(|e| bad(unreadable(&manifest_path, e)))?;
    identity(path, &bytes)
}

/// Reads FILE as [`read`] does, from `opened`, FILE already open (a manifest is read on from
/// it; an archive's manifest lies beside it and is opened).
pub(crate) fn read_opened(
    path: &Path,
    opened: Option<crate::files::input::Opened>,
) -> Result<BundleIdentity, HistoryError> {
    let Some(opened) = opened.filter(|_| !path.to_string_lossy().ends_with(".tar.zst")) else {
        return read(path);
    };
    let bytes = opened.read_all(MAX_MANIFEST_BYTES).map_err(|e| HistoryError::Bundle {
        path: path.to_path_buf(),
        message: unreadable(path, e),
    })?;
    identity(path, &bytes)
}

/// The identity of a manifest's `bytes`.
fn identity(path: &Path, bytes: &[u8]) -> Result<BundleIdentity, HistoryError> {
    let bad = |message: String| HistoryError::Bundle { path: path.to_path_buf(), message };
    let manifest = BundleManifest::parse(bytes)
        .map_err(|e| bad(format!("not an rtbuild bundle manifest ({e})")))?;
    Ok(BundleIdentity {
        digest: crate::files::digest::sha256_hex(bytes),
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

/// What is wrong with the manifest file, without a fix of its own (the bundle error adds one).
fn unreadable(path: &Path, cause: crate::files::input::InputError) -> String {
    use crate::files::input::InputError;
    let shown = crate::text::shown_path(path);
    match cause {
        InputError::Missing { .. } => format!("cannot read {shown}: no such file"),
        InputError::DanglingLink { target, .. } => format!(
            "{shown} is a symlink to {}, which does not exist",
            crate::text::shown_path(&target)
        ),
        InputError::Folder { .. } => format!("{shown} is a folder, not a regular file"),
        InputError::Special { kind, .. } => format!("{shown} is {kind}, not a regular file"),
        InputError::TooBig { limit, .. } => format!("{shown} is larger than {} MiB", limit >> 20),
        InputError::NotText { .. } => format!("{shown} is not text"),
        InputError::Unreadable { cause, .. } => format!("cannot read {shown}: {cause}"),
    }
}
