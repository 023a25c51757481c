use super::*;

fn check(text: &str) -> Result<Vec<String>, String> {
    CYCLICTEST.check_text(text).map_err(|e| e.to_string())
}

#[test]
fn the_seeds_own_measuring_options_pass_through() {
    let ok: &[(&str, &[&str])] = &[
        ("", &[]),
        ("-m -q", &["-m", "-q"]),
        ("--spike=250 --spike-nodes 4096", &["--spike=250", "--spike-nodes", "4096"]),
        ("-b 500 --tracemark", &["-b", "500", "--tracemark"]),
        ("-c1 -x", &["-c1", "-x"]),
        ("-mq", &["-mq"]),
        ("-A 10", &["-A", "10"]),
        ("--secaligned", &["--secaligned"]),
        ("--laptop --latency=0 --default-system", &["--laptop", "--latency=0", "--default-system"]),
        // getopt_long takes a unique prefix.
        ("--tracem", &["--tracem"]),
    ];
    for (text, want) in ok {
        assert_eq!(check(text).unwrap(), *want, "{text}");
    }
}

#[test]
fn options_rtbuild_sets_are_refused_with_the_flag_to_use() {
    let cases = [
        (
            "-i 100",
            "--cyclictest-args: `-i` conflicts with what rtbuild sets; pass --interval-us instead",
        ),
        (
            "-h 800",
            "--cyclictest-args: `-h` conflicts with what rtbuild sets; pass --histogram-us instead",
        ),
        (
            "-D 600",
            "--cyclictest-args: `-D` conflicts with what rtbuild sets; pass --duration instead (bare seconds like 600 work, as with -D)",
        ),
        (
            "-Sp90",
            "--cyclictest-args: `-S` conflicts with what rtbuild sets: rtbuild runs one thread per measured CPU, pinned there; choose the CPUs with --measure-cpus all|LIST, or pass --threads N --unpinned for N unpinned threads",
        ),
        (
            "-mp90",
            "--cyclictest-args: `-p` conflicts with what rtbuild sets: rtbuild measures at SCHED_FIFO priority 99, the priority its validity checks expect; remove `-p` from --cyclictest-args",
        ),
        (
            "-t 8",
            "--cyclictest-args: `-t` conflicts with what rtbuild sets: rtbuild runs one thread per measured CPU, pinned there; choose the CPUs with --measure-cpus all|LIST, or pass --threads N --unpinned for N unpinned threads",
        ),
        (
            "-a0",
            "--cyclictest-args: `-a` conflicts with what rtbuild sets: rtbuild runs one thread per measured CPU, pinned there; choose the CPUs with --measure-cpus all|LIST, or pass --threads N --unpinned for N unpinned threads",
        ),
        (
            "--json=/tmp/x",
            "--cyclictest-args: `--json` conflicts with what rtbuild sets: rtbuild writes cyclictest's JSON into the result folder; remove `--json` from --cyclictest-args",
        ),
        // A prefix of a reserved long option is that option.
        (
            "--js /tmp/x",
            "--cyclictest-args: `--json` conflicts with what rtbuild sets: rtbuild writes cyclictest's JSON into the result folder; remove `--json` from --cyclictest-args",
        ),
        (
            "--threads",
            "--cyclictest-args: `--threads` conflicts with what rtbuild sets: rtbuild runs one thread per measured CPU, pinned there; choose the CPUs with --measure-cpus all|LIST, or pass --threads N --unpinned for N unpinned threads",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(check(text).unwrap_err(), want, "{text}");
    }
}

#[test]
fn unknown_or_malformed_options_are_refused() {
    let cases = [
        (
            "-z",
            "--cyclictest-args: cyclictest (rt-tests 2.4) has no option `-z`; see `cyclictest --help`",
        ),
        (
            "--tracemrk",
            "--cyclictest-args: cyclictest (rt-tests 2.4) has no option `--tracemrk` (did you mean `--tracemark`?); see `cyclictest --help`",
        ),
        (
            "--sp=1",
            "--cyclictest-args: `--sp` is ambiguous for cyclictest (it could be --spike, --spike-nodes); spell the option out",
        ),
        ("-b", "--cyclictest-args: `-b` needs a value; add one, e.g. `-b 100`"),
        ("--spike", "--cyclictest-args: `--spike` needs a value; add one, e.g. `--spike 100`"),
        ("--smi=1", "--cyclictest-args: `--smi` takes no value; drop `=1`"),
        (
            "-m 100",
            "--cyclictest-args: `100` is not an option; cyclictest takes options only, each starting with `-`",
        ),
        (
            "-m ; reboot",
            "--cyclictest-args: `;` only means something to a shell, and rtbuild runs the program without one; pass one program and its arguments (wrap a pipeline in a script on the target)",
        ),
        (
            "--",
            "--cyclictest-args: cyclictest (rt-tests 2.4) has no option `--`; see `cyclictest --help`",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(check(text).unwrap_err(), want, "{text}");
    }
}

/// Every option of the table is one cyclictest 2.4 really has: the installed cyclictest's
/// `--help` names each long option (and its short letter, where it has one).
#[test]
fn the_table_matches_the_installed_cyclictest_help() {
    let out = crate::host::runner::output_unchecked(
        &crate::host::runner::Cmd::new("cyclictest").arg("--help"),
    )
    .expect("cyclictest (rt-tests) must be installed; .ci/setup installs it");
    let help =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(help.contains("cyclictest V 2."), "unexpected help text: {help}");
    for opt in CYCLICTEST.options {
        let long = opt.long.expect("every cyclictest option has a long name");
        if long == "help" {
            continue;
        }
        assert!(help.contains(&format!("--{long}")), "cyclictest --help has no --{long}");
        if let Some(c) = opt.short {
            assert!(
                help.contains(&format!("-{c} ")) || help.contains(&format!("-{c}\t")),
                "no -{c}"
            );
        }
    }
}
