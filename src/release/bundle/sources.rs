//! What a bundle records about where it came from: the repos checked out under the kas work
//! folder (git2), the lock file beside the kas file, the verify report, and the kernel config.

use std::path::Path;

use super::BundleError;
use super::manifest::{LockRecord, RepoRecord};
use crate::formats::verify_json::{Check, CheckStatus, VerifyFile, VerifyReport};
use crate::release::lock::{Checkout, LockFile, lock_path_for};

/// The local repo's name in the generated kas file (the folder holding it).
pub(super) const LOCAL_REPO: &str = "rtbuild";

/// The verify result a bundle records, from `rtbuild verify --json` output or the
/// `verify.json` that `rtbuild image` keeps (one type: [`VerifyFile`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VerifySummary {
    pub passed: bool,
    /// Every check of every report.
    pub checks: Vec<Check>,
    /// sha256 of the kernel `.config`, when the report carries it.
    pub config_sha256: Option<String>,
    pub kernel_version: Option<String>,
    pub cmdline: Option<String>,
}

impl VerifySummary {
    /// Reads a verify report, checking its schema.
    pub(crate) fn read(path: &Path) -> Result<VerifySummary, BundleError> {
        let file = crate::files::document::load(path, VerifyFile::parse)
            .map_err(|cause| BundleError::VerifyReport { path: path.to_path_buf(), cause })?;
        Ok(VerifySummary::from_file(&file))
    }

    pub(crate) fn from_file(file: &VerifyFile) -> VerifySummary {
        // A fact at the top level, else from the first report that carries it (`rtbuild
        // verify --json` puts it at the top only when every report agrees).
        let fact = |top: &Option<String>, field: fn(&VerifyReport) -> Option<&str>| {
            top.clone().or_else(|| file.reports.iter().find_map(field).map(str::to_string))
        };
        VerifySummary {
            passed: file.passed,
            checks: file.checks().cloned().collect(),
            config_sha256: fact(&file.config_sha256, |r| r.config_sha256.as_deref()),
            kernel_version: fact(&file.kernel_version, |r| r.kernel_version.as_deref()),
            cmdline: fact(&file.cmdline, |r| r.cmdline.as_deref()),
        }
    }

    /// The names of the failed checks, for messages.
    pub(crate) fn failed_checks(&self) -> Vec<String> {
        self.checks
            .iter()
            .filter(|c| c.status == CheckStatus::Fail)
            .map(|c| c.check.clone())
            .collect()
    }
}

/// Every repo of the build: the lock's repos and every git checkout under `work_dir`, plus the
/// local repo holding the kas file when it is in git. Sorted by name.
pub(super) fn repos(work_dir: &Path, kas_file: Option<&Path>) -> Vec<RepoRecord> {
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
pub(super) fn lock(kas_file: Option<&Path>) -> Option<LockRecord> {
    let path = lock_path_for(kas_file?);
    let content =
        crate::files::input::read_to_string(&path, crate::files::input::TEXT_LIMIT).ok()?;
    let file = path.file_name()?.to_string_lossy().into_owned();
    Some(LockRecord { file, content })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summarise(doc: serde_json::Value) -> VerifySummary {
        VerifySummary::from_file(&serde_json::from_value(doc).unwrap())
    }

    #[test]
    fn reads_rtbuild_verify_json_shape() {
        let doc = serde_json::json!({"passed": false, "reports": [
            {"source": "b", "kind": "build folder", "passed": false, "checks": [
                {"check": "CONFIG_PREEMPT_RT", "status": "fail", "expected": "y", "found": "not set", "where": ".config"},
                {"check": "package rt-tests", "status": "pass", "expected": "installed", "found": "installed", "where": "m"}]}]});
        let summary = summarise(doc);
        assert!(!summary.passed);
        assert_eq!(summary.checks.len(), 2);
        assert_eq!(summary.checks[0].from, ".config");
        assert_eq!(summary.failed_checks(), ["CONFIG_PREEMPT_RT"]);
        assert_eq!(summary.config_sha256, None);
        let doc = serde_json::json!({"passed": true, "config_sha256": "top", "reports": [
            {"kernel_version": "#1 SMP PREEMPT_RT", "config_sha256": "inner", "checks": []},
            {"cmdline": "isolcpus=2-3", "checks": []}]});
        let summary = summarise(doc);
        assert_eq!(summary.config_sha256.as_deref(), Some("top"));
        assert_eq!(summary.kernel_version.as_deref(), Some("#1 SMP PREEMPT_RT"));
        assert_eq!(summary.cmdline.as_deref(), Some("isolcpus=2-3"));
    }

    #[test]
    fn a_verify_report_without_passed_or_from_a_newer_rtbuild_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.json");
        let cases = [
            (r#"{"ok": true}"#, "no boolean `passed` field"),
            (r#"{"passed": "yes"}"#, "no boolean `passed` field"),
            (
                r#"{"schema": 9, "passed": true}"#,
                "`schema` is 9, but this rtbuild reads verify.json up to schema 1; upgrade rtbuild",
            ),
            (
                r#"{"passed": true, "reports": [{"checks": [{"status": "pass"}]}]}"#,
                "missing field `check`",
            ),
        ];
        for (text, want) in cases {
            crate::files::write::fixture(&path, text).unwrap();
            let err = VerifySummary::read(&path).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: {err}");
        }
    }
}
