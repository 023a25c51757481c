//! The Qualcomm guide's own commands on a board-shaped target: the lab's 8-CPU arm64 guest
//! (Debian 12's linux-image-rt-arm64 on `qemu-system-aarch64 -M virt,gic-version=3 -smp 8`, see
//! `tests/lab/rt-guest.sh --arch arm64`) booted with the RB3 Gen 2 layout (`isolcpus=7
//! irqaffinity=0-6`) and with the IQ-8275 one (`isolcpus=3 irqaffinity=0-2,4-7`), driven with the
//! built-in machines `rb3gen2-core-kit` and `iq-8275-evk`.
//!
//! Everything is checked from the guest itself, not from rtbuild's own records: a sampler reads
//! `ps -eLo pid,tid,psr,cls,rtprio,comm`, each task's `Cpus_allowed_list`, cyclictest's
//! `/proc/PID/cmdline` and the tuned knobs every few seconds while the run goes on. Each layout
//! boots its guest once, in its one test, and stops it by PID when the test ends. Under TCG the
//! latencies are milliseconds: these tests judge mechanics (where each thread ran, at which
//! policy, which knob had which value), never a latency value (`--max-us 1000000`).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::time::Instant;

use serde_json::Value;

use crate::support::harness::{Test, verify_json_summary};
use crate::support::lab::{self, Arm64Guest, Guest};

/// Prints how long the test has run at each step (shown when it fails, or with `--nocapture`):
/// where the time goes on the slow TCG guest.
struct Steps(Instant);

impl Steps {
    fn start() -> Steps {
        Steps(Instant::now())
    }

    // The test's own log, captured by the harness and shown with its failure.
    #[allow(clippy::print_stderr)]
    fn at(&self, what: &str) {
        eprintln!("[{:7.1} s] {what}", self.0.elapsed().as_secs_f64());
    }
}

/// One seed layout: the board, its RT CPU, the guide's main CPU and housekeeping mask.
struct Board {
    layout: &'static str,
    machine: &'static str,
    rt_cpu: u32,
    main_cpu: u32,
    housekeeping: &'static [u32],
    mask: &'static str,
}

const RB3: Board = Board {
    layout: "rb3",
    machine: "rb3gen2-core-kit",
    rt_cpu: 7,
    main_cpu: 6,
    housekeeping: &[0, 1, 2, 3, 4, 5, 6],
    mask: "7f",
};

const IQ8275: Board = Board {
    layout: "iq8275",
    machine: "iq-8275-evk",
    rt_cpu: 3,
    main_cpu: 2,
    housekeeping: &[0, 1, 2, 4, 5, 6, 7],
    mask: "f7",
};

/// Under TCG with 8 vCPUs on a 2-CPU host every fork on the guest is slow: tune's steps get
/// fifteen minutes each instead of two.
const TARGET_TIMEOUT: [&str; 2] = ["--target-timeout", "900"];

/// What the sampler runs on the guest: one `task PID TID PSR CLS RTPRIO COMM ALLOWED` line per
/// thread of cyclictest and stress-ng, one `cmdline PID ARGS` per cyclictest, one `knob PATH=V`
/// per tuned knob. Runs three programs (`ps`, `tr` per cyclictest, one `awk` for the knobs):
/// every one costs a fifth of a second or more on the loaded TCG guest.
const SAMPLE: &str = r#"ps -eLo pid,tid,psr,cls,rtprio,comm | while read -r pid tid psr cls prio comm; do
  case $comm in cyclictest|stress-ng*) ;; *) continue ;; esac
  allowed=
  while read -r key value; do
    [ "$key" = Cpus_allowed_list: ] && allowed=$value && break
  done </proc/$pid/task/$tid/status 2>/dev/null
  [ -n "$allowed" ] && echo "task $pid $tid $psr $cls $prio $comm $allowed"
  if [ "$comm" = cyclictest ] && [ "$pid" = "$tid" ]; then
    args=$(tr '\0' ' ' </proc/$pid/cmdline 2>/dev/null) && [ -n "$args" ] && echo "cmdline $pid $args"
  fi
done
awk 'FNR == 1 { print "knob " FILENAME "=" $0 }' /proc/sys/kernel/timer_migration \
  /sys/devices/virtual/workqueue/cpumask /proc/sys/kernel/sched_rt_runtime_us \
  /proc/irq/default_smp_affinity
true"#;

/// One thread as the sampler saw it.
#[derive(Debug, Clone)]
struct Task {
    pid: u32,
    tid: u32,
    cpu: u32,
    class: String,
    rtprio: String,
    comm: String,
    allowed: String,
}

/// One sample: its threads, cyclictest command lines and knob values.
#[derive(Debug, Default)]
struct Sample {
    tasks: Vec<Task>,
    cmdlines: BTreeMap<u32, String>,
    knobs: BTreeMap<String, String>,
}

