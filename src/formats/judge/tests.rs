//! The one judge on golden cases: every expected verdict below is written by hand from the rules
//! in docs/report.md and docs/history.md, never computed by the code under test.

use super::*;

const LIMIT: f64 = 100.0;

/// (what, maximum, the verdict the rules give by hand).
const MAXIMA: [(&str, Option<f64>, Verdict); 9] = [
    ("no maximum at all", None, Verdict::Invalid),
    ("a NaN maximum", Some(f64::NAN), Verdict::Invalid),
    ("an infinite maximum", Some(f64::INFINITY), Verdict::Invalid),
    ("a negative maximum", Some(-5.0), Verdict::Invalid),
    ("zero", Some(0.0), Verdict::Pass),
    ("below the limit", Some(99.99), Verdict::Pass),
    ("exactly at the limit", Some(100.0), Verdict::Pass),
    ("just over the limit", Some(100.01), Verdict::Fail),
    ("far over the limit", Some(1250.0), Verdict::Fail),
];

#[test]
fn each_maximum_against_a_100_us_limit() {
    for (what, max, expected) in MAXIMA {
        assert_eq!(max_against(max, LIMIT).verdict(), expected, "{what}");
    }
}

#[test]
fn a_nan_or_missing_maximum_is_named_as_unknown_never_as_a_pass() {
    assert_eq!(max_against(None, LIMIT), Against::Missing);
    assert!(matches!(max_against(Some(f64::NAN), LIMIT), Against::NotALatency(m) if m.is_nan()));
    assert_eq!(max_against(Some(-1.0), LIMIT), Against::NotALatency(-1.0));
}

#[test]
fn exactly_at_the_limit_passes_and_over_it_fails() {
    assert_eq!(max_against(Some(100.0), 100.0), Against::Within(100.0));
    assert_eq!(max_against(Some(101.0), 100.0), Against::Over(101.0));
    // A limit that is no number lets nothing pass.
    assert_eq!(max_against(Some(5.0), f64::NAN), Against::Over(5.0));
}

#[test]
fn invalid_and_fail_together_is_invalid() {
    let invalid = ["thread 0 completed 30 of 3000 expected cycles".to_string()];
    let fail = ["thread 0: max 250 µs exceeds the 100 µs threshold".to_string()];
    assert_eq!(verdict(&invalid, &fail), Verdict::Invalid);
    assert_eq!(verdict(&[], &fail), Verdict::Fail);
    assert_eq!(verdict(&invalid, &[]), Verdict::Invalid);
    assert_eq!(verdict(&[], &[]), Verdict::Pass);
    // Typed reasons each say their verdict; the worst wins.
    use crate::formats::report_json::Reason;
    let reasons = [Reason::Fail("over".into()), Reason::Invalid("nan".into())];
    assert_eq!(worst(reasons.iter().map(Reason::verdict)), Verdict::Invalid);
    assert_eq!(worst(reasons[..1].iter().map(Reason::verdict)), Verdict::Fail);
}

#[test]
fn regression_and_fail_together_is_regression_and_invalid_beats_both() {
    // (invalid, failed, regressed) → the verdict, by hand.
    let table = [
        ((false, false, false), Verdict::Pass),
        ((false, true, false), Verdict::Fail),
        ((false, false, true), Verdict::Regression),
        ((false, true, true), Verdict::Regression),
        ((true, true, false), Verdict::Invalid),
        ((true, false, true), Verdict::Invalid),
        ((true, true, true), Verdict::Invalid),
    ];
    for ((invalid, failed, regressed), expected) in table {
        let found = Findings { invalid, failed, regressed };
        assert_eq!(found.verdict(), expected, "{found:?}");
    }
}

#[test]
fn a_history_check_keeps_the_worst_word() {
    // (own verdict, valid, regressed) → the check's verdict, by hand.
    let table = [
        ((Verdict::Pass, true, false), Verdict::Pass),
        ((Verdict::Fail, true, false), Verdict::Fail),
        ((Verdict::Fail, true, true), Verdict::Regression),
        ((Verdict::Pass, true, true), Verdict::Regression),
        ((Verdict::Pass, false, true), Verdict::Invalid),
        ((Verdict::Invalid, true, false), Verdict::Invalid),
    ];
    for ((own, valid, regressed), expected) in table {
        assert_eq!(checked(own, valid, regressed), expected, "{own} valid={valid}");
    }
}

#[test]
fn a_baseline_regression_in_report_is_a_fail() {
    assert_eq!(against_baseline(Verdict::Pass, true), Verdict::Fail);
    assert_eq!(against_baseline(Verdict::Pass, false), Verdict::Pass);
    assert_eq!(against_baseline(Verdict::Invalid, true), Verdict::Invalid);
}

#[test]
fn the_worst_of_none_is_pass_and_of_all_is_invalid() {
    assert_eq!(worst([]), Verdict::Pass);
    assert_eq!(
        worst([Verdict::Fail, Verdict::Pass, Verdict::Regression, Verdict::Invalid]),
        Verdict::Invalid
    );
    assert_eq!(worst([Verdict::Fail, Verdict::Regression]), Verdict::Regression);
}
