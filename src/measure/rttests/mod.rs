//! The rt-tests suite beyond cyclictest: the twelve programs Qualcomm's RT test kit runs, plus
//! `hwlatdetect`, as rtbuild runs and judges them.
//!
//! - [`Program`] names each program and its [`Kind`] (latency, OS noise, correctness, load,
//!   firmware latency); [`parse_list`] reads `--tests LIST`.
//! - [`options`] holds each program's real option list (rt-tests 2.4) and checks the options a
//!   user adds with `--test-args NAME="…"`.
//! - [`argv`] builds the exact command line rtbuild runs for each program on the RT CPUs.
//! - [`output`] reads any of their outputs, `--json` (with rt-tests' `"cmdline:"` key) or plain
//!   text, detected by content; [`verdict`] judges what was read.
//!
//! cyclictest itself keeps its own streaming parser ([`crate::results::cyclictest`]); this module only
//! recognises a cyclictest file so that callers can hand it over.

pub(crate) mod argv;
pub(crate) mod options;
pub(crate) mod output;
pub(crate) mod verdict;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub(crate) use crate::formats::rt_tests::{DEFAULT_NOISE_US, Kind};

/// One program of the suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub(crate) enum Program {
    #[serde(rename = "cyclictest")]
    Cyclictest,
    #[serde(rename = "cyclicdeadline")]
    Cyclicdeadline,
    #[serde(rename = "oslat")]
    Oslat,
    #[serde(rename = "hackbench")]
    Hackbench,
    #[serde(rename = "pi_stress")]
    PiStress,
    #[serde(rename = "pmqtest")]
    Pmqtest,
    #[serde(rename = "ptsematest")]
    Ptsematest,
    #[serde(rename = "rt-migrate-test")]
    RtMigrateTest,
    #[serde(rename = "ssdd")]
    Ssdd,
    #[serde(rename = "svsematest")]
    Svsematest,
    #[serde(rename = "signaltest")]
    Signaltest,
    #[serde(rename = "sigwaittest")]
    Sigwaittest,
    #[serde(rename = "hwlatdetect")]
    Hwlatdetect,
}

impl Program {
    pub(crate) const ALL: [Program; 13] = [
        Program::Cyclictest,
        Program::Cyclicdeadline,
        Program::Oslat,
        Program::Hackbench,
        Program::PiStress,
        Program::Pmqtest,
        Program::Ptsematest,
        Program::RtMigrateTest,
        Program::Ssdd,
        Program::Svsematest,
        Program::Signaltest,
        Program::Sigwaittest,
        Program::Hwlatdetect,
    ];

    /// The executable's name, as rt-tests installs it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Program::Cyclictest => "cyclictest",
            Program::Cyclicdeadline => "cyclicdeadline",
            Program::Oslat => "oslat",
            Program::Hackbench => "hackbench",
            Program::PiStress => "pi_stress",
            Program::Pmqtest => "pmqtest",
            Program::Ptsematest => "ptsematest",
            Program::RtMigrateTest => "rt-migrate-test",
            Program::Ssdd => "ssdd",
            Program::Svsematest => "svsematest",
            Program::Signaltest => "signaltest",
            Program::Sigwaittest => "sigwaittest",
            Program::Hwlatdetect => "hwlatdetect",
        }
    }

    pub(crate) fn kind(self) -> Kind {
        match self {
            Program::Cyclictest
            | Program::Cyclicdeadline
            | Program::Pmqtest
            | Program::Ptsematest
            | Program::Sigwaittest
            | Program::Svsematest
            | Program::Signaltest => Kind::Latency,
            Program::Oslat => Kind::Noise,
            Program::PiStress | Program::RtMigrateTest | Program::Ssdd => Kind::Correctness,
            Program::Hackbench => Kind::Load,
            Program::Hwlatdetect => Kind::Firmware,
        }
    }

    /// Whether rt-tests 2.4's version of the program writes `--json=FILE`.
    pub(crate) fn writes_json(self) -> bool {
        !matches!(self, Program::Hackbench | Program::Hwlatdetect)
    }

    /// The process name the kernel shows (`comm`, at most 15 bytes).
    pub(crate) fn comm(self) -> &'static str {
        let name = self.name();
        &name[..name.len().min(15)]
    }

    /// The program a command line runs: its first word's file name (`/usr/bin/oslat` → oslat).
    pub(crate) fn from_cmdline(cmdline: &str) -> Option<Program> {
        let first = cmdline.split_whitespace().next()?;
        let base = first.rsplit('/').next().unwrap_or(first);
        base.parse().ok()
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A `--tests` entry that is not a known program.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TestsError {
    #[error(
        "unknown test `{0}` in --tests; use cyclictest, cyclicdeadline, oslat, pmqtest, ptsematest, sigwaittest, svsematest, signaltest, pi_stress, rt-migrate-test, ssdd or hwlatdetect"
    )]
    Unknown(String),
    #[error(
        "hackbench is a load, not a test; run it with --scenario hackbench and keep it out of --tests"
    )]
    HackbenchIsALoad,
    #[error("--tests is empty; name at least one test, e.g. --tests cyclictest,oslat")]
    Empty,
}

