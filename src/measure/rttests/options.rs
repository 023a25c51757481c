//! `--test-args NAME="…"`: the options a user adds to one test, split without a shell and
//! checked against that program's real option table ([`crate::measure::toolargs`], the mechanism
//! `--cyclictest-args` uses). Options rtbuild sets by default but a user may change (`-D`,
//! `-p`, `-i`, …) replace rtbuild's value; options rtbuild relies on are refused.

use super::Program;
use crate::measure::toolargs::{self, OptionError};

/// The option table of `program` (cyclictest has `--cyclictest-args`).
pub(crate) fn table(program: Program) -> Option<&'static toolargs::Program> {
    Some(match program {
        Program::Cyclictest => return None,
        Program::Cyclicdeadline => &toolargs::CYCLICDEADLINE,
        Program::Oslat => &toolargs::OSLAT,
        Program::Hackbench => &toolargs::HACKBENCH,
        Program::PiStress => &toolargs::PI_STRESS,
        Program::Pmqtest => &toolargs::PMQTEST,
        Program::Ptsematest => &toolargs::PTSEMATEST,
        Program::RtMigrateTest => &toolargs::RT_MIGRATE_TEST,
        Program::Ssdd => &toolargs::SSDD,
        Program::Svsematest => &toolargs::SVSEMATEST,
        Program::Signaltest => &toolargs::SIGNALTEST,
        Program::Sigwaittest => &toolargs::SIGWAITTEST,
        Program::Hwlatdetect => &toolargs::HWLATDETECT,
    })
}

/// A test's checked options and the long names of those that replace rtbuild's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Checked {
    pub words: Vec<String>,
    pub given: Vec<&'static str>,
}

impl Checked {
    pub(crate) fn replaces(&self, long: &str) -> bool {
        self.given.contains(&long)
    }

    /// The run time these options set, seconds: `-D 10m`, `-D600`, `--duration 1h`,
    /// `--duration=30s` (rt-tests' and hwlatdetect's units: s, m, h, d; bare numbers are
    /// seconds). The last one given counts; `None` without one.
    pub(crate) fn duration_s(&self) -> Option<u64> {
        let mut found = None;
        let mut words = self.words.iter();
        while let Some(word) = words.next() {
            let value = match word.as_str() {
                "-D" | "--duration" => words.next().map(String::as_str),
                w => w.strip_prefix("--duration=").or_else(|| w.strip_prefix("-D")),
            };
            if let Some(seconds) = value.and_then(time_s) {
                found = Some(seconds);
            }
        }
        found
    }
}

/// `90`, `30s`, `10m`, `2h`, `1d` as seconds.
fn time_s(text: &str) -> Option<u64> {
    let text = text.trim();
    let (number, unit) = match text.char_indices().last()? {
        (at, c) if c.is_ascii_alphabetic() => (&text[..at], c.to_ascii_lowercase()),
        _ => (text, 's'),
    };
    let n: u64 = number.parse().ok()?;
    let scale = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        _ => return None,
    };
    n.checked_mul(scale)
}

/// A `--test-args` value cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TestArgsError {
    #[error(
        "--test-args `{0}` has no `=`; write it as NAME=\"OPTIONS\", e.g. --test-args oslat=\"-D 10m\""
    )]
    NoName(String),
    #[error(transparent)]
    Name(#[from] super::TestsError),
    #[error(
        "--test-args cannot set cyclictest's options; pass them with --cyclictest-args instead"
    )]
    Cyclictest,
    #[error(transparent)]
    Options(#[from] OptionError),
}

