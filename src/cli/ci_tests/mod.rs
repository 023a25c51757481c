//! `rtbuild ci`'s pipelines read back: every `rtbuild …` command a job runs is taken out of the
//! generated YAML, its words split as the job's shell splits them (variables set as the job
//! sets them), and parsed by rtbuild's own argument parser. So a flag `ci` takes and drops, a
//! flag a job passes that the command does not know, or a value the shell would change, fails
//! here instead of in the user's pipeline.
//!
//! The reader and the plans are here; the tests are by subject: [`commands`] (every
//! command parses and carries the flags), [`shell`] (the reader itself, quoting) and
//! [`secrets`] (secrets through the environment only).

use std::collections::BTreeMap;

use clap::{CommandFactory, Parser};

use super::ci::{CiArgs, pipeline_text};
use super::{Cli, Command};
use crate::plan::Plan;

/// What a job's shell knows: the job's variables (`MACHINE`, `DISTRO`, `DL_DIR`, …).
type Env = BTreeMap<&'static str, String>;

/// The latency history's database URL the CI secret holds (GitHub passes it as RTBUILD_DB).
const HISTORY_URL: &str = "postgres://ci:s3cret@db.example.com/rtbuild";

/// Stands for the folder `mktemp -d` makes for the signing key.
const KEY_DIR: &str = "/tmp/tmp.rtbuild";

/// Stands for `$(…)` (the bundle URL the build job left): any URL the lab can download.
const SUBSTITUTED: &str = "https://lab.example.com/bundle.tar.gz";

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    /// `&&`, `||`, `|`, `;`, `(`, `)`, `{`, `}`: the end of a simple command.
    End,
    /// `>`, `>>`, `<`, `2>`: the next word is a file, not an argument.
    Redirect,
}

/// One line of a job script in words, as a POSIX shell splits and expands it. Only what the
/// generated scripts use is understood; anything else panics, so a new construct is noticed.
fn tokens(line: &str, env: &Env) -> Vec<Token> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut i = 0;
    let finish = |word: &mut String, in_word: &mut bool, out: &mut Vec<Token>| {
        if *in_word {
            let w = std::mem::take(word);
            out.push(if matches!(w.as_str(), "{" | "}") { Token::End } else { Token::Word(w) });
        }
        *in_word = false;
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' => finish(&mut word, &mut in_word, &mut out),
            '#' if !in_word => break,
            '\'' => {
                let end = chars[i + 1..].iter().position(|&c| c == '\'').expect("closed '") + i + 1;
                word.extend(&chars[i + 1..end]);
                in_word = true;
                i = end;
            }
            '"' => {
                in_word = true;
                i += 1;
                while chars[i] != '"' {
                    if chars[i] == '\\' && "\"\\$`".contains(chars[i + 1]) {
                        word.push(chars[i + 1]);
                        i += 2;
                    } else if chars[i] == '$' {
                        i = expand(&chars, i, env, &mut word);
                    } else {
                        word.push(chars[i]);
                        i += 1;
                    }
                }
            }
            '$' => {
                in_word = true;
                i = expand(&chars, i, env, &mut word) - 1;
            }
            '\\' => {
                word.push(chars[i + 1]);
                in_word = true;
                i += 1;
            }
            '&' | '|' | ';' | '(' | ')' => {
                finish(&mut word, &mut in_word, &mut out);
                if chars.get(i + 1) == Some(&c) {
                    i += 1;
                }
                out.push(Token::End);
            }
            '>' | '<' => {
                if word == "2" {
                    word.clear();
                    in_word = false;
                }
                finish(&mut word, &mut in_word, &mut out);
                if chars.get(i + 1) == Some(&'>') {
                    i += 1;
                }
                out.push(Token::Redirect);
            }
            c => {
                word.push(c);
                in_word = true;
            }
        }
        i += 1;
    }
    finish(&mut word, &mut in_word, &mut out);
    out
}

