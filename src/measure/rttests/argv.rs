//! The exact command lines rtbuild runs for each program, placed like cyclictest: measurement
//! threads on the RT CPUs, main threads on a housekeeping CPU, JSON results, quiet output.
//!
//! Programs whose threads cannot be pinned to a list of CPUs in one process (the sender/receiver
//! pairs of pmqtest, ptsematest, sigwaittest, svsematest, and signaltest: `-a NUM` pins every
//! thread to one CPU) run once per RT CPU, one after the other.

use super::Program;
use super::options::Checked;
use crate::host::cpus::CpuLayout;

/// cyclicdeadline's shortest deadline, µs: its 1000 µs default needs HRTICK enabled in
/// `sched_features` ("For less than 2ms run times, you need to have HRTICK enabled").
pub(crate) const CYCLICDEADLINE_INTERVAL_US: u32 = 10_000;

/// hackbench's message loops: far more than any scenario lasts, so it runs until stopped.
const HACKBENCH_LOOPS: &str = "1000000000";

/// One process to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Invocation {
    /// `oslat`, or `pmqtest-cpu3` when the program runs once per RT CPU.
    pub label: String,
    pub argv: Vec<String>,
    /// The `--json` file it writes, when it writes one.
    pub json: Option<String>,
}

/// What every command line is built from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Setup<'a> {
    pub layout: &'a CpuLayout,
    /// Run length in seconds (`-D`).
    pub seconds: u64,
    /// oslat/hwlat limit, µs.
    pub noise_us: u64,
}

/// The invocations of `program` (empty for cyclictest, which [`crate::measure::testrun`] builds).
/// `json_prefix` is the target-side path prefix of the JSON files (`…/idle`); `extra` are the
/// user's checked `--test-args`, appended after rtbuild's options minus those they replace.
pub(crate) fn invocations(
    program: Program,
    setup: &Setup<'_>,
    json_prefix: &str,
    extra: &[String],
    checked: &Checked,
) -> Vec<Invocation> {
    let layout = setup.layout;
    let rt = layout.rt.to_string();
    let main_cpu = layout.main_cpu().to_string();
    let secs = setup.seconds.to_string();
    let json_of = |label: &str| format!("{json_prefix}.{label}.json");
    let one = |label: String, prefix: &[&str], groups: Vec<(&'static str, Vec<String>)>| {
        let json = program.writes_json().then(|| json_of(&label));
        let mut argv: Vec<String> = prefix.iter().map(|s| s.to_string()).collect();
        argv.push(program.name().to_string());
        for (key, words) in groups {
            if !checked.replaces(key) {
                argv.extend(words);
            }
        }
        if let Some(path) = &json {
            argv.push(format!("--json={path}"));
        }
        argv.extend(extra.iter().cloned());
        Invocation { label, argv, json }
    };
    let w = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    let duration = ("duration", w(&["-D", &secs]));
    let quiet = ("quiet", w(&["-q"]));
    match program {
        Program::Cyclictest => Vec::new(),
        Program::Oslat => vec![one(
            "oslat".into(),
            &[],
            vec![
                ("cpu-list", w(&["-c", &rt])),
                ("cpu-main-thread", w(&["-C", &main_cpu])),
                duration,
                quiet,
            ],
        )],
        Program::Cyclicdeadline => vec![one(
            "cyclicdeadline".into(),
            &[],
            vec![
                ("affinity", w(&["-a", &rt])),
                ("threads", w(&["-t", &layout.rt.len().to_string()])),
                ("interval", w(&["-i", &CYCLICDEADLINE_INTERVAL_US.to_string()])),
                duration,
                quiet,
            ],
        )],
        Program::Pmqtest | Program::Ptsematest | Program::Svsematest | Program::Sigwaittest => {
            per_cpu(layout, |cpu| {
                one(
                    format!("{program}-cpu{cpu}"),
                    &[],
                    vec![
                        ("affinity", vec![format!("-a{cpu}")]),
                        ("threads", w(&["-t1"])),
                        ("prio", w(&["-p", "99"])),
                        duration.clone(),
                        quiet.clone(),
                    ],
                )
            })
        }
        Program::Signaltest => per_cpu(layout, |cpu| {
            one(
                format!("signaltest-cpu{cpu}"),
                &[],
                vec![
                    ("affinity", vec![format!("-a{cpu}")]),
                    ("threads", w(&["-t", "2"])),
                    ("prio", w(&["-p", "99"])),
                    ("mlockall", w(&["-m"])),
                    duration.clone(),
                    quiet.clone(),
                ],
            )
        }),
        Program::PiStress => vec![one(
            "pi_stress".into(),
            &["taskset", "-c", &rt],
            // pi_stress pins its groups to CPUs by number: inside `taskset` only -u (every
            // thread on one allowed CPU) can create them ("creating low_priority thread:
            // Invalid argument" otherwise).
            vec![("uniprocessor", w(&["-u"])), ("mlockall", w(&["-m"])), duration, quiet],
        )],
        // Migration is about every CPU: rt-migrate-test runs unpinned.
        Program::RtMigrateTest => {
            vec![one("rt-migrate-test".into(), &[], vec![("check", w(&["-c"])), duration, quiet])]
        }
        Program::Ssdd => vec![one("ssdd".into(), &[], Vec::new())],
        Program::Hwlatdetect => vec![one(
            "hwlatdetect".into(),
            &[],
            vec![
                ("duration", w(&["--duration", &format!("{secs}s")])),
                ("threshold", w(&["--threshold", &setup.noise_us.to_string()])),
                ("cpu-list", w(&["--cpu-list", &rt])),
            ],
        )],
        Program::Hackbench => vec![one(
            "hackbench".into(),
            &["timeout", &format!("{secs}s")],
            vec![
                ("groups", w(&["-g", &layout.housekeeping.len().max(1).to_string()])),
                ("datasize", w(&["-s", "512"])),
                ("loops", w(&["-l", HACKBENCH_LOOPS])),
            ],
        )],
    }
}

