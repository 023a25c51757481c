//! The verify verdict: what `rtbuild verify --json` prints and `rtbuild image` keeps as
//! `verify.json` beside the generated files, and what `rtbuild bundle --verify-report` reads
//! back. One row per check (what was expected, what was found, and where), per source.

use serde::{Deserialize, Serialize};

use super::Versioned;

/// The schema this rtbuild writes.
pub const SCHEMA: u32 = 1;
/// The verdict's name beside the generated files.
pub const FILE: &str = "verify.json";

/// The whole file: the overall verdict and one report per source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyFile {
    #[serde(default = "super::first_schema")]
    pub schema: u32,
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
    pub reports: Vec<Report>,
    /// Sources that could not be read at all (the run exits 2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<SourceError>,
}

/// A source `verify` could not read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceError {
    pub source: String,
    pub error: String,
}

impl VerifyFile {
    /// The verdict over `reports` (and `errors`): the kernel facts are set where every report
    /// that has one agrees.
    pub fn new(reports: Vec<Report>, errors: Vec<SourceError>) -> VerifyFile {
        VerifyFile {
            schema: SCHEMA,
            passed: errors.is_empty() && reports.iter().all(|r| r.passed),
            kernel_version: agreed(&reports, |r| r.kernel_version.as_deref()),
            cmdline: agreed(&reports, |r| r.cmdline.as_deref()),
            config_sha256: agreed(&reports, |r| r.config_sha256.as_deref()),
            reports,
            errors,
        }
    }

    /// Reads a verdict, checking its schema.
    pub fn parse(text: &str) -> Result<VerifyFile, super::FormatError> {
        super::read_json(text)
    }

    /// Every check of every report.
    pub fn checks(&self) -> impl Iterator<Item = &Check> {
        self.reports.iter().flat_map(|r| &r.checks)
    }
}

impl Versioned for VerifyFile {
    const FILE: &'static str = FILE;
    const SCHEMA: u32 = SCHEMA;
}

/// The value every report that has one agrees on; none when they differ or none has it.
pub fn agreed(reports: &[Report], field: impl Fn(&Report) -> Option<&str>) -> Option<String> {
    let mut values = reports.iter().filter_map(field);
    let first = values.next()?;
    values.all(|v| v == first).then(|| first.to_string())
}

/// How one check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    Fail,
    /// The source does not carry what the check needs (e.g. a kernel image without IKCONFIG).
    Skip,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Pass => "ok",
            Status::Fail => "FAIL",
            Status::Skip => "skip",
        }
    }
}

/// One check and its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// `CONFIG_PREEMPT_RT`, `cmdline isolcpus`, `package rt-tests`, …
    pub check: String,
    pub status: Status,
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
    pub fn new(
        check: impl Into<String>,
        passed: bool,
        expected: impl Into<String>,
        found: impl Into<String>,
        from: impl Into<String>,
    ) -> Check {
        Check {
            check: check.into(),
            status: if passed { Status::Pass } else { Status::Fail },
            expected: expected.into(),
            found: found.into(),
            from: from.into(),
            reason: None,
        }
    }

    pub fn skip(
        check: impl Into<String>,
        expected: impl Into<String>,
        found: impl Into<String>,
        from: impl Into<String>,
    ) -> Check {
        Check { status: Status::Skip, ..Check::new(check, true, expected, found, from) }
    }

    pub fn because(mut self, reason: Option<String>) -> Check {
        if self.status == Status::Fail {
            self.reason = reason;
        }
        self
    }
}

/// Every check run against one source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
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
    /// Facts worth knowing that are not checks (which of several configs was read, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Report {
    pub fn new(source: String, kind: String, checks: Vec<Check>, notes: Vec<String>) -> Report {
        let passed = checks.iter().all(|c| c.status != Status::Fail);
        Report {
            source,
            kind,
            passed,
            checks,
            kernel_version: None,
            cmdline: None,
            config_sha256: None,
            notes,
        }
    }

    /// The failed checks.
    pub fn failures(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| c.status == Status::Fail)
    }
}