/// Expands the `$…` at `chars[i]` into `word`; returns the index after it.
fn expand(chars: &[char], i: usize, env: &Env, word: &mut String) -> usize {
    let rest: String = chars[i..].iter().collect();
    if rest.starts_with("$(") {
        let mut depth = 0;
        for (j, &c) in chars.iter().enumerate().skip(i + 1) {
            match c {
                '(' => depth += 1,
                ')' if depth == 1 => {
                    word.push_str(SUBSTITUTED);
                    return j + 1;
                }
                ')' => depth -= 1,
                _ => {}
            }
        }
        panic!("unclosed $( in {rest}");
    }
    assert!(
        !rest.starts_with("${{"),
        "a workflow expression inside a run: script is pasted into the script before the shell runs it; pass it through env: instead: {rest}"
    );
    let (name, len) = if let Some(braced) = rest.strip_prefix("${") {
        let end = braced.find('}').expect("closed ${");
        let inner = &braced[..end];
        (inner.split(":-").next().unwrap_or(inner).to_string(), end + 3)
    } else {
        let name: String =
            rest[1..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        let len = name.len() + 1;
        (name, len)
    };
    match env.get(name.as_str()) {
        Some(value) => word.push_str(value),
        None => word.push_str(&format!("<unset ${name}>")),
    }
    i + len
}

/// The simple commands of `line` that run rtbuild, each as its argv.
fn rtbuild_commands(line: &str, env: &Env) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let mut argv: Vec<String> = Vec::new();
    let mut redirect = false;
    for token in tokens(line, env).into_iter().chain([Token::End]) {
        match token {
            Token::Word(_) if redirect => redirect = false,
            // Assignments before the command (`job=$(…)`) are not its words.
            Token::Word(w)
                if argv.is_empty()
                    && w.split_once('=').is_some_and(|(n, _)| {
                        !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    }) => {}
            Token::Word(w) => argv.push(w),
            Token::Redirect => redirect = true,
            Token::End => {
                if argv.first().is_some_and(|p| p == "rtbuild") {
                    commands.push(std::mem::take(&mut argv));
                }
                argv.clear();
            }
        }
    }
    commands
}

/// Every script line of a generated pipeline: GitLab's `script`/`before_script` items and
/// GitHub's `run` blocks, in document order.
fn script_lines(yaml: &serde_yaml::Value, out: &mut Vec<String>) {
    match yaml {
        serde_yaml::Value::Mapping(map) => {
            for (key, value) in map {
                let key = key.as_str().unwrap_or_default();
                match (key, value) {
                    (
                        "script" | "before_script" | "after_script",
                        serde_yaml::Value::Sequence(s),
                    ) => {
                        out.extend(
                            s.iter().map(|l| l.as_str().expect("a script line").to_string()),
                        );
                    }
                    ("run", serde_yaml::Value::String(text)) => {
                        out.extend(text.lines().map(str::to_string));
                    }
                    _ => script_lines(value, out),
                }
            }
        }
        serde_yaml::Value::Sequence(items) => items.iter().for_each(|v| script_lines(v, out)),
        _ => {}
    }
}

/// The variables of a job of cell `machine` × `distro`.
fn job_env(machine: &str, distro: &str) -> Env {
    Env::from([
        ("MACHINE", machine.to_string()),
        ("DISTRO", distro.to_string()),
        ("DL_DIR", "/srv/cache/downloads".to_string()),
        ("SSTATE_DIR", "/srv/cache/sstate-cache".to_string()),
        ("HOME", "/builder".to_string()),
        ("PATH", "/usr/bin:/bin".to_string()),
        ("RTBUILD_WORK", "/runner/work/repo/rtbuild-work".to_string()),
        ("KAS_WORK_DIR", "/runner/work/repo/rtbuild-work/kas".to_string()),
        ("RTBUILD_DB", HISTORY_URL.to_string()),
        // The signing step's own folder (`mktemp -d`).
        ("key_dir", KEY_DIR.to_string()),
    ])
}

/// Every rtbuild command of `text` for the cell, each parsed by rtbuild's parser; panics
/// naming the line when one does not parse.
fn parsed_commands(text: &str, machine: &str, distro: &str) -> Vec<(Vec<String>, Option<Cli>)> {
    let yaml: serde_yaml::Value = serde_yaml::from_str(text).expect("valid YAML");
    let mut lines = Vec::new();
    script_lines(&yaml, &mut lines);
    let mut env = job_env(machine, distro);
    let mut parsed = Vec::new();
    for line in &lines {
        if let Some(value) = threshold_assignment(line, machine) {
            env.insert("threshold_us", value);
        }
        for argv in rtbuild_commands(line, &env) {
            assert!(!argv.iter().any(|w| w.contains("<unset $")), "unset variable in {line}");
            match Cli::try_parse_from(&argv) {
                Ok(cli) => parsed.push((argv, Some(cli))),
                Err(e) if e.kind() == clap::error::ErrorKind::DisplayVersion => {
                    parsed.push((argv, None));
                }
                Err(e) => panic!("a job runs a command rtbuild refuses:\n{line}\n{argv:?}\n{e}"),
            }
        }
    }
    parsed
}

