//! The verdict of `verify`: one row per check (what was expected, what was found, and where),
//! printable as a table or serialised as JSON.

use crate::table::table;
use serde::Serialize;

/// How one check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// `CONFIG_PREEMPT_RT`, `cmdline isolcpus`, `package rt-tests`, …
    pub check: String,
    pub status: Status,
    pub expected: String,
    pub found: String,
    /// The file, section or command the evidence came from.
    #[serde(rename = "where")]
    pub from: String,
    /// Why it failed, when known (e.g. the unmet dependency that dropped an option).
    #[serde(skip_serializing_if = "Option::is_none")]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The source as given (a path or `ssh://…`).
    pub source: String,
    /// What the source was recognised as (`build folder`, `kernel image`, …).
    pub kind: String,
    /// True when no check failed.
    pub passed: bool,
    pub checks: Vec<Check>,
    /// The kernel's version string, when the source carries one (`uname -v`, image banner).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_version: Option<String>,
    /// The kernel command line (or the part the build adds), when the source carries it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cmdline: Option<String>,
    /// sha256 of the uncompressed kernel config that was checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_sha256: Option<String>,
    /// Facts worth knowing that are not checks (which of several configs was read, …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
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

    /// A table for people: status, check, expected, found, where, then the reasons.
    pub fn to_table(&self) -> String {
        let header = ["RESULT", "CHECK", "EXPECTED", "FOUND", "WHERE"].map(String::from);
        // A place repeated from the row above is left blank, so each source is read once.
        let mut previous = "";
        let rows: Vec<[String; 5]> = self
            .checks
            .iter()
            .map(|c| {
                let from = if c.from == previous { String::new() } else { c.from.clone() };
                previous = &c.from;
                [
                    c.status.label().to_string(),
                    c.check.clone(),
                    c.expected.clone(),
                    c.found.clone(),
                    from,
                ]
            })
            .collect();
        let mut text = format!("{} ({})\n{}", self.source, self.kind, table(&header, &rows));
        for check in self.failures() {
            if let Some(reason) = &check.reason {
                text.push_str(&format!("\n  {}: {reason}", check.check));
            }
        }
        let failed = self.failures().count();
        text.push_str(&match failed {
            0 => format!("\nverdict: PASS ({})", plural(self.checks.len(), "check")),
            n => format!("\nverdict: FAIL ({n} of {} failed)", plural(self.checks.len(), "check")),
        });
        text
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") }
}