fn parse_sample(text: &str) -> Sample {
    let mut sample = Sample::default();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.first() {
            Some(&"task") if fields.len() == 8 => sample.tasks.push(Task {
                pid: fields[1].parse().unwrap(),
                tid: fields[2].parse().unwrap(),
                cpu: fields[3].parse().unwrap(),
                class: fields[4].into(),
                rtprio: fields[5].into(),
                comm: fields[6].into(),
                allowed: fields[7].into(),
            }),
            Some(&"cmdline") if fields.len() > 2 => {
                sample.cmdlines.insert(fields[1].parse().unwrap(), fields[2..].join(" "));
            }
            Some(&"knob") => {
                if let Some((k, v)) = line["knob ".len()..].split_once('=') {
                    sample.knobs.insert(k.into(), v.into());
                }
            }
            _ => {}
        }
    }
    sample
}

fn knob_map(text: &str) -> BTreeMap<String, String> {
    text.lines().filter_map(|l| l.split_once('=')).map(|(k, v)| (k.into(), v.into())).collect()
}

/// Starts the sampler on the guest itself (an ssh round trip costs seconds of emulated crypto,
/// longer than a scenario's samples may wait): a background loop writing `SAMPLE`'s output,
/// separated by `---` lines, to /tmp/rtlab-samples until /tmp/rtlab-sampler.stop exists. It runs
/// on the housekeeping CPUs only, at SCHED_FIFO 1: under TCG with the guide's load on every
/// housekeeping CPU a sample at normal priority could take longer than the loaded scenario,
/// and see none of it. It reads each thread's status without a fork per thread.
fn start_sampler(guest: &Guest, board: &Board) {
    let housekeeping: Vec<String> = board.housekeeping.iter().map(u32::to_string).collect();
    let script = format!(
        "rm -f /tmp/rtlab-samples /tmp/rtlab-sampler.stop /tmp/rtlab-sampler.done; \
         cat >/tmp/rtlab-sample.sh <<'EOF'\n{SAMPLE}\nEOF\n\
         setsid taskset -c {} chrt -f 1 sh -c 'while [ ! -e /tmp/rtlab-sampler.stop ]; do sh /tmp/rtlab-sample.sh; \
           echo ---; sleep 1; done >/tmp/rtlab-samples 2>&1; touch /tmp/rtlab-sampler.done' \
           </dev/null >/dev/null 2>&1 &",
        housekeeping.join(",")
    );
    guest.sh(&script);
}

/// Stops the sampler and reads what it saw.
fn stop_sampler(guest: &Guest) -> Vec<Sample> {
    let text = guest.sh("touch /tmp/rtlab-sampler.stop; n=0; \
         while [ ! -e /tmp/rtlab-sampler.done ] && [ $n -lt 120 ]; do sleep 1; n=$((n + 1)); done; \
         cat /tmp/rtlab-samples; rm -f /tmp/rtlab-samples /tmp/rtlab-sample.sh \
           /tmp/rtlab-sampler.stop /tmp/rtlab-sampler.done");
    text.split("\n---\n").map(parse_sample).collect()
}

/// The guide's cyclictest options (`-a RT -t 1 -m -i 1000 -p 99 -h 100`), each with its value,
/// and `--mainaffinity MAIN` under load: every one must be on the command line rtbuild ran.
fn guide_options(board: &Board, loaded: bool) -> Vec<String> {
    let mut want = vec![
        format!("-a {}", board.rt_cpu),
        "-t 1".into(),
        "-m".into(),
        "-i 1000".into(),
        "-p 99".into(),
        "-h 100".into(),
    ];
    if loaded {
        want.push(format!("--mainaffinity {}", board.main_cpu));
    }
    want
}

/// Options rtbuild documents it adds to the guide's line: the duration (`-D`), quiet output
/// (`-q`) and the JSON summary (`--json=FILE`).
const ADDED: [&str; 3] = ["-D", "-q", "--json"];

/// The cyclictest arguments as `OPTION [VALUE]` groups (`--opt=value` as `--opt value`; a value
/// is what follows an option and does not start with `-`).
fn option_groups(cmdline: &str) -> Vec<String> {
    let mut groups: Vec<String> = Vec::new();
    for word in cmdline.split_whitespace().skip(1) {
        match groups.last_mut() {
            Some(last) if !word.starts_with('-') && !last.contains(' ') => {
                last.push(' ');
                last.push_str(word);
            }
            _ => groups.push(match word.split_once('=') {
                Some((option, value)) if word.starts_with("--") => format!("{option} {value}"),
                _ => word.into(),
            }),
        }
    }
    groups
}

