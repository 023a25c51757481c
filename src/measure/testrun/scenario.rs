//! [`Scenario`]s and the load each one runs on the housekeeping CPUs, from the seed guides:
//! `idle` (no load), `stress` (Qualcomm: one `stress-ng --cpu 1 --cpu-load N` pinned per
//! housekeeping CPU), `stress-isolated` (RK3562J: full unpinned load, the kernel's isolation
//! alone keeps it off the RT CPUs), `full` (RK3588/Phytium: cpu + io + vm on the housekeeping CPUs),
//! `system-load` (RK3588/RK3562J "full load": stress-ng on every CPU, the measured ones included,
//! no isolation needed; labelled [`SYSTEM_LOAD_LABEL`] wherever it is shown),
//! `custom` (the user's own `--load-cmd`, pinned to the housekeeping CPUs unless
//! `--load-unpinned`), `hackbench` (Qualcomm's RT kit: rt-tests' hackbench scheduler/IPC load
//! on the housekeeping CPUs; built in [`crate::measure::testrun`] so that `--test-args hackbench=…`
//! applies).

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::cyclictest::{self, Measure};
use crate::formats::run_json::Commands;
use crate::host::cpus::CpuLayout;
use crate::plan::CpuSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Scenario {
    Idle,
    Stress,
    StressIsolated,
    Full,
    Custom,
    Hackbench,
    SystemLoad,
}

/// How a `system-load` result is labelled in every output, so it is never compared with an
/// isolated run as if alike.
pub(crate) const SYSTEM_LOAD_LABEL: &str = "load on the measured CPUs, no isolation";

/// Where a scenario's load may run, and so what its validity checks expect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LoadPlace {
    /// Pinned to the housekeeping CPUs (`taskset`).
    Housekeeping,
    /// Unpinned: only the kernel's isolation keeps it off the RT CPUs, which must be isolated.
    Isolated,
    /// On every CPU, the measured ones included, by design (`system-load`).
    Everywhere,
}

/// A scenario name that rtbuild does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown scenario `{0}`; use idle, stress, stress-isolated, full, system-load, custom or hackbench"
)]
pub(crate) struct UnknownScenario(pub String);

impl FromStr for Scenario {
    type Err = UnknownScenario;
    fn from_str(s: &str) -> Result<Scenario, UnknownScenario> {
        match s.trim() {
            "idle" => Ok(Scenario::Idle),
            "stress" => Ok(Scenario::Stress),
            "stress-isolated" => Ok(Scenario::StressIsolated),
            "full" => Ok(Scenario::Full),
            "custom" => Ok(Scenario::Custom),
            "hackbench" => Ok(Scenario::Hackbench),
            "system-load" => Ok(Scenario::SystemLoad),
            other => Err(UnknownScenario(other.chars().take(40).collect())),
        }
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Scenario::Idle => "idle",
            Scenario::Stress => "stress",
            Scenario::StressIsolated => "stress-isolated",
            Scenario::Full => "full",
            Scenario::Custom => "custom",
            Scenario::Hackbench => "hackbench",
            Scenario::SystemLoad => "system-load",
        })
    }
}

/// `idle,stress`: scenarios in the order given, each once.
pub(crate) fn parse_list(text: &str) -> Result<Vec<Scenario>, UnknownScenario> {
    let mut list = Vec::new();
    for part in text.split(',') {
        let scenario: Scenario = part.parse()?;
        if !list.contains(&scenario) {
            list.push(scenario);
        }
    }
    Ok(list)
}

/// One load generator: argv, and the CPUs `taskset` pins it to (`None`: not pinned).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Load {
    pub name: String,
    pub cpus: Option<CpuSet>,
    pub argv: Vec<String>,
}

/// `--load-cmd`: the load of scenario `custom`, an argv run without a shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CustomLoad {
    pub argv: Vec<String>,
    /// Pinned to the housekeeping CPUs (`false` with `--load-unpinned`).
    pub pinned: bool,
}

