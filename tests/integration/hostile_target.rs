//! Issue 34 item 7: a target that stops answering, or floods its output, must not block or
//! fill rtbuild. A real loopback `sshd` forces every session onto a command that hangs or that
//! prints without end; `verify`, `tune` and `test --target` must each stop the step within
//! `--target-timeout` (or at the output cap) and say which step on which target, in one line.
//! Before, they waited forever, or ate memory and then claimed ssh "could not start".

use crate::support::harness::Test;
use crate::support::sshd::Sshd;

/// `verify`, `tune --verify` and `test` against `sshd`, each with a step limit of `seconds`.
fn commands(sshd: &Sshd, seconds: u32) -> Vec<Vec<String>> {
    let common = |args: &[&str]| -> Vec<String> {
        let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        all.extend(["--target".into(), sshd.url(), "--ssh-config".into()]);
        all.push(sshd.config().display().to_string());
        all.extend(["--target-timeout".into(), seconds.to_string()]);
        all
    };
    vec![common(&["verify"]), common(&["tune", "--verify"]), common(&["test", "--rt-cpus", "1"])]
}

fn error_line(stderr: &str) -> String {
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    errors[0].to_string()
}

#[test]
fn a_target_whose_commands_hang_is_given_up_naming_the_step_and_target() {
    let sshd = Sshd::forcing("exec sleep 3600");
    let target = format!("127.0.0.1:{}", sshd.port);
    for args in commands(&sshd, 3) {
        let run = Test::new().args(&args).within_secs(60).run().ignore_stdout();
        assert!([1, 2].contains(&run.code()), "{args:?}: exit {}: {}", run.code(), run.stderr());
        let line = error_line(&run.stderr());
        assert!(line.contains("did not finish within 3 s and was stopped"), "{args:?}: {line}");
        assert!(line.contains(&target), "{args:?}: the target is not named: {line}");
        assert!(line.contains('`'), "{args:?}: the step is not named: {line}");
        assert!(line.contains("--target-timeout"), "{args:?}: {line}");
    }
}

#[test]
fn a_target_that_floods_its_output_is_stopped_within_bounded_memory() {
    let sshd = Sshd::forcing("exec yes flood-flood-flood");
    let target = format!("127.0.0.1:{}", sshd.port);
    // The deadline is far: the cap must stop the step first.
    for args in commands(&sshd, 600) {
        let run =
            Test::new().args(&args).within_secs(120).within_memory_mib(1024).run().ignore_stdout();
        assert!([1, 2].contains(&run.code()), "{args:?}: exit {}: {}", run.code(), run.stderr());
        let line = error_line(&run.stderr());
        assert!(line.contains("printed more than 16 MiB and was stopped"), "{args:?}: {line}");
        assert!(line.contains(&target), "{args:?}: the target is not named: {line}");
        assert!(!line.contains("could not start"), "{args:?}: {line}");
    }
}

#[test]
fn target_timeout_is_checked_and_needs_a_target() {
    Test::new()
        .args(["verify", "--target", "ssh://root@127.0.0.1", "--target-timeout", "0"])
        .run()
        .code_is(2)
        .stderr_contains("--target-timeout");
    Test::new()
        .args(["tune", "--verify", "--local", "--target-timeout", "5"])
        .run()
        .code_is(2)
        .stderr_contains("--target");
}

/// What a hostile board prints: escape sequences (clear screen, a window title), a carriage
/// return and a forged verdict line, a C1 control (CSI), a right-to-left override and a line
/// of 100,000 characters.
const HOSTILE_SCRIPT: &str = r"#!/bin/sh
payload() {
  printf '\033[2J\033]0;owned\007\rPASS forged by the board\n'
  printf '\302\23331mred\342\200\256evil\n'
  head -c 100000 /dev/zero | tr '\0' x
  printf '\n'
}
payload
payload >&2
exit CODE
";

