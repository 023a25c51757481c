//! Issue 35 item 3: one verdict type. The history check and `rtbuild test` carry the same
//! `Verdict` as `rtbuild report`; the words in JSON and on the terminal stay as they were.

use crate::formats::history_json::RegressionCheck;
use crate::formats::report_json::Verdict;
use crate::measure::testrun::RunEnd;

#[test]
fn a_regression_checks_json_keeps_every_verdict_word() {
    for (verdict, word) in [
        (Verdict::Pass, "PASS"),
        (Verdict::Fail, "FAIL"),
        (Verdict::Regression, "REGRESSION"),
        (Verdict::Invalid, "INVALID"),
    ] {
        let check = RegressionCheck { verdict, ..RegressionCheck::default() };
        let json = serde_json::to_value(&check).unwrap();
        assert_eq!(json["verdict"], word);
        let back: RegressionCheck = serde_json::from_value(json).unwrap();
        assert_eq!(back.verdict, verdict);
        assert_eq!(back.verdict, word);
    }
}

#[test]
fn a_test_run_ends_in_the_verdict_report_gives() {
    let ends = [
        (RunEnd::Pass, "PASS"),
        (RunEnd::Fail, "FAIL"),
        (RunEnd::Invalid, "INVALID"),
        (RunEnd::Interrupted, "INVALID"),
        (RunEnd::ConnectionLost, "INVALID"),
    ];
    for (end, word) in ends {
        assert_eq!(end.verdict(), word, "{end:?}");
    }
}