impl Scenario {
    /// Whether the load may run anywhere, kept off the RT CPUs by the kernel's isolation alone.
    pub(crate) fn unpinned_load(self, custom: Option<&CustomLoad>) -> bool {
        self.load_place(custom) == LoadPlace::Isolated
    }

    /// Where this scenario's load runs.
    pub(crate) fn load_place(self, custom: Option<&CustomLoad>) -> LoadPlace {
        match self {
            Scenario::StressIsolated => LoadPlace::Isolated,
            Scenario::Custom if custom.is_some_and(|c| !c.pinned) => LoadPlace::Isolated,
            Scenario::SystemLoad => LoadPlace::Everywhere,
            _ => LoadPlace::Housekeeping,
        }
    }

    /// The label every output shows beside this scenario's figures, when it needs one.
    pub(crate) fn label(self) -> Option<&'static str> {
        (self == Scenario::SystemLoad).then_some(SYSTEM_LOAD_LABEL)
    }

    /// The load generators of this scenario; they stop by themselves after `timeout_s`
    /// (stress-ng's `--timeout`; the custom load runs under `timeout`).
    pub(crate) fn loads(
        self,
        layout: &CpuLayout,
        load_percent: u8,
        timeout_s: u64,
        custom: Option<&CustomLoad>,
    ) -> Vec<Load> {
        let timeout = format!("{timeout_s}s");
        let stress = |args: &[String]| {
            let mut argv = vec!["stress-ng".to_string()];
            argv.extend(args.iter().cloned());
            argv.extend(["--timeout".to_string(), timeout.clone()]);
            argv
        };
        let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        let hk = layout.housekeeping.len().to_string();
        match self {
            Scenario::Idle => Vec::new(),
            Scenario::Stress => layout
                .housekeeping
                .iter()
                .map(|cpu| Load {
                    name: format!("cpu{cpu}"),
                    cpus: Some(CpuSet::from_cpus([cpu])),
                    argv: stress(&s(&["--cpu", "1", "--cpu-load", &load_percent.to_string()])),
                })
                .collect(),
            Scenario::StressIsolated => {
                let all = layout.cpus.len().to_string();
                vec![Load {
                    name: "isolated".into(),
                    cpus: None,
                    argv: stress(&s(&[
                        "--cpu",
                        &all,
                        "--cpu-method",
                        "all",
                        "--io",
                        &hk,
                        "--vm",
                        "2",
                        "--vm-bytes",
                        "5%",
                    ])),
                }]
            }
            Scenario::Custom => custom
                .map(|c| Load {
                    name: "custom".into(),
                    cpus: c.pinned.then(|| layout.housekeeping.clone()),
                    argv: ["timeout".to_string(), timeout_s.to_string()]
                        .into_iter()
                        .chain(c.argv.iter().cloned())
                        .collect(),
                })
                .into_iter()
                .collect(),
            // Built by the run, with the user's `--test-args hackbench=…`.
            Scenario::Hackbench => Vec::new(),
            // RK3588's `stress-ng -c 8 --io 2 --vm 1 --vm-bytes 1024M`, sized to the target.
            Scenario::SystemLoad => {
                let all = layout.cpus.len().to_string();
                vec![Load {
                    name: "system".into(),
                    cpus: None,
                    argv: stress(&s(&[
                        "--cpu",
                        &all,
                        "--io",
                        "2",
                        "--vm",
                        "1",
                        "--vm-bytes",
                        "10%",
                    ])),
                }]
            }
            Scenario::Full => vec![Load {
                name: "full".into(),
                cpus: Some(layout.housekeeping.clone()),
                argv: stress(&s(&["--cpu", &hk, "--io", "2", "--vm", "1", "--vm-bytes", "10%"])),
            }],
        }
    }
}

/// Seconds the load generators outlive the measurement, so the load covers all of it.
pub(super) const LOAD_MARGIN_S: u64 = 120;

/// What a scenario's commands depend on besides the scenario and the CPU layout.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CommandSpec<'a> {
    pub measure: &'a Measure,
    /// The CPUs cyclictest measures, one thread each (`--measure-cpus`; the RT CPUs by default).
    pub measure_cpus: &'a CpuSet,
    /// CPU load of each stress-ng worker in the stress scenario, in percent.
    pub load_percent: u8,
    /// Checked `--cyclictest-args`, appended after rtbuild's own options.
    pub cyclictest_args: &'a [String],
    /// `--load-cmd`: the load of scenario `custom`.
    pub custom_load: Option<&'a CustomLoad>,
}

