//! Each program's real option list (rt-tests 2.4, from each program's `--help` on Debian 12 and
//! `hwlatdetect`'s argparse definitions), and the check of the options a user adds per test
//! with `--test-args NAME="…"`.
//!
//! Every option is one of three kinds:
//! - [`Rule::Free`]: rtbuild does not set it; the user's value is passed on;
//! - [`Rule::Replaces`]: rtbuild sets a default (`-D`, `-p`, `-i`, …) and the user's value takes
//!   its place (`--test-args oslat="-D 10m"` runs oslat for ten minutes);
//! - [`Rule::Refused`]: rtbuild relies on it to place, record or read the run (`--json`, the
//!   CPU lists, thread counts, quiet output, help): giving it is an input error that says why.

use super::Program;

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    No,
    Required,
    /// `-a[NUM]`: only attached (`-a3`, `--affinity=3`).
    Optional,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Free,
    Replaces,
    Refused(&'static str),
}

/// One option of a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opt {
    pub short: Option<char>,
    pub long: &'static str,
    pub arg: Arg,
    pub rule: Rule,
}

const fn opt(short: char, long: &'static str, arg: Arg, rule: Rule) -> Opt {
    Opt { short: Some(short), long, arg, rule }
}

const fn long(long: &'static str, arg: Arg, rule: Rule) -> Opt {
    Opt { short: None, long, arg, rule }
}

use Arg::{No, Optional, Required};
use Rule::{Free, Refused, Replaces};

const JSON: Opt =
    long("json", Required, Refused("rtbuild writes the JSON results into its result folder"));
const QUIET: Opt = opt('q', "quiet", No, Refused("rtbuild already runs it quietly"));
const HELP: Opt = opt('h', "help", No, Refused("it prints the help instead of measuring"));
const AFFINITY: Opt =
    opt('a', "affinity", Optional, Refused("rtbuild pins the threads to the RT CPUs (--rt-cpus)"));
const THREADS_OPT: Opt =
    opt('t', "threads", Optional, Refused("rtbuild runs one measurement per RT CPU"));
const SMP: Opt = opt('S', "smp", No, Refused("it spreads threads over every CPU, not the RT CPUs"));
const DURATION: Opt = opt('D', "duration", Required, Replaces);
const INTERVAL: Opt = opt('i', "interval", Required, Replaces);
const PRIO: Opt = opt('p', "prio", Required, Replaces);
const BREAKTRACE: Opt = opt('b', "breaktrace", Required, Free);
const DISTANCE: Opt = opt('d', "distance", Required, Free);
const LOOPS: Opt = opt('l', "loops", Required, Free);

/// A `&'static` option table (const items, so the `opt(…)` calls are evaluated at compile time).
macro_rules! options {
    ($($o:expr),* $(,)?) => {{
        const TABLE: &[Opt] = &[$($o),*];
        TABLE
    }};
}