/// The LAVA steps' `threshold_us=N`, or the value the `case "$MACHINE" in m) threshold_us=N ;;
/// … esac` line gives `machine`.
fn threshold_assignment(line: &str, machine: &str) -> Option<String> {
    let line = line.trim();
    if let Some(value) = line.strip_prefix("threshold_us=") {
        return Some(value.to_string());
    }
    let arms = line.strip_prefix("case \"$MACHINE\" in")?;
    arms.split(";;").find_map(|arm| {
        let (pattern, body) = arm.trim().split_once(')')?;
        (pattern.trim().trim_matches('\'') == machine)
            .then(|| body.trim().strip_prefix("threshold_us=").map(str::to_string))?
    })
}

fn ci_args(argv: &[&str]) -> CiArgs {
    let cli = Cli::try_parse_from(["rtbuild", "ci"].iter().chain(argv)).expect("ci parses");
    match cli.command {
        Command::Ci(args) => args,
        other => panic!("not ci: {other:?}"),
    }
}

/// The machine's LAVA threshold: its requirement, else 100 µs.
fn threshold_of(plan: &Plan) -> u64 {
    plan.machine
        .latency_requirement_us
        .unwrap_or(crate::catalog::latency::DEFAULT_THRESHOLD_US as u64)
}

/// The plan `ci` makes for the cell, with DL_DIR and SSTATE_DIR as the job sets them.
fn cell_plan(args: &CiArgs, machine: &str, distro: &str) -> Plan {
    let mut cell = args.plan.clone();
    cell.machine.name = Some(machine.to_string());
    cell.distro = Some(distro.to_string());
    let env = job_env(machine, distro);
    cell.dl_dir = Some(env["DL_DIR"].clone().into());
    cell.sstate_dir = Some(env["SSTATE_DIR"].clone().into());
    cell.plan().expect("the cell's plan")
}

/// How a flag of `ci` is handled: it changes the jobs (given with these prerequisites), or it
/// is refused with exit 2.
enum Handling {
    Reaches {
        args: &'static [&'static str],
        needs: &'static [&'static str],
    },
    Refused(&'static [&'static str]),
    /// It prints another pipeline (`--canary`: the meta-qcom canary, tested in
    /// `ci::canary` and `a_canary_pipeline_runs_doctor_on_the_branch_head`).
    OwnPipeline,
    /// It shapes the workflow file's own lines, not a job's rtbuild command (`--pin-actions`:
    /// the `uses:` pins, tested in `ci_lint::github_workflows_pass_zizmor` and the test of
    /// `--pin-actions false` beside it; `--kas-image`: the jobs' container, tested in
    /// `ci_lint::a_kas_image_by_digest_passes_every_persona`).
    ShapesWorkflow,
}

const SHA256: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