impl Scenario {
    /// The exact commands of this scenario: cyclictest's argv (results in `json_path`) and each
    /// load generator's argv, prefixed with `taskset -c CPUS` when pinned. `rtbuild test` runs
    /// these on its target and `rtbuild lava` writes them into the LAVA job: one builder.
    pub(crate) fn commands(
        self,
        layout: &CpuLayout,
        spec: &CommandSpec<'_>,
        json_path: &str,
    ) -> Commands {
        let expected_s = spec.measure.expected_seconds(spec.measure_cpus.len());
        let load = self
            .loads(layout, spec.load_percent, expected_s + LOAD_MARGIN_S, spec.custom_load)
            .into_iter()
            .map(|l| match &l.cpus {
                Some(cpus) => ["taskset".to_string(), "-c".into(), cpus.to_string()]
                    .into_iter()
                    .chain(l.argv)
                    .collect(),
                None => l.argv,
            })
            .collect();
        let cyclictest = cyclictest::argv(
            layout,
            spec.measure_cpus,
            spec.measure,
            json_path,
            spec.cyclictest_args,
        );
        Commands { cyclictest, load }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> CpuLayout {
        let online = CpuSet::range(0, 8);
        CpuLayout::new(&online, &CpuSet::parse("7").unwrap(), None, crate::host::cpus::Board::Given)
            .unwrap()
    }

    #[test]
    fn stress_pins_one_cpu_load_per_housekeeping_cpu() {
        let loads = Scenario::Stress.loads(&layout(), 60, 100, None);
        assert_eq!(loads.len(), 7);
        assert_eq!(loads[6].cpus.as_ref().unwrap().to_string(), "6");
        assert_eq!(
            loads[6].argv,
            ["stress-ng", "--cpu", "1", "--cpu-load", "60", "--timeout", "100s"]
        );
        assert!(Scenario::Idle.loads(&layout(), 60, 1, None).is_empty());
        assert_eq!(
            Scenario::Full.loads(&layout(), 60, 1, None)[0].cpus.as_ref().unwrap().to_string(),
            "0-6"
        );
        assert_eq!(Scenario::StressIsolated.loads(&layout(), 60, 1, None)[0].cpus, None);
    }

    #[test]
    fn the_custom_load_is_the_users_argv_under_timeout_pinned_unless_asked_not_to() {
        let words = |t: &str| t.split(' ').map(String::from).collect::<Vec<_>>();
        let mut custom = CustomLoad { argv: words("stress-ng -c 8 --io 2"), pinned: true };
        let loads = Scenario::Custom.loads(&layout(), 60, 720, Some(&custom));
        assert_eq!(loads.len(), 1);
        assert_eq!(loads[0].name, "custom");
        assert_eq!(loads[0].cpus.as_ref().unwrap().to_string(), "0-6");
        assert_eq!(loads[0].argv, words("timeout 720 stress-ng -c 8 --io 2"));
        assert!(!Scenario::Custom.unpinned_load(Some(&custom)));
        custom.pinned = false;
        assert_eq!(Scenario::Custom.loads(&layout(), 60, 720, Some(&custom))[0].cpus, None);
        assert!(Scenario::Custom.unpinned_load(Some(&custom)));
        assert!(Scenario::StressIsolated.unpinned_load(None));
        assert!(!Scenario::Full.unpinned_load(Some(&custom)));
    }

    #[test]
    fn scenario_lists() {
        let list = parse_list("idle,stress,idle,full").unwrap();
        assert_eq!(list, [Scenario::Idle, Scenario::Stress, Scenario::Full]);
        assert_eq!(
            parse_list("idle,$(reboot)").unwrap_err().to_string(),
            "unknown scenario `$(reboot)`; use idle, stress, stress-isolated, full, system-load, custom or hackbench"
        );
    }
}
