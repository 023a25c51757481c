//! The test definition's script: `rtbuild test`'s command lines, in its order, framed.

use super::*;

#[test]
fn steps_use_the_test_command_builder() {
    let req = request();
    let script = script(&req);
    let stress = &script[script.find("scenario_stress()").unwrap()..];
    let measure = req.measure();
    let spec = CommandSpec {
        measure: &measure,
        measure_cpus: &req.layout.rt,
        load_percent: 60,
        cyclictest_args: &req.measurement.cyclictest_args,
        custom_load: None,
    };
    let commands = Scenario::Stress.commands(&req.layout, &spec, "stress.json");
    assert!(commands.cyclictest.ends_with(&["--spike=250".to_string()]));
    assert!(stress.contains(&quote::sh_join(&commands.cyclictest)), "{stress}");
    for load in &commands.load {
        assert!(stress.contains(&quote::sh_join(load)), "{stress}");
    }
    assert!(stress.contains("[ \"$max\" -le 100 ]"), "{stress}");
    assert!(stress.contains("--units us"), "{stress}");
}

/// cyclictest runs in the background while `rtbuild_snapshots` asks it for its status
/// (knowing its one thread on CPU 7 and its 300 s), is waited for (its exit status is
/// `rc`), and only the status block lines of its output are printed, in a frame of their
/// own after the raw output.
#[test]
fn cyclictest_is_asked_for_its_status_and_the_blocks_are_framed() {
    let script = script(&request());
    let idle = &script[script.find("scenario_idle()").unwrap()..];
    let idle = &idle[..idle.find("( scenario_idle )").unwrap()];
    let at = |needle: &str| idle.find(needle).unwrap_or_else(|| panic!("{needle}: {idle}"));
    let order = [
        "  ct_end=300 ct_threads=1\n",
        " >idle.out 2>&1 &\n  ct=$!\n",
        "  rtbuild_snapshots >/dev/null 2>&1 &\n  snap=$!\n",
        "  wait \"$ct\" || rc=$?\n",
        "  kill \"$snap\" 2>/dev/null\n  wait \"$snap\" 2>/dev/null\n  trc=$rc\n",
        "<<<RTBUILD-RAW-END scenario=idle test=cyclictest run=cyclictest exit=$rc>>>",
        "  echo '<<<RTBUILD-STATUS-BEGIN scenario=idle>>>'\n  grep -E '^(# cyclictest current status:|#-|T:)' idle.out 2>/dev/null\n  echo '<<<RTBUILD-STATUS-END scenario=idle>>>'\n",
    ];
    let places: Vec<usize> = order.iter().map(|n| at(n)).collect();
    assert!(places.windows(2).all(|w| w[0] < w[1]), "{places:?}: {idle}");
    assert!(script.contains("rtbuild_snapshots() {\n"), "{script}");
    assert!(script.contains("kill -s USR1 \"$ct\""), "{script}");
}

/// lava-dispatcher's test definition writer (2023.01 and 2026.07,
/// `actions/deploy/testdef.py`) puts a backslash before every `$` and digit of a step that
/// holds `--shell` or `--cmd`, which the script's step does: the script must use none (the
/// board's state markers printed `scenario=$1` under the real `lava-run`).
#[test]
fn the_steps_hold_no_positional_parameter_lava_would_rewrite() {
    let mut req = request();
    req.measurement.tests =
        crate::measure::rttests::parse_list("cyclictest,pmqtest,oslat,rt-migrate-test,hwlatdetect")
            .unwrap();
    for step in steps(&req) {
        let bytes = step.as_bytes();
        let at = bytes.windows(2).position(|w| w[0] == b'$' && w[1].is_ascii_digit());
        assert!(
            at.is_none(),
            "{}",
            &step[at.unwrap_or(0)..][..40.min(step.len() - at.unwrap_or(0))]
        );
    }
}

