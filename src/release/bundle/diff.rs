//! [`diff`]: two release bundles compared, from what each carries: the manifest's repos (and
//! lock pins), the SBOM's kernel config and packages, the VEX's unpatched CVEs, the kernel
//! command line, and the measurement's per-scenario latency.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::archive::{self, ReadEntry};
use super::manifest::BundleManifest;
use super::release::{ROLE_MEASUREMENT, ROLE_SBOM, ROLE_VEX};
use super::{BundleError, MANIFEST_FILE};
use crate::formats::bundle_diff_json::{self, BundleDiff, Change, CveChange, LatencyChange};
use crate::formats::spdx_json::SpdxFile;

/// What one bundle says, read once.
struct Side {
    manifest: BundleManifest,
    files: BTreeMap<String, ReadEntry>,
}

impl Side {
    fn read(path: &Path) -> Result<Side, BundleError> {
        if !path.is_file() {
            return Err(BundleError::NotABundle {
                path: path.to_path_buf(),
                message: "no such file".into(),
            });
        }
        let keep = |name: &str| {
            if name.ends_with(&format!("/{MANIFEST_FILE}")) {
                Some(crate::files::limits::MAX_KEPT)
            } else {
                super::release_check::keeps(name).then_some(crate::files::limits::MAX_KEPT_RELEASE)
            }
        };
        let read = archive::read(path, &keep)?;
        let files: BTreeMap<String, ReadEntry> = read
            .files
            .into_iter()
            .map(|(k, v)| (k.split_once('/').map_or(k.clone(), |(_, rest)| rest.to_string()), v))
            .collect();
        let manifest = files
            .get(MANIFEST_FILE)
            .and_then(|e| e.bytes.as_deref())
            .and_then(|b| BundleManifest::parse(b).ok())
            .ok_or_else(|| BundleError::NotABundle {
                path: path.to_path_buf(),
                message: "it has no readable manifest.json".into(),
            })?;
        Ok(Side { manifest, files })
    }

    fn document(&self, role: &str) -> Option<SpdxFile> {
        let record = self.manifest.release.iter().find(|r| r.role == role)?;
        SpdxFile::parse(self.files.get(&record.path)?.bytes.as_deref()?).ok()
    }

    fn release_bytes(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path)?.bytes.as_deref()
    }
}

/// Compares the bundles at `old` and `new`.
pub(crate) fn diff(old: &Path, new: &Path) -> Result<BundleDiff, BundleError> {
    let (a, b) = (Side::read(old)?, Side::read(new)?);
    let repos = |s: &Side| -> BTreeMap<String, String> {
        s.manifest.repos.iter().map(|r| (r.name.clone(), r.commit.clone())).collect()
    };
    let config = |s: &Side| -> Option<BTreeMap<String, String>> {
        let text = s.document(ROLE_SBOM)?.kernel_config()?;
        Some(
            text.lines()
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    };
    let packages = |s: &Side| s.document(ROLE_SBOM).map(|d| d.packages());
    let unpatched = |s: &Side| -> Option<BTreeSet<String>> {
        let doc = s.document(ROLE_VEX)?;
        Some(doc.vex().into_iter().filter(|e| e.status == "affected").map(|e| e.cve).collect())
    };
    let args = |s: &Side| -> BTreeMap<String, String> {
        let line = s.manifest.kernel.cmdline.clone().unwrap_or_default();
        line.split_whitespace().map(|a| (a.to_string(), a.to_string())).collect()
    };
    let both = |x: Option<BTreeMap<String, String>>, y: Option<BTreeMap<String, String>>| {
        Some(changes(&x?, &y?))
    };
    let cves = match (unpatched(&a), unpatched(&b)) {
        (Some(x), Some(y)) => Some(CveChange {
            fixed: x.difference(&y).cloned().collect(),
            new: y.difference(&x).cloned().collect(),
        }),
        _ => None,
    };
    Ok(BundleDiff {
        schema: bundle_diff_json::SCHEMA,
        old: old.display().to_string(),
        new: new.display().to_string(),
        repos: changes(&repos(&a), &repos(&b)),
        kernel_config: both(config(&a), config(&b)),
        packages: both(packages(&a), packages(&b)),
        cves,
        cmdline: changes(&args(&a), &args(&b)),
        latency: latency(&a, &b),
    })
}

/// Every key added, removed or with another value.
fn changes(old: &BTreeMap<String, String>, new: &BTreeMap<String, String>) -> Vec<Change> {
    let names: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    names
        .into_iter()
        .filter(|n| old.get(*n) != new.get(*n))
        .map(|n| Change { name: n.clone(), old: old.get(n).cloned(), new: new.get(n).cloned() })
        .collect()
}

/// Per-scenario max and p99.9 from each measurement's `report.json` (else `run.json`'s max).
fn latency(a: &Side, b: &Side) -> Option<Vec<LatencyChange>> {
    let (x, y) = (measured(a)?, measured(b)?);
    let names: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
    Some(
        names
            .into_iter()
            .map(|n| {
                let (o, w) =
                    (x.get(n).copied().unwrap_or_default(), y.get(n).copied().unwrap_or_default());
                LatencyChange {
                    scenario: n.clone(),
                    old_max_us: o.0,
                    new_max_us: w.0,
                    old_p999_us: o.1,
                    new_p999_us: w.1,
                }
            })
            .collect(),
    )
}

/// A scenario's (max, p99.9), µs.
type Latency = (Option<f64>, Option<f64>);

/// Scenario → its latency.
fn measured(side: &Side) -> Option<BTreeMap<String, Latency>> {
    let path = |name: &str| {
        side.manifest
            .release
            .iter()
            .find(|r| r.role == ROLE_MEASUREMENT && r.path.ends_with(name))
            .map(|r| r.path.clone())
    };
    if let Some(report) = path("/report.json").and_then(|p| side.release_bytes(&p)) {
        let report: crate::formats::report_json::LatencyReport =
            serde_json::from_slice(report).ok()?;
        let mut out = BTreeMap::new();
        for scenario in report.inputs.iter().flat_map(|i| &i.scenarios) {
            out.insert(scenario.name.clone(), (scenario.all.max_us, scenario.all.p999_us));
        }
        return Some(out);
    }
    let run = side.release_bytes(&path("/run.json")?)?;
    let run = crate::formats::run_json::RunRecord::parse(&String::from_utf8_lossy(run)).ok()?;
    Some(
        run.scenarios
            .iter()
            .map(|s| (s.name.clone(), (s.max_us.map(|m| m as f64), None)))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_name_added_removed_and_changed_keys() {
        let old: BTreeMap<String, String> =
            [("a", "1"), ("b", "2"), ("c", "3")].map(|(k, v)| (k.into(), v.into())).into();
        let new: BTreeMap<String, String> =
            [("b", "2"), ("c", "4"), ("d", "5")].map(|(k, v)| (k.into(), v.into())).into();
        let got = changes(&old, &new);
        let shown: Vec<(String, Option<String>, Option<String>)> =
            got.into_iter().map(|c| (c.name, c.old, c.new)).collect();
        assert_eq!(
            shown,
            [
                ("a".into(), Some("1".into()), None),
                ("c".into(), Some("3".into()), Some("4".into())),
                ("d".into(), None, Some("5".into())),
            ]
        );
    }
}