/// The command line without the options rtbuild adds, as a set of groups.
fn without_added(cmdline: &str) -> BTreeSet<String> {
    option_groups(cmdline)
        .into_iter()
        .filter(|g| !ADDED.contains(&g.split(' ').next().unwrap()))
        .collect()
}

/// The guide's commands on the guest booted with `board`'s layout; the guest is handed back
/// (still running) for more checks in the same test.
fn guide_on_arm64(board: &Board, steps: &Steps) -> Arm64Guest {
    steps.at(&format!("{}: booting", board.layout));
    let booted = Arm64Guest::boot(board.layout);
    steps.at("ssh answers");
    let guest = &booted.guest;
    let target = guest.target_args();
    // One round trip (each ssh connection costs seconds of emulated crypto): the CPU count, the
    // isolated CPUs, the release, then the kernel's /boot/config-*.
    let facts = guest.sh("nproc --all; cat /sys/devices/system/cpu/isolated; r=$(uname -r); \
         echo \"$r\"; cat \"/boot/config-$r\"");
    let mut facts_lines = facts.lines();
    let mut fact = || facts_lines.next().unwrap_or_default().trim().to_string();
    assert_eq!(fact(), "8", "an 8-CPU guest");
    assert_eq!(fact(), board.rt_cpu.to_string());

    // verify --target: PREEMPT_RT and the plan's options from /boot/config-*, the isolation.
    let release = fact();
    assert!(release.ends_with("-rt-arm64"), "{release}");
    let boot_config = format!("/boot/config-{release}");
    let config: String = facts.lines().skip(3).map(|l| format!("{l}\n")).collect();
    assert!(config.contains("CONFIG_PREEMPT_RT=y"), "{boot_config} on the guest: {config}");
    steps.at("guest checks done; verify --target");
    let verify = Test::new()
        .args(["--json", "verify", "--machine", board.machine])
        .args(&target)
        .args(TARGET_TIMEOUT)
        .run();
    let json = verify.json();
    // stderr sums up the checks Debian's kernel fails (options the plan asks for) in one line.
    let verify = verify.stderr_is(&verify_json_summary(&json));
    let checks = json["reports"][0]["checks"].as_array().unwrap().clone();
    let find = |name: &str| {
        checks
            .iter()
            .find(|c| c["check"] == name)
            .unwrap_or_else(|| panic!("no {name} check in {json:#}"))
            .clone()
    };
    let rt = find("CONFIG_PREEMPT_RT");
    assert_eq!((&rt["status"], &rt["where"]), (&"pass".into(), &boot_config.clone().into()));
    assert_eq!(find("architecture")["status"], "pass", "{}", find("architecture"));
    for option in checks.iter().filter(|c| c["check"].as_str().unwrap().starts_with("CONFIG_")) {
        let name = option["check"].as_str().unwrap();
        let set = config.lines().any(|l| l == format!("{name}=y"));
        assert_eq!(option["status"], if set { "pass" } else { "fail" }, "{option}");
    }
    for check in
        ["cmdline isolcpus", "cmdline nohz_full", "cmdline rcu_nocbs", "cmdline irqaffinity"]
    {
        assert_eq!(find(check)["status"], "pass", "{}", find(check));
    }
    assert_eq!(find("isolated CPUs")["found"], board.rt_cpu.to_string());
    // The guest lacks the plan's extra command-line options and the rtbuild-tune package.
    verify.code_is(1);

    // test --tune with the guide's load, sampled from the guest while it runs.
    steps.at("verify done");
    let before = knob_map(&guest.knobs());
    steps.at("knobs read");
    start_sampler(guest, board);
    steps.at("sampler started; test --tune");
    let run = Test::new()
        .args(["test", "--machine", board.machine])
        .args(&target)
        // 20 s: with 10 s scenarios the sampler saw no loaded cyclictest on IQ-8275 in three
        // runs on a busy host (load ~12).
        .args(["--scenario", "idle,stress", "--load", "60", "--tune", "--duration", "20s"])
        // The guide's -h 100 (rtbuild's default histogram is 1000 µs).
        .args(["--out", "res", "--histogram-us", "100", "--max-us", "1000000"])
        // No --main-cpu: the board's default is the guide's (6 on RB3 Gen 2, 2 on IQ-8275).
        .args(TARGET_TIMEOUT)
        .run()
        .ignore_stdout()
        .stderr_redacted_is(status_lines, &guide_stderr(board));
    steps.at("test done");
    let samples = stop_sampler(guest);
    steps.at(&format!("sampler stopped: {} samples", samples.len()));
    let dir = run.path().join("res");
    let json: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(json["state"], "finished", "{json:#}\n{}", run.stderr());
    assert_eq!(json["rt_cpus"], board.rt_cpu.to_string());
    assert_eq!(json["tuning"]["applied"], true, "{:#}", json["tuning"]);
    assert_eq!(json["tuning"]["reverted"], true, "{:#}\n{}", json["tuning"], run.stderr());
    assert!(matches!(run.code(), 0 | 1), "{}", run.stderr());

    // Where every thread ran, from the samples.
    let tasks: Vec<&Task> = samples.iter().flat_map(|s| &s.tasks).collect();
    let measuring: Vec<&&Task> =
        tasks.iter().filter(|t| t.comm == "cyclictest" && t.class == "FF").collect();
    assert!(!measuring.is_empty(), "the sampler never saw cyclictest's thread: {samples:#?}");
    for t in &measuring {
        assert_eq!((t.cpu, t.rtprio.as_str()), (board.rt_cpu, "99"), "{t:?}");
        assert_eq!(t.allowed, board.rt_cpu.to_string(), "{t:?}");
    }
    let mut loaded_seen = false;
    let mut cmdlines_seen = BTreeSet::new();
    for sample in &samples {
        let workers: Vec<&Task> =
            sample.tasks.iter().filter(|t| t.comm.starts_with("stress-ng")).collect();
        for w in &workers {
            assert_ne!(w.cpu, board.rt_cpu, "a load thread on the RT CPU: {w:?}");
            assert!(
                !cpus_of(&w.allowed).contains(&board.rt_cpu),
                "a load thread allowed on the RT CPU: {w:?}"
            );
        }
        // One pinned worker per housekeeping CPU (the parent stress-ng is pinned as well).
        let pinned: BTreeMap<u32, BTreeSet<u32>> = workers
            .iter()
            .filter(|w| cpus_of(&w.allowed).len() == 1)
            .fold(BTreeMap::new(), |mut m, w| {
                m.entry(cpus_of(&w.allowed)[0]).or_insert_with(BTreeSet::new).insert(w.tid);
                m
            });
        let loaded = !workers.is_empty();
        for (pid, cmdline) in &sample.cmdlines {
            let mut guide: BTreeSet<String> = guide_options(board, loaded).into_iter().collect();
            let ran = without_added(cmdline);
            // rtbuild also pins the main thread when idle (the guide's idle line leaves it on
            // the RT CPU, where -a puts it): the only option allowed beyond the guide's.
            if !loaded {
                guide.extend(
                    ran.iter()
                        .filter(|g| **g == format!("--mainaffinity {}", board.main_cpu))
                        .cloned(),
                );
            }
            assert_eq!(ran, guide, "cyclictest ran as `{cmdline}`");
            cmdlines_seen.insert(loaded);
            if ran.contains(&format!("--mainaffinity {}", board.main_cpu)) {
                let main = sample.tasks.iter().find(|t| t.pid == *pid && t.tid == *pid);
                // Once its measuring thread runs (cyclictest pins its main thread before it
                // starts that one; a sample can catch it just after its exec, still allowed on
                // every housekeeping CPU), its allowed list is the main CPU. Its PSR is where it
                // last ran, which can still be the RT CPU (seen on the guest: allowed 6, PSR 7,
                // the main thread asleep since `-a 7` started it there), so PSR is only checked
                // for the measuring thread.
                let measuring =
                    sample.tasks.iter().any(|t| t.pid == *pid && t.tid != *pid && t.class == "FF");
                if let Some(main) = main.filter(|_| measuring) {
                    assert_eq!(main.allowed, board.main_cpu.to_string(), "{main:?}");
                }
            }
        }
        if loaded && !sample.cmdlines.is_empty() && pinned.len() == board.housekeeping.len() {
            let cpus: Vec<u32> = pinned.keys().copied().collect();
            assert_eq!(cpus, board.housekeeping, "{workers:#?}");
            loaded_seen = true;
        }
        // The tuning, read back while cyclictest ran (guide steps 1, 2, 4, 5; no cpufreq here).
        if !sample.cmdlines.is_empty() {
            let k = &sample.knobs;
            assert_eq!(k["/proc/sys/kernel/timer_migration"], "0", "{k:?}");
            assert_eq!(k["/sys/devices/virtual/workqueue/cpumask"], board.mask, "{k:?}");
            assert_eq!(k["/proc/sys/kernel/sched_rt_runtime_us"], "-1", "{k:?}");
            assert_eq!(k["/proc/irq/default_smp_affinity"], board.mask, "{k:?}");
        }
    }
    assert!(
        cmdlines_seen.contains(&true),
        "no cyclictest command line seen under load in {} samples ({} with cyclictest)",
        samples.len(),
        samples.iter().filter(|s| !s.cmdlines.is_empty()).count()
    );
    assert!(
        loaded_seen,
        "no sample saw cyclictest beside one pinned stress-ng worker per housekeeping CPU \
         {:?}: {samples:#?}",
        board.housekeeping
    );
    // The load each worker reached is recorded for the stress scenario.
    let stress = json["scenarios"].as_array().unwrap().iter().find(|s| s["name"] == "stress");
    let stress = stress.unwrap_or_else(|| panic!("no stress scenario: {json:#}"));
    assert_eq!(stress["state"], "done", "{stress:#}");
    assert!(!stress["probe"]["load"].as_array().unwrap().is_empty(), "{stress:#}");

    // Every knob equal to before after revert; nothing of the run left on the guest.
    assert_eq!(knob_map(&guest.knobs()), before, "test --tune must give back every knob");
    let left = guest.sh("ps -eo comm | grep -cE '^(cyclictest|stress-ng)' || true");
    assert_eq!(left.trim(), "0");
    steps.at("knobs compared");
    let report = Test::new().args(["report", "--json"]).arg_path(&dir).run().stderr_is("");
    assert!(matches!(report.code(), 0 | 1));
    assert_eq!(report.json()["machine"], board.machine, "{:#}", report.json());
    steps.at("report done");
    booted
}