impl FromStr for Program {
    type Err = TestsError;
    fn from_str(s: &str) -> Result<Program, TestsError> {
        let s = s.trim();
        // `rt_migrate_test` and `pi-stress` are spelled both ways in scripts and LAVA jobs.
        let normalized = s.replace('_', "-");
        Program::ALL
            .into_iter()
            .find(|p| p.name() == s || p.name().replace('_', "-") == normalized)
            .ok_or_else(|| TestsError::Unknown(s.chars().take(40).collect()))
    }
}

/// `--tests LIST`: programs in the order given, each once; oslat always runs first, as the
/// direct check of the RT CPUs' isolation, before anything else has disturbed them.
pub(crate) fn parse_list(text: &str) -> Result<Vec<Program>, TestsError> {
    let mut list = Vec::new();
    for part in text.split(',').filter(|p| !p.trim().is_empty()) {
        let program: Program = part.parse()?;
        if program == Program::Hackbench {
            return Err(TestsError::HackbenchIsALoad);
        }
        if !list.contains(&program) {
            list.push(program);
        }
    }
    if list.is_empty() {
        return Err(TestsError::Empty);
    }
    if let Some(at) = list.iter().position(|p| *p == Program::Oslat) {
        let oslat = list.remove(at);
        list.insert(0, oslat);
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_kinds() {
        for program in Program::ALL {
            assert_eq!(program.name().parse::<Program>().unwrap(), program);
            assert_eq!(serde_json::to_value(program).unwrap(), program.name());
        }
        assert_eq!("rt_migrate_test".parse::<Program>().unwrap(), Program::RtMigrateTest);
        assert_eq!("pi-stress".parse::<Program>().unwrap(), Program::PiStress);
        assert_eq!(Program::RtMigrateTest.comm(), "rt-migrate-test");
        assert_eq!(Program::Oslat.kind(), Kind::Noise);
        assert_eq!(Program::Ssdd.kind(), Kind::Correctness);
        assert_eq!(Program::from_cmdline("/usr/bin/oslat -c 1"), Some(Program::Oslat));
        assert_eq!(Program::from_cmdline("stress-ng"), None);
        assert!(!Program::Hackbench.writes_json());
    }

    #[test]
    fn lists_put_oslat_first_and_refuse_unknown_names() {
        assert_eq!(
            parse_list("cyclictest,pmqtest,oslat,cyclictest").unwrap(),
            [Program::Oslat, Program::Cyclictest, Program::Pmqtest]
        );
        assert_eq!(
            parse_list("oslat,$(reboot)").unwrap_err().to_string(),
            "unknown test `$(reboot)` in --tests; use cyclictest, cyclicdeadline, oslat, pmqtest, ptsematest, sigwaittest, svsematest, signaltest, pi_stress, rt-migrate-test, ssdd or hwlatdetect"
        );
        assert_eq!(parse_list("hackbench"), Err(TestsError::HackbenchIsALoad));
        assert_eq!(parse_list(" , "), Err(TestsError::Empty));
    }
}
