//! Issue 13 item 7: the error contract, one table. Every refusal of input is exactly one line
//! `error: <what is wrong>; <how to fix it>`, exit 2, nothing written; a newline carried by the
//! input (a flag, a project-file key, a path) is shown escaped, never echoed raw; an `--out`
//! that is a file says so; user catalogs with clashing names or aliases are refused naming both
//! files; a catalog that isolates CPU 0 is refused when it loads.

use crate::support::harness::Test;
use crate::support::project::generated;

struct Refusal {
    args: &'static [&'static str],
    files: &'static [(&'static str, &'static str)],
    /// Text the one error line must hold (with the test folder written as `@DIR@`).
    want: &'static [&'static str],
}

/// The shipped RB3 Gen 2 entry, renamed and with other aliases and RT CPUs.
fn board(name: &str, aliases: &str, rt: &str, housekeeping: &str) -> String {
    format!(
        "name: {name}\ndescription: test board\naliases: [{aliases}]\nkas_file: ci/{name}.yml\n\
         soc: QCS6490\nsoc_family: qcm6490\ncpus: 8\nrt:\n  rt_cpus: \"{rt}\"\n  \
         housekeeping: \"{housekeeping}\"\n  rcu_expedited: \"1\"\n  cpuidle_off: \"1\"\n\
         serial_console: ttyMSM0,115200\nstorage: ufs\n"
    )
}

const REFUSALS: &[Refusal] = &[
    // Raw newlines from flags and from rtbuild.yaml keys are shown escaped.
    Refusal {
        args: &["generate", "--machine", "rb3gen2-core-kit", "--rt-cpus", "7\nx"],
        files: &[],
        want: &["malformed CPU list `7\\nx`", "; write it like"],
    },
    Refusal {
        args: &["generate", "--machine", "rb3gen2-core-kit", "--distro", "poky\nDISTRO=x"],
        files: &[],
        want: &["unknown distro `poky\\nDISTRO=x`; use one of"],
    },
    Refusal {
        args: &["generate", "--machine", "rb3gen2\nerror: forged"],
        files: &[],
        want: &["unknown machine `rb3gen2\\nerror: forged`;"],
    },
    Refusal {
        args: &["generate"],
        files: &[("rtbuild.yaml", "machine: rb3gen2-core-kit\nrt-cpus: \"7\\nx\"\n")],
        want: &["`7\\nx`", "; write it like"],
    },
    Refusal {
        args: &["generate"],
        files: &[("rtbuild.yaml", "machine: rb3gen2-core-kit\ndistro: \"a\\nb\"\n")],
        want: &["unknown distro `a\\nb`; use one of"],
    },
    Refusal {
        args: &["generate"],
        files: &[("rtbuild.yaml", "machine: \"x\\ny\"\n")],
        want: &["unknown machine `x\\ny`;"],
    },
    Refusal {
        args: &["generate", "--machine", "rb3gen2-core-kit", "--fragment", "a\nb.cfg"],
        files: &[],
        want: &["fragment a\\nb.cfg does not exist; check the path"],
    },
    Refusal {
        args: &["report", "--threshold-us", "7\nx", "in.txt"],
        files: &[],
        want: &["invalid value '7\\nx' for '--threshold-us <US>'", "; see `rtbuild report --help`"],
    },
    // clap's own usage errors, one line each.
    Refusal {
        args: &["test", "--bogus"],
        files: &[],
        want: &["unexpected argument '--bogus'; see `rtbuild test --help` for its flags"],
    },
    Refusal {
        args: &["ci", "--format", "gitlab", "--rtbuild-from", "crates"],
        files: &[],
        want: &["missing --machines <A,B,…>", "; pass it; see `rtbuild ci --help`"],
    },
    Refusal {
        args: &["ci", "--format", "jenkins", "--machines", "iq-9075-evk"],
        files: &[],
        want: &["invalid value 'jenkins' for '--format <FORMAT>'; use one of: gitlab, github"],
    },
    Refusal {
        args: &["report", "--threshold-us", "80", "in.txt", "--baseline"],
        files: &[],
        want: &["'--baseline <", "; "],
    },
    // Options rtbuild sets itself, refused with what to do instead.
    Refusal {
        args: &["test", "--local", "--rt-cpus", "1", "--cyclictest-args", "-mp90"],
        files: &[],
        want: &["`-p` conflicts with what rtbuild sets", "; remove `-p` from --cyclictest-args"],
    },
    Refusal {
        args: &["test", "--local", "--rt-cpus", "1", "--cyclictest-args", "-i 100"],
        files: &[],
        want: &["`-i` conflicts with what rtbuild sets; pass --interval-us instead"],
    },
    Refusal {
        args: &["test", "--local", "--rt-cpus", "1", "--test-args", "cyclictest=-D 5"],
        files: &[],
        want: &["--test-args cannot set cyclictest's options; pass them with --cyclictest-args"],
    },
    // An --out that is a file says so.
    Refusal {
        args: &["generate", "--machine", "rb3gen2-core-kit", "--out", "afile"],
        files: &[("afile", "mine\n")],
        want: &[
            "--out `@DIR@/afile`: `@DIR@/afile` is a file, not a folder; pass a folder (it is created when missing)",
        ],
    },
    Refusal {
        args: &["test", "--local", "--rt-cpus", "1", "--out", "afile"],
        files: &[("afile", "mine\n")],
        want: &[
            "--out `afile`: `afile` is a file, not a folder; pass a folder (it is created when missing)",
        ],
    },
    // Messages that used to end in `: <fix>` or have no fix.
    Refusal {
        args: &["machines", "--machines-dir", "nope"],
        files: &[],
        want: &["cannot read machine folder nope: ", "; check the folder given to --machines-dir"],
    },
    Refusal {
        args: &["generate", "--machine", "rb3gen2-core-kit", "--housekeeping", "0-9"],
        files: &[],
        want: &["are outside rb3gen2-core-kit", "; pick housekeeping CPUs from 0-7"],
    },
    Refusal {
        args: &["generate", "--machine", "rb3gen2-core-kit", "--fragment", "bad.cfg"],
        files: &[("bad.cfg", "CONFIG_A=y\nHZ=1000\n")],
        want: &["fragment bad.cfg:2: ", "; fix that line of the fragment"],
    },
    Refusal {
        args: &["bundle"],
        files: &[],
        want: &["--machine is required to make a bundle; pass --machine NAME"],
    },
];