/// Every flag `rtbuild ci --help` shows, by clap id. A flag missing here fails
/// [`every_ci_flag_reaches_the_jobs_commands_or_is_refused`].
fn handling(id: &str) -> Option<Handling> {
    use Handling::{Reaches, Refused};
    let reaches = |args, needs| Some(Reaches { args, needs });
    match id {
        "format" => reaches(&["--format", "github"], &[]),
        "machines" => reaches(&["--machines", "rb3gen2-core-kit,iq-9075-evk"], &[]),
        "distros" => reaches(&["--distros", "nodistro,qcom-distro"], &[]),
        "runner_cache" => reaches(&["--runner-cache", "/srv/rtbuild"], &[]),
        "bundle" => reaches(&["--bundle"], &[]),
        "lock" => reaches(&["--lock", "tests/data/ci/rt.lock.yml"], &[]),
        "lava" => reaches(&["--lava"], &[]),
        "lava_scenario" => reaches(&["--lava-scenario", "idle,stress-isolated"], &["--lava"]),
        "lava_duration" => reaches(&["--lava-duration", "10m"], &["--lava"]),
        "history_db_secret" => reaches(&["--history-db-secret", "RTBUILD_HISTORY_DB"], &["--lava"]),
        "signing_key_secret" => reaches(&["--signing-key-secret", "RELEASE_SIGNING_KEY"], &[]),
        "qcomflash_header" => {
            reaches(&["--qcomflash-header", "QLIAuthorization=QCOM_LAB_TOKEN"], &["--lava"])
        }
        "lava_tests" => reaches(&["--lava-tests", "cyclictest,oslat"], &["--lava"]),
        "rtbuild_from" => reaches(&["--rtbuild-from", "crates"], &[]),
        "rtbuild_sha256" => reaches(
            &["--rtbuild-sha256", SHA256],
            &["--rtbuild-from", "https://example.com/rtbuild"],
        ),
        "sstate_mirrors" => reaches(&["--sstate-mirror", "https://sstate.example.com/all"], &[]),
        "hashserv" => reaches(&["--hashserv", "hashserv.example.com:8686"], &[]),
        "prserv" => reaches(&["--prserv", "prserv.example.com:8585"], &[]),
        "premirrors" => reaches(&["--premirror", "https://mirror.example.com/sources"], &[]),
        "mirror_tarballs" => reaches(&["--mirror-tarballs"], &[]),
        "machine" => Some(Refused(&["--machine", "iq-9075-evk"])),
        "machines_dir" => reaches(&["--machines-dir", "machines"], &["--lava"]),
        "rt_cpus" => reaches(&["--rt-cpus", "6-7"], &["--lava"]),
        "housekeeping" => reaches(&["--housekeeping", "0-5"], &["--lava"]),
        "fragments" => reaches(&["--fragment", "tests/data/ci/extra.cfg"], &[]),
        "configs" => reaches(&["--config", "CONFIG_LOCALVERSION=\"-rt $(id) `id`\""], &[]),
        "patches" => reaches(&["--patch", "tests/data/ci/fix.patch"], &[]),
        "includes" => reaches(&["--include", "ci/performance.yml"], &[]),
        "cmdline" => reaches(&["--cmdline", "threadirqs"], &[]),
        "no_nohz_full" => reaches(&["--no-nohz-full"], &[]),
        "analyzer" => reaches(&["--analyzer", "rtla"], &[]),
        "cve_check" => reaches(&["--cve-check"], &[]),
        "distro" => Some(Refused(&["--distro", "nodistro"])),
        "hypervisor" => reaches(&["--hypervisor", "gunyah"], &[]),
        "canary" | "canary_cron" => Some(Handling::OwnPipeline),
        "pin_actions" | "kas_image" => Some(Handling::ShapesWorkflow),
        "image" => reaches(&["--image", "core-image-base"], &[]),
        "meta_qcom_url" => {
            reaches(&["--meta-qcom-url", "https://git.example.com/meta-qcom.git"], &[])
        }
        "meta_qcom_branch" => reaches(&["--meta-qcom-branch", "scarthgap"], &[]),
        "meta_qcom_commit" => reaches(&["--meta-qcom-commit", COMMIT], &[]),
        "dl_dir" => Some(Refused(&["--dl-dir", "/srv/downloads"])),
        "sstate_dir" => Some(Refused(&["--sstate-dir", "/srv/sstate"])),
        "meta_qcom" => reaches(&["--meta-qcom", "tests/fixtures/meta-qcom"], &[]),
        "project" => reaches(&["--project", "tests/data/ci/rtbuild.yaml"], &[]),
        _ => None,
    }
}

/// The flags every `ci` run here has, by id; a tested flag with the same id replaces its entry.
const BASE: [(&str, &[&str]); 3] = [
    ("format", &["--format", "gitlab"]),
    ("machines", &["--machines", "rb3gen2-core-kit"]),
    ("rtbuild_from", &["--rtbuild-from", "path:."]),
];