/// What `test --tune` says on stderr for `board` once [`status_lines`] redacted it: the tuning,
/// the managed interrupt the kernel fixed to the RT CPU (by name), each scenario, the revert and
/// the result line.
fn guide_stderr(board: &Board) -> String {
    let rt = board.rt_cpu;
    let hk = if board.rt_cpu == 7 { "0-6" } else { "0-2,4-7" };
    format!(
        "      Tuning ssh://root@127.0.0.1:[PORT] (saved values are restored afterwards)\n\
         warning: IRQ [N] (virtio0-req.{rt}) is fixed to RT CPU {rt} by the kernel (a managed interrupt: its affinity cannot be written) and can fire there during a measurement; boot with isolcpus=managed_irq,{rt} to keep managed interrupts off the RT CPUs\n\
         \x20  Measuring idle for 20s on RT CPUs {rt}\n\
         \x20   Measured idle: [..]\n\
         \x20    Loading stress: 7 stress-ng generators pinned to CPUs {hk}\n\
         \x20  Measuring stress for 20s on RT CPUs {rt}\n\
         \x20   Measured stress: [..]\n\
         \x20   Reverted the tuning rtbuild applied\n\
         \x20     Result [VERDICT] against 1000000 µs (--max-us); results in res\n"
    )
}