fn per_cpu(layout: &CpuLayout, mut build: impl FnMut(u32) -> Invocation) -> Vec<Invocation> {
    layout.rt.iter().map(&mut build).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::rttests::options;
    use crate::plan::CpuSet;

    fn layout(rt: &str) -> CpuLayout {
        CpuLayout::new(
            &CpuSet::range(0, 8),
            &CpuSet::parse(rt).unwrap(),
            None,
            crate::host::cpus::Board::Given,
        )
        .unwrap()
    }

    fn lines(program: Program, rt: &str, extra: &str) -> Vec<String> {
        let layout = layout(rt);
        let extra: Vec<String> = extra.split_whitespace().map(str::to_string).collect();
        let checked = match options::table(program) {
            Some(table) => options::Checked { given: table.given(&extra), words: extra.clone() },
            None => options::Checked::default(),
        };
        let setup = Setup { layout: &layout, seconds: 10, noise_us: 20 };
        invocations(program, &setup, "/tmp/rtbuild-test.x/idle", &extra, &checked)
            .iter()
            .map(|i| i.argv.join(" "))
            .collect()
    }

    #[test]
    fn command_lines() {
        assert_eq!(
            lines(Program::Oslat, "6-7", ""),
            ["oslat -c 6-7 -C 5 -D 10 -q --json=/tmp/rtbuild-test.x/idle.oslat.json"]
        );
        assert_eq!(
            lines(Program::Oslat, "7", "-D 10m -w memmove"),
            ["oslat -c 7 -C 6 -q --json=/tmp/rtbuild-test.x/idle.oslat.json -D 10m -w memmove"]
        );
        assert_eq!(
            lines(Program::Pmqtest, "6-7", "-i 500"),
            [
                "pmqtest -a6 -t1 -p 99 -D 10 -q --json=/tmp/rtbuild-test.x/idle.pmqtest-cpu6.json -i 500",
                "pmqtest -a7 -t1 -p 99 -D 10 -q --json=/tmp/rtbuild-test.x/idle.pmqtest-cpu7.json -i 500",
            ]
        );
        assert_eq!(
            lines(Program::Cyclicdeadline, "3", ""),
            [
                "cyclicdeadline -a 3 -t 1 -i 10000 -D 10 -q --json=/tmp/rtbuild-test.x/idle.cyclicdeadline.json"
            ]
        );
        assert_eq!(
            lines(Program::Signaltest, "7", "-p 80"),
            [
                "signaltest -a7 -t 2 -m -D 10 -q --json=/tmp/rtbuild-test.x/idle.signaltest-cpu7.json -p 80"
            ]
        );
        assert_eq!(
            lines(Program::PiStress, "7", ""),
            [
                "taskset -c 7 pi_stress -u -m -D 10 -q --json=/tmp/rtbuild-test.x/idle.pi_stress.json"
            ]
        );
        assert_eq!(
            lines(Program::RtMigrateTest, "7", ""),
            ["rt-migrate-test -c -D 10 -q --json=/tmp/rtbuild-test.x/idle.rt-migrate-test.json"]
        );
        assert_eq!(
            lines(Program::Ssdd, "7", ""),
            ["ssdd --json=/tmp/rtbuild-test.x/idle.ssdd.json"]
        );
        assert_eq!(
            lines(Program::Hwlatdetect, "7", ""),
            ["hwlatdetect --duration 10s --threshold 20 --cpu-list 7"]
        );
        assert_eq!(
            lines(Program::Hackbench, "6-7", "-p"),
            ["timeout 10s hackbench -g 6 -s 512 -l 1000000000 -p"]
        );
        assert!(lines(Program::Cyclictest, "7", "").is_empty());
    }
}
