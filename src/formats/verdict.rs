//! rtbuild's one verdict vocabulary: [`Verdict`] (the four words every output shows) and
//! [`TestVerdict`] (a test's record: a verdict, or SKIPPED). The rules that give a verdict are
//! the one judge's ([`super::judge`]).

use serde::{Deserialize, Serialize};

/// rtbuild's one verdict vocabulary, the same word in the terminal, JSON, JUnit, HTML, `run.json`
/// and the history: `PASS`, `FAIL` (a limit was crossed or a check failed), `INVALID` (the run
/// cannot be trusted: it measured something else, or a figure is unknown) and `REGRESSION`
/// (history: worse than the earlier runs). One exit-code rule goes with it: 0 for `PASS`, 1 for
/// every other word ([`Verdict::exit`]). When several apply, the worst wins:
/// INVALID > REGRESSION > FAIL > PASS (an untrusted run is never called anything else).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "UPPERCASE")]
pub(crate) enum Verdict {
    #[default]
    Pass,
    Fail,
    Regression,
    Invalid,
}

impl Verdict {
    /// The worse of two verdicts (INVALID > REGRESSION > FAIL > PASS): the order the variants
    /// are declared in. The rules that give a verdict are the one judge's ([`super::judge`]).
    pub(crate) fn worst(self, other: Verdict) -> Verdict {
        self.max(other)
    }

    pub(crate) fn passed(self) -> bool {
        self == Verdict::Pass
    }

    /// The exit code rule: 0 for PASS, 1 for FAIL, INVALID and REGRESSION.
    pub(crate) fn exit(self) -> crate::error::Exit {
        crate::error::Exit::from_pass(self.passed())
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Regression => "REGRESSION",
            Verdict::Invalid => "INVALID",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A verdict is its word: `check.verdict == "PASS"` compares the word every output shows.
impl PartialEq<&str> for Verdict {
    fn eq(&self, word: &&str) -> bool {
        self.as_str() == *word
    }
}

impl std::str::FromStr for Verdict {
    type Err = String;

    /// Reads the word back, whatever its case (`run.json` files before one vocabulary wrote
    /// `pass`, `fail`, `invalid`).
    fn from_str(word: &str) -> Result<Verdict, String> {
        match word.to_ascii_uppercase().as_str() {
            "PASS" => Ok(Verdict::Pass),
            "FAIL" => Ok(Verdict::Fail),
            "REGRESSION" => Ok(Verdict::Regression),
            "INVALID" => Ok(Verdict::Invalid),
            _ => Err(format!("`{word}` is not a verdict (PASS, FAIL, INVALID or REGRESSION)")),
        }
    }
}

/// What one rt-tests program's record says: its verdict, or `SKIPPED` when it did not run because
/// the target cannot run it (hwlatdetect on a kernel without the hwlat tracer: `run.json`'s
/// `skipped` says why). SKIPPED is a state beside the four verdict words, not a fifth verdict: it
/// never enters the judge, so it can neither make a run pass nor fail, and a run's own verdict
/// and exit code never read it. On disk it is the word (`PASS`, …, `SKIPPED`); any case reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum TestVerdict {
    Judged(Verdict),
    Skipped,
}

impl TestVerdict {
    pub(crate) const SKIPPED: &'static str = "SKIPPED";

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            TestVerdict::Judged(verdict) => verdict.as_str(),
            TestVerdict::Skipped => TestVerdict::SKIPPED,
        }
    }
}

impl Default for TestVerdict {
    fn default() -> TestVerdict {
        TestVerdict::Judged(Verdict::default())
    }
}

/// The word, as for [`Verdict`]: `row.verdict == "SKIPPED"`.
impl PartialEq<&str> for TestVerdict {
    fn eq(&self, word: &&str) -> bool {
        self.as_str() == *word
    }
}

impl From<Verdict> for TestVerdict {
    fn from(verdict: Verdict) -> TestVerdict {
        TestVerdict::Judged(verdict)
    }
}

impl std::fmt::Display for TestVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for TestVerdict {
    type Err = String;

    fn from_str(word: &str) -> Result<TestVerdict, String> {
        if word.eq_ignore_ascii_case(TestVerdict::SKIPPED) {
            return Ok(TestVerdict::Skipped);
        }
        word.parse().map(TestVerdict::Judged).map_err(|_| {
            format!("`{word}` is not a verdict (PASS, FAIL, INVALID, REGRESSION or SKIPPED)")
        })
    }
}

impl Serialize for TestVerdict {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for TestVerdict {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<TestVerdict, D::Error> {
        let word = String::deserialize(deserializer)?;
        word.parse().map_err(serde::de::Error::custom)
    }
}

/// A verdict word as rtbuild's own files hold it, read in any case (`run.json` files before one
/// vocabulary wrote `pass`, `fail`, `invalid`): for a `deserialize_with`.
pub(crate) fn any_case<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Verdict>, D::Error> {
    let word: Option<String> = Option::deserialize(deserializer)?;
    word.map(|w| w.parse().map_err(serde::de::Error::custom)).transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::history_json::HistoryResult;
    use crate::formats::run_json::{RunRecord, TestRecord};

    /// The words on disk are a contract: written upper-case as before, read in any case (older
    /// run.json files wrote `pass`), `running` and `SKIPPED` kept as states.
    #[test]
    fn the_words_on_disk_stay_and_old_words_still_read() {
        let old: RunRecord = serde_json::from_str(r#"{"verdict": "fail"}"#).unwrap();
        assert_eq!(old.verdict, Some(Verdict::Fail));
        let running: RunRecord = serde_json::from_str(r#"{"verdict": null}"#).unwrap();
        assert_eq!(running.verdict, None);
        let json = serde_json::to_value(RunRecord {
            verdict: Some(Verdict::Invalid),
            ..RunRecord::default()
        })
        .unwrap();
        assert_eq!(json["verdict"], "INVALID");
        for (word, verdict, written) in [
            ("running", None, "running"),
            ("skipped", Some(TestVerdict::Skipped), "SKIPPED"),
            ("pass", Some(TestVerdict::Judged(Verdict::Pass)), "PASS"),
            ("INVALID", Some(TestVerdict::Judged(Verdict::Invalid)), "INVALID"),
        ] {
            let test: TestRecord =
                serde_json::from_value(serde_json::json!({ "verdict": word })).unwrap();
            assert_eq!(test.verdict, verdict, "{word}");
            assert_eq!(serde_json::to_value(&test).unwrap()["verdict"], written, "{word}");
        }
        let row: HistoryResult = serde_json::from_str(r#"{"verdict": "SKIPPED"}"#).unwrap();
        assert_eq!(row.verdict, TestVerdict::Skipped);
        assert_eq!(serde_json::to_value(&row).unwrap()["verdict"], "SKIPPED");
        let bad = serde_json::from_str::<RunRecord>(r#"{"verdict": "maybe"}"#).unwrap_err();
        assert!(bad.to_string().contains("`maybe` is not a verdict"), "{bad}");
    }
}
