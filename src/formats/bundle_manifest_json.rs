//! A bundle's `manifest.json`: what the bundle holds and where it came from. Written inside the
//! archive (as `<top>/manifest.json`) and beside it (`<archive stem>.manifest.json`), byte for
//! byte the same. It holds no host paths, user names or wall-clock times, so the same build gives
//! the same bytes.

use serde::{Deserialize, Serialize};

use super::Versioned;

/// The schema this rtbuild writes (bumped when a field changes meaning).
pub(crate) const SCHEMA: u32 = 1;
/// The manifest's name inside the bundle's top folder.
pub(crate) const FILE: &str = "manifest.json";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct BundleManifest {
    /// The schema number; bundles made before the field was renamed call it `format`.
    #[serde(alias = "format")]
    pub schema: u32,
    pub rtbuild_version: String,
    pub machine: String,
    pub image: String,
    /// The timestamped qcomflash folder the files came from.
    pub qcomflash: String,
    pub build_time: Option<BuildTime>,
    pub kernel: KernelInfo,
    pub verify: VerifyRecord,
    pub repos: Vec<RepoRecord>,
    pub lock: Option<LockRecord>,
    /// The command that flashes the unpacked bundle, run inside its folder.
    pub flash_command: Vec<String>,
    /// Every file of the bundle except `manifest.json` and `SHA256SUMS`, sorted by path.
    pub files: Vec<FileEntry>,
    /// The release evidence under `release/` (SBOM, VEX, provenance, resolved configuration,
    /// lock, plan, verify verdict, measurement), each also in `files`, sorted by path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub release: Vec<ReleaseRecord>,
    /// The key that signed the release provenance (`bundle --signing-key`), when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_key: Option<SigningKeyRecord>,
}

/// The public half of `bundle --signing-key`: what `bundle --verify --key` compares with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SigningKeyRecord {
    /// `ed25519`.
    pub algorithm: String,
    /// sha256 of the public key's DER (SubjectPublicKeyInfo), hex; the envelope's `keyid`.
    pub keyid: String,
    /// The public key, PEM.
    pub public_key: String,
}

/// One file of the release evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ReleaseRecord {
    /// `sbom`, `vex`, `cve-summary`, `provenance`, `provenance-subject`, `resolved-config`,
    /// `lock`, `plan`, `verify`, `measurement`.
    pub role: String,
    /// Path inside the bundle's top folder.
    pub path: String,
    pub size: u64,
    pub sha256: String,
    /// The name the provenance statement gives this file (a kas artifact), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct BuildTime {
    /// `YYYY-MM-DDThh:mm:ssZ`, UTC, from BitBake's DATETIME or SOURCE_DATE_EPOCH.
    pub value: String,
    /// `qcomflash folder name` or `SOURCE_DATE_EPOCH`.
    pub source: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct KernelInfo {
    pub version: Option<String>,
    pub cmdline: Option<String>,
    /// Where `cmdline` came from (`rtbuild-plan.json`, the verify report, …).
    pub cmdline_source: Option<String>,
    /// sha256 of the kernel `.config` the image was built with.
    pub config_sha256: Option<String>,
}

/// The verify verdict recorded in the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct VerifyRecord {
    /// `passed`, `failed` or `unverified`.
    pub status: String,
    /// The bundle was made with `--allow-unverified`.
    pub allowed_unverified: bool,
    /// The checks as the verify report gave them.
    pub checks: serde_json::Value,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RepoRecord {
    pub name: String,
    pub url: Option<String>,
    pub branch: Option<String>,
    pub commit: String,
    pub dirty: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LockRecord {
    /// The lock file's name (beside the kas file).
    pub file: String,
    pub content: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FileEntry {
    /// Path inside the bundle's top folder, `/`-separated.
    pub path: String,
    pub size: u64,
    pub sha256: String,
}

impl BundleManifest {
    pub(crate) fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Reads a manifest, checking its schema.
    pub(crate) fn parse(bytes: &[u8]) -> Result<BundleManifest, super::FormatError> {
        let value: serde_json::Value = serde_json::from_slice(bytes)?;
        super::check_schema::<BundleManifest>(&value)?;
        Ok(serde_json::from_value(value)?)
    }
}

impl Versioned for BundleManifest {
    const FILE: &'static str = FILE;
    const SCHEMA: u32 = SCHEMA;
}
