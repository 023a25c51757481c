//! The RT defaults a meta-qcom checkout's machine confs assign, read from the files themselves
//! (`conf/machine/<name>.conf` and the `conf/machine/…` files it requires), so rtbuild can follow
//! the board vendor's current choice instead of drifting from it.
//!
//! Only what the catalog needs is read: `QCOM_RT_CPU`, `QCOM_IRQAFF`, `QCOM_RCU_NOCBS`,
//! `QCOM_RCU_EXPEDITED`, `QCOM_CPUIDLE_OFF`, `SOC_FAMILY`, `MACHINE_FEATURES +=` and the
//! `#@NAME:` line. Assignments are applied in file order with BitBake's plain-assignment rules:
//! `=` and `:=` set, `?=` sets when unset, `??=` is a default that any other assignment beats.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{Catalog, Lookup, Machine, RtDefaults};
use crate::plan::cpus::CpuSet;

/// The `QCOM_*` variables a machine conf uses for its RT settings.
pub(crate) const RT_VARIABLES: [&str; 5] =
    ["QCOM_RT_CPU", "QCOM_IRQAFF", "QCOM_RCU_NOCBS", "QCOM_RCU_EXPEDITED", "QCOM_CPUIDLE_OFF"];

/// How deep `require` chains are followed (meta-qcom's are two or three deep).
const MAX_DEPTH: usize = 8;

#[derive(Debug, thiserror::Error)]
pub(crate) enum MetaQcomError {
    #[error(
        "{} is not a meta-qcom checkout (it has no {}); pass the folder kas checked meta-qcom out to, e.g. rtbuild/meta-qcom",
        .dir.display(), .missing
    )]
    NotMetaQcom { dir: PathBuf, missing: &'static str },
    #[error(
        "{}:{line}: {variable} = \"{value}\" is not a CPU list ({reason}); fix the machine conf or pass --rt-cpus/--housekeeping",
        .conf.display()
    )]
    BadCpuList { conf: PathBuf, line: usize, variable: String, value: String, reason: String },
    #[error(
        "{}:{line}: {variable} = \"{value}\" must be digits; fix the machine conf",
        .conf.display()
    )]
    BadNumber { conf: PathBuf, line: usize, variable: String, value: String },
    #[error("cannot read {}: {cause}", .path.display())]
    Read { path: PathBuf, cause: std::io::Error },
    #[error("cannot read {}: {cause}", .path.display())]
    Unreadable { path: PathBuf, cause: crate::files::input::InputError },
    #[error(
        "machine `{name}` is neither in rtbuild's catalog nor a machine conf with QCOM_RT_CPU in {}; see `rtbuild machines --meta-qcom {}`",
        .dir.display(), .dir.display()
    )]
    UnknownMachine { name: String, dir: PathBuf },
    #[error(
        "meta-qcom in {} has conf/machine/{name}.conf but no ci/{name}.yml for kas; add one (like ci/rb3gen2-core-kit.yml) or pick another machine",
        .dir.display()
    )]
    NoKasFile { name: String, dir: PathBuf },
}

impl MetaQcomError {
    /// Every one of these is a problem with what the user pointed at.
    pub(crate) fn is_input(&self) -> bool {
        !matches!(self, MetaQcomError::Read { .. } | MetaQcomError::Unreadable { .. })
    }
}

impl crate::error::ErrorCode for MetaQcomError {
    fn exit(&self) -> crate::error::Exit {
        use crate::error::Exit;
        if self.is_input() { Exit::Usage } else { Exit::Failed }
    }
}

/// Where one value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ValueOrigin {
    pub variable: &'static str,
    /// The file, relative to the meta-qcom folder.
    pub file: PathBuf,
    pub line: usize,
    /// `=`, `:=`, `?=` or `??=`.
    pub op: String,
    /// The value as written.
    pub value: String,
}

