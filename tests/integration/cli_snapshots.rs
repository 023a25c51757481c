//! What a user sees, snapshotted with insta: the exit code, stdout and stderr of `--help` for
//! every command and subcommand (walked from `rtbuild --help`, so a new command without a
//! snapshot fails), and of the main outputs: `generate`, the `report` text, the `verify` table
//! and `doctor`. The test's temporary folder and the project folder are redacted (`[TMP]`,
//! `[PROJECT]`); in `doctor` only, what this machine decides (tool versions, free space, limits)
//! is redacted too. Snapshots live in `snapshots/` beside this file; review every one you accept:
//! a snapshot that records a defect is a defect.

use std::collections::{BTreeSet, VecDeque};
use std::path::Path;

use crate::support::fixtures::write_executable;
use crate::support::harness::{Run, Test, data, project_root};

/// The run as a terminal shows it: the command, its exit code, then stdout and stderr in full.
fn seen(command: &str, run: &Run) -> String {
    let stream = |text: String| {
        if text.is_empty() {
            "(empty)\n".to_string()
        } else if text.ends_with('\n') {
            text
        } else {
            format!("{text}\n(no newline at the end)\n")
        }
    };
    format!(
        "$ rtbuild {command}\nexit code: {}\n--- stdout\n{}--- stderr\n{}",
        run.code(),
        stream(run.stdout()),
        stream(run.stderr())
    )
}

/// `text` as a regular expression that matches only itself.
fn literal(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Snapshot settings that redact the run's temporary folder and the project folder.
fn redacting(tmp: &Path) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(&literal(&tmp.display().to_string()), "[TMP]");
    settings.add_filter(&literal(&project_root().display().to_string()), "[PROJECT]");
    settings
}

/// The commands a `--help` lists under `Commands:` (clap's own `help` left out).
fn commands_listed(help: &str) -> Vec<String> {
    let mut listed = Vec::new();
    let mut in_commands = false;
    for line in help.lines() {
        if line == "Commands:" {
            in_commands = true;
        } else if in_commands {
            let Some(entry) = line.strip_prefix("  ") else { break };
            if entry.starts_with(' ') {
                continue; // a wrapped description
            }
            let name = entry.split_whitespace().next().unwrap_or_default();
            if name != "help" {
                listed.push(name.to_string());
            }
        }
    }
    listed
}

/// The snapshot name of `rtbuild PATH --help`.
fn help_name(path: &[String]) -> String {
    if path.is_empty() { "help".to_string() } else { format!("help-{}", path.join("-")) }
}

/// `--help` of `rtbuild` and of every command below it, each its own snapshot, and the list of
/// commands walked. A command added without a snapshot fails here (insta has nothing to compare
/// with), and so does a snapshot left behind by a command that is gone.
#[test]
fn help_of_every_command_and_subcommand() {
    let mut walked: Vec<String> = Vec::new();
    let mut queue: VecDeque<Vec<String>> = VecDeque::from([Vec::new()]);
    while let Some(path) = queue.pop_front() {
        let run = Test::new().args(&path).args(["--help"]).run();
        let name = help_name(&path);
        let command: Vec<&str> = path.iter().map(String::as_str).chain(["--help"]).collect();
        let shown = seen(&command.join(" "), &run);
        redacting(run.path()).bind(|| insta::assert_snapshot!(name.clone(), shown));
        let help = run.stdout();
        assert_eq!((run.code(), run.stderr()), (0, String::new()), "{name}");
        for command in commands_listed(&help) {
            let mut below = path.clone();
            below.push(command);
            queue.push_back(below);
        }
        walked.push(name);
    }
    assert!(walked.len() > 20, "the walk found too few commands: {walked:?}");
    insta::assert_snapshot!("help-walked", walked.join("\n"));

    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/snapshots");
    let prefix = format!("{}__help", module_path!().replace("::", "__"));
    let walked: BTreeSet<String> = walked.into_iter().collect();
    let stale: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|file| {
            let name = file.strip_prefix(&prefix)?.strip_suffix(".snap")?;
            let name = format!("help{name}");
            (name != "help-walked" && !walked.contains(&name)).then_some(file)
        })
        .collect();
    assert!(stale.is_empty(), "snapshots of commands that no longer exist: {stale:?}");
}

/// The machine catalog (the table, and one machine in full), and the one-line refusals of a
/// command or a machine that does not exist.
#[test]
fn machines_and_what_does_not_exist() {
    for (name, command) in [
        ("machines", "machines"),
        ("machines-show-rb3gen2-core-kit", "machines show rb3gen2-core-kit"),
        ("unknown-command", "no-such-command"),
        ("unknown-machine", "generate --machine nope"),
    ] {
        let run = Test::new().args(command.split(' ')).run();
        redacting(run.path()).bind(|| insta::assert_snapshot!(name, seen(command, &run)));
    }
}

/// `generate` for a catalog machine into the test's folder: the kas file's path on stdout, what
/// it wrote on stderr; the second run rewrites nothing and says so.
#[test]
fn generate_prints_what_it_wrote_and_then_that_nothing_changed() {
    let command = "generate --machine rb3gen2-core-kit";
    let first = Test::new().args(command.split(' ')).run();
    redacting(first.path()).bind(|| {
        insta::assert_snapshot!("generate-rb3gen2-core-kit", seen(command, &first));
    });
    let again = Test::new().cwd(first.path()).args(command.split(' ')).run();
    redacting(first.path()).bind(|| {
        insta::assert_snapshot!("generate-rb3gen2-core-kit-again", seen(command, &again));
    });
}

