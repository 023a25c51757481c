//! A bundle's `manifest.json` (defined in [`crate::formats::bundle_manifest_json`]): the flash
//! command it records, `SHA256SUMS`, and the README made from it.

pub(crate) use crate::formats::bundle_manifest_json::{
    BuildTime, BundleManifest, FileEntry, KernelInfo, LockRecord, ReleaseRecord, RepoRecord,
    SCHEMA as MANIFEST_SCHEMA, VerifyRecord,
};

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
