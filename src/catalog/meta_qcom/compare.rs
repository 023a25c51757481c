//! A meta-qcom checkout beside the catalog: where a conf and the catalog's machine differ,
//! the machine a plan uses for a name ([`resolve`]), what to tell the user, and every
//! machine's status for `rtbuild machines --meta-qcom` ([`compare`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use super::{ConfMachine, Difference, MachineDefaults, MetaQcom, MetaQcomError, ValueOrigin};
use crate::catalog::{Catalog, Lookup, Machine, RtDefaults};

impl MachineDefaults {
    /// What to tell the user about these defaults, if anything.
    pub(crate) fn note(&self, machine: &str, rt_cpus_given: bool) -> Option<String> {
        let conf = self.conf.display();
        if !self.in_catalog {
            return Some(format!(
                "`{machine}` is not in rtbuild's catalog; its RT defaults come from {conf}"
            ));
        }
        if self.differences.is_empty() {
            return None;
        }
        let diffs: Vec<String> = self
            .differences
            .iter()
            .map(|d| format!("{} = \"{}\" (catalog: \"{}\")", d.variable, d.meta_qcom, d.catalog))
            .collect();
        Some(if rt_cpus_given {
            format!("{conf} sets {}; --rt-cpus wins over both", diffs.join(", "))
        } else {
            format!(
                "{conf} sets {}, unlike rtbuild's catalog; following meta-qcom (the board vendor's current choice; pass --rt-cpus to choose)",
                diffs.join(", ")
            )
        })
    }
}

impl ConfMachine {
    /// The fields where this conf and the catalog's `machine` disagree.
    pub(crate) fn differences(&self, machine: &Machine) -> Vec<Difference> {
        let mut out = Vec::new();
        let mut check = |field: &str, variable: &str, catalog: String, meta_qcom: String| {
            if catalog != meta_qcom {
                out.push(Difference {
                    field: field.to_string(),
                    variable: variable.to_string(),
                    catalog,
                    meta_qcom,
                });
            }
        };
        let rt = &machine.rt;
        check("rt.rt_cpus", "QCOM_RT_CPU", rt.rt_cpus.to_string(), self.rt_cpus.to_string());
        check(
            "rt.housekeeping",
            "QCOM_IRQAFF",
            rt.housekeeping.to_string(),
            self.housekeeping.to_string(),
        );
        check("rt.rt_cpus", "QCOM_RCU_NOCBS", rt.rt_cpus.to_string(), self.rcu_nocbs.to_string());
        check(
            "rt.rcu_expedited",
            "QCOM_RCU_EXPEDITED",
            rt.rcu_expedited.clone(),
            self.rcu_expedited.clone(),
        );
        check(
            "rt.cpuidle_off",
            "QCOM_CPUIDLE_OFF",
            rt.cpuidle_off.clone(),
            self.cpuidle_off.clone(),
        );
        out
    }

    /// The catalog's `machine` with this conf's RT settings, or (for a machine only meta-qcom
    /// knows) a machine made from the conf: its CPU count is what the CPU lists imply.
    pub(crate) fn to_machine(&self, machine: Option<&Machine>) -> Machine {
        let rt = RtDefaults {
            rt_cpus: self.rt_cpus.clone(),
            housekeeping: self.housekeeping.clone(),
            rcu_expedited: self.rcu_expedited.clone(),
            cpuidle_off: self.cpuidle_off.clone(),
        };
        match machine {
            Some(m) => {
                let cpus = m.cpus.max(self.implied_cpus());
                Machine { rt, cpus, ..m.clone() }
            }
            None => Machine {
                name: self.name.clone(),
                description: self.description.clone().unwrap_or_else(|| self.name.clone()),
                aliases: Vec::new(),
                kas_file: Some(format!("ci/{}.yml", self.name)),
                soc: Some(self.soc_family.clone().unwrap_or_default().to_uppercase()),
                soc_family: Some(self.soc_family.clone().unwrap_or_default()),
                cpus: self.implied_cpus(),
                clusters: Vec::new(),
                rt,
                serial_console: Some("ttyMSM0,115200".to_string()),
                storage: Some(String::new()),
                machine_features: self.machine_features.clone(),
                latency_requirement_us: None,
                reference: None,
                source: None,
                lava: None,
            },
        }
    }

    /// One more than the highest CPU any list names (meta-qcom never states CPU counts).
    pub(crate) fn implied_cpus(&self) -> u32 {
        let all = self.rt_cpus.union(&self.housekeeping).union(&self.rcu_nocbs);
        all.iter().max().map_or(1, |cpu| cpu + 1)
    }
}

