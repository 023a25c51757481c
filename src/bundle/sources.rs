//! What a bundle records about where it came from: the repos checked out under the kas work
//! folder (git2), the lock file beside the kas file, the verify report, and the kernel config.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::BundleError;
use super::manifest::{LockRecord, RepoRecord};
use crate::lock::{Checkout, LockFile, lock_path_for};

/// The local repo's name in the generated kas file (the folder holding it).
pub const LOCAL_REPO: &str = "rtbuild";

/// The verify result a bundle needs, read loosely from `rtbuild verify --json` output
/// (`{"passed": bool, "reports": [{"checks": [...]}]}`) or any JSON with a top-level `passed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerifySummary {
    pub passed: bool,
    /// The checks as the report gave them (kept as-is in the manifest).
    #[serde(default)]
    pub checks: serde_json::Value,
    /// sha256 of the kernel `.config`, when the report carries it.
    #[serde(default)]
    pub config_sha256: Option<String>,
    #[serde(default)]
    pub kernel_version: Option<String>,
    #[serde(default)]
    pub cmdline: Option<String>,
}

impl VerifySummary {
    /// Reads a verify report; unknown fields are ignored.
    pub fn read(path: &Path) -> Result<VerifySummary, BundleError> {
        let bad = |message: String| BundleError::VerifyReport { path: path.to_path_buf(), message };
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        VerifySummary::from_json(&doc).ok_or_else(|| bad("no boolean `passed` field".into()))
    }

    pub fn from_json(doc: &serde_json::Value) -> Option<VerifySummary> {
        let passed = doc.get("passed")?.as_bool()?;
        // A fact at the top level, else from the first report that carries it (`rtbuild
        // verify --json` puts it at the top only when every report agrees).
        let reports = doc.get("reports").and_then(|r| r.as_array());
        let text = |key: &str| {
            let in_report = || reports?.iter().find_map(|r| r.get(key)?.as_str());
            doc.get(key).and_then(|v| v.as_str()).or_else(in_report).map(str::to_string)
        };
        let checks = match (doc.get("checks"), doc.get("reports")) {
            (Some(checks), _) => checks.clone(),
            (None, Some(serde_json::Value::Array(reports))) => serde_json::Value::Array(
                reports
                    .iter()
                    .filter_map(|r| r.get("checks").and_then(|c| c.as_array()))
                    .flatten()
                    .cloned()
                    .collect(),
            ),
            _ => serde_json::Value::Array(Vec::new()),
        };
        Some(VerifySummary {
            passed,
            checks,
            config_sha256: text("config_sha256"),
            kernel_version: text("kernel_version"),
            cmdline: text("cmdline"),
        })
    }

    /// The names of the failed checks, for messages.
    pub fn failed_checks(&self) -> Vec<String> {
        self.checks
            .as_array()
            .map(|checks| {
                checks
                    .iter()
                    .filter(|c| {
                        c.get("status").and_then(|s| s.as_str()) == Some("fail")
                            || c.get("passed").and_then(|p| p.as_bool()) == Some(false)
                    })
                    .filter_map(|c| {
                        c.get("check")
                            .or(c.get("name"))
                            .and_then(|n| n.as_str())
                            .map(str::to_string)
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Every repo of the build: the lock's repos and every git checkout under `work_dir`, plus the
/// local repo holding the kas file when it is in git. Sorted by name.
pub fn repos(work_dir: &Path, kas_file: Option<&Path>) -> Vec<RepoRecord> {
    let mut names: Vec<String> = Vec::new();
    if let Some(lock) = kas_file.and_then(|k| LockFile::read(&lock_path_for(k)).ok()) {
        names.extend(lock.repos.keys().cloned());
    }
    if let Ok(entries) = std::fs::read_dir(work_dir) {
        names.extend(
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().join(".git").exists())
                .filter_map(|e| e.file_name().into_string().ok()),
        );
    }
    names.sort();
    names.dedup();
    let mut out: Vec<RepoRecord> = names
        .iter()
        .filter_map(|name| Checkout::open(name, &work_dir.join(name)).ok().flatten())
        .map(record)
        .collect();
    if let Some(local) = kas_file.and_then(local_repo)
        && !out.iter().any(|r| r.name == LOCAL_REPO)
    {
        out.push(local);
        out.sort_by(|a, b| a.name.cmp(&b.name));
    }
    out
}

fn record(c: Checkout) -> RepoRecord {
    RepoRecord {
        name: c.name,
        url: c.url,
        branch: c.branch,
        commit: c.commit.as_str().to_string(),
        dirty: c.dirty,
    }
}

/// The git work tree holding the kas file, recorded as the `rtbuild` repo.
fn local_repo(kas_file: &Path) -> Option<RepoRecord> {
    let dir = kas_file.parent()?;
    let repo = git2::Repository::discover(dir).ok()?;
    let root = repo.workdir()?.to_path_buf();
    let checkout = Checkout::open(LOCAL_REPO, &root).ok().flatten()?;
    Some(record(checkout))
}

/// The lock file beside the kas file, verbatim.
pub fn lock(kas_file: Option<&Path>) -> Option<LockRecord> {
    let path = lock_path_for(kas_file?);
    let content = std::fs::read_to_string(&path).ok()?;
    let file = path.file_name()?.to_string_lossy().into_owned();
    Some(LockRecord { file, content })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_rtbuild_verify_json_shape() {
        let doc = serde_json::json!({"passed": false, "reports": [
            {"source": "b", "kind": "build folder", "passed": false, "checks": [
                {"check": "CONFIG_PREEMPT_RT", "status": "fail", "expected": "y", "found": "not set", "where": ".config"},
                {"check": "package rt-tests", "status": "pass", "expected": "installed", "found": "installed", "where": "m"}]}]});
        let summary = VerifySummary::from_json(&doc).unwrap();
        assert!(!summary.passed);
        assert_eq!(summary.checks.as_array().unwrap().len(), 2);
        assert_eq!(summary.failed_checks(), ["CONFIG_PREEMPT_RT"]);
        assert_eq!(summary.config_sha256, None);
        let doc = serde_json::json!({"passed": true, "config_sha256": "top", "reports": [
            {"kernel_version": "#1 SMP PREEMPT_RT", "config_sha256": "inner", "checks": []},
            {"cmdline": "isolcpus=2-3", "checks": []}]});
        let summary = VerifySummary::from_json(&doc).unwrap();
        assert_eq!(summary.config_sha256.as_deref(), Some("top"));
        assert_eq!(summary.kernel_version.as_deref(), Some("#1 SMP PREEMPT_RT"));
        assert_eq!(summary.cmdline.as_deref(), Some("isolcpus=2-3"));
        assert!(VerifySummary::from_json(&serde_json::json!({"ok": true})).is_none());
    }
}