/// `test`'s stderr with what the TCG guest makes vary redacted: the ssh port, IRQ numbers, each
/// scenario's figures and the verdict (`Measured NAME: [..]`, `Result [VERDICT]`), the progress
/// lines, and the per-scenario findings about measured values (`warning: NAME: …`, `note: NAME:
/// …`: cycles completed, samples above the histogram, the load level reached, kernel-log lines
/// logged under emulation) and the kernel log's warnings from before the run. Those values are
/// milliseconds under TCG and differ every run; the test judges mechanics from the guest itself.
/// Every other line is kept as printed.
fn status_lines(stderr: &str) -> String {
    let mut kept = String::new();
    for line in stderr.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let scenario_finding = matches!(words.first(), Some(&("warning:" | "note:")))
            && matches!(words.get(1), Some(&("idle:" | "stress:")));
        let progress = words.first() == Some(&"Measuring") && line.contains(" elapsed, ");
        if scenario_finding || progress || line.contains(" already holds ") {
            continue;
        }
        let line = match line.find("127.0.0.1:") {
            Some(at) => {
                let port_at = at + "127.0.0.1:".len();
                let digits = line[port_at..].bytes().take_while(u8::is_ascii_digit).count();
                format!("{}[PORT]{}", &line[..port_at], &line[port_at + digits..])
            }
            None => line.to_string(),
        };
        let line = match (words.first(), line.find(": ")) {
            (Some(&"Measured"), Some(at)) => format!("{}: [..]", &line[..at]),
            (Some(&"Result"), _) => match line.split_once("Result ") {
                Some((head, rest)) => {
                    format!("{head}Result [VERDICT]{}", &rest[rest.find(' ').unwrap_or(0)..])
                }
                None => line,
            },
            _ => line,
        };
        let line = match line.strip_prefix("warning: IRQ ") {
            Some(rest) => format!("warning: IRQ [N]{}", &rest[rest.find(' ').unwrap_or(0)..]),
            None => line,
        };
        kept.push_str(&line);
        kept.push('\n');
    }
    kept
}