/// The machine a plan uses for `name`, given the catalog's entry for it (`known`, looked up once
/// by the caller) and a meta-qcom checkout: the catalog's entry, or meta-qcom's current defaults
/// when they differ and `follow` is true (the user gave no `--rt-cpus`), or a machine made from
/// the conf when only meta-qcom knows `name`.
pub(crate) fn resolve(
    name: &str,
    known: Option<Lookup<'_>>,
    meta_qcom: &MetaQcom,
    follow: bool,
) -> Result<(Machine, Option<String>, Option<MachineDefaults>), MetaQcomError> {
    let conf = match meta_qcom.machine(name)? {
        Some(conf) => Some(conf),
        None => match known {
            Some(k) => meta_qcom.machine(&k.machine.name)?,
            None => None,
        },
    };
    match (known, conf) {
        (Some(k), None) => Ok((k.machine.clone(), k.alias.map(str::to_string), None)),
        (Some(k), Some(conf)) => {
            let differences = conf.differences(k.machine);
            let followed = follow && !differences.is_empty();
            let machine =
                if followed { conf.to_machine(Some(k.machine)) } else { k.machine.clone() };
            let defaults = MachineDefaults {
                source: if followed { "meta-qcom" } else { "catalog" }.to_string(),
                conf: meta_qcom.dir.join(&conf.conf),
                differences,
                in_catalog: true,
            };
            Ok((machine, k.alias.map(str::to_string), Some(defaults)))
        }
        (None, Some(conf)) => {
            if !meta_qcom.dir.join(format!("ci/{}.yml", conf.name)).is_file() {
                return Err(MetaQcomError::NoKasFile {
                    name: conf.name.clone(),
                    dir: meta_qcom.dir.clone(),
                });
            }
            let defaults = MachineDefaults {
                source: "meta-qcom".to_string(),
                conf: meta_qcom.dir.join(&conf.conf),
                differences: Vec::new(),
                in_catalog: false,
            };
            Ok((conf.to_machine(None), None, Some(defaults)))
        }
        (None, None) => Err(MetaQcomError::UnknownMachine {
            name: name.to_string(),
            dir: meta_qcom.dir.clone(),
        }),
    }
}

/// How one meta-qcom machine relates to the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum CatalogMatch {
    Matches,
    Differs,
    Unknown,
}

/// One entry of `rtbuild machines --meta-qcom DIR --json`: the machine as meta-qcom sets it up
/// (the shape of `rtbuild machines --json`) plus how it compares and where each value came from.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Compared {
    #[serde(flatten)]
    pub machine: Machine,
    pub status: CatalogMatch,
    /// The catalog entry it was compared with (differs from `name` for an alias).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub catalog_name: Option<String>,
    pub differences: Vec<Difference>,
    /// The catalog's `machine_features`, when they are not the conf's (`machine_features`
    /// is the conf's); the RT settings alone make `status`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub catalog_machine_features: Option<Vec<String>>,
    pub conf: PathBuf,
    pub sources: BTreeMap<&'static str, ValueOrigin>,
    /// Where `cpus` came from: `catalog`, or `implied` by the CPU lists.
    pub cpus_source: &'static str,
}

/// Compares every machine conf of `meta_qcom` that sets `QCOM_RT_CPU` with `catalog`.
pub(crate) fn compare(
    meta_qcom: &MetaQcom,
    catalog: &Catalog,
) -> Result<Vec<Compared>, MetaQcomError> {
    let mut out = Vec::new();
    for conf in meta_qcom.machines()? {
        let known = catalog.lookup(&conf.name).ok().map(|l| l.machine);
        let differences = known.map(|m| conf.differences(m)).unwrap_or_default();
        let status = match (known, differences.is_empty()) {
            (None, _) => CatalogMatch::Unknown,
            (Some(_), true) => CatalogMatch::Matches,
            (Some(_), false) => CatalogMatch::Differs,
        };
        let mut machine = conf.to_machine(known);
        // An alias (meta-qcom's deprecated qcs6490-rb3gen2-core-kit) keeps its own name.
        machine.name = conf.name.clone();
        machine.machine_features = conf.machine_features.clone();
        let sorted = |list: &[String]| {
            let mut list = list.to_vec();
            list.sort();
            list.dedup();
            list
        };
        let catalog_machine_features = known
            .filter(|m| sorted(&m.machine_features) != sorted(&conf.machine_features))
            .map(|m| m.machine_features.clone());
        out.push(Compared {
            machine,
            status,
            catalog_name: known.map(|m| m.name.clone()),
            differences,
            catalog_machine_features,
            conf: conf.conf.clone(),
            sources: conf.sources.clone(),
            cpus_source: if known.is_some() { "catalog" } else { "implied" },
        });
    }
    Ok(out)
}