/// The options of `program`.
pub fn table(program: Program) -> &'static [Opt] {
    match program {
        // cyclictest's own options are checked by `--cyclictest-args`.
        Program::Cyclictest => &[],
        Program::Cyclicdeadline => options![
            AFFINITY,
            DURATION,
            HELP,
            INTERVAL,
            JSON,
            opt('s', "step", Required, Free),
            opt('t', "threads", Required, Refused("rtbuild runs one deadline thread per RT CPU")),
            QUIET,
            BREAKTRACE,
            long("tracemark", No, Free),
        ],
        Program::Oslat => options![
            opt('b', "bucket-size", Required, Free),
            opt('B', "bias", No, Free),
            opt(
                'c',
                "cpu-list",
                Required,
                Refused("rtbuild runs oslat on the RT CPUs (--rt-cpus)")
            ),
            opt(
                'C',
                "cpu-main-thread",
                Required,
                Refused("rtbuild keeps oslat's main thread on a housekeeping CPU"),
            ),
            DURATION,
            JSON,
            opt('f', "rtprio", Required, Free),
            opt('m', "workload-mem", Required, Free),
            QUIET,
            opt('s', "single-preheat", No, Free),
            opt('T', "trace-threshold", Required, Free),
            opt('v', "version", No, Refused("it prints its version instead of measuring")),
            opt('w', "workload", Required, Free),
            opt('z', "zero-omit", No, Free),
            HELP,
        ],
        Program::Hackbench => options![
            opt('f', "fds", Required, Free),
            opt('F', "fifo", No, Free),
            opt('g', "groups", Required, Replaces),
            HELP,
            opt(
                'l',
                "loops",
                Required,
                Refused("rtbuild runs hackbench again and again for the whole scenario"),
            ),
            opt('p', "pipe", No, Free),
            opt('i', "inet", No, Free),
            opt('s', "datasize", Required, Replaces),
            opt('T', "threads", No, Free),
            opt('P', "process", No, Free),
        ],
        Program::PiStress => options![
            opt('d', "debug", No, Free),
            DURATION,
            opt('g', "groups", Required, Free),
            HELP,
            opt('i', "inversions", Required, Free),
            JSON,
            opt('m', "mlockall", No, Replaces),
            opt('p', "prompt", No, Refused("it waits for a key press before starting")),
            QUIET,
            opt('r', "rr", No, Free),
            opt('s', "sched", Required, Free),
            opt('u', "uniprocessor", No, Free),
            opt('v', "verbose", No, Free),
            opt('V', "version", No, Refused("it prints its version instead of testing")),
        ],
        Program::Pmqtest => options![
            AFFINITY,
            BREAKTRACE,
            DISTANCE,
            DURATION,
            opt('f', "forcetimeout", Required, Free),
            HELP,
            INTERVAL,
            JSON,
            LOOPS,
            PRIO,
            QUIET,
            SMP,
            THREADS_OPT,
            opt('T', "timeout", Required, Free),
        ],
        Program::Ptsematest => options![
            AFFINITY,
            BREAKTRACE,
            DISTANCE,
            DURATION,
            HELP,
            INTERVAL,
            JSON,
            LOOPS,
            PRIO,
            QUIET,
            SMP,
            THREADS_OPT,
        ],
        Program::Svsematest | Program::Sigwaittest => options![
            AFFINITY,
            BREAKTRACE,
            DISTANCE,
            DURATION,
            opt('f', "fork", Optional, Free),
            HELP,
            INTERVAL,
            JSON,
            LOOPS,
            PRIO,
            QUIET,
            SMP,
            THREADS_OPT,
        ],
        Program::RtMigrateTest => options![
            opt('c', "check", No, Replaces),
            DURATION,
            opt('e', "equal", No, Free),
            HELP,
            JSON,
            LOOPS,
            opt('m', "maxerr", Required, Free),
            opt('p', "prio", Required, Free),
            QUIET,
            opt('r', "run-time", Required, Free),
            opt('s', "sleep-time", Required, Free),
        ],
        Program::Ssdd => options![
            opt('f', "forks", Required, Free),
            HELP,
            JSON,
            opt('q', "quiet", No, Free),
            opt('i', "iters", Required, Free),
        ],
        Program::Signaltest => options![
            AFFINITY,
            BREAKTRACE,
            DURATION,
            HELP,
            JSON,
            LOOPS,
            opt('m', "mlockall", No, Replaces),
            PRIO,
            QUIET,
            opt('t', "threads", Required, Replaces),
            opt(
                'v',
                "verbose",
                No,
                Refused("it prints every sample instead of the summary rtbuild reads")
            ),
        ],
        Program::Hwlatdetect => options![
            opt('h', "help", No, Refused("it prints the help instead of measuring")),
            long("duration", Required, Replaces),
            long("threshold", Required, Replaces),
            long("hardlimit", Required, Replaces),
            long("window", Required, Free),
            long("width", Required, Free),
            long(
                "report",
                Required,
                Refused("rtbuild keeps hwlatdetect's output in its result folder")
            ),
            long(
                "cpu-list",
                Required,
                Refused("rtbuild runs the hwlat tracer on the RT CPUs (--rt-cpus)")
            ),
            long("debug", No, Free),
            long(
                "quiet",
                No,
                Refused("rtbuild reads hwlatdetect's summary, which --quiet removes")
            ),
            long(
                "watch",
                No,
                Refused("rtbuild reads hwlatdetect's summary, which --watch replaces")
            ),
        ],
    }
}

/// Options the user gave that replace one of rtbuild's defaults, by long name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checked {
    pub replaced: Vec<&'static str>,
}

impl Checked {
    pub fn replaces(&self, long: &str) -> bool {
        self.replaced.contains(&long)
    }
}

/// `--test-args` for one test cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgsError {
    #[error(
        "--test-args {program}: `{option}` is not a {program} option (rt-tests 2.4); see `{program} --help`"
    )]
    Unknown { program: Program, option: String },
    #[error("--test-args {program}: `{option}` cannot be changed: {why}")]
    Refused { program: Program, option: String, why: &'static str },
    #[error("--test-args {program}: `{option}` needs a value; write it as `{option} VALUE`")]
    MissingValue { program: Program, option: String },
    #[error("--test-args {program}: `{option}` takes no value; drop `={value}`")]
    UnexpectedValue { program: Program, option: String, value: String },
    #[error("--test-args {program}: `{word}` is not an option; {program} takes options only")]
    Positional { program: Program, word: String },
}

