use super::*;

fn track(text: &str) -> Tracker {
    let mut tracker = Tracker::new();
    for line in text.lines() {
        tracker.feed(line);
    }
    tracker.finish();
    tracker
}

const FAILED: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/bitbake-kas-build-linux-qcom-rt-do-compile-failed.txt"
));
const SUCCEEDED: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/bitbake-terminal-build-succeeded-sstate-81pct.txt"
));

#[test]
fn a_failed_kernel_compile_is_named_with_recipe_and_log() {
    let tracker = track(FAILED);
    let log = "/home/bsp/rtbuild/rb3gen2-core-kit/build/tmp/work/rb3gen2_core_kit-qcom-linux/linux-qcom-rt/6.18.37/temp/log.do_compile.48213";
    assert_eq!(
        tracker.failures,
        vec![Failure {
            task: "linux-qcom-rt_6.18:do_compile".into(),
            recipe: Some("linux-qcom-rt-6.18.37-r0".into()),
            log: Some(log.into()),
            message: Some("oe_runmake failed".into()),
        }]
    );
    assert_eq!(tracker.summary, Some((2117, 2098, 1)));
    assert_eq!(tracker.recipes, Some(2987));
    assert_eq!(tracker.sstate.map(|s| s.match_percent), Some(78));
    assert!(tracker.active.is_empty(), "{:?}", tracker.active);
    // kas's own closing line is an error that is not about a task.
    assert_eq!(tracker.errors.len(), 0, "{:?}", tracker.errors);
}

#[test]
fn a_successful_build_gives_sstate_reuse_and_task_counts() {
    let tracker = track(SUCCEEDED);
    assert!(tracker.failures.is_empty());
    assert_eq!(tracker.summary, Some((160, 137, 0)));
    let sstate = tracker.sstate.unwrap();
    assert_eq!(
        (sstate.wanted, sstate.local, sstate.missed, sstate.match_percent),
        (123, 100, 23, 81)
    );
    assert_eq!(tracker.task, Some((160, 160)));
    assert_eq!(tracker.describe(), "task 160/160");
}

#[test]
fn progress_follows_the_phases() {
    let mut tracker = Tracker::new();
    assert_eq!(tracker.describe(), "checking out layers");
    tracker.feed("Parsing recipes: 45% |#####    | ETA:  0:00:10");
    assert_eq!(
        (tracker.describe(), tracker.position()),
        ("parsing recipes 45%".to_string(), (45, 100))
    );
    tracker
        .feed("NOTE: Running setscene task 3 of 10 (/x/zlib_1.3.bb:do_populate_sysroot_setscene)");
    assert_eq!(
        (tracker.describe(), tracker.position()),
        ("restoring from sstate 3/10".to_string(), (3, 10))
    );
    tracker.feed("NOTE: Running task 12 of 40 (/x/linux-qcom-rt_6.18.bb:do_compile)");
    tracker.feed("NOTE: recipe linux-qcom-rt-6.18.37-r0: task do_compile: Started");
    assert_eq!(tracker.describe(), "task 12/40: linux-qcom-rt-6.18.37-r0 do_compile");
    tracker.feed("NOTE: recipe linux-qcom-rt-6.18.37-r0: task do_compile: Succeeded");
    assert_eq!(tracker.describe(), "task 12/40");
}

#[test]
fn an_error_without_a_task_is_kept_for_the_report() {
    let tracker = track("ERROR: Nothing PROVIDES 'nosuch-image'\n");
    assert!(tracker.failures.is_empty());
    assert_eq!(tracker.errors, ["Nothing PROVIDES 'nosuch-image'"]);
}

/// Recorded from real BitBake 2.19.0 (the `bb` library with rtbuild's test launcher) run by
/// `rtbuild shell -c "bitbake -p; bitbake -n linux-qcom-rt"` over the fixture layers; the
/// worker script is absent there, so the first task ends the build.
const REAL: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/bitbake-2.19-real-parse-dry-run-worker-missing.txt"
));

#[test]
fn real_bitbake_output_is_understood() {
    let tracker = track(REAL);
    assert_eq!(tracker.recipes, Some(4));
    assert_eq!(tracker.task, Some((1, 2)));
    assert_eq!(tracker.summary, Some((0, 0, 0)));
    assert!(tracker.failures.is_empty(), "{:?}", tracker.failures);
    assert_eq!(
        tracker.errors,
        ["Worker process (19466) exited unexpectedly (2), shutting down..."]
    );
}