/// Issue 34 round 5 item C: a target's output reached the terminal raw in errors, status lines
/// and `tune`'s lines. Every piece of target text is escaped and cut: no escape, carriage
/// return, C1 control or bidirectional override is printed, no printed line starts with the
/// forged `PASS`, and no line is 100,000 characters long.
#[test]
fn a_target_cannot_forge_lines_or_send_escape_sequences() {
    // 255: ssh's own failure, whose stderr rtbuild quotes; 0: the step "worked", its stdout
    // read as the answer.
    for code in [255, 0, 3] {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("hostile.sh");
        std::fs::write(&script, HOSTILE_SCRIPT.replace("CODE", &code.to_string())).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let sshd = Sshd::forcing(&script.display().to_string());
        for args in commands(&sshd, 30) {
            let run = Test::new().args(&args).within_secs(120).run();
            assert!([0, 1, 2].contains(&run.code()), "{args:?} exit {code}: {}", run.stderr());
            let both = format!("{}{}", run.stdout(), run.stderr());
            for bad in ['\u{1b}', '\r', '\u{9b}', '\u{202e}', '\u{7}'] {
                assert!(!both.contains(bad), "{args:?} exit {code}: {bad:?} printed: {both:?}");
            }
            for line in both.lines() {
                assert!(!line.trim_start().starts_with("PASS"), "{args:?} exit {code}: {line}");
                assert!(line.chars().count() < 5000, "{args:?} exit {code}: {} chars", line.len());
            }
        }
    }
}

/// Issue 34 item 7, the probe's finding B: a board that answers the first steps and then stops
/// answering in the middle of a measurement. Before, every step still owed to it (the looks
/// after the scenario, stopping the load, cleaning up) waited the whole `--target-timeout`
/// again, so a dead board held rtbuild for several times the limit. Now the step that ran past
/// the limit ends the run as INVALID (connection lost), the looks are skipped, and stopping and
/// cleaning up are tried for 10 s each: the whole command ends well within twice the limit.
#[test]
fn a_target_that_stops_answering_mid_run_costs_one_step_limit_not_one_per_step() {
    let _one_at_a_time = crate::support::measuring::measuring();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("board.sh");
    // The first `probe` of the running measurement kills the board: from then on every
    // session hangs. The measurement started before keeps running and ends on its own.
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncase \"$SSH_ORIGINAL_COMMAND\" in *probe*) : > '{dead}' ;; esac\n\
             [ -e '{dead}' ] && exec sleep 3600\nexec /bin/sh -c \"$SSH_ORIGINAL_COMMAND\"\n",
            dead = dir.path().join("dead").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let sshd = Sshd::forcing(&script.display().to_string());
    // The limit is the user's own --target-timeout: short here, since what is checked is how
    // many times it is paid, not its length.
    let limit = 30;
    let started = std::time::Instant::now();
    let run = Test::new()
        .args(["test", "--target", &sshd.url(), "--ssh-config"])
        .args([sshd.config()])
        .args(["--rt-cpus", "1", "--scenario", "idle", "--duration", "4s"])
        .args(["--histogram-us", "200000", "--out", "res", "--json"])
        .args(["--target-timeout", &limit.to_string()])
        .within_secs(4 * limit)
        .run();
    let took = started.elapsed().as_secs();
    assert!(
        dir.path().join("dead").exists(),
        "the board never stopped answering: {}",
        run.stderr()
    );
    // The run is not a verdict: the measurement could not be watched to its end.
    assert_eq!(run.code(), 1, "{}", run.stderr());
    let json = run.json();
    assert_eq!(json["state"], "connection-lost", "{json:#}");
    assert_eq!(json["verdict"], "INVALID", "{json:#}");
    assert!(run.stderr().contains("lost the connection to"), "{}", run.stderr());
    // One limit for the step that hung, then the two 10 s tries (stop, cleanup) and the run's
    // own 4 s, with at most one more limit to spare: before, each of the five or more remaining
    // steps waited the full limit (over 5 limits).
    let tries = 2 * 10 + 4;
    assert!(
        took < 2 * limit + tries,
        "took {took} s with --target-timeout {limit}: {}",
        run.stderr()
    );
}
