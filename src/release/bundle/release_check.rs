//! `bundle --check` on the release evidence: the lock pins every repo of the resolved kas
//! configuration (at the commit the build used), every subject of the provenance statement is
//! a file of the bundle with the same sha256, and the unpatched CVEs of the VEX by severity.
//! A changed or missing release file is already named by the manifest check.

use std::collections::BTreeMap;

use super::archive::ReadEntry;
use super::manifest::BundleManifest;
use super::release::{RELEASE_DIR, ROLE_KAS_DUMP, ROLE_LOCK, ROLE_PROVENANCE, ROLE_SBOM, ROLE_VEX};
use crate::formats::provenance_json::Statement;
use crate::formats::spdx_json::SpdxFile;

/// One problem, in [`super::check::CheckProblem`]'s terms.
pub(super) struct Found {
    pub kind: &'static str,
    pub path: String,
    pub detail: String,
}

#[derive(Default)]
pub(super) struct ReleaseCheck {
    pub problems: Vec<Found>,
    pub unpatched: Option<BTreeMap<String, usize>>,
}

/// The archive members kept in memory for these checks: the release documents, not the
/// artifacts (a qcomflash tarball is large and only its sha256 matters).
pub(super) fn keeps(name: &str) -> bool {
    name.contains(&format!("/{RELEASE_DIR}/"))
        && !name.contains(&format!("/{RELEASE_DIR}/artifacts/"))
}

/// Checks `manifest`'s release files against the archive's `files` (path inside the top
/// folder → entry).
pub(super) fn check(manifest: &BundleManifest, files: &BTreeMap<&str, &ReadEntry>) -> ReleaseCheck {
    let bytes = |p: &str| files.get(p).and_then(|e| e.bytes.as_deref());
    let sha256 = |p: &str| files.get(p).map(|e| e.sha256.as_str());
    let mut out = ReleaseCheck::default();
    let with_role = |role: &str| manifest.release.iter().find(|r| r.role == role);
    if let (Some(lock), Some(dump)) = (with_role(ROLE_LOCK), with_role(ROLE_KAS_DUMP))
        && let (Some(lock_text), Some(dump_text)) = (bytes(&lock.path), bytes(&dump.path))
    {
        out.problems.extend(lock_covers_dump(&lock.path, lock_text, dump_text));
    }
    if let Some(statement) = with_role(ROLE_PROVENANCE)
        && let Some(text) = bytes(&statement.path)
    {
        match Statement::parse(text) {
            Err(cause) => out.problems.push(Found {
                kind: "provenance",
                path: statement.path.clone(),
                detail: cause.to_string(),
            }),
            Ok(parsed) => {
                for subject in &parsed.subject {
                    let file = manifest.release.iter().find(|r| {
                        r.subject.as_deref() == Some(subject.name.as_str())
                            || r.path.rsplit('/').next() == Some(subject.name.as_str())
                    });
                    let want = subject.digest.sha256.as_deref().unwrap_or_default();
                    let detail = match file.map(|f| (f, sha256(&f.path))) {
                        None | Some((_, None)) => {
                            format!("subject {} is not a file of the bundle", subject.name)
                        }
                        Some((f, Some(got))) if got != want => format!(
                            "subject {} has sha256 {want}, but the bundle's {} has {got}",
                            subject.name, f.path
                        ),
                        Some(_) => continue,
                    };
                    out.problems.push(Found {
                        kind: "provenance",
                        path: statement.path.clone(),
                        detail,
                    });
                }
            }
        }
    }
    // The SBOM and the VEX are SPDX 3 JSON-LD (what oe-core writes and SPDX 3 tools read).
    for (role, kind) in [(ROLE_SBOM, "sbom"), (ROLE_VEX, "vex")] {
        if let Some(record) = with_role(role)
            && let Some(text) = bytes(&record.path)
            && let Some(why) = crate::formats::spdx_json::not_spdx3(text)
        {
            out.problems.push(Found {
                kind,
                path: record.path.clone(),
                detail: format!(
                    "is not SPDX 3 JSON-LD: {why}; a release carries the SPDX 3 documents oe-core and sbom-cve-check write"
                ),
            });
        }
    }
    if let Some(vex) = with_role(ROLE_VEX)
        && let Some(text) = bytes(&vex.path)
        && crate::formats::spdx_json::not_spdx3(text).is_none()
    {
        match SpdxFile::parse(text) {
            Ok(doc) => {
                let mut counts = BTreeMap::new();
                for entry in doc.vex().into_iter().filter(|e| e.status == "affected") {
                    *counts.entry(entry.severity).or_insert(0) += 1;
                }
                out.unpatched = Some(counts);
            }
            Err(e) => out.problems.push(Found {
                kind: "vex",
                path: vex.path.clone(),
                detail: format!("not an SPDX 3 document: {e}"),
            }),
        }
    }
    out
}