/// One machine conf's RT settings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ConfMachine {
    pub name: String,
    /// `conf/machine/<name>.conf`, relative to the meta-qcom folder.
    pub conf: PathBuf,
    pub description: Option<String>,
    pub soc_family: Option<String>,
    pub machine_features: Vec<String>,
    pub rt_cpus: CpuSet,
    pub housekeeping: CpuSet,
    pub rcu_nocbs: CpuSet,
    pub rcu_expedited: String,
    pub cpuidle_off: String,
    /// Where each `QCOM_*` value came from, by variable.
    pub sources: BTreeMap<&'static str, ValueOrigin>,
}

pub(crate) use crate::formats::plan_json::{Difference, MachineDefaults};

/// A meta-qcom checkout.
#[derive(Debug, Clone)]
pub(crate) struct MetaQcom {
    pub dir: PathBuf,
}

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

impl MetaQcom {
    /// Checks that `dir` looks like meta-qcom: `conf/layer.conf` declaring the `qcom`
    /// collection, and `conf/machine/`.
    pub(crate) fn open(dir: &Path) -> Result<MetaQcom, MetaQcomError> {
        let not = |missing| MetaQcomError::NotMetaQcom { dir: dir.to_path_buf(), missing };
        let layer = crate::files::input::read_to_string(
            &dir.join("conf/layer.conf"),
            crate::files::input::TEXT_LIMIT,
        )
        .map_err(|_| not("conf/layer.conf"))?;
        let collection = layer.lines().any(|line| {
            let line = line.trim();
            line.starts_with("BBFILE_COLLECTIONS")
                && line.split('"').nth(1).is_some_and(|v| v.split_whitespace().any(|c| c == "qcom"))
        });
        if !collection {
            return Err(not("conf/layer.conf declaring BBFILE_COLLECTIONS \"qcom\""));
        }
        if !dir.join("conf/machine").is_dir() {
            return Err(not("conf/machine/ folder"));
        }
        Ok(MetaQcom { dir: std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()) })
    }

    /// Every machine conf that sets `QCOM_RT_CPU`, by name.
    pub(crate) fn machines(&self) -> Result<Vec<ConfMachine>, MetaQcomError> {
        let folder = self.dir.join("conf/machine");
        let read = |source| MetaQcomError::Read { path: folder.clone(), cause: source };
        let mut names: Vec<String> = std::fs::read_dir(&folder)
            .map_err(read)?
            .filter_map(Result::ok)
            .filter_map(|e| {
                e.file_name().to_str().and_then(|n| n.strip_suffix(".conf")).map(String::from)
            })
            .collect();
        names.sort();
        let mut found = Vec::new();
        for name in names {
            if let Some(machine) = self.machine(&name)? {
                found.push(machine);
            }
        }
        Ok(found)
    }

    /// The RT settings of `conf/machine/<name>.conf`, or `None` when there is no such conf or
    /// it sets no `QCOM_RT_CPU`.
    pub(crate) fn machine(&self, name: &str) -> Result<Option<ConfMachine>, MetaQcomError> {
        let valid = !name.is_empty()
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b));
        let conf = PathBuf::from(format!("conf/machine/{name}.conf"));
        if !valid || !self.dir.join(&conf).is_file() {
            return Ok(None);
        }
        let mut state = State::default();
        self.read(&conf, &mut state, 0)?;
        if state.value("QCOM_RT_CPU").is_none_or(|v| v.value.is_empty()) {
            return Ok(None);
        }
        let cpus = |variable: &'static str| -> Result<CpuSet, MetaQcomError> {
            let Some(source) = state.value(variable) else { return Ok(CpuSet::default()) };
            CpuSet::parse(&source.value).map_err(|e| MetaQcomError::BadCpuList {
                conf: self.dir.join(&source.file),
                line: source.line,
                variable: variable.to_string(),
                value: source.value.clone(),
                reason: e.reason,
            })
        };
        let digits = |variable: &'static str| -> Result<String, MetaQcomError> {
            let Some(source) = state.value(variable) else { return Ok(String::new()) };
            if !source.value.bytes().all(|b| b.is_ascii_digit()) {
                return Err(MetaQcomError::BadNumber {
                    conf: self.dir.join(&source.file),
                    line: source.line,
                    variable: variable.to_string(),
                    value: source.value.clone(),
                });
            }
            Ok(source.value.clone())
        };
        let rt_cpus = cpus("QCOM_RT_CPU")?;
        let machine = ConfMachine {
            name: name.to_string(),
            conf,
            description: state.description.clone(),
            soc_family: state.soc_family.clone(),
            machine_features: state.features.clone(),
            housekeeping: cpus("QCOM_IRQAFF")?,
            rcu_nocbs: cpus("QCOM_RCU_NOCBS")?,
            rcu_expedited: digits("QCOM_RCU_EXPEDITED")?,
            cpuidle_off: digits("QCOM_CPUIDLE_OFF")?,
            rt_cpus,
            sources: RT_VARIABLES
                .iter()
                .filter_map(|v| state.value(v).map(|s| (*v, s.clone())))
                .collect(),
        };
        Ok(Some(machine))
    }

    /// The `MACHINE_FEATURES` that `conf` (relative to the checkout) and the machine files it
    /// requires append (`+=`, `:append`), or `None` when there is no such conf or it cannot be
    /// read.
    pub(crate) fn machine_features(&self, conf: &Path) -> Option<Vec<String>> {
        if !self.dir.join(conf).is_file() {
            return None;
        }
        let mut state = State::default();
        self.read(conf, &mut state, 0).ok()?;
        Some(state.features)
    }

    fn read(&self, file: &Path, state: &mut State, depth: usize) -> Result<(), MetaQcomError> {
        let path = self.dir.join(file);
        let text = crate::files::input::read_to_string(&path, crate::files::input::TEXT_LIMIT)
            .map_err(|cause| MetaQcomError::Unreadable { path: path.clone(), cause })?;
        for (index, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if let Some(name) = line.strip_prefix("#@NAME:") {
                state.description.get_or_insert_with(|| name.trim().to_string());
                continue;
            }
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            if let Some(target) =
                line.strip_prefix("require ").or_else(|| line.strip_prefix("include "))
            {
                let target = Path::new(target.trim());
                let inside = target.starts_with("conf/machine")
                    && target.components().all(|c| matches!(c, std::path::Component::Normal(_)));
                if inside && depth < MAX_DEPTH && self.dir.join(target).is_file() {
                    self.read(target, state, depth + 1)?;
                }
                continue;
            }
            if let Some(assignment) = Assignment::parse(line) {
                state.apply(assignment, file, index + 1);
            }
        }
        Ok(())
    }
}