#[test]
fn every_refusal_is_one_escaped_line_with_a_fix_exit_2_and_nothing_written() {
    for case in REFUSALS {
        let mut test = Test::new();
        for (path, text) in case.files {
            test = test.file(path, text);
        }
        let dir = test.path().to_path_buf();
        let run = test.args(case.args.iter().copied()).run().code_is(2);
        let stderr = run.stderr();
        let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error: ")).collect();
        assert_eq!(errors.len(), 1, "{:?}: {stderr}", case.args);
        let line = errors[0];
        assert!(
            stderr.ends_with(&format!("{line}\n")),
            "{:?}: text after the error: {stderr}",
            case.args
        );
        assert!(
            stderr.lines().all(|l| l.starts_with("error: ") || l.starts_with("  ")),
            "{:?}: a line was split or forged: {stderr:?}",
            case.args
        );
        assert!(line.contains("; "), "{:?}: no `; fix`: {line}", case.args);
        for want in case.want {
            let want = want.replace("@DIR@", &dir.display().to_string());
            assert!(line.contains(&want), "{:?}: {line:?} lacks {want:?}", case.args);
        }
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut given: Vec<String> =
            case.files.iter().map(|(p, _)| p.split('/').next().unwrap().to_string()).collect();
        given.sort();
        given.dedup();
        assert_eq!(left, given, "{:?}: something was written", case.args);
    }
}

/// Runs `args` with a `--machines-dir` holding `files`; returns the one error line.
fn catalog_refusal(files: &[(&str, String)], args: &[&str]) -> (String, std::path::PathBuf) {
    let mut test = Test::new();
    for (name, text) in files {
        test = test.file(&format!("boards/{name}"), text);
    }
    let dir = test.path().join("boards");
    let run =
        test.args(args.iter().copied()).args(["--machines-dir"]).args([&dir]).run().code_is(2);
    let stderr = run.stderr();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: ") && stderr.contains("; "), "{stderr}");
    run.nothing_written("rtbuild");
    (stderr.trim_end().to_string(), dir)
}

