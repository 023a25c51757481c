//! One scenario's programs in the order they run, how long they run, and the load that
//! outlasts them all: the one description `rtbuild test` runs on its target and `rtbuild lava`
//! writes into its job, so both run the same command lines in the same order.

use std::collections::BTreeMap;

use super::scenario::{CustomLoad, LOAD_MARGIN_S, Load, Scenario};
use crate::host::cpus::CpuLayout;
use crate::measure::rttests::Program;
use crate::measure::rttests::argv::{self, Invocation, Setup};
use crate::measure::rttests::options::Checked;

/// The programs of `--tests` in a scenario: those listed before cyclictest (oslat always
/// first, on undisturbed RT CPUs), cyclictest when listed, then the rest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sequence {
    pub before: Vec<Program>,
    pub cyclictest: bool,
    pub after: Vec<Program>,
}

impl Sequence {
    pub(crate) fn of(tests: &[Program]) -> Sequence {
        let split = tests.iter().position(|p| *p == Program::Cyclictest).unwrap_or(tests.len());
        let (before, after) = tests.split_at(split);
        let others = |list: &[Program]| -> Vec<Program> {
            list.iter().copied().filter(|p| *p != Program::Cyclictest).collect()
        };
        Sequence { before: others(before), cyclictest: split < tests.len(), after: others(after) }
    }

    /// Every program but cyclictest, in run order.
    pub(crate) fn others(&self) -> impl Iterator<Item = Program> + '_ {
        self.before.iter().chain(&self.after).copied()
    }
}

/// What every program's command line in a scenario is built from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Suite<'a> {
    pub layout: &'a CpuLayout,
    /// `--tests`, oslat first.
    pub tests: &'a [Program],
    /// `--test-args`, checked, per program.
    pub test_args: &'a BTreeMap<Program, Checked>,
    pub noise_us: u64,
    /// The run time of each measurement (`--duration`), seconds.
    pub seconds: u64,
}

impl Suite<'_> {
    /// The invocations of `program`, JSON results at `{json_prefix}.{label}.json`.
    pub(crate) fn invocations(&self, program: Program, json_prefix: &str) -> Vec<Invocation> {
        self.invocations_for(program, json_prefix, self.seconds)
    }

    fn invocations_for(
        &self,
        program: Program,
        json_prefix: &str,
        seconds: u64,
    ) -> Vec<Invocation> {
        let setup = Setup { layout: self.layout, seconds, noise_us: self.noise_us };
        let checked = self.test_args.get(&program).cloned().unwrap_or_default();
        argv::invocations(program, &setup, json_prefix, &checked.words, &checked)
    }

    /// How many processes `program` runs one after the other (one per RT CPU for the
    /// sender/receiver tests and signaltest, else one).
    pub(crate) fn runs(&self, program: Program) -> usize {
        self.invocations(program, "count").len()
    }

    /// Seconds one invocation of `program` runs: the `-D`/`--duration` given in its
    /// `--test-args` (which replaces rtbuild's), else the scenario's run time.
    pub(crate) fn run_seconds(&self, program: Program) -> u64 {
        self.test_args.get(&program).and_then(Checked::duration_s).unwrap_or(self.seconds)
    }

    /// Seconds every test of the scenario runs, one after the other; cyclictest runs for
    /// `cyclictest_s` when listed.
    pub(crate) fn total_seconds(&self, cyclictest_s: u64) -> u64 {
        let sequence = Sequence::of(self.tests);
        let others: u64 =
            sequence.others().map(|p| self.run_seconds(p) * self.runs(p) as u64).sum();
        let cyclictest = if sequence.cyclictest { cyclictest_s } else { 0 };
        cyclictest + others
    }

    /// The loads of `scenario`, hackbench's included (with its `--test-args`), stopping by
    /// themselves [`LOAD_MARGIN_S`] after `measure_s` seconds of tests.
    pub(crate) fn loads(
        &self,
        scenario: Scenario,
        load_percent: u8,
        custom: Option<&CustomLoad>,
        measure_s: u64,
    ) -> Vec<Load> {
        let timeout_s = measure_s + LOAD_MARGIN_S;
        if scenario != Scenario::Hackbench {
            return scenario.loads(self.layout, load_percent, timeout_s, custom);
        }
        // hackbench on the housekeeping CPUs, stopped by `timeout` like stress-ng's --timeout.
        self.invocations_for(Program::Hackbench, "hackbench", timeout_s)
            .into_iter()
            .map(|i| Load {
                name: i.label,
                cpus: Some(self.layout.housekeeping.clone()),
                argv: i.argv,
            })
            .collect()
    }
}

/// Each load's argv as run: a pinned one under `taskset -c CPUS`.
pub(crate) fn load_argv(load: &Load) -> Vec<String> {
    match &load.cpus {
        Some(cpus) => ["taskset".to_string(), "-c".into(), cpus.to_string()]
            .into_iter()
            .chain(load.argv.iter().cloned())
            .collect(),
        None => load.argv.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::rttests::options;
    use crate::plan::CpuSet;

    #[test]
    fn programs_listed_before_cyclictest_run_before_it() {
        let s = Sequence::of(&[Program::Oslat, Program::Cyclictest, Program::Ssdd]);
        assert_eq!(s.before, [Program::Oslat]);
        assert!(s.cyclictest);
        assert_eq!(s.after, [Program::Ssdd]);
        let s = Sequence::of(&[Program::Oslat, Program::Pmqtest]);
        assert!(!s.cyclictest);
        assert_eq!(s.others().collect::<Vec<_>>(), [Program::Oslat, Program::Pmqtest]);
    }

    #[test]
    fn the_total_counts_each_per_cpu_run_and_a_users_duration() {
        let layout = CpuLayout::new(
            &CpuSet::range(0, 4),
            &CpuSet::parse("2-3").unwrap(),
            None,
            crate::host::cpus::Board::Given,
        )
        .unwrap();
        let mut test_args = BTreeMap::new();
        test_args.insert(Program::Oslat, options::parse("oslat=-D 2m").unwrap().1);
        let tests = [Program::Oslat, Program::Cyclictest, Program::Pmqtest];
        let suite = Suite {
            layout: &layout,
            tests: &tests,
            test_args: &test_args,
            noise_us: 20,
            seconds: 10,
        };
        // oslat 120 s once, cyclictest 10 s, pmqtest 10 s on each of the two RT CPUs.
        assert_eq!(suite.total_seconds(10), 120 + 10 + 2 * 10);
        let loads = suite.loads(Scenario::Hackbench, 60, None, 150);
        assert_eq!(loads.len(), 1);
        assert_eq!(
            load_argv(&loads[0]).join(" "),
            "taskset -c 0-1 timeout 270s hackbench -g 2 -s 512 -l 1000000000"
        );
        let stress = suite.loads(Scenario::Stress, 60, None, 150);
        assert!(load_argv(&stress[0]).join(" ").ends_with("--timeout 270s"), "{stress:?}");
    }
}
