//! The verdict of `verify`: one row per check (what was expected, what was found, and where),
//! printable as a table or serialised as JSON.

pub(crate) use crate::formats::verify_json::{Check, CheckStatus, VerifyReport};
use crate::text::counted;
use crate::text::table::table;

/// How much of one found value, expectation or reason the table shows: a kernel command line
/// (at most 2,048 bytes on arm64 and x86) is whole; only a target that floods is cut.
const CELL_CHARS: usize = 2048;

fn cut(text: &str) -> String {
    crate::text::shown_at(text, CELL_CHARS)
}

impl VerifyReport {
    /// A table for people: status, check, expected, found, where, then the reasons.
    pub(crate) fn to_table(&self) -> String {
        let header = ["RESULT", "CHECK", "EXPECTED", "FOUND", "WHERE"].map(String::from);
        // A place repeated from the row above is left blank, so each source is read once.
        let mut previous = "";
        let rows: Vec<[String; 5]> = self
            .checks
            .iter()
            .map(|c| {
                let from = if c.from == previous { String::new() } else { c.from.clone() };
                previous = &c.from;
                // What a target printed (a kernel version, a command line) is escaped and cut.
                [
                    c.status.label().to_string(),
                    c.check.clone(),
                    cut(&c.expected),
                    cut(&c.found),
                    cut(&from),
                ]
            })
            .collect();
        let mut text = format!("{} ({})\n{}", self.source, self.kind, table(&header, &rows));
        for check in self.failures() {
            if let Some(reason) = &check.reason {
                text.push_str(&format!("\n  {}: {}", check.check, cut(reason)));
            }
        }
        for warning in &self.warnings {
            let reason =
                warning.reason.as_deref().map(|r| format!(": {}", cut(r))).unwrap_or_default();
            text.push_str(&format!(
                "\n  warning: {}={} in {}{reason}",
                warning.check,
                cut(&warning.found),
                cut(&warning.from)
            ));
        }
        let failed = self.failures().count();
        text.push_str(&match failed {
            0 => format!("\nverdict: PASS ({})", counted(self.checks.len(), "check")),
            n => format!("\nverdict: FAIL ({n} of {} failed)", counted(self.checks.len(), "check")),
        });
        text
    }
}