/// `ci`'s arguments: [`BASE`] less each flag `extra` gives itself, then `extra`.
fn argv(extra: &[&[&'static str]]) -> Vec<&'static str> {
    let given = |flag: &str| extra.iter().any(|args| args.contains(&flag));
    let mut out = Vec::new();
    for (_, args) in BASE {
        if !given(args[0]) {
            out.extend(args.iter().copied());
        }
    }
    for args in extra {
        out.extend(args.iter().copied());
    }
    out
}

fn command_name(command: &Command) -> &'static str {
    match command {
        Command::Image(_) => "image",
        Command::Lava(_) => "lava",
        Command::Report(_) => "report",
        Command::Lock(_) => "lock",
        Command::Bundle(_) => "bundle",
        Command::History(_) => "history",
        _ => "other",
    }
}

/// Checks that the `rtbuild image` and `rtbuild lava` commands of `args`' pipeline give the
/// plan `ci` made for each cell.
fn jobs_build_the_plan(args: &CiArgs, text: &str) {
    let machines: Vec<String> = args.machines.clone();
    let distros = if args.distros.is_empty() {
        vec!["qcom-distro".to_string()]
    } else {
        args.distros.clone()
    };
    for machine in &machines {
        for distro in &distros {
            let want = cell_plan(args, machine, distro);
            let commands = parsed_commands(text, machine, distro);
            let mut images = 0;
            let mut histories = 0;
            let mut bundles = 0;
            let mut locked = false;
            for (argv, cli) in &commands {
                match cli.as_ref().map(|c| &c.command) {
                    Some(Command::Image(image)) => {
                        images += 1;
                        let got = image.plan.plan().expect("the job's plan");
                        assert_eq!(got, want, "{argv:?}");
                        assert_eq!(image.build.caches.flags(), args.caches.flags(), "{argv:?}");
                        assert_eq!(image.lock, args.lock, "{argv:?}");
                        let bundling =
                            args.bundle || args.lava || args.signing_key_secret.is_some();
                        assert_eq!(image.post.bundle, bundling, "{argv:?}");
                    }
                    Some(Command::Lava(lava)) => {
                        assert!(args.lava, "{argv:?}");
                        assert_eq!(lava.threshold_us, Some(threshold_of(&want)), "{argv:?}");
                        let plan = lava.cpus.plan().expect("plan").expect("--machine");
                        assert_eq!(plan.layout.clone(), want.layout.clone());
                        assert_eq!(lava.distro, Some(want.settings.distro.to_string()));
                        assert_eq!(lava.measure.scenario.as_deref(), Some(&*args.lava_scenario));
                        assert_eq!(lava.measure.duration, args.lava_duration);
                        let tests =
                            |t: &str| crate::measure::rttests::parse_list(t).expect("tests");
                        assert_eq!(tests(&lava.measure.tests), tests(&args.lava_tests));
                    }
                    Some(Command::Report(report)) => {
                        // The job's threshold, explicitly: never the one the board prints.
                        let threshold = threshold_of(&want) as f64;
                        assert_eq!(report.threshold_us, Some(threshold), "{argv:?}");
                        let history = args.history_db_secret.as_ref().map(|_| HISTORY_URL);
                        assert_eq!(report.history.as_deref(), history, "{argv:?}");
                    }
                    Some(Command::History(history)) => {
                        assert!(args.history_db_secret.is_some(), "{argv:?}");
                        let super::history::HistoryCommand::Add(add) = &history.command else {
                            panic!("a job runs only `history add`: {argv:?}");
                        };
                        assert_eq!(add.runs.len(), 1, "{argv:?}");
                        assert_eq!(add.threshold_us, Some(threshold_of(&want) as f64), "{argv:?}");
                        assert!(add.bundle.is_some(), "records the bundle: {argv:?}");
                        assert!(!argv.iter().any(|w| w.contains(HISTORY_URL)), "{argv:?}");
                        histories += 1;
                    }
                    Some(Command::Bundle(bundle)) => {
                        // Packed again after the lock, so the bundle carries it, and to sign it.
                        let signs = args.signing_key_secret.is_some();
                        assert!(signs || (locked && args.lock.is_none()), "{argv:?}");
                        assert!(locked || args.lock.is_some(), "after the lock: {argv:?}");
                        assert!(args.bundle || args.lava || signs, "{argv:?}");
                        assert_eq!(bundle.dirs.machine.name.as_deref(), Some(machine.as_str()));
                        assert!(bundle.check.is_none() && bundle.diff.is_empty(), "{argv:?}");
                        // The flavour `image --bundle` made: LAVA's .tar.gz, packed again.
                        assert_eq!(bundle.gzip, args.lava, "{argv:?}");
                        let key = signs.then(|| format!("{KEY_DIR}/signing-key.pem").into());
                        assert_eq!(bundle.signing_key, key, "{argv:?}");
                        bundles += 1;
                    }
                    Some(Command::Lock(lock)) => {
                        locked = true;
                        assert_eq!(lock.dirs.machine.name.as_deref(), Some(machine.as_str()));
                        assert_eq!(
                            lock.dirs.machine.catalog.machines_dir,
                            args.plan.machine.catalog.machines_dir
                        );
                    }
                    _ => {}
                }
            }
            assert_eq!(images, 1, "one rtbuild image per job: {commands:?}");
            let lavas = commands
                .iter()
                .filter(|(_, cli)| {
                    matches!(cli.as_ref().map(|c| &c.command), Some(Command::Lava(_)))
                })
                .count();
            let want = if args.history_db_secret.is_some() { lavas } else { 0 };
            assert_eq!(histories, want, "one history add per LAVA job: {commands:?}");
            // The bundle is packed again after `rtbuild lock`, and to be signed.
            let repacked = (args.bundle || args.lava) && args.lock.is_none()
                || args.signing_key_secret.is_some();
            assert_eq!(bundles, usize::from(repacked), "{commands:?}");
        }
    }
}

mod commands;
mod secrets;
mod shell;
