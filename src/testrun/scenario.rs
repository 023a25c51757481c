//! [`Scenario`]s and the load each one runs on the housekeeping CPUs, from the seed guides:
//! `idle` (no load), `stress` (Qualcomm: one `stress-ng --cpu 1 --cpu-load N` pinned per
//! housekeeping CPU), `stress-isolated` (RK3562J: full unpinned load, the kernel's isolation
//! alone keeps it off the RT CPUs), `full` (RK3588/Phytium: cpu + io + vm on the housekeeping CPUs),
//! `hackbench` (Qualcomm's RT kit: rt-tests' hackbench scheduler/IPC load on the housekeeping
//! CPUs; built in [`crate::testrun`] so that `--test-args hackbench=…` applies).

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::plan::CpuSet;
use crate::tune::Layout;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    Idle,
    Stress,
    StressIsolated,
    Full,
    Hackbench,
}

/// A scenario name that rtbuild does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scenario `{0}`; use idle, stress, stress-isolated, full or hackbench")]
pub struct UnknownScenario(pub String);

impl FromStr for Scenario {
    type Err = UnknownScenario;
    fn from_str(s: &str) -> Result<Scenario, UnknownScenario> {
        match s.trim() {
            "idle" => Ok(Scenario::Idle),
            "stress" => Ok(Scenario::Stress),
            "stress-isolated" => Ok(Scenario::StressIsolated),
            "full" => Ok(Scenario::Full),
            "hackbench" => Ok(Scenario::Hackbench),
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
            Scenario::Hackbench => "hackbench",
        })
    }
}

/// `idle,stress`: scenarios in the order given, each once.
pub fn parse_list(text: &str) -> Result<Vec<Scenario>, UnknownScenario> {
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
pub struct Load {
    pub name: String,
    pub cpus: Option<CpuSet>,
    pub argv: Vec<String>,
}

impl Scenario {
    /// The load generators of this scenario; they stop by themselves after `timeout_s`.
    pub fn loads(self, layout: &Layout, load_percent: u8, timeout_s: u64) -> Vec<Load> {
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
            // Built by the run, with the user's `--test-args hackbench=…`.
            Scenario::Hackbench => Vec::new(),
            Scenario::Full => vec![Load {
                name: "full".into(),
                cpus: Some(layout.housekeeping.clone()),
                argv: stress(&s(&["--cpu", &hk, "--io", "2", "--vm", "1", "--vm-bytes", "10%"])),
            }],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        let online = CpuSet::range(0, 8);
        Layout::new(&online, &CpuSet::parse("7").unwrap(), None, "t").unwrap()
    }

    #[test]
    fn stress_pins_one_cpu_load_per_housekeeping_cpu() {
        let loads = Scenario::Stress.loads(&layout(), 60, 100);
        assert_eq!(loads.len(), 7);
        assert_eq!(loads[6].cpus.as_ref().unwrap().to_string(), "6");
        assert_eq!(
            loads[6].argv,
            ["stress-ng", "--cpu", "1", "--cpu-load", "60", "--timeout", "100s"]
        );
        assert!(Scenario::Idle.loads(&layout(), 60, 1).is_empty());
        assert_eq!(
            Scenario::Full.loads(&layout(), 60, 1)[0].cpus.as_ref().unwrap().to_string(),
            "0-6"
        );
        assert_eq!(Scenario::StressIsolated.loads(&layout(), 60, 1)[0].cpus, None);
    }

    #[test]
    fn scenario_lists() {
        let list = parse_list("idle,stress,idle,full").unwrap();
        assert_eq!(list, [Scenario::Idle, Scenario::Stress, Scenario::Full]);
        assert_eq!(
            parse_list("idle,$(reboot)").unwrap_err().to_string(),
            "unknown scenario `$(reboot)`; use idle, stress, stress-isolated, full or hackbench"
        );
    }
}
