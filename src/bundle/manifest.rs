//! `manifest.json`: what a bundle holds and where it came from. Written inside the archive (as
//! `<top>/manifest.json`) and beside it (`<archive stem>.manifest.json`), byte for byte the same.
//! It holds no host paths, user names or wall-clock times, so the same build gives the same bytes.

use serde::{Deserialize, Serialize};

/// Bumped when a field changes meaning.
pub(crate) const MANIFEST_FORMAT: u32 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct BundleManifest {
    pub format: u32,
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
}

/// The qdl command from meta-qcom's docs/flashing.md.
pub(super) fn flash_command() -> Vec<String> {
    ["qdl", "--debug", "prog_firehose_ddr.elf", "rawprogram*.xml", "patch*.xml"]
        .map(String::from)
        .to_vec()
}

/// `SHA256SUMS` in `sha256sum` format, for `sha256sum -c` inside the unpacked folder.
pub(super) fn sha256sums(files: &[FileEntry]) -> String {
    files.iter().map(|f| format!("{}  {}\n", f.sha256, f.path)).collect()
}

/// Parses `SHA256SUMS` text into `(path, sha256)` pairs; `None` on a malformed line.
pub(super) fn parse_sha256sums(text: &str) -> Option<Vec<(String, String)>> {
    text.lines()
        .map(|line| {
            let (sum, path) = line.split_once("  ")?;
            (sum.len() == 64 && sum.bytes().all(|b| b.is_ascii_hexdigit()))
                .then(|| (path.to_string(), sum.to_string()))
        })
        .collect()
}

/// The bundle's README: what it is and the exact command that flashes it.
pub(super) fn readme(m: &BundleManifest, top: &str) -> String {
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "unknown".into());
    let verified = match (m.verify.status.as_str(), m.verify.allowed_unverified) {
        ("passed", _) => "passed `rtbuild verify`".to_string(),
        (status, true) => format!("{status}, bundled with --allow-unverified: do not ship"),
        (status, false) => status.to_string(),
    };
    let cmd = m.flash_command.join(" ");
    let serial_cmd = format!("qdl --serial=<serial> {}", m.flash_command[1..].join(" "));
    format!(
        "# {image} for {machine}\n\
         \n\
         PREEMPT_RT image built with rtbuild {version}.\n\
         \n\
         - kernel: {kver}\n\
         - kernel command line: {cmdline}\n\
         - verification: {verified}\n\
         - build time: {time}\n\
         \n\
         `manifest.json` lists every repo (url, branch, commit), the lock file, and every file with\n\
         its size and sha256. Check the files with `sha256sum -c SHA256SUMS` in this folder, or the\n\
         whole archive with `rtbuild bundle --check <archive>`.\n\
         \n\
         ## Flash\n\
         \n\
         1. Put the board in EDL mode (emergency download, USB id 05c6:9008) and connect it over USB.\n\
            Stop ModemManager if it runs (`sudo systemctl stop ModemManager`), it grabs the port.\n\
         2. Install qdl (https://github.com/linux-msm/qdl).\n\
         3. In this folder (`{top}/`), run:\n\
         \n\
         ```\n\
         {cmd}\n\
         ```\n\
         \n\
         With several boards attached, pick one by its USB serial number:\n\
         \n\
         ```\n\
         {serial_cmd}\n\
         ```\n",
        image = m.image,
        machine = m.machine,
        version = m.rtbuild_version,
        kver = opt(&m.kernel.version),
        cmdline = opt(&m.kernel.cmdline),
        time = m.build_time.as_ref().map_or("unknown".into(), |t| t.value.clone()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256sums_round_trip() {
        let files = vec![FileEntry { path: "a/b.bin".into(), size: 1, sha256: "ab".repeat(32) }];
        let text = sha256sums(&files);
        assert_eq!(text, format!("{}  a/b.bin\n", "ab".repeat(32)));
        assert_eq!(parse_sha256sums(&text).unwrap(), vec![("a/b.bin".into(), "ab".repeat(32))]);
        assert!(parse_sha256sums("nonsense\n").is_none());
    }
}