/// One `NAME op "value"` line.
struct Assignment<'a> {
    name: &'a str,
    op: &'a str,
    value: &'a str,
}

impl<'a> Assignment<'a> {
    fn parse(line: &'a str) -> Option<Assignment<'a>> {
        let name_end = line.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
        let (name, rest) = line.split_at(name_end);
        // `NAME:append = "…"` appends, as `+=` does (the values carry their own space).
        if let Some(value) = rest.strip_prefix(":append").map(str::trim_start) {
            let value = value.strip_prefix('=')?.trim();
            let value = value.strip_prefix('"')?.strip_suffix('"')?;
            return Some(Assignment { name, op: "+=", value });
        }
        let rest = rest.trim_start();
        let op = ["??=", "?=", ":=", "+=", "="].into_iter().find(|op| rest.starts_with(op))?;
        let value = rest[op.len()..].trim();
        let value = value.strip_prefix('"')?.strip_suffix('"')?;
        Some(Assignment { name, op, value })
    }
}

#[derive(Default)]
struct State {
    values: BTreeMap<String, ValueOrigin>,
    /// `??=` defaults, used only when nothing else assigns.
    defaults: BTreeMap<String, ValueOrigin>,
    description: Option<String>,
    soc_family: Option<String>,
    features: Vec<String>,
}

impl State {
    fn apply(&mut self, a: Assignment<'_>, file: &Path, line: usize) {
        match a.name {
            "MACHINE_FEATURES" if a.op == "+=" => {
                self.features.extend(a.value.split_whitespace().map(String::from));
                return;
            }
            "SOC_FAMILY" if matches!(a.op, "=" | ":=" | "?=") => {
                if a.op != "?=" || self.soc_family.is_none() {
                    self.soc_family = Some(a.value.trim().to_string());
                }
                return;
            }
            _ => {}
        }
        let Some(variable) = RT_VARIABLES.iter().find(|v| **v == a.name) else { return };
        let source = ValueOrigin {
            variable,
            file: file.to_path_buf(),
            line,
            op: a.op.to_string(),
            value: a.value.trim().to_string(),
        };
        match a.op {
            "=" | ":=" => {
                self.values.insert(a.name.to_string(), source);
            }
            "?=" => {
                self.values.entry(a.name.to_string()).or_insert(source);
            }
            "??=" => {
                self.defaults.insert(a.name.to_string(), source);
            }
            _ => {}
        }
    }