#[test]
fn two_user_files_with_one_board_name_are_refused_naming_both() {
    for args in [&["machines"][..], &["generate", "--machine", "my-board"][..]] {
        let (line, dir) = catalog_refusal(
            &[
                ("a.yaml", board("my-board", "", "7", "0-6")),
                ("b.yaml", board("my-board", "", "6", "0-5,7")),
            ],
            args,
        );
        let want = format!(
            "error: machine `my-board` is defined in both {} and {}; keep one of the two files",
            dir.join("a.yaml").display(),
            dir.join("b.yaml").display()
        );
        assert_eq!(line, want, "{args:?}");
    }
}

#[test]
fn an_alias_that_is_another_boards_name_or_alias_is_refused_naming_both_files() {
    // An alias equal to a shipped board's name.
    let (line, dir) = catalog_refusal(
        &[("mine.yaml", board("my-board", "iq-8275-evk", "7", "0-6"))],
        &["machines"],
    );
    assert_eq!(
        line,
        format!(
            "error: alias `iq-8275-evk` of `my-board` ({}) is also the name of `iq-8275-evk` \
             (the shipped machines/iq-8275-evk.yaml); rename or remove one of them",
            dir.join("mine.yaml").display()
        )
    );
    // The same alias on two user boards.
    let (line, dir) = catalog_refusal(
        &[
            ("a.yaml", board("board-a", "lab-board", "7", "0-6")),
            ("b.yaml", board("board-b", "lab-board", "7", "0-6")),
        ],
        &["generate", "--machine", "lab-board"],
    );
    assert!(line.contains("alias `lab-board` of `board-"), "{line}");
    assert!(line.contains("is also an alias of `board-"), "{line}");
    assert!(line.contains(&dir.join("a.yaml").display().to_string()), "{line}");
    assert!(line.contains(&dir.join("b.yaml").display().to_string()), "{line}");
    // An alias a shipped board already has.
    let (line, dir) = catalog_refusal(
        &[("mine.yaml", board("my-board", "qcs6490-rb3gen2", "7", "0-6"))],
        &["machines"],
    );
    assert!(line.starts_with("error: alias `qcs6490-rb3gen2` of `"), "{line}");
    assert!(line.contains("the shipped machines/rb3gen2-core-kit.yaml"), "{line}");
    assert!(line.contains(&dir.join("mine.yaml").display().to_string()), "{line}");
}

#[test]
fn a_user_board_replacing_a_shipped_one_keeps_its_aliases() {
    let test = Test::new().file(
        "boards/rb3.yaml",
        board("rb3gen2-core-kit", "qcs6490-rb3gen2, qcs6490-rb3gen2-core-kit", "6-7", "0-5"),
    );
    let dir = test.path().join("boards");
    let run = test
        .args(["machines", "show", "qcs6490-rb3gen2", "--json", "--machines-dir"])
        .args([&dir])
        .run()
        .stderr_is("note: `qcs6490-rb3gen2` is an alias of `rb3gen2-core-kit`\n")
        .success();
    assert_eq!(run.json()["rt"]["rt_cpus"], "6-7");
}

#[test]
fn a_catalog_that_isolates_cpu_0_is_refused_when_it_loads() {
    for args in [&["machines"][..], &["generate", "--machine", "bad-board"][..]] {
        let (line, dir) =
            catalog_refusal(&[("bad.yaml", board("bad-board", "", "0-1", "2-7"))], args);
        assert_eq!(
            line,
            format!(
                "error: machine file {} is not valid: rt.rt_cpus isolates CPU 0, which must stay a \
                 housekeeping CPU (it keeps boot, timekeeping and unmovable interrupts); fix the \
                 file or remove it",
                dir.join("bad.yaml").display()
            ),
            "{args:?}"
        );
    }
    let (line, _) =
        catalog_refusal(&[("one.yaml", board("one-cpu", "", "1", "0-1"))], &["machines"]);
    assert!(line.contains("rt.rt_cpus and rt.housekeeping overlap"), "{line}");
}

/// The special files of issue 23 items 6 and 12, each made at `path`.
#[derive(Debug, Clone, Copy)]
enum Special {
    Fifo,
    DevZero,
    Folder,
    Socket,
    DanglingLink,
}

impl Special {
    const ALL: [Special; 5] =
        [Special::Fifo, Special::DevZero, Special::Folder, Special::Socket, Special::DanglingLink];

