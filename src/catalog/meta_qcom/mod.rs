//! The RT defaults a meta-qcom checkout's machine confs assign, read from the files themselves
//! (`conf/machine/<name>.conf` and the `conf/machine/…` files it requires), so rtbuild can follow
//! the board vendor's current choice instead of drifting from it.
//!
//! Only what the catalog needs is read: `QCOM_RT_CPU`, `QCOM_IRQAFF`, `QCOM_RCU_NOCBS`,
//! `QCOM_RCU_EXPEDITED`, `QCOM_CPUIDLE_OFF`, `SOC_FAMILY`, `MACHINE_FEATURES +=` and the
//! `#@NAME:` line. Assignments are applied in file order with BitBake's plain-assignment rules:
//! `=` and `:=` set, `?=` sets when unset, `??=` is a default that any other assignment beats.
//!
//! Reading a checkout is this file ([`MetaQcom`], the BitBake assignment rules, the
//! `KERNEL_CMDLINE_EXTRA` appends of its kas files); [`compare`] sets what was read beside the
//! catalog (the differences, the machine a plan uses, `rtbuild machines --meta-qcom`'s table).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::host::cpus::CpuSet;

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

mod compare;
#[cfg(test)]
mod tests;

pub(crate) use compare::{CatalogMatch, compare, resolve};
