//! The one judge: the rules that turn what was measured into a [`Verdict`], used by `rtbuild
//! test` (a scenario's programs and the run), `rtbuild report` (every thread and program of a
//! scenario), the rt-tests programs and the history (a run against its baseline). Each of them
//! gathers its own evidence and words its own reasons; the rules themselves live here only:
//!
//! - a latency figure against its limit ([`max_against`]): a missing figure or one that is no
//!   latency (`nan`, `inf`, a negative number) is INVALID, never PASS; over the limit is FAIL;
//!   exactly at the limit passes;
//! - a reason not to trust the run is INVALID, a failure is FAIL, a regression is REGRESSION
//!   ([`Findings`]);
//! - when several apply, the worst wins: INVALID > REGRESSION > FAIL > PASS ([`worst`]).
//!
//! It sits beside the [`Verdict`] on the formats floor so that `measure/` and `results/` (report
//! and history) all reach it without an import going up.

use super::report_json::is_latency;
use super::verdict::Verdict;

/// A maximum (or any latency figure) against its limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Against {
    /// No figure at all: the run cannot be judged (INVALID).
    Missing,
    /// A figure that is no latency (`nan`, `inf`, a negative number): unknown (INVALID).
    NotALatency(f64),
    /// Above the limit (FAIL).
    Over(f64),
    /// At or below the limit (PASS).
    Within(f64),
}

impl Against {
    pub(crate) fn verdict(self) -> Verdict {
        match self {
            Against::Missing | Against::NotALatency(_) => Verdict::Invalid,
            Against::Over(_) => Verdict::Fail,
            Against::Within(_) => Verdict::Pass,
        }
    }
}

/// `max` against `limit`, both µs. A limit that is itself no number never lets a figure pass:
/// only a figure at or below the limit is [`Against::Within`].
pub(crate) fn max_against(max: Option<f64>, limit: f64) -> Against {
    match max {
        None => Against::Missing,
        Some(max) if !is_latency(max) => Against::NotALatency(max),
        Some(max) if max <= limit => Against::Within(max),
        Some(max) => Against::Over(max),
    }
}

/// What was found about a run or a part of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Findings {
    /// Something makes the measurement untrustworthy (a validity reason, an unknown figure).
    pub invalid: bool,
    /// A limit was crossed or a correctness check failed.
    pub failed: bool,
    /// A figure is worse than the earlier runs (the history's baseline).
    pub regressed: bool,
}

impl Findings {
    /// From the reasons a part is invalid and the reasons it failed.
    pub(crate) fn of(invalid: &[String], fail: &[String]) -> Findings {
        Findings { invalid: !invalid.is_empty(), failed: !fail.is_empty(), regressed: false }
    }

    /// The verdict: the worst of what was found.
    pub(crate) fn verdict(self) -> Verdict {
        let found = [
            (self.invalid, Verdict::Invalid),
            (self.regressed, Verdict::Regression),
            (self.failed, Verdict::Fail),
        ];
        worst(found.into_iter().filter(|(yes, _)| *yes).map(|(_, verdict)| verdict))
    }
}

/// `INVALID` when there is a reason not to trust the run, else `FAIL` when anything failed, else
/// `PASS`.
pub(crate) fn verdict(invalid: &[String], fail: &[String]) -> Verdict {
    Findings::of(invalid, fail).verdict()
}

/// The worst of `verdicts` (INVALID > REGRESSION > FAIL > PASS); `PASS` for none.
pub(crate) fn worst(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
    verdicts.into_iter().fold(Verdict::Pass, Verdict::worst)
}

/// A history check: a run that cannot be trusted is not compared (`INVALID`); a regression
/// makes its own verdict at least `REGRESSION` (an invalid one stays `INVALID`); else the run's
/// own verdict, so a check never calls a failed run PASS.
pub(crate) fn checked(own: Verdict, valid: bool, regressed: bool) -> Verdict {
    let found = Findings { invalid: !valid, failed: false, regressed };
    worst([own, found.verdict()])
}

/// `report --baseline`: a figure worse than the given earlier report is a failed check (FAIL),
/// not the history's REGRESSION (which needs the median of several earlier runs), as
/// docs/report.md says; the scenario's own worse verdict stays.
pub(crate) fn against_baseline(own: Verdict, regressed: bool) -> Verdict {
    worst([own, Findings { failed: regressed, ..Findings::default() }.verdict()])
}

#[cfg(test)]
mod tests;