/// Reads one `--test-args NAME=OPTIONS` value.
pub(crate) fn parse(value: &str) -> Result<(Program, Checked), TestArgsError> {
    let (name, text) = value
        .split_once('=')
        .ok_or_else(|| TestArgsError::NoName(value.chars().take(40).collect()))?;
    let program: Program = name.parse()?;
    let table = table(program).ok_or(TestArgsError::Cyclictest)?;
    let words = table.check_text(text)?;
    let given = table.given(&words);
    Ok((program, Checked { words, given }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(value: &str) -> String {
        parse(value).unwrap_err().to_string()
    }

    #[test]
    fn real_options_pass_and_say_which_defaults_they_replace() {
        let (program, checked) = parse("oslat=-D 10m -w memmove -m 4K -z").unwrap();
        assert_eq!(program, Program::Oslat);
        assert_eq!(checked.words, ["-D", "10m", "-w", "memmove", "-m", "4K", "-z"]);
        assert_eq!(checked.given, ["duration", "workload", "workload-mem", "zero-omit"]);
        assert!(parse("oslat=--duration=1h -f1 -b 64").unwrap().1.replaces("duration"));
        assert!(parse("pmqtest=-p90 -i 500 -d 0").unwrap().1.replaces("prio"));
        assert!(parse("rt-migrate-test=-l 20 -e").is_ok());
        assert!(parse("hwlatdetect=--window 1000000 --width=500000").is_ok());
        assert!(parse("sigwaittest=-f").is_ok());
        assert_eq!(parse("ssdd=").unwrap().1, Checked::default());
        assert_eq!(parse("pi_stress='-g' 2").unwrap().1.words, ["-g", "2"]);
    }

    #[test]
    fn a_users_duration_is_read_in_every_spelling() {
        let d = |value: &str| parse(value).unwrap().1.duration_s();
        assert_eq!(d("oslat=-D 10m -w memmove"), Some(600));
        assert_eq!(d("oslat=-D90"), Some(90));
        assert_eq!(d("pmqtest=--duration=2h"), Some(7200));
        assert_eq!(d("hwlatdetect=--duration 1d"), Some(86_400));
        assert_eq!(d("oslat=-D 30s -D 40S"), Some(40));
        assert_eq!(d("oslat=-w memmove"), None);
        assert_eq!(d("ssdd="), None);
    }

    #[test]
    fn unknown_refused_and_malformed_options_say_why() {
        assert_eq!(
            err("oslat=-D 10m -x"),
            "--test-args oslat: oslat (rt-tests 2.4) has no option `-x`; see `oslat --help`"
        );
        assert_eq!(
            err("oslat=-c 0-3"),
            "--test-args oslat: `-c` conflicts with what rtbuild sets: rtbuild runs oslat on the RT CPUs (--rt-cpus); remove `-c` from --test-args oslat"
        );
        assert_eq!(
            err("pmqtest=--json=/etc/passwd"),
            "--test-args pmqtest: `--json` conflicts with what rtbuild sets: rtbuild writes the JSON results into its result folder; remove `--json` from --test-args pmqtest"
        );
        assert_eq!(
            err("ptsematest=-qa1"),
            "--test-args ptsematest: `-q` conflicts with what rtbuild sets: rtbuild already runs it quietly; remove `-q` from --test-args ptsematest"
        );
        assert_eq!(
            err("oslat=-D"),
            "--test-args oslat: `-D` needs a value; add one, e.g. `-D 100`"
        );
        assert_eq!(
            err("pi_stress=-D 1 ; reboot"),
            "--test-args pi_stress: `;` only means something to a shell, and rtbuild runs the program without one; pass one program and its arguments (wrap a pipeline in a script on the target)"
        );
        assert_eq!(
            err("oslat -D 10m"),
            "--test-args `oslat -D 10m` has no `=`; write it as NAME=\"OPTIONS\", e.g. --test-args oslat=\"-D 10m\""
        );
        assert_eq!(
            err("cyclictest=-i 100"),
            "--test-args cannot set cyclictest's options; pass them with --cyclictest-args instead"
        );
        assert!(err("nosuch=-x").starts_with("unknown test `nosuch`"));
        assert!(matches!(
            parse("hwlatdetect=--cpu-list 0"),
            Err(TestArgsError::Options(OptionError::Reserved { .. }))
        ));
    }
}