/// A result folder as `rtbuild test` leaves it, from real cyclictest 2.4 JSON outputs in
/// tests/data (idle: two CPUs; stress: one), for a machine with a published reference; its
/// fingerprint records one PREEMPT line, `/sys/kernel/realtime` read as 1, and no cpufreq,
/// thermal zone or throttling counter exposed.
fn result_folder(fingerprint: serde_json::Value) -> Test {
    let run_json = serde_json::json!({
        "machine": "rb3gen2-core-kit",
        "scenarios": [
            {"name": "idle", "files": ["raw/idle.json"]},
            {"name": "stress", "files": ["raw/stress.json"]}
        ],
        "fingerprint": fingerprint,
    });
    let raw = |name: &str| std::fs::read(data(name)).unwrap();
    Test::new()
        .file("results/run.json", run_json.to_string())
        .file("results/raw/idle.json", raw("cyclictest-2.4-json-hist-h50.json"))
        .file("results/raw/stress.json", raw("cyclictest-2.4-json-1thread-cpu1.json"))
}

fn recorded_fingerprint() -> serde_json::Value {
    serde_json::json!({
        "isolated": "", "nohz_full": "", "realtime": true,
        "preempt": ["CONFIG_PREEMPT_RT=y", "CONFIG_PREEMPT_LAZY=n"],
        "cpufreq": [], "thermal": [], "throttling": []
    })
}

/// The `report` text of a result folder, and of one cyclictest JSON file from tests/data on
/// its own.
#[test]
fn report_text_of_a_result_folder_and_of_one_cyclictest_file() {
    let run = result_folder(recorded_fingerprint()).args(["report", "results"]).run();
    redacting(run.path()).bind(|| {
        insta::assert_snapshot!("report-result-folder", seen("report results", &run));
    });

    let file = data("cyclictest-2.4-json-hist-h50.json");
    let run = Test::new().args(["report"]).arg_path(&file).run();
    let command = format!("report {}", file.display());
    redacting(run.path()).bind(|| {
        insta::assert_snapshot!("report-cyclictest-json-hist-h50", seen(&command, &run));
    });
}

/// A fingerprint field `run.json` does not hold is left out of the report's system section
/// (`src/results/report/system.rs` says so), never shown as false or empty.
#[test]
fn report_leaves_out_the_system_facts_run_json_did_not_record() {
    let fingerprint = serde_json::json!({"isolated": "", "nohz_full": ""});
    let run = result_folder(fingerprint).args(["report", "results"]).run();
    assert_eq!(run.code(), 1, "{}", run.stderr());
    let stdout = run.stdout();
    for unrecorded in ["/sys/kernel/realtime", "CPU frequency", "temperature", "throttling"] {
        assert!(!stdout.contains(unrecorded), "{unrecorded} was not recorded:\n{stdout}");
    }
}

/// The `verify` table: Debian's real PREEMPT_RT config (installed by `.ci/setup`, package
/// linux-config-6.12) against a catalog machine's plan, and the 70,000-character value of
/// tests/data/reproducers, which the table cuts.
#[test]
fn verify_table_of_kernel_configs() {
    let config = Path::new("/usr/src/linux-config-6.12/config.amd64_rt_amd64.xz");
    assert!(config.is_file(), "{} is missing; run `bash .ci/setup`", config.display());
    let run = Test::new().args(["verify", "--machine", "rb3gen2-core-kit"]).arg_path(config).run();
    let command = format!("verify --machine rb3gen2-core-kit {}", config.display());
    redacting(run.path()).bind(|| {
        insta::assert_snapshot!("verify-debian-rt-config-rb3gen2", seen(&command, &run));
    });

    let long = data("reproducers/preempt-rt-70000.config");
    let run = Test::new().args(["verify"]).arg_path(&long).run();
    let command = format!("verify {}", long.display());
    redacting(run.path()).bind(|| {
        insta::assert_snapshot!("verify-preempt-rt-70000", seen(&command, &run));
    });
}

/// `doctor` as the unprivileged test user, with a FAKE kas that answers `--version` as kas 5.5
/// and a meta-qcom URL that does not exist (the one problem). Redacted because this machine
/// decides them: the python3 and git versions, and the status and figures of the disk,
/// inotify and open-file checks (free space and limits).
#[test]
fn doctor_lists_every_check_and_the_one_problem() {
    let test = Test::new().unprivileged();
    let kas = test.path().join("bin/kas");
    write_executable(
        &kas,
        "#!/bin/sh\n# FAKE kas: answers --version, refuses anything else\n\
         if [ \"$1\" = --version ]; then echo 'kas 5.5 (configuration format version 23)'; exit 0; fi\n\
         exit 3\n",
    );
    let missing = format!("file://{}/no-meta-qcom", test.path().display());
    let run =
        test.args(["doctor", "--kas"]).arg_path(&kas).args(["--meta-qcom-url", &missing]).run();
    let mut settings = redacting(run.path());
    settings.add_filter(r"python3 \d+\.\d+(\.\d+)?", "python3 [VERSION]");
    settings.add_filter(r"git \d+(\.\d+)+", "git [VERSION]");
    settings.add_filter(
        r"(?m)^(?:ok|warning|problem) +(disk|inotify|open-files) .*\n(?: {20}fix: .*\n)?",
        "[STATUS]  $1 [this machine's free space or limit]\n",
    );
    let command = "doctor --kas [TMP]/bin/kas --meta-qcom-url file://[TMP]/no-meta-qcom";
    settings.bind(|| insta::assert_snapshot!("doctor-unprivileged", seen(command, &run)));
}