/// `--trace-above-us` with `analyzer` (ftrace or rtla) on the arm64 PREEMPT_RT kernel: under
/// TCG cyclictest crosses 50 µs at once, so the breach is certain. The trace is kept, it is the
/// RT CPU's, and every tracing setting reads back as before.
fn breach_traced_on_arm64(guest: &Guest, board: &Board, analyzer: &str, steps: &Steps) {
    steps.at(&format!("breach with {analyzer}"));
    let before = guest.tracing_settings();
    steps.at("tracing settings read; test --trace-above-us");
    let run = Test::new()
        .args(["test", "--machine", board.machine])
        .args(guest.target_args())
        .args(["--scenario", "idle", "--duration", "5s", "--trace-above-us", "50"])
        .args(["--analyzer", analyzer, "--out", "res", "--max-us", "1000000"])
        .args(TARGET_TIMEOUT)
        .run()
        .ignore_stdout()
        .stderr_has_line(&format!("   Measuring idle for 5s on RT CPUs {}", board.rt_cpu));
    // What each analyzer says it did: rtla names its own command; both give the top-level
    // settings back (an rtla stop here once left tracing_on at 0).
    let run = match analyzer {
        "rtla" => run.stderr_has_line(&format!(
            "   Analyzing idle: rtla timerlat -a 50 for 5s on CPUs {}",
            board.rt_cpu
        )),
        _ => run,
    }
    .stderr_has_line("    Restored the tracing settings in /sys/kernel/tracing");
    steps.at("traced test done");
    let dir = run.path().join("res");
    let json: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    let s = &json["scenarios"][0];
    assert_eq!(json["settings"]["analyzer"], analyzer, "{json:#}");
    assert_eq!(json["tracing"]["restored"], true, "{:#}\n{}", json["tracing"], run.stderr());
    let trace = &s["trace"];
    let file = trace["file"].as_str().unwrap_or_else(|| panic!("no trace kept: {s:#}"));
    assert_eq!(file, "trace-idle.txt", "{s:#}");
    let explanation = trace["explanation"].as_str().unwrap_or_default();
    assert!(!explanation.is_empty(), "{trace}");
    if analyzer == "rtla" {
        let raw = fs::read_to_string(dir.join("raw/idle.rtla.txt")).unwrap();
        assert!(raw.contains("hit stop tracing"), "rtla did not stop: {raw}\n{s:#}");
        let timerlat = fs::read_to_string(dir.join("trace-idle.timerlat.txt")).unwrap();
        assert!(timerlat.contains("timerlat"), "rtla's own trace is kept");
        if raw.contains("## CPU ") {
            assert_eq!(trace["cpu"], board.rt_cpu, "{trace}");
        } else {
            // Debian 12's rtla 6.1 stops at -a but prints no auto-analysis.
            assert!(explanation.contains("printed no auto-analysis"), "{explanation}");
        }
    } else {
        let text = fs::read_to_string(dir.join(file)).unwrap();
        assert!(text.contains("tracing_mark_write"), "the kept trace has cyclictest's mark");
        assert_eq!(trace["cpu"], board.rt_cpu, "the breach is the RT CPU's: {trace}");
        assert!(!explanation.contains("cannot be explained"), "{trace}");
    }
    assert_eq!(guest.tracing_settings(), before, "tracing settings must read back as before");
    steps.at("tracing settings compared");
    // A zombie (exited, not yet collected by the guest's init) runs nothing and is not counted.
    let left = guest.sh("ps -eo pid=,ppid=,stat=,comm=,args= | \
         awk '$3 !~ /^Z/ && $4 ~ /^(cyclictest|rtla|trace-cmd)$/' || true");
    assert_eq!(left.trim(), "", "nothing of the traced run may be left running on the guest");
    let report = Test::new().args(["report", "--json"]).arg_path(&dir).run().stderr_is("");
    assert_eq!(report.json()["spikes"][0]["scenario"], "idle", "{:#}", report.json());
    assert!(matches!(report.code(), 0 | 1), "{}", report.stderr());
    assert!(matches!(run.code(), 0 | 1), "{}", run.stderr());
    steps.at("traced report done");
}

/// `0-2,4-6` as its CPUs.
fn cpus_of(list: &str) -> Vec<u32> {
    let mut cpus = Vec::new();
    for part in list.split(',') {
        match part.split_once('-') {
            Some((a, b)) => cpus.extend(a.parse::<u32>().unwrap()..=b.parse().unwrap()),
            None => cpus.push(part.parse().unwrap()),
        }
    }
    cpus
}

/// RB3 Gen 2's layout (RT CPU 7, housekeeping 0-6, mask 7f): the guide's cyclictest line with
/// the default main CPU 6, the load, the tuning and its revert, verify naming /boot/config-*.
#[test]
fn the_guides_commands_on_an_8_cpu_arm64_rt_guest_with_the_rb3gen2_layout() {
    let _one = lab::exclusive();
    let steps = Steps::start();
    guide_on_arm64(&RB3, &steps);
    steps.at("guest stopped");
}