    /// Makes the special file; the socket's listener must live as long as the test runs.
    fn make(self, path: &std::path::Path) -> Option<std::os::unix::net::UnixListener> {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        match self {
            Special::Fifo => {
                rustix::fs::mkfifoat(rustix::fs::CWD, path, rustix::fs::Mode::from_raw_mode(0o644))
                    .unwrap();
            }
            Special::DevZero => std::os::unix::fs::symlink("/dev/zero", path).unwrap(),
            Special::Folder => std::fs::create_dir(path).unwrap(),
            Special::Socket => return Some(std::os::unix::net::UnixListener::bind(path).unwrap()),
            Special::DanglingLink => std::os::unix::fs::symlink("gone", path).unwrap(),
        }
        None
    }

    /// What the one error line says the file is.
    fn said(self) -> &'static str {
        match self {
            Special::Fifo => "is a FIFO, not a file",
            Special::DevZero => "is a character device, not a file",
            Special::Folder => "folder",
            Special::Socket => "is a socket, not a file",
            Special::DanglingLink => "is a symlink to `gone`, which does not exist",
        }
    }
}

impl Special {
    /// What `report` says of the special file in a result folder: a link there is refused
    /// as a link, wherever it points (issue 34, round 5, item I).
    fn said_in_folder(self) -> &'static str {
        match self {
            Special::DevZero => "is a symlink to `/dev/zero`; rtbuild reads no symlinks",
            Special::DanglingLink => "is a symlink to `gone`; rtbuild reads no symlinks",
            other => other.said(),
        }
    }

    fn is_link(self) -> bool {
        matches!(self, Special::DevZero | Special::DanglingLink)
    }
}

/// Issue 23 items 6 and 12: every command that takes a file argument, given each special file
/// kind (a FIFO hung them forever, `/dev/zero` was read until 4.2 GB), refuses it in one line
/// naming what it is, exit 2, at once. `@` is the special file, named as the flag needs.
#[test]
fn every_file_argument_refuses_each_special_file_kind() {
    let lock = "header:\n  version: 14\noverrides:\n  repos:\n    oe-core:\n      commit: \
                0123456789012345678901234567890123456789\n";
    let kas = "rtbuild/rb3gen2-core-kit/rb3gen2-core-kit-rt.yml";
    let cases: &[(&[&str], &str)] = &[
        (&["verify", "@"], "kernel"),
        (&["verify", "--kernel-config", "@"], "kernel.config"),
        (&["verify", "--kernel-image", "@"], "Image"),
        (&["verify", "--deb", "@"], "linux.deb"),
        (&["verify", "--plan", "@", "good.config"], "rtbuild-plan.json"),
        (&["verify", "--target", "ssh://root@127.0.0.1:9", "--ssh-config", "@"], "ssh_config"),
        (&["report", "@"], "cyclictest.txt"),
        (&["report", "--baseline", "@", "h2.txt"], "baseline.json"),
        (&["bundle", "--check", "@"], "b.tar.zst"),
        (
            &["bundle", "--machine", "rb3gen2-core-kit", "--image", "x", "--verify-report", "@"],
            "v.json",
        ),
        (&["lock", "--diff", "@", "good.lock.yml"], "old.lock.yml"),
        (&["lock", "--diff", "good.lock.yml", "@"], "new.lock.yml"),
        (
            &["lock", "--check", "--machine", "rb3gen2-core-kit"],
            "rtbuild/rb3gen2-core-kit/rb3gen2-core-kit-rt.lock.yml",
        ),
        (
            &["generate", "--machine", "rb3gen2-core-kit", "--out", "o", "--fragment", "@"],
            "user.cfg",
        ),
        (&["generate", "--machine", "rb3gen2-core-kit", "--out", "o", "--patch", "@"], "fix.patch"),
        (&["generate", "--project", "@"], "project.yaml"),
        (&["generate", "--machine", "rb3gen2-core-kit", "--out", "o"], "rtbuild.yaml"),
        (&["test", "--target", "ssh://root@127.0.0.1:9", "--ssh-config", "@"], "ssh_config"),
        (
            &["tune", "--verify", "--target", "ssh://root@127.0.0.1:9", "--ssh-config", "@"],
            "ssh_config",
        ),
        (&["kconfig-check", "--kernel-src", "ksrc", "--fragment", "@"], "rt.cfg"),
        // A special file among a catalog folder's boards.
        (&["machines", "--machines-dir", "boards"], "boards/evil.yaml"),
        (&["lock", "--install", "@", "--machine", "rb3gen2-core-kit"], "new.lock.yml"),
        (&["image", "--machine", "rb3gen2-core-kit", "--lock", "@", "--dry-run"], "pin.lock.yml"),
        (&["image", "--machine", "rb3gen2-core-kit", "--lock", "@"], "pin.lock.yml"),
    ];
    let h2 = std::fs::read(
        crate::support::harness::project_root().join("tests/data/reproducers/h2-idle.txt"),
    )
    .unwrap();
    for (args, name) in cases {
        for special in Special::ALL {
            let test = Test::new()
                .file("good.config", "CONFIG_PREEMPT_RT=y\n")
                .file("good.lock.yml", lock)
                .file("h2.txt", &h2)
                .file(kas, "header:\n  version: 14\n")
                // A kernel tree kconfig-check accepts: the fragment is read before it runs.
                .file("ksrc/scripts/kconfig/merge_config.sh", "")
                .file("ksrc/arch/arm64/Kconfig", "")
                .file("boards/good.yaml", board("good-board", "", "1", "0"));
            let _socket = special.make(&test.path().join(name));
            let args: Vec<&str> = args.iter().map(|a| if *a == "@" { *name } else { a }).collect();
            let run = test.args(&args).within_secs(30).run().code_is(2).stdout_is("");
            let stderr = run.stderr();
            let line = stderr.trim_end();
            assert!(
                line.starts_with("error: ") && !line.contains('\n'),
                "{args:?} on {special:?}: not one error line: {stderr}"
            );
            let base = name.rsplit('/').next().unwrap();
            assert!(
                line.contains(special.said()) && line.contains(base),
                "{args:?} on {special:?}: {line}"
            );
        }
    }
}

