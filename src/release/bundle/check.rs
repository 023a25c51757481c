//! [`check`]: re-read a bundle and name every file that is missing, extra or changed against
//! its manifest and `SHA256SUMS`, and a manifest beside the archive that differs from the one
//! inside.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::archive;
use super::manifest::{BundleManifest, parse_sha256sums};
use super::{BundleError, MANIFEST_FILE, SUMS_FILE, manifest_beside};

/// One thing wrong with a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct CheckProblem {
    /// `missing`, `extra`, `changed`, `manifest`, `sha256sums` or `archive`.
    pub kind: &'static str,
    pub path: String,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct BundleCheck {
    pub archive: PathBuf,
    pub passed: bool,
    /// Every regular file in the archive: those the manifest lists, the manifest itself and
    /// `SHA256SUMS`.
    pub files: usize,
    /// The files the manifest lists (what `rtbuild bundle` counts in its `Bundled` line);
    /// 0 without a readable manifest.
    pub listed: usize,
    pub problems: Vec<CheckProblem>,
    /// Unpatched (VEX `affected`) CVEs by CVSS severity, when the bundle carries a VEX.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unpatched_cves: Option<std::collections::BTreeMap<String, usize>>,
}

/// Checks the archive at `path`. An unreadable or corrupt archive is a failed check, not an error;
/// only a missing file is an error.
pub(crate) fn check(path: &Path) -> Result<BundleCheck, BundleError> {
    use crate::files::input::{self, InputError};
    match input::check_file(path) {
        Ok(()) => {}
        Err(InputError::Folder { .. }) => {
            let message =
                "it is a folder; pass the .tar.zst (or .tar.gz) archive `rtbuild bundle` wrote";
            return Err(BundleError::NotABundle {
                path: path.to_path_buf(),
                message: message.into(),
            });
        }
        Err(InputError::Missing { .. }) => {
            let message = "no such file".to_string();
            return Err(BundleError::NotABundle { path: path.to_path_buf(), message });
        }
        Err(other) => return Err(BundleError::Input(other)),
    }
    let mut problems = Vec::new();
    let mut unpatched = None;
    let mut listed_count = 0;
    let mut problem = |kind, path: &str, detail: String| {
        problems.push(CheckProblem { kind, path: path.to_string(), detail })
    };
    let keep = |name: &str| {
        if [MANIFEST_FILE, SUMS_FILE].iter().any(|k| name.ends_with(&format!("/{k}"))) {
            Some(crate::files::limits::MAX_KEPT)
        } else {
            super::release_check::keeps(name).then_some(crate::files::limits::MAX_KEPT_RELEASE)
        }
    };
    let read = match archive::read(path, &keep) {
        Ok(read) => read,
        Err(
            refused @ (BundleError::MemberTooBig { .. }
            | BundleError::TooBig { .. }
            | BundleError::Input(_)),
        ) => {
            return Err(refused);
        }
        Err(e) => {
            problem("archive", "", e.to_string());
            return Ok(done(path, 0, problems));
        }
    };
    let tops: Vec<&str> = read
        .files
        .keys()
        .chain(&read.dirs)
        .chain(&read.others)
        .filter_map(|p| p.split('/').next())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let [top] = tops.as_slice() else {
        // Names from the archive: each escaped and cut, the first ten.
        let shown: Vec<String> = tops.iter().take(10).map(|t| crate::text::shown(t)).collect();
        let more =
            if tops.len() > 10 { format!(" and {} more", tops.len() - 10) } else { String::new() };
        problem(
            "archive",
            "",
            format!("expected one top folder, found {}{more}", shown.join(", ")),
        );
        return Ok(done(path, read.files.len(), problems));
    };
    let prefix = format!("{top}/");
    for other in &read.others {
        problem("extra", other.strip_prefix(&prefix).unwrap_or(other), "not a regular file".into());
    }
    let files: BTreeMap<&str, &archive::ReadEntry> =
        read.files.iter().map(|(k, v)| (k.strip_prefix(&prefix).unwrap_or(k), v)).collect();

    let manifest_bytes = files.get(MANIFEST_FILE).and_then(|e| e.bytes.clone());
    let manifest: Option<BundleManifest> =
        manifest_bytes.as_ref().and_then(|b| BundleManifest::parse(b).ok());
    match (&manifest_bytes, &manifest) {
        (None, _) => problem("missing", MANIFEST_FILE, "the bundle has no manifest".into()),
        (Some(_), None) => {
            problem("manifest", MANIFEST_FILE, "not a readable rtbuild manifest".into())
        }
        _ => {}
    }
    if let Some(m) = &manifest {
        let want_top = format!("{}-{}", m.image, m.machine);
        if *top != want_top {
            problem("manifest", top, format!("top folder should be {want_top}/ for this manifest"));
        }
        let listed: BTreeMap<&str, _> = m.files.iter().map(|f| (f.path.as_str(), f)).collect();
        for (name, entry) in &listed {
            match files.get(name) {
                None => {
                    problem("missing", name, "listed in the manifest, not in the archive".into())
                }
                Some(got) if got.size != entry.size || got.sha256 != entry.sha256 => problem(
                    "changed",
                    name,
                    format!(
                        "sha256 {} (manifest says {}), {} bytes",
                        got.sha256, entry.sha256, got.size
                    ),
                ),
                Some(_) => {}
            }
        }
        for name in files.keys() {
            if !listed.contains_key(name) && *name != MANIFEST_FILE && *name != SUMS_FILE {
                problem("extra", name, "in the archive, not in the manifest".into());
            }
        }
        let release = super::release_check::check(m, &files);
        for found in release.problems {
            problem(found.kind, &found.path, found.detail);
        }
        unpatched = release.unpatched;
        listed_count = m.files.len();
        // The copy beside the archive is optional; one that is there but cannot be read (a
        // FIFO, `/dev/zero`, too big) is a failed check, never a match.
        let beside = manifest_beside(path);
        if let Some(inside) = &manifest_bytes
            && beside.symlink_metadata().is_ok()
        {
            let name = beside.display().to_string();
            match input::read(&beside, crate::files::limits::MAX_KEPT) {
                Ok(bytes) if bytes == *inside => {}
                Ok(_) => problem(
                    "manifest",
                    &name,
                    "differs from the manifest inside the archive".into(),
                ),
                Err(err) => problem("manifest", &name, err.to_string()),
            }
        }
    }
    match files.get(SUMS_FILE).and_then(|e| e.bytes.as_deref()) {
        None => problem("missing", SUMS_FILE, "the bundle has no SHA256SUMS".into()),
        Some(text) => match parse_sha256sums(&String::from_utf8_lossy(text)) {
            None => problem("sha256sums", SUMS_FILE, "malformed line".into()),
            Some(sums) => {
                let sums: BTreeMap<String, String> = sums.into_iter().collect();
                for (name, sum) in &sums {
                    if let Some(got) = files.get(name.as_str())
                        && got.sha256 != *sum
                    {
                        problem(
                            "sha256sums",
                            name,
                            format!("SHA256SUMS says {sum}, file is {}", got.sha256),
                        );
                    }
                }
                for name in files.keys() {
                    if *name != SUMS_FILE && !sums.contains_key(*name) {
                        problem("sha256sums", name, "not listed in SHA256SUMS".into());
                    }
                }
            }
        },
    }
    let mut report = done(path, files.len(), problems);
    report.unpatched_cves = unpatched;
    report.listed = listed_count;
    Ok(report)
}

fn done(path: &Path, files: usize, mut problems: Vec<CheckProblem>) -> BundleCheck {
    // One line per file: a changed file also fails SHA256SUMS, say it once.
    let mut seen = std::collections::BTreeSet::new();
    problems.retain(|p| p.path.is_empty() || seen.insert(p.path.clone()));
    BundleCheck {
        archive: path.to_path_buf(),
        passed: problems.is_empty(),
        files,
        listed: 0,
        problems,
        unpatched_cves: None,
    }
}