/// IQ-8275's layout (RT CPU 3 in the middle, housekeeping 0-2,4-7, mask f7), main CPU 2 by
/// default; then, on the same guest, a breach traced by ftrace and by rtla on the arm64 kernel
/// (RT CPU 3, in the middle of the mask, is where the trace must come from).
#[test]
fn the_guides_commands_on_an_8_cpu_arm64_rt_guest_with_the_iq8275_layout() {
    let _one = lab::exclusive();
    let steps = Steps::start();
    let booted = guide_on_arm64(&IQ8275, &steps);
    breach_traced_on_arm64(&booted.guest, &IQ8275, "ftrace", &steps);
    breach_traced_on_arm64(&booted.guest, &IQ8275, "rtla", &steps);
    drop(booted);
    steps.at("guest stopped");
}

#[test]
fn cpu_lists_and_option_groups_parse_as_the_guest_prints_them() {
    assert_eq!(cpus_of("0-2,4-7"), [0, 1, 2, 4, 5, 6, 7]);
    assert_eq!(cpus_of("7"), [7]);
    assert_eq!(
        option_groups("cyclictest -a 7 -t 1 -m -i 1000 --mainaffinity=6 -q --json=/tmp/x.json"),
        ["-a 7", "-t 1", "-m", "-i 1000", "--mainaffinity 6", "-q", "--json /tmp/x.json"]
    );
    let ran =
        without_added("cyclictest -m -p 99 -a 3 -t 1 --mainaffinity=2 -i 1000 -h 100 -q -D 15");
    let guide: BTreeSet<String> = guide_options(&IQ8275, true).into_iter().collect();
    assert_eq!(ran, guide);
}