/// Every repo of the resolved configuration that has a URL must be pinned by the lock, at
/// the commit the configuration resolved to.
fn lock_covers_dump(lock_path: &str, lock: &[u8], dump: &[u8]) -> Vec<Found> {
    let problem = |detail: String| Found { kind: "lock", path: lock_path.to_string(), detail };
    let dump: serde_json::Value = match crate::text::yaml::from_slice(dump) {
        Ok(value) => value,
        Err(e) => return vec![problem(format!("the resolved configuration is not YAML: {e}"))],
    };
    // A lock that pins nothing (the placeholder `generate` writes) or cannot be read pins
    // none of the repos.
    let pins = crate::release::lock::LockFile::parse(
        &String::from_utf8_lossy(lock),
        std::path::Path::new(lock_path),
    )
    .map(|lock| lock.repos)
    .unwrap_or_default();
    let mut unpinned = Vec::new();
    let mut moved = Vec::new();
    if let Some(repos) = dump.get("repos").and_then(serde_json::Value::as_object) {
        for (name, repo) in repos {
            if repo.get("url").and_then(serde_json::Value::as_str).is_none() {
                continue;
            }
            let used = repo.get("commit").and_then(serde_json::Value::as_str);
            match (pins.get(name), used) {
                (None, _) => unpinned.push(name.clone()),
                (Some(pin), Some(used)) if pin.commit.as_str() != used => {
                    moved.push(format!("{name} (lock {}, build {used})", pin.commit.as_str()))
                }
                _ => {}
            }
        }
    }
    let mut found = Vec::new();
    if !unpinned.is_empty() {
        found.push(problem(format!(
            "does not pin {} of the resolved configuration; run `rtbuild lock` for this build",
            unpinned.join(", ")
        )));
    }
    if !moved.is_empty() {
        found
            .push(problem(format!("pins other commits than the build used: {}", moved.join(", "))));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const C1: &str = "0123456789abcdef0123456789abcdef01234567";
    const C2: &str = "fedcba9876543210fedcba9876543210fedcba98";

    #[test]
    fn a_lock_must_pin_every_remote_repo_of_the_dump_at_its_commit() {
        let dump = format!(
            "header:\n  version: 14\nrepos:\n  oe-core:\n    url: https://x/oe-core\n    commit: {C1}\n  \
             meta-qcom:\n    url: https://x/meta-qcom\n    commit: {C2}\n  rtbuild:\n    layers:\n      meta-rtbuild:\n"
        );
        let lock = format!(
            "header:\n  version: 14\noverrides:\n  repos:\n    oe-core:\n      commit: {C1}\n"
        );
        let found = lock_covers_dump("release/x.lock.yml", lock.as_bytes(), dump.as_bytes());
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].detail,
            "does not pin meta-qcom of the resolved configuration; run `rtbuild lock` for this build"
        );
        let lock = format!(
            "header:\n  version: 14\noverrides:\n  repos:\n    oe-core:\n      commit: {C2}\n    meta-qcom:\n      commit: {C2}\n"
        );
        let found = lock_covers_dump("l", lock.as_bytes(), dump.as_bytes());
        assert_eq!(
            found[0].detail,
            format!("pins other commits than the build used: oe-core (lock {C2}, build {C1})")
        );
        let lock = format!(
            "header:\n  version: 14\noverrides:\n  repos:\n    oe-core:\n      commit: {C1}\n    meta-qcom:\n      commit: {C2}\n"
        );
        assert!(lock_covers_dump("l", lock.as_bytes(), dump.as_bytes()).is_empty());
    }
}

#[cfg(test)]
mod provenance_tests {
    use super::*;
    use crate::release::bundle::manifest::ReleaseRecord;

    fn record(role: &str, path: &str, sha256: &str, subject: Option<&str>) -> ReleaseRecord {
        ReleaseRecord {
            role: role.into(),
            path: path.into(),
            size: 1,
            sha256: sha256.into(),
            subject: subject.map(str::to_string),
        }
    }

    #[test]
    fn a_subject_missing_from_the_bundle_or_with_another_digest_is_named() {
        let (a, b) = ("a".repeat(64), "b".repeat(64));
        let statement = format!(
            r#"{{"_type": "https://in-toto.io/Statement/v1", "predicateType": "https://slsa.dev/provenance/v1",
               "subject": [{{"name": "Image", "digest": {{"sha256": "{a}"}}}},
                           {{"name": "x.spdx.json", "digest": {{"sha256": "{a}"}}}},
                           {{"name": "gone.tar.gz", "digest": {{"sha256": "{a}"}}}}]}}"#
        );
        let manifest: BundleManifest = serde_json::from_value(serde_json::json!({
            "format": 1, "rtbuild_version": "0", "machine": "m", "image": "i", "qcomflash": "q",
            "build_time": null, "kernel": {"version": null, "cmdline": null, "cmdline_source": null, "config_sha256": null},
            "verify": {"status": "passed", "allowed_unverified": false, "checks": []},
            "repos": [], "lock": null, "flash_command": [], "files": []
        }))
        .unwrap();
        let manifest = BundleManifest {
            release: vec![
                record("provenance", "release/kas-build.provenance.json", "c", None),
                record("provenance-subject", "release/artifacts/Image", &a, Some("Image")),
                record("sbom", "release/x-1.spdx.json", &b, Some("x.spdx.json")),
            ],
            ..manifest
        };
        let entry = |sha: &str, bytes: Option<&str>| ReadEntry {
            size: 1,
            sha256: sha.into(),
            bytes: bytes.map(|b| b.as_bytes().to_vec()),
        };
        let sbom_text =
            r#"{"@context": "https://spdx.org/rdf/3.0.1/spdx-context.jsonld", "@graph": []}"#;
        let (st, img, sbom) =
            (entry("c", Some(&statement)), entry(&a, None), entry(&b, Some(sbom_text)));
        let files: BTreeMap<&str, &ReadEntry> = [
            ("release/kas-build.provenance.json", &st),
            ("release/artifacts/Image", &img),
            ("release/x-1.spdx.json", &sbom),
        ]
        .into();
        let found = check(&manifest, &files).problems;
        let details: Vec<&str> = found.iter().map(|f| f.detail.as_str()).collect();
        assert_eq!(
            details,
            [
                format!("subject x.spdx.json has sha256 {a}, but the bundle's release/x-1.spdx.json has {b}").as_str(),
                "subject gone.tar.gz is not a file of the bundle",
            ]
        );
        assert!(
            found
                .iter()
                .all(|f| f.kind == "provenance" && f.path == "release/kas-build.provenance.json")
        );
    }
}