    fn value(&self, name: &str) -> Option<&ValueOrigin> {
        self.values.get(name).or_else(|| self.defaults.get(name))
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

/// The kernel arguments meta-qcom's kas `files` (relative to the checkout `dir`) append to
/// `KERNEL_CMDLINE_EXTRA` (`KERNEL_CMDLINE_EXTRA:append = " qcom_scm.download_mode=1"` in
/// `ci/base.yml`), as (file, argument), read through `base::input` (a regular file of at most
/// 1 MiB); one that is missing, larger or unreadable adds nothing.
pub(crate) fn cmdline_appends(dir: &std::path::Path, files: &[&str]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for file in files {
        let Ok(text) = crate::files::input::read_to_string(&dir.join(file), 1 << 20) else {
            continue;
        };
        for line in text.lines() {
            let Some((name, value)) = line.trim().split_once('=') else { continue };
            if !name.trim().starts_with("KERNEL_CMDLINE_EXTRA:append") {
                continue;
            }
            let value = value.trim().trim_matches('"');
            for arg in value.split_whitespace().filter(|a| !a.contains("${")) {
                out.push(((*file).to_string(), arg.to_string()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let mut all = vec![(
            "conf/layer.conf",
            "BBFILE_COLLECTIONS += \"qcom\"\nLAYERDEPENDS_qcom = \"core\"\n",
        )];
        all.extend_from_slice(files);
        for (path, text) in all {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            crate::files::write::fixture(path, text).unwrap();
        }
        dir
    }

    const COMMON: &str = "QCOM_RT_CPU           ?= \"\"\nQCOM_IRQAFF           ?= \"\"\n";

    #[test]
    fn hard_assignments_beat_the_common_defaults_and_requires_are_followed() {
        let dir = layer(&[
            ("conf/machine/include/qcom-common.inc", COMMON),
            (
                "conf/machine/include/qcom-hamoa.inc",
                "SOC_FAMILY = \"hamoa\"\nrequire conf/machine/include/qcom-common.inc\n",
            ),
            (
                "conf/machine/board.conf",
                "#@NAME: A board\nrequire conf/machine/include/qcom-hamoa.inc\n\
                 MACHINE_FEATURES += \"efi pci\"\n# Isolate rt cpu\n\
                 QCOM_RT_CPU        = \"11\"\nQCOM_IRQAFF        = \"0-10\"\n\
                 QCOM_RCU_NOCBS     = \"11\"\nQCOM_RCU_EXPEDITED = \"1\"\nQCOM_CPUIDLE_OFF   = \"1\"\n",
            ),
            ("conf/machine/generic.conf", "require conf/machine/include/qcom-common.inc\n"),
        ]);
        let meta = MetaQcom::open(dir.path()).unwrap();
        let machines = meta.machines().unwrap();
        assert_eq!(machines.len(), 1, "generic sets no RT CPU: {machines:?}");
        let board = &machines[0];
        assert_eq!(board.rt_cpus.to_string(), "11");
        assert_eq!(board.housekeeping.to_string(), "0-10");
        assert_eq!(board.implied_cpus(), 12);
        assert_eq!(board.soc_family.as_deref(), Some("hamoa"));
        assert_eq!(board.description.as_deref(), Some("A board"));
        let source = &board.sources["QCOM_RT_CPU"];
        assert_eq!((source.line, source.op.as_str()), (5, "="));
        assert_eq!(source.file, Path::new("conf/machine/board.conf"));
    }

    #[test]
    fn weak_assignments_follow_bitbake_order() {
        let dir = layer(&[(
            "conf/machine/b.conf",
            "QCOM_RT_CPU ??= \"1\"\nQCOM_RT_CPU ?= \"2\"\nQCOM_RT_CPU ?= \"3\"\nQCOM_IRQAFF ??= \"0\"\n",
        )]);
        let board = MetaQcom::open(dir.path()).unwrap().machine("b").unwrap().unwrap();
        assert_eq!(board.rt_cpus.to_string(), "2");
        assert_eq!(board.sources["QCOM_RT_CPU"].op, "?=");
        assert_eq!(board.housekeeping.to_string(), "0");
        assert_eq!(board.sources["QCOM_IRQAFF"].op, "??=");
    }

    #[test]
    fn a_malformed_cpu_list_names_file_line_and_value() {
        let dir = layer(&[("conf/machine/b.conf", "QCOM_RT_CPU = \"7\"\nQCOM_IRQAFF = \"0-x\"\n")]);
        let err = MetaQcom::open(dir.path()).unwrap().machines().unwrap_err().to_string();
        assert!(
            err.contains("conf/machine/b.conf:2: QCOM_IRQAFF = \"0-x\" is not a CPU list"),
            "{err}"
        );
    }

    #[test]
    fn a_folder_without_the_qcom_collection_is_not_meta_qcom() {
        let dir = tempfile::tempdir().unwrap();
        let err = MetaQcom::open(dir.path()).unwrap_err().to_string();
        assert!(err.contains("is not a meta-qcom checkout (it has no conf/layer.conf)"), "{err}");
        std::fs::create_dir_all(dir.path().join("conf")).unwrap();
        crate::files::write::fixture(
            dir.path().join("conf/layer.conf"),
            "BBFILE_COLLECTIONS += \"other\"\n",
        )
        .unwrap();
        let err = MetaQcom::open(dir.path()).unwrap_err().to_string();
        assert!(err.contains("declaring BBFILE_COLLECTIONS \"qcom\""), "{err}");
    }

    #[test]
    fn differences_name_field_variable_and_both_values() {
        let catalog = Catalog::embedded();
        let rb3 = catalog.lookup("rb3gen2-core-kit").unwrap().machine;
        let dir = layer(&[(
            "conf/machine/rb3gen2-core-kit.conf",
            "QCOM_RT_CPU = \"6-7\"\nQCOM_IRQAFF = \"0-5\"\nQCOM_RCU_NOCBS = \"6-7\"\n\
             QCOM_RCU_EXPEDITED = \"1\"\nQCOM_CPUIDLE_OFF = \"1\"\n",
        )]);
        let conf =
            MetaQcom::open(dir.path()).unwrap().machine("rb3gen2-core-kit").unwrap().unwrap();
        let diffs = conf.differences(rb3);
        assert_eq!(
            diffs[0],
            Difference {
                field: "rt.rt_cpus".into(),
                variable: "QCOM_RT_CPU".into(),
                catalog: "7".into(),
                meta_qcom: "6-7".into()
            }
        );
        assert_eq!(diffs.len(), 3, "{diffs:?}");
        let followed = conf.to_machine(Some(rb3));
        assert_eq!(followed.rt.rt_cpus.to_string(), "6-7");
        assert_eq!(followed.soc, rb3.soc);
    }
}