/// `test --tune`'s stderr as the guest runs gave it (RB3 Gen 2 and IQ-8275, under load on the
/// shared host): the redaction leaves exactly the lines [`guide_stderr`] states.
#[test]
fn the_guide_runs_stderr_keeps_every_line_but_what_the_guest_makes_vary() {
    let rb3 = concat!(
        "      Tuning ssh://root@127.0.0.1:37463 (saved values are restored afterwards)\n",
        "warning: IRQ 27 (virtio0-req.7) is fixed to RT CPU 7 by the kernel (a managed interrupt: its affinity cannot be written) and can fire there during a measurement; boot with isolcpus=managed_irq,7 to keep managed interrupts off the RT CPUs\n",
        "warning: the kernel log on ssh://root@127.0.0.1:37463 already holds 2 warning lines from before the run (information; only those logged during a scenario count), the last: [   24.540173] sched: RT throttling activated\n",
        "   Measuring idle for 20s on RT CPUs 7\n",
        "    Measured idle: INVALID; max thread 0 on CPU7 1276704 µs; 1 device interrupt source on RT CPUs: IRQ 27 ITS-MSI 16392 Edge virtio0-req.7\n",
        "warning: idle: thread 0 completed 3555 of 20000 expected cycles\n",
        "note: idle: IRQ 27 (ITS-MSI 16392 Edge virtio0-req.7) is fixed to RT CPU 7 by the kernel (a managed interrupt: its affinity cannot be written) and fired 1 time on CPU 7 during the run; boot with isolcpus=managed_irq,7 to keep managed interrupts off the RT CPUs\n",
        "note: idle: thread 0: 3539 samples above the 100 µs histogram: percentiles above 100 µs are bounds (≥100); the max (1276704 µs) is cyclictest's own\n",
        "     Loading stress: 7 stress-ng generators pinned to CPUs 0-6\n",
        "   Measuring stress for 20s on RT CPUs 7\n",
        "   Measuring stress: 1s elapsed, 19s left\n",
        "    Measured stress: INVALID; max thread 0 on CPU7 291873 µs; no device interrupts on RT CPUs\n",
        "warning: stress: the load on CPU 0 reached 0 % where --load asked 60 % (tolerance ±10 points): the run is not under the load it claims\n",
        "warning: stress: the load on CPU 1 reached 0 % where --load asked 60 % (tolerance ±10 points): the run is not under the load it claims\n",
        "warning: stress: the load on CPU 2 reached 0 % where --load asked 60 % (tolerance ±10 points): the run is not under the load it claims\n",
        "warning: stress: the load on CPU 3 reached 0 % where --load asked 60 % (tolerance ±10 points): the run is not under the load it claims\n",
        "warning: stress: the load on CPU 4 reached 0 % where --load asked 60 % (tolerance ±10 points): the run is not under the load it claims\n",
        "warning: stress: the load on CPU 5 reached 0 % where --load asked 60 % (tolerance ±10 points): the run is not under the load it claims\n",
        "warning: stress: the load on CPU 6 reached 0 % where --load asked 60 % (tolerance ±10 points): the run is not under the load it claims\n",
        "warning: stress: the load had stopped before cyclictest finished\n",
        "warning: stress: 0 cyclictest threads ran SCHED_FIFO, expected 1 (one per measured CPU)\n",
        "warning: stress: thread 0 completed 3040 of 20000 expected cycles\n",
        "warning: stress: fails: the kernel logged `[  280.029415] hrtimer: interrupt took 66134309 ns` during the run\n",
        "warning: stress: fails: the kernel logged `[  296.996525] hrtimer: interrupt took 63082914 ns` during the run\n",
        "note: stress: thread 0: 3040 samples above the 100 µs histogram: percentiles above 100 µs are bounds (≥100); the max (291873 µs) is cyclictest's own\n",
        "    Reverted the tuning rtbuild applied\n",
        "      Result INVALID against 1000000 µs (--max-us); results in res\n",
    );
    assert_eq!(status_lines(rb3), guide_stderr(&RB3));
    let iq8275 = concat!(
        "      Tuning ssh://root@127.0.0.1:43175 (saved values are restored afterwards)\n",
        "warning: IRQ 23 (virtio0-req.3) is fixed to RT CPU 3 by the kernel (a managed interrupt: its affinity cannot be written) and can fire there during a measurement; boot with isolcpus=managed_irq,3 to keep managed interrupts off the RT CPUs\n",
        "warning: the kernel log on ssh://root@127.0.0.1:43175 already holds 2 warning lines from before the run (information; only those logged during a scenario count), the last: [   59.153343] sched: RT throttling activated\n",
        "   Measuring idle for 20s on RT CPUs 3\n",
        "    Measured idle: INVALID; max thread 0 on CPU3 2248092 µs; 1 device interrupt source on RT CPUs: IRQ 23 ITS-MSI 16388 Edge virtio0-req.3\n",
        "warning: idle: thread 0 completed 2060 of 20000 expected cycles\n",
        "note: idle: IRQ 23 (ITS-MSI 16388 Edge virtio0-req.3) is fixed to RT CPU 3 by the kernel (a managed interrupt: its affinity cannot be written) and fired 1 time on CPU 3 during the run; boot with isolcpus=managed_irq,3 to keep managed interrupts off the RT CPUs\n",
        "note: idle: thread 0: 2058 samples above the 100 µs histogram: percentiles above 100 µs are bounds (≥100); the max (2248092 µs) is cyclictest's own\n",
        "     Loading stress: 7 stress-ng generators pinned to CPUs 0-2,4-7\n",
        "   Measuring stress for 20s on RT CPUs 3\n",
        "   Measuring stress: 1s elapsed, 19s left\n",
        "    Measured stress: INVALID; max thread 0 on CPU3 363941 µs; no device interrupts on RT CPUs\n",
        "warning: stress: the load on CPU 0 reached 0 % where --load asked 60 % (tolerance ±10 points): the run is not under the load it claims\n",
        "warning: stress: the load on CPU 1 reached 0 % where --load asked 60 % (tolerance ±10 points): the run is not under the load it claims\n",
        "warning: stress: the load on CPU 2 reached 0 % where --load asked 60 % (tolerance ±10 points): the run is not under the load it claims\n",
        "warning: stress: the load on CPU 4 reached 0 % where --load asked 60 % (tolerance ±10 points): the run is not under the load it claims\n",
        "warning: stress: the load on CPU 5 reached 0 % where --load asked 60 % (tolerance ±10 points): the run is not under the load it claims\n",
        "warning: stress: the load on CPU 6 reached 0 % where --load asked 60 % (tolerance ±10 points): the run is not under the load it claims\n",
        "warning: stress: the load on CPU 7 reached 0 % where --load asked 60 % (tolerance ±10 points): the run is not under the load it claims\n",
        "warning: stress: the load had stopped before cyclictest finished\n",
        "warning: stress: 0 cyclictest threads ran SCHED_FIFO, expected 1 (one per measured CPU)\n",
        "warning: stress: thread 0 completed 1435 of 20000 expected cycles\n",
        "warning: stress: fails: the kernel logged `[  274.478735] hrtimer: interrupt took 693439614 ns` during the run\n",
        "warning: stress: fails: the kernel logged `[  285.741141] hrtimer: interrupt took 319966545 ns` during the run\n",
        "warning: stress: fails: the kernel logged `[  336.209230] hrtimer: interrupt took 686851456 ns` during the run\n",
        "note: stress: thread 0: 1435 samples above the 100 µs histogram: percentiles above 100 µs are bounds (≥100); the max (363941 µs) is cyclictest's own\n",
        "    Reverted the tuning rtbuild applied\n",
        "      Result INVALID against 1000000 µs (--max-us); results in res\n",
    );
    assert_eq!(status_lines(iq8275), guide_stderr(&IQ8275));
    // A line of another kind stays as printed, so the comparison fails on it.
    let error = "error: could not reach ssh://root@127.0.0.1:4022; check the target URL\n";
    assert_eq!(
        status_lines(error),
        "error: could not reach ssh://root@127.0.0.1:[PORT]; check the target URL\n"
    );
}