/// Checks `words` (already split) against `program`'s option list.
pub fn check(program: Program, words: &[String]) -> Result<Checked, ArgsError> {
    let options = table(program);
    let mut checked = Checked::default();
    let mut accept = |o: &Opt, shown: &str| -> Result<(), ArgsError> {
        match o.rule {
            Rule::Refused(why) => {
                Err(ArgsError::Refused { program, option: shown.to_string(), why })
            }
            Rule::Replaces => {
                if !checked.replaced.contains(&o.long) {
                    checked.replaced.push(o.long);
                }
                Ok(())
            }
            Rule::Free => Ok(()),
        }
    };
    let mut positionals = 0;
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        i += 1;
        if let Some(rest) = word.strip_prefix("--") {
            let (name, value) = match rest.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (rest, None),
            };
            let shown = format!("--{name}");
            let o = options
                .iter()
                .find(|o| o.long == name)
                .ok_or_else(|| ArgsError::Unknown { program, option: shown.clone() })?;
            accept(o, &shown)?;
            match (o.arg, value) {
                (Arg::No, Some(v)) => {
                    return Err(ArgsError::UnexpectedValue {
                        program,
                        option: shown,
                        value: v.to_string(),
                    });
                }
                (Arg::Required, None) => {
                    if i >= words.len() {
                        return Err(ArgsError::MissingValue { program, option: shown });
                    }
                    i += 1;
                }
                _ => {}
            }
            continue;
        }
        if let Some(cluster) = word.strip_prefix('-').filter(|c| !c.is_empty()) {
            let chars: Vec<char> = cluster.chars().collect();
            let mut at = 0;
            while at < chars.len() {
                let c = chars[at];
                at += 1;
                let shown = format!("-{c}");
                let o = options
                    .iter()
                    .find(|o| o.short == Some(c))
                    .ok_or_else(|| ArgsError::Unknown { program, option: shown.clone() })?;
                accept(o, &shown)?;
                match o.arg {
                    Arg::No => {}
                    Arg::Optional => break,
                    Arg::Required => {
                        if at == chars.len() {
                            if i >= words.len() {
                                return Err(ArgsError::MissingValue { program, option: shown });
                            }
                            i += 1;
                        }
                        break;
                    }
                }
            }
            continue;
        }
        // rt-migrate-test's one operand: the number of tasks.
        if program == Program::RtMigrateTest
            && positionals == 0
            && !word.is_empty()
            && word.bytes().all(|b| b.is_ascii_digit())
        {
            positionals += 1;
            continue;
        }
        return Err(ArgsError::Positional { program, word: word.chars().take(40).collect() });
    }
    Ok(checked)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn real_options_pass_and_defaults_are_replaced() {
        let checked = check(Program::Oslat, &words("-D 10m -w memmove -m 4K -z")).unwrap();
        assert_eq!(checked.replaced, ["duration"]);
        assert!(
            check(Program::Oslat, &words("--duration=1h -f1 -b 64")).unwrap().replaces("duration")
        );
        assert!(check(Program::Pmqtest, &words("-p90 -i 500 -d 0")).unwrap().replaces("prio"));
        assert!(check(Program::RtMigrateTest, &words("-l 20 -e 3")).is_ok());
        assert!(check(Program::Hwlatdetect, &words("--window 1000000 --width=500000")).is_ok());
        assert!(check(Program::Sigwaittest, &words("-f")).is_ok());
        assert_eq!(check(Program::Ssdd, &[]).unwrap(), Checked::default());
    }

    #[test]
    fn unknown_refused_and_malformed_options_say_why() {
        let err = |p, t: &str| check(p, &words(t)).unwrap_err().to_string();
        assert_eq!(
            err(Program::Oslat, "-D 10m -x"),
            "--test-args oslat: `-x` is not a oslat option (rt-tests 2.4); see `oslat --help`"
        );
        assert_eq!(
            err(Program::Oslat, "-c 0-3"),
            "--test-args oslat: `-c` cannot be changed: rtbuild runs oslat on the RT CPUs (--rt-cpus)"
        );
        assert_eq!(
            err(Program::Pmqtest, "--json=/etc/passwd"),
            "--test-args pmqtest: `--json` cannot be changed: rtbuild writes the JSON results into its result folder"
        );
        assert_eq!(
            err(Program::Ptsematest, "-qa1"),
            "--test-args ptsematest: `-q` cannot be changed: rtbuild already runs it quietly"
        );
        assert_eq!(
            err(Program::Oslat, "-D"),
            "--test-args oslat: `-D` needs a value; write it as `-D VALUE`"
        );
        assert_eq!(
            err(Program::Ssdd, "--help=1"),
            "--test-args ssdd: `--help` cannot be changed: it prints the help instead of measuring"
        );
        assert_eq!(
            err(Program::Oslat, "--zero-omit=yes"),
            "--test-args oslat: `--zero-omit` takes no value; drop `=yes`"
        );
        assert_eq!(
            err(Program::PiStress, "; reboot"),
            "--test-args pi_stress: `;` is not an option; pi_stress takes options only"
        );
        assert_eq!(
            err(Program::RtMigrateTest, "3 4"),
            "--test-args rt-migrate-test: `4` is not an option; rt-migrate-test takes options only"
        );
        assert!(matches!(
            check(Program::Hwlatdetect, &words("--cpu-list 0")),
            Err(ArgsError::Refused { .. })
        ));
    }
}
