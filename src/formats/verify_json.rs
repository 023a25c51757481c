//! The verify verdict: what `rtbuild verify --json` prints and `rtbuild image` keeps as
//! `verify.json` beside the generated files, and what `rtbuild bundle --verify-report` reads
//! back. One row per check (what was expected, what was found, and where), per source.

use serde::{Deserialize, Serialize};

use super::Versioned;

/// The schema this rtbuild writes.
pub(crate) const SCHEMA: u32 = 1;
/// The verdict's name beside the generated files.
pub(crate) const FILE: &str = "verify.json";

/// The whole file: the overall verdict and one report per source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct VerifyFile {
    #[serde(default = "super::first_schema")]
    pub schema: u32,
    /// The board the sources are of when `verify --board NAME` named it (a board the catalog
    /// does not know).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board: Option<String>,
    /// True when every source was read and no check failed.
    pub passed: bool,
    /// The kernel facts every report agrees on (for `rtbuild bundle --verify-report`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmdline: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_sha256: Option<String>,
    #[serde(default)]
    pub reports: Vec<VerifyReport>,
    /// Sources that could not be read at all (the run exits 2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<SourceError>,
}

/// A source `verify` could not read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SourceError {
    pub source: String,
    pub error: String,
}

impl VerifyFile {
    /// The verdict over `reports` (and `errors`): the kernel facts are set where every report
    /// that has one agrees.
    pub(crate) fn new(reports: Vec<VerifyReport>, errors: Vec<SourceError>) -> VerifyFile {
        VerifyFile {
            schema: SCHEMA,
            board: None,
            passed: errors.is_empty() && reports.iter().all(|r| r.passed),
            kernel_version: agreed(&reports, |r| r.kernel_version.as_deref()),
            cmdline: agreed(&reports, |r| r.cmdline.as_deref()),
            config_sha256: agreed(&reports, |r| r.config_sha256.as_deref()),
            reports,
            errors,
        }
    }

    /// Reads a verdict: it must carry a boolean `passed` (the verdict itself), then its schema
    /// is checked.
    pub(crate) fn parse(text: &str) -> Result<VerifyFile, super::FormatError> {
        let value: serde_json::Value = serde_json::from_str(text)?;
        if !value.get("passed").is_some_and(serde_json::Value::is_boolean) {
            return Err(super::FormatError::NoBoolean { field: "passed" });
        }
        super::check_schema::<VerifyFile>(&value)?;
        Ok(serde_json::from_value(value)?)
    }

    /// Every check of every report.
    pub(crate) fn checks(&self) -> impl Iterator<Item = &Check> {
        self.reports.iter().flat_map(|r| &r.checks)
    }
}

impl Versioned for VerifyFile {
    const FILE: &'static str = FILE;
    const SCHEMA: u32 = SCHEMA;
}

/// The value every report that has one agrees on; none when they differ or none has it.
pub(crate) fn agreed(
    reports: &[VerifyReport],
    field: impl Fn(&VerifyReport) -> Option<&str>,
) -> Option<String> {
    let mut values = reports.iter().filter_map(field);
    let first = values.next()?;
    values.all(|v| v == first).then(|| first.to_string())
}

/// How one check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum CheckStatus {
    Pass,
    Fail,
    /// The source does not carry what the check needs (e.g. a kernel image without IKCONFIG).
    Skip,
}

impl CheckStatus {
    pub(crate) fn label(self) -> &'static str {
        match self {
            CheckStatus::Pass => "ok",
            CheckStatus::Fail => "FAIL",
            CheckStatus::Skip => "skip",
        }
    }
}

/// One check and its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Check {
    /// `CONFIG_PREEMPT_RT`, `cmdline isolcpus`, `package rt-tests`, …
    pub check: String,
    pub status: CheckStatus,
    #[serde(default)]
    pub expected: String,
    #[serde(default)]
    pub found: String,
    /// The file, section or command the evidence came from.
    #[serde(rename = "where", default)]
    pub from: String,
    /// Why it failed, when known (e.g. the unmet dependency that dropped an option).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Check {
    pub(crate) fn new(
        check: impl Into<String>,
        passed: bool,
        expected: impl Into<String>,
        found: impl Into<String>,
        from: impl Into<String>,
    ) -> Check {
        Check {
            check: check.into(),
            status: if passed { CheckStatus::Pass } else { CheckStatus::Fail },
            expected: expected.into(),
            found: found.into(),
            from: from.into(),
            reason: None,
        }
    }

    pub(crate) fn skip(
        check: impl Into<String>,
        expected: impl Into<String>,
        found: impl Into<String>,
        from: impl Into<String>,
    ) -> Check {
        Check { status: CheckStatus::Skip, ..Check::new(check, true, expected, found, from) }
    }

    pub(crate) fn because(mut self, reason: Option<String>) -> Check {
        if self.status == CheckStatus::Fail {
            self.reason = reason;
        }
        self
    }
}

/// A finding that does not fail the verdict: a kernel option that costs RT latency.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Warning {
    /// The option, `CONFIG_KASAN`.
    pub check: String,
    /// Its value in the config (`y`, `m`).
    pub found: String,
    /// Where the config came from.
    #[serde(rename = "where", default)]
    pub from: String,
    /// Why it matters, and the fragment that set it when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Every check run against one source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct VerifyReport {
    /// The source as given (a path or `ssh://…`).
    #[serde(default)]
    pub source: String,
    /// What the source was recognised as (`build folder`, `kernel image`, …).
    #[serde(default)]
    pub kind: String,
    /// True when no check failed.
    #[serde(default)]
    pub passed: bool,
    #[serde(default)]
    pub checks: Vec<Check>,
    /// The kernel's version string, when the source carries one (`uname -v`, image banner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_version: Option<String>,
    /// The kernel command line (or the part the build adds), when the source carries it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmdline: Option<String>,
    /// sha256 of the uncompressed kernel config that was checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_sha256: Option<String>,
    /// For a build folder: the artifact the kernel facts came from (`deployed qcomflash folder
    /// (…)`, `deployed image SBOM (…)`, `build folder .config …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_from: Option<String>,
    /// What does not fail the verdict but must not ship (latency killers: lock debugging,
    /// KASAN, …), one per option.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
    /// Facts worth knowing that are not checks (which of several configs was read, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl VerifyReport {
    pub(crate) fn new(
        source: String,
        kind: String,
        checks: Vec<Check>,
        notes: Vec<String>,
    ) -> VerifyReport {
        let passed = checks.iter().all(|c| c.status != CheckStatus::Fail);
        VerifyReport {
            source,
            kind,
            passed,
            checks,
            kernel_version: None,
            cmdline: None,
            config_sha256: None,
            kernel_from: None,
            warnings: Vec::new(),
            notes,
        }
    }

    /// The failed checks.
    pub(crate) fn failures(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| c.status == CheckStatus::Fail)
    }
}