/// `--threads 8 --unpinned` (the RK3588 guide's `cyclictest -m -t 8 -p 99`): cyclictest
/// places unpinned threads on the CPUs its own process may use, so on the board it runs
/// under `taskset -c` with exactly the measured CPUs, as `rtbuild test`'s helper runs it,
/// with no `-a` and no `-h` (cyclictest's own interval distance).
#[test]
fn unpinned_threads_run_under_taskset_with_exactly_the_measured_cpus() {
    let mut req = request();
    req.layout = CpuLayout::new(
        &CpuSet::range(0, 8),
        &CpuSet::parse("5-7").unwrap(),
        None,
        crate::host::cpus::Board::Given,
    )
    .unwrap();
    req.measurement.threads = Threads::Unpinned(8);
    req.measurement.histogram_us = 0;
    req.measurement.cyclictest_args = Vec::new();
    let commands = req.commands(Scenario::Stress, "stress.json");
    let argv = commands.cyclictest.join(" ");
    assert!(argv.starts_with("taskset -c 5-7 cyclictest -m -p 99 -t 8 "), "{argv}");
    assert!(!commands.cyclictest.iter().any(|a| a == "-a" || a == "-h"), "{argv}");
    // The load stays on the housekeeping CPUs.
    let housekeeping = CpuSet::parse("0-4").unwrap();
    assert!(
        commands.load.iter().all(|l| l[..2] == ["taskset", "-c"]
            && CpuSet::parse(&l[2]).unwrap().is_subset(&housekeeping)),
        "{commands:?}"
    );
    let text = script(&req);
    let stress = &text[text.find("scenario_stress()").unwrap()..];
    assert!(
        stress.contains(&format!("  {} >stress.out", quote::sh_join(&commands.cyclictest))),
        "{stress}"
    );
    // Pinned threads (the default) set their CPUs themselves: no taskset around cyclictest.
    let pinned = request().commands(Scenario::Stress, "stress.json").cyclictest;
    assert_eq!(pinned[..5], ["cyclictest", "-m", "-p", "99", "-a"], "{pinned:?}");
}

#[test]
fn every_test_runs_with_rtbuild_tests_command_lines_in_its_order() {
    let mut req = request();
    req.layout = CpuLayout::new(
        &CpuSet::range(0, 8),
        &CpuSet::parse("6-7").unwrap(),
        None,
        crate::host::cpus::Board::Given,
    )
    .unwrap();
    req.measurement.tests =
        crate::measure::rttests::parse_list("cyclictest,pmqtest,oslat,rt-migrate-test,hwlatdetect")
            .unwrap();
    req.measurement
        .test_args
        .insert(Program::Oslat, crate::measure::rttests::options::parse("oslat=-D 10m").unwrap().1);
    req.measurement.test_args.insert(
        Program::Hackbench,
        crate::measure::rttests::options::parse("hackbench=-p").unwrap().1,
    );
    req.measurement.scenarios = vec![Scenario::Hackbench];
    let step = script(&req);
    let suite = req.suite();
    let mut at = Vec::new();
    for program in [Program::Oslat, Program::Pmqtest, Program::RtMigrateTest, Program::Hwlatdetect]
    {
        for invocation in suite.invocations(program, "hackbench") {
            let line = quote::sh_join(&invocation.argv);
            let found = step.find(&format!(" {line} >hackbench.{}.out ", invocation.label));
            at.push(found.unwrap_or_else(|| panic!("{line} not in {step}")));
        }
    }
    let ct = step.find("cyclictest -m -p 99 -a 6-7 -t 2").unwrap();
    // oslat first, then cyclictest, then the others in --tests order.
    assert!(
        at[0] < ct && ct < at[1] && at[1] < at[2] && at[2] < at[3] && at[3] < at[4],
        "{at:?} {ct}"
    );
    assert!(step.contains("oslat -c 6-7 -C 5 -q --json=hackbench.oslat.json -D 10m"), "{step}");
    assert!(step.contains("pmqtest -a6 -t1 -p 99 -D 300 -q --json=hackbench.pmqtest-cpu6.json"));
    // The hackbench load outlasts every test: oslat 600 s, cyclictest 300 s, pmqtest twice
    // 300 s, rt-migrate-test and hwlatdetect 300 s each, plus 120 s.
    let total = 600 + 300 + 2 * 300 + 300 + 300 + 120;
    assert!(
        step.contains(&format!(
            "taskset -c 0-5 timeout {total}s hackbench -g 6 -s 512 -l 1000000000 -p >/dev/null"
        )),
        "{step}"
    );
    for case in ["oslat-hackbench", "cyclictest-hackbench", "pmqtest-hackbench"] {
        assert!(
            step.contains(&format!(
                "lava-test-case {case} --result \"$result\" --measurement \"$max\" --units us"
            )),
            "{case}"
        );
    }
    assert!(step.contains("[ \"$max\" -le 20 ]"), "oslat is judged against --noise-us");
    assert!(step.contains("lava-test-case rt-migrate-test-hackbench --result \"$result\""));
    assert!(step.contains(
        "<<<RTBUILD-SKIPPED scenario=hackbench test=hwlatdetect reason=no-hwlat-tracer>>>"
    ));
    // The timeouts hold the whole run: one scenario of 2520 s of tests.
    assert!(req.scenario_minutes() * 60 >= total + 6 * 10, "{}", req.scenario_minutes());
    assert!(
        render(&req)
            .unwrap()
            .contains("rtbuild.tests: oslat,cyclictest,pmqtest,rt-migrate-test,hwlatdetect\n")
    );
}
