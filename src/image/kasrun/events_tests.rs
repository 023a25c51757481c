use super::*;

#[test]
fn kas_log_prefix_and_colours_are_removed() {
    let cases = [
        ("2026-11-29 21:14:05 - INFO     - Parsing recipes...done.", "Parsing recipes...done."),
        ("2026-11-29 21:22:51 - ERROR    - ERROR: x", "ERROR: x"),
        ("\u{1b}[32mNOTE: y\u{1b}[0m", "NOTE: y"),
        ("2026-11-29 - not a stamp", "2026-11-29 - not a stamp"),
        ("plain", "plain"),
    ];
    for (line, want) in cases {
        assert_eq!(clean(line), want, "{line:?}");
    }
}

#[test]
fn each_line_kind_gives_its_event() {
    let cases: Vec<(&str, Option<Event>)> = vec![
        ("Parsing recipes...", Some(Event::Parsing { percent: None })),
        (
            "Parsing recipes: 45% |#####    | ETA:  0:00:10",
            Some(Event::Parsing { percent: Some(45) }),
        ),
        (
            "Parsing of 2987 .bb files complete (0 cached, 2987 parsed). 4731 targets",
            Some(Event::Parsed { recipes: 2987 }),
        ),
        (
            "NOTE: Running task 2115 of 6213 (/x/meta-qcom/recipes-kernel/linux/linux-qcom-rt_6.18.bb:do_compile)",
            Some(Event::Task {
                number: 2115,
                total: 6213,
                task: "linux-qcom-rt_6.18:do_compile".into(),
            }),
        ),
        (
            "NOTE: Running setscene task 2 of 2107 (virtual:native:/x/quilt_0.69.bb:do_populate_sysroot_setscene)",
            Some(Event::Setscene {
                number: 2,
                total: 2107,
                task: "quilt_0.69 (native):do_populate_sysroot_setscene".into(),
            }),
        ),
        (
            "NOTE: recipe busybox-1.37.0-r0: task do_compile: Started",
            Some(Event::TaskState {
                recipe: "busybox-1.37.0-r0".into(),
                task: "do_compile".into(),
                state: TaskState::Started,
            }),
        ),
        (
            "NOTE: Tasks Summary: Attempted 2117 tasks of which 2098 didn't need to be rerun and 1 failed.",
            Some(Event::TasksSummary { attempted: 2117, reused: 2098, failed: 1 }),
        ),
        (
            "NOTE: Tasks Summary: Attempted 160 tasks of which 137 didn't need to be rerun and all succeeded.",
            Some(Event::TasksSummary { attempted: 160, reused: 137, failed: 0 }),
        ),
        (
            "ERROR: linux-qcom-rt-6.18.37-r0 do_compile: oe_runmake failed",
            Some(Event::TaskError {
                recipe: "linux-qcom-rt-6.18.37-r0".into(),
                task: "do_compile".into(),
                message: "oe_runmake failed".into(),
            }),
        ),
        (
            "ERROR: Logfile of failure stored in: /b/tmp/work/x/temp/log.do_compile.1234",
            Some(Event::FailureLog { path: "/b/tmp/work/x/temp/log.do_compile.1234".into() }),
        ),
        (
            "ERROR: Task (/x/linux-qcom-rt_6.18.bb:do_compile) failed with exit code '1'",
            Some(Event::TaskFailed { task: "linux-qcom-rt_6.18:do_compile".into() }),
        ),
        (
            "ERROR: Nothing PROVIDES 'nosuch'",
            Some(Event::Error { message: "Nothing PROVIDES 'nosuch'".into() }),
        ),
        ("WARNING: disk is slow", Some(Event::Warning { message: "disk is slow".into() })),
        ("Build Configuration:", None),
        ("NOTE: Resolving any missing task queue dependencies", None),
    ];
    for (line, want) in cases {
        assert_eq!(parse(line), want, "{line:?}");
    }
}

#[test]
fn sstate_summary_figures_are_read() {
    let line = "Sstate summary: Wanted 123 Local 100 Mirrors 0 Missed 23 Current 0 (81% match, 100% complete)";
    assert_eq!(
        parse(line),
        Some(Event::Sstate(SstateSummary {
            wanted: 123,
            local: 100,
            mirrors: 0,
            missed: 23,
            current: 0,
            match_percent: 81,
            complete_percent: 100,
        }))
    );
    assert_eq!(parse("Sstate summary: Wanted x"), None);
}