/// Issue 23 item 6: files a `run.json` names (`files`, `scenarios[].trace.file`) and the
/// `run.json` itself, as special files: the report names what each is and never blocks.
#[test]
fn report_names_special_files_in_a_result_folder() {
    let run_json = r#"{"threshold_us": 100, "scenarios": [{"name": "idle", "files": ["raw/idle.txt"],
        "trace": {"file": "raw/idle.trace", "cpu": 0, "latency_us": 200}}]}"#;
    let h2 = std::fs::read(
        crate::support::harness::project_root().join("tests/data/reproducers/h2-idle.txt"),
    )
    .unwrap();
    for special in Special::ALL {
        // run.json itself.
        let test = Test::new();
        let _socket = special.make(&test.path().join("res/run.json"));
        let run = test.args(["report", "res"]).within_secs(30).run().code_is(2).stdout_is("");
        let line = run.stderr();
        let said = special.said_in_folder();
        assert!(line.contains(said) && line.contains("run.json"), "{special:?}: {line}");
        assert_eq!(line.lines().count(), 1, "{line}");
        // A cyclictest output it names: that scenario fails, naming the file; a link is
        // refused, naming the file, and nothing is reported.
        let test = Test::new().file("res/run.json", run_json);
        let _socket = special.make(&test.path().join("res/raw/idle.txt"));
        if special.is_link() {
            let run = test.args(["report", "res"]).within_secs(30).run().code_is(2).stdout_is("");
            let line = run.stderr();
            assert!(line.contains(said) && line.contains("raw/idle.txt"), "{special:?}: {line}");
            assert_eq!(line.lines().count(), 1, "{line}");
        } else {
            let run = test.args(["report", "res"]).within_secs(30).run().code_is(1);
            let out = run.stdout();
            assert!(out.contains(said) && out.contains("idle.txt"), "{special:?}: {out}");
        }
        // The kept trace of a spike: the report still ends, saying the trace cannot be read.
        let test = Test::new().file("res/run.json", run_json).file("res/raw/idle.txt", &h2);
        let _socket = special.make(&test.path().join("res/raw/idle.trace"));
        let run = test.args(["report", "--json", "res"]).within_secs(30).run();
        assert!(matches!(run.code(), 0 | 1), "{special:?}: {}", run.stderr());
        let explanation = run.json()["spikes"][0]["explanation"].as_str().unwrap().to_string();
        let prefix = if special.is_link() {
            "the kept trace raw/idle.trace: `raw/idle.trace` "
        } else {
            "the kept trace raw/idle.trace cannot be read: "
        };
        assert!(
            explanation.starts_with(prefix) && explanation.contains(said),
            "{special:?}: {explanation}"
        );
    }
}

/// Issue 23 item 11: outputs that cannot be written are input errors, exit 2, one error line
/// saying what the path is: `tune --emit /dev/null` printed a second `caused by` line and
/// exited 1; `lava --out` on a folder, `generate --out /proc/sys/kernel` and `generate --out`
/// on a dangling symlink exited 1.
#[test]
fn outputs_that_cannot_be_written_are_refused_as_input() {
    let test = Test::new().file("existing/.keep", "");
    std::os::unix::fs::symlink("nowhere", test.path().join("dangling")).unwrap();
    let dir = test.path().to_path_buf();
    let cases: [(&[&str], String); 4] = [
        (
            &["tune", "--emit", "/dev/null", "--machine", "rb3gen2-core-kit"],
            "--emit `/dev/null`: `/dev/null` is a character device, not a folder; pass a folder \
             (it is created when missing)"
                .to_string(),
        ),
        (
            &[
                "lava",
                "--machine",
                "rb3gen2-core-kit",
                "--bundle-url",
                "https://x/b.tar.zst",
                "--out",
                "existing",
            ],
            "--out `existing` is a folder; pass the name of a file to write".to_string(),
        ),
        (
            &["generate", "--machine", "rb3gen2-core-kit", "--out", "/proc/sys/kernel"],
            "--out `/proc/sys/kernel` is on procfs (/proc), a kernel file system where rtbuild \
             cannot write files; pass a folder on disk"
                .to_string(),
        ),
        (
            &["generate", "--machine", "rb3gen2-core-kit", "--out", "dangling"],
            format!(
                "--out `{}` is a symlink to `nowhere`, which does not exist; fix the link or \
                 pass another path",
                dir.join("dangling").display()
            ),
        ),
    ];
    for (args, message) in cases {
        let run = Test::new()
            .cwd(&dir)
            .args(args)
            .run()
            .code_is(2)
            .stdout_is("")
            .stderr_contains(&format!("error: {message}\n"));
        let errors = run.stderr().lines().filter(|l| !l.starts_with("  ")).count();
        assert_eq!(errors, 1, "{args:?}: {}", run.stderr());
    }
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["dangling", "existing"], "nothing written");
}

/// Issue 23 item 11: two `generate` runs into one folder sometimes both reported success with
/// one losing its writes. The folder is locked while a run writes: a second one is refused,
/// exit 2, naming the holder (here the test itself holds the lock, as a running generate does).
#[test]
fn a_second_generate_into_a_locked_folder_is_refused_naming_the_holder() {
    let test = Test::new().file("o/.keep", "");
    let held = std::fs::File::open(test.path().join("o")).unwrap();
    rustix::fs::flock(&held, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
    let out = test.path().join("o");
    let run = test
        .args(["generate", "--machine", "rb3gen2-core-kit", "--out", "o"])
        .run()
        .code_is(2)
        .stdout_is("")
        .stderr_contains(&format!(
            "error: output folder {} is being written by another rtbuild (pid {}); wait for it \
             to finish, or pass another --out\n",
            out.display(),
            std::process::id()
        ));
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1, "nothing written: {}", run.stderr());
    drop(held);
    Test::new()
        .cwd(out.parent().unwrap())
        .args(["generate", "--machine", "rb3gen2-core-kit", "--out", "o"])
        .run()
        .stderr_is(&generated(
            "rb3gen2-core-kit (RT CPUs 7, housekeeping 0-6, qcom-distro, qcom-multimedia-image)",
            "rb3gen2-core-kit",
            &out.display().to_string(),
            &[],
        ))
        .ignore_stdout()
        .success();
}

/// A FIFO or a link to `/dev/zero` where `generate` writes its kas file was read to compare
/// it with the new one (a hang, or memory without end); now it is a file rtbuild did not write.
#[test]
fn generate_does_not_read_a_special_file_in_its_output_folder() {
    for special in [Special::Fifo, Special::DevZero] {
        let test = Test::new();
        let kas = test.path().join("o/rb3gen2-core-kit-rt.yml");
        let _none = special.make(&kas);
        test.args(["generate", "--machine", "rb3gen2-core-kit", "--out", "o"])
            .within_secs(30)
            .run()
            .code_is(2)
            .stdout_is("")
            .stderr_contains(&format!(
                "error: {} exists and was not generated by rtbuild; move it away or pass --force to overwrite it\n",
                kas.display()
            ));
    }
}
