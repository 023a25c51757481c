//! The machine catalog: the boards shipped in `machines/*.yaml` (compiled into the binary),
//! plus any `*.yaml` in a user folder (`--machines-dir` or `RTBUILD_MACHINES_DIR`), which may add
//! boards or replace shipped ones. [`latency`] holds the limits a board's requirement and a
//! report's threshold are both checked against.

pub(crate) mod latency;
mod lava_profile;
mod machine;
pub(crate) mod meta_qcom;

pub(crate) use lava_profile::{
    Deploy, LabPlansPin, LavaProfile, QdlStage, UnknownDeploy, lab_plans, lava_name,
};
pub(crate) use machine::{BUILD_FIELDS, Machine, RtDefaults};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The boards that ship with rtbuild, as (file name, YAML text).
const EMBEDDED: &[(&str, &str)] = &[
    ("iq-615-evk.yaml", include_str!("../../machines/iq-615-evk.yaml")),
    ("iq-8275-evk.yaml", include_str!("../../machines/iq-8275-evk.yaml")),
    ("iq-9075-evk.yaml", include_str!("../../machines/iq-9075-evk.yaml")),
    ("iq-x7181-evk.yaml", include_str!("../../machines/iq-x7181-evk.yaml")),
    ("qcm6490-idp.yaml", include_str!("../../machines/qcm6490-idp.yaml")),
    ("qcs615-ride.yaml", include_str!("../../machines/qcs615-ride.yaml")),
    ("qcs8300-ride-sx.yaml", include_str!("../../machines/qcs8300-ride-sx.yaml")),
    ("qcs9100-ride-sx.yaml", include_str!("../../machines/qcs9100-ride-sx.yaml")),
    ("rb3gen2-core-kit.yaml", include_str!("../../machines/rb3gen2-core-kit.yaml")),
    // Boards rtbuild measures but does not build for (no meta-qcom kas file).
    ("phytium-ft2000-4.yaml", include_str!("../../machines/phytium-ft2000-4.yaml")),
    ("rk3562j-evm.yaml", include_str!("../../machines/rk3562j-evm.yaml")),
    ("rk3588-evb.yaml", include_str!("../../machines/rk3588-evb.yaml")),
];

#[derive(Debug, thiserror::Error)]
pub(crate) enum CatalogError {
    #[error("unknown machine `{name}`; {}", suggestion(.close, .known))]
    Unknown { name: String, close: Vec<String>, known: Vec<String> },
    #[error("machine file {path} is not valid: {message}; fix the file or remove it")]
    Invalid { path: PathBuf, message: String },
    #[error("machine file {path} is not valid: {cause}; fix the file or remove it")]
    Yaml { path: PathBuf, cause: serde_yaml::Error },
    /// A build asked for a board whose file has only what measuring needs.
    #[error(
        "machine `{name}` is for measuring only: its file has no {}, which a build needs; add {} to its machine file (see `rtbuild machines show rb3gen2-core-kit` for a board that has them)",
        .missing.join(", "),
        if .missing.len() == 1 { "it" } else { "them" }
    )]
    MeasuringOnly { name: String, missing: Vec<&'static str> },
    #[error("machine `{name}` is defined in both {first} and {second}; keep one of the two files")]
    DuplicateName { name: String, first: String, second: String },
    #[error(
        "alias `{alias}` of `{machine}` ({file}) is also {clash} ({other_file}); rename or remove one of them"
    )]
    AliasClash { alias: String, machine: String, file: String, clash: String, other_file: String },
    /// A FIFO, device, dangling symlink or too big a file among the machine files.
    #[error("machine file {cause}")]
    NotAFile { cause: crate::files::input::InputError },
    #[error("cannot read machine folder {}: {cause}; check the folder given to --machines-dir (or RTBUILD_MACHINES_DIR)", .path.display())]
    Read { path: PathBuf, cause: std::io::Error },
}

/// Always the user's input (exit 2).
impl crate::error::ErrorCode for CatalogError {
    fn exit(&self) -> crate::error::Exit {
        crate::error::Exit::Usage
    }
}

fn suggestion(close: &[String], known: &[String]) -> String {
    if close.is_empty() {
        format!("known machines: {}; see `rtbuild machines`", known.join(", "))
    } else {
        format!("did you mean {}? See `rtbuild machines`", close.join(" or "))
    }
}

/// The result of looking a name up: the machine, and the alias used, if any.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lookup<'a> {
    pub machine: &'a Machine,
    /// `Some(alias)` when the name given was an alias of `machine`.
    pub alias: Option<&'a str>,
}

/// All known boards, by canonical name.
#[derive(Debug, Clone)]
pub(crate) struct Catalog {
    machines: BTreeMap<String, Machine>,
}

impl Catalog {
    /// The boards shipped with rtbuild.
    pub(crate) fn embedded() -> Catalog {
        let mut machines = BTreeMap::new();
        for (file, text) in EMBEDDED {
            let machine = parse(Path::new(file), text)
                .unwrap_or_else(|err| panic!("bug in rtbuild: shipped machine file: {err}"));
            machines.insert(machine.name.clone(), machine);
        }
        Catalog { machines }
    }

    /// The shipped boards plus every `*.yaml` in `dir`, which win over shipped ones by name.
    pub(crate) fn with_user_dir(dir: Option<&Path>) -> Result<Catalog, CatalogError> {
        let mut catalog = Catalog::embedded();
        let Some(dir) = dir else { return Ok(catalog) };
        let read_err = |source| CatalogError::Read { path: dir.to_path_buf(), cause: source };
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(read_err)?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
            .collect();
        files.sort();
        // Where each board comes from, to name both files of a clash.
        let mut origin: BTreeMap<String, String> = EMBEDDED
            .iter()
            .filter_map(|(file, text)| {
                let machine = parse(Path::new(file), text).ok()?;
                Some((machine.name, format!("the shipped machines/{file}")))
            })
            .collect();
        let mut user: BTreeMap<String, PathBuf> = BTreeMap::new();
        for path in files {
            let text = crate::files::input::read_to_string(&path, crate::files::input::TEXT_LIMIT)
                .map_err(|cause| CatalogError::NotAFile { cause })?;
            let machine = parse(&path, &text)?;
            if let Some(first) = user.get(&machine.name) {
                return Err(CatalogError::DuplicateName {
                    name: machine.name,
                    first: first.display().to_string(),
                    second: path.display().to_string(),
                });
            }
            user.insert(machine.name.clone(), path.clone());
            origin.insert(machine.name.clone(), path.display().to_string());
            catalog.machines.insert(machine.name.clone(), machine);
        }
        catalog.check_aliases(&origin)?;
        Ok(catalog)
    }

    /// Refuses an alias that is another board's name or alias: the lookup would pick one of
    /// them silently.
    fn check_aliases(&self, origin: &BTreeMap<String, String>) -> Result<(), CatalogError> {
        let file = |name: &str| origin.get(name).cloned().unwrap_or_default();
        let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
        for machine in self.machines.values() {
            for alias in &machine.aliases {
                let clash = if let Some(other) =
                    self.machines.get(alias).filter(|other| other.name != machine.name)
                {
                    Some((format!("the name of `{}`", other.name), other.name.clone()))
                } else {
                    seen.get(alias.as_str())
                        .filter(|other| **other != machine.name)
                        .map(|other| (format!("an alias of `{other}`"), other.to_string()))
                };
                if let Some((clash, other)) = clash {
                    return Err(CatalogError::AliasClash {
                        alias: alias.clone(),
                        machine: machine.name.clone(),
                        file: file(&machine.name),
                        clash,
                        other_file: file(&other),
                    });
                }
                seen.insert(alias, &machine.name);
            }
        }
        Ok(())
    }

    pub(crate) fn machines(&self) -> impl Iterator<Item = &Machine> {
        self.machines.values()
    }

    /// Finds a board by canonical name or alias.
    pub(crate) fn lookup(&self, name: &str) -> Result<Lookup<'_>, CatalogError> {
        if let Some(machine) = self.machines.get(name) {
            return Ok(Lookup { machine, alias: None });
        }
        for machine in self.machines.values() {
            if let Some(alias) = machine.aliases.iter().find(|a| *a == name) {
                return Ok(Lookup { machine, alias: Some(alias) });
            }
        }
        Err(self.unknown(name))
    }

    fn unknown(&self, name: &str) -> CatalogError {
        // The best-matching name (canonical or alias) of each machine, best machines first.
        let mut scored: Vec<(f64, &str)> = self
            .machines
            .values()
            .filter_map(|m| {
                std::iter::once(&m.name)
                    .chain(&m.aliases)
                    .map(|candidate| (strsim::jaro_winkler(name, candidate), candidate.as_str()))
                    .max_by(|a, b| a.0.total_cmp(&b.0))
            })
            .filter(|(score, _)| *score >= 0.85)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        CatalogError::Unknown {
            name: name.to_string(),
            close: scored.into_iter().take(3).map(|(_, c)| c.to_string()).collect(),
            known: self.machines.keys().cloned().collect(),
        }
    }
}

/// The fields every machine file needs, as `rt.rt_cpus` names the nested one.
const REQUIRED_FIELDS: [&str; 3] = ["name", "cpus", "rt.rt_cpus"];

/// The required fields `text` lacks, all of them (serde would name only the first); empty when
/// the file is not a mapping at all (serde then says what it is).
fn missing_fields(text: &str) -> Vec<&'static str> {
    let Ok(serde_yaml::Value::Mapping(map)) =
        crate::text::yaml::from_str::<serde_yaml::Value>(text)
    else {
        return Vec::new();
    };
    let has = |field: &str| match field.split_once('.') {
        Some((outer, inner)) => match map.get(outer) {
            Some(serde_yaml::Value::Mapping(nested)) => nested.contains_key(inner),
            // `rt:` of another type: serde names the type error.
            Some(_) => true,
            None => false,
        },
        None => map.contains_key(field),
    };
    REQUIRED_FIELDS.into_iter().filter(|f| !has(f)).collect()
}

fn parse(path: &Path, text: &str) -> Result<Machine, CatalogError> {
    let invalid = |message: String| CatalogError::Invalid { path: path.to_path_buf(), message };
    let missing = missing_fields(text);
    if !missing.is_empty() {
        return Err(invalid(format!(
            "it lacks {} (a board needs at least `name: NAME`, `cpus: N` and `rt: {{ rt_cpus: LIST }}`; {} only to build for it)",
            missing.join(", "),
            BUILD_FIELDS.join(", ")
        )));
    }
    let mut machine: Machine = crate::text::yaml::from_str(text)
        .map_err(|cause| CatalogError::Yaml { path: path.to_path_buf(), cause })?;
    // Bounded before anything is built from it: `all_cpus()` allocates one entry per CPU, and
    // `cpus: 4294967295` asked for 16 GiB.
    if machine.cpus == 0 || machine.cpus > crate::host::cpus::MAX_CPUS {
        return Err(invalid(format!("cpus must be 1 to {}", crate::host::cpus::MAX_CPUS)));
    }
    let max_us = crate::catalog::latency::MAX_THRESHOLD_US as u64;
    if machine.latency_requirement_us.is_some_and(|us| us == 0 || us > max_us) {
        return Err(invalid(format!("latency_requirement_us must be 1 to {max_us}")));
    }
    // The one CPU-layout check (`base::CpuLayout`), worded for the machine file's fields.
    let all = machine.all_cpus();
    if machine.rt.housekeeping.is_empty() {
        // Left out: every CPU of the board that is not an RT CPU.
        machine.rt.housekeeping = all.difference(&machine.rt.rt_cpus);
    }
    let rt = &machine.rt;
    let board = crate::host::cpus::Board::Machine(machine.name.clone());
    if let Err(e) =
        crate::host::cpus::CpuLayout::new(&all, &rt.rt_cpus, Some(&rt.housekeeping), board)
    {
        use crate::host::cpus::LayoutError as L;
        return Err(invalid(match e {
            L::RtOutside { .. } | L::HousekeepingOutside { .. } => {
                format!("rt CPUs and housekeeping must be within {all}")
            }
            L::NoRtCpu | L::NoHousekeeping { .. } => {
                "rt.rt_cpus and rt.housekeeping must each name at least one CPU".into()
            }
            L::CpuZero { .. } => "rt.rt_cpus isolates CPU 0, which must stay a housekeeping CPU (it keeps boot, timekeeping and unmovable interrupts)".into(),
            L::Overlap { .. } => {
                "rt.rt_cpus and rt.housekeeping overlap (a CPU is one or the other)".into()
            }
        }));
    }
    let name_ok = |s: &str| {
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
    };
    if !name_ok(&machine.name) || !machine.aliases.iter().all(|a| name_ok(a)) {
        return Err(invalid("name and aliases may hold only letters, digits, `-` and `_`".into()));
    }
    if let Some(problem) = machine.lava.as_ref().and_then(LavaProfile::problem) {
        return Err(invalid(problem));
    }
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits(&machine.rt.rcu_expedited) || !digits(&machine.rt.cpuidle_off) {
        return Err(invalid("rt.rcu_expedited and rt.cpuidle_off must be digits or empty".into()));
    }
    if let Some(kas_file) = &machine.kas_file {
        let path_ok = kas_file.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./".contains(&b));
        if !kas_file.starts_with("ci/")
            || !kas_file.ends_with(".yml")
            || !path_ok
            || kas_file.contains("..")
        {
            return Err(invalid(format!("kas_file `{kas_file}` must be ci/<name>.yml")));
        }
    }
    Ok(machine)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A user's machine file whose `lava:` section would put something other than plain
    /// names into a job (or a postprocess shell step) is refused when the catalog loads.
    #[test]
    fn a_bad_lava_profile_is_refused() {
        let shipped = EMBEDDED.iter().find(|(f, _)| *f == "qcs8300-ride-sx.yaml").unwrap().1;
        assert!(parse(Path::new("ok.yaml"), shipped).unwrap().lava.is_some());
        for (from, to, why) in [
            ("device_type: monaco-ride", "device_type: \"a b\"", "lava.device_type must be"),
            (
                "flasher_device_type: qcs8300-ride-sx",
                "flasher_device_type: \"x;reboot\"",
                "flasher_device_type must be",
            ),
            (
                "firehose: prog_firehose_ddr.elf",
                "firehose: ../../etc/passwd",
                "needs lava.firehose",
            ),
            ("path: sail_nor", "path: ../up", "each lava.qdl_stages entry"),
            ("rawprogram: [rawprogram0.xml]", "rawprogram: []", "each lava.qdl_stages entry"),
            ("boot_prompt: \"root@monaco-ride\"", "boot_prompt: \"\"", "lava.boot_prompt must be"),
            ("deploy: qdl", "deploy: flasher", "belong to deploy qdl"),
            ("deploy: qdl", "deploy: usb", "unknown variant `usb`"),
        ] {
            assert!(shipped.contains(from), "{from}");
            let text = shipped.replacen(from, to, 1);
            let err = parse(Path::new("m.yaml"), &text).unwrap_err().to_string();
            assert!(err.starts_with("machine file m.yaml is not valid: "), "{err}");
            assert!(err.contains(why), "{to}: {err}");
        }
    }

    #[test]
    fn every_shipped_board_loads() {
        let catalog = Catalog::embedded();
        let names: Vec<&str> = catalog.machines().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "iq-615-evk",
                "iq-8275-evk",
                "iq-9075-evk",
                "iq-x7181-evk",
                "phytium-ft2000-4",
                "qcm6490-idp",
                "qcs615-ride",
                "qcs8300-ride-sx",
                "qcs9100-ride-sx",
                "rb3gen2-core-kit",
                "rk3562j-evm",
                "rk3588-evb"
            ]
        );
    }

    /// Issue 36 item 4: the seed guides' boards ship for measuring, with their CPUs, RT CPUs
    /// and sources, and no build fields.
    #[test]
    fn the_seed_boards_ship_for_measuring_only() {
        let catalog = Catalog::embedded();
        for (name, cpus, rt, housekeeping, source) in [
            ("rk3588-evb", 8, "7", "0-6", "cyclictest -c 0 -m -t 8 -p 99"),
            ("rk3562j-evm", 4, "3", "0-2", "isolcpus=3"),
            ("phytium-ft2000-4", 4, "2-3", "0-1", "isolcpus=2,3"),
        ] {
            let m = catalog.lookup(name).unwrap().machine;
            assert_eq!(m.cpus, cpus, "{name}");
            assert_eq!(m.rt.rt_cpus.to_string(), rt, "{name}");
            assert_eq!(m.rt.housekeeping.to_string(), housekeeping, "{name}");
            assert!(m.source.as_deref().unwrap_or_default().contains(source), "{name}");
            let err = m.build().unwrap_err().to_string();
            assert!(
                err.contains("its file has no kas_file, soc_family, serial_console, storage,"),
                "{err}"
            );
        }
        for m in catalog.machines().filter(|m| m.source.is_none()) {
            assert!(m.build().is_ok(), "{} (a Qualcomm board) builds", m.name);
        }
    }

    /// A board for measuring is three lines in the catalog's own field names; housekeeping is
    /// every other CPU; every missing field is named at once.
    #[test]
    fn three_lines_make_a_board_and_missing_fields_are_named_at_once() {
        let m = parse(Path::new("b.yaml"), "name: rk3588-evb\ncpus: 8\nrt: { rt_cpus: \"7\" }\n")
            .unwrap();
        assert_eq!(m.rt.housekeeping.to_string(), "0-6");
        assert_eq!((m.rt.rcu_expedited.as_str(), m.rt.cpuidle_off.as_str()), ("", ""));
        assert_eq!(m.title(), "rk3588-evb");
        assert_eq!(
            m.build().unwrap_err().to_string(),
            "machine `rk3588-evb` is for measuring only: its file has no kas_file, soc, soc_family, \
             serial_console, storage, which a build needs; add them to its machine file (see \
             `rtbuild machines show rb3gen2-core-kit` for a board that has them)"
        );
        let some =
            "name: b\ncpus: 4\nrt: { rt_cpus: \"3\" }\nkas_file: ci/b.yml\nsoc: S\nstorage: ufs\n";
        let err = parse(Path::new("b.yaml"), some).unwrap().build().unwrap_err().to_string();
        assert!(err.contains("its file has no soc_family, serial_console, which"), "{err}");
        for (text, missing) in [
            ("description: only\n", "name, cpus, rt.rt_cpus"),
            ("name: b\n", "cpus, rt.rt_cpus"),
            ("name: b\ncpus: 4\nrt: { housekeeping: \"0\" }\n", "rt.rt_cpus"),
            ("cpus: 4\nrt: { rt_cpus: \"3\" }\n", "name"),
        ] {
            let err = parse(Path::new("b.yaml"), text).unwrap_err().to_string();
            assert_eq!(
                err,
                format!(
                    "machine file b.yaml is not valid: it lacks {missing} (a board needs at least \
                     `name: NAME`, `cpus: N` and `rt: {{ rt_cpus: LIST }}`; kas_file, soc, \
                     soc_family, serial_console, storage only to build for it); fix the file or \
                     remove it"
                ),
                "{text}"
            );
        }
    }

    #[test]
    fn iq_x7181_isolates_cpu_11_of_12() {
        let catalog = Catalog::embedded();
        let m = catalog.lookup("iq-x7181-evk").unwrap().machine;
        assert_eq!(m.cpus, 12);
        assert_eq!(m.rt.rt_cpus.to_string(), "11");
        assert_eq!(m.rt.housekeeping.to_string(), "0-10");
        assert_eq!(m.soc_family.as_deref(), Some("hamoa"));
    }

    #[test]
    fn alias_resolves_to_canonical_board() {
        let catalog = Catalog::embedded();
        let found = catalog.lookup("qcs6490-rb3gen2").unwrap();
        assert_eq!(found.machine.name, "rb3gen2-core-kit");
        assert_eq!(found.alias, Some("qcs6490-rb3gen2"));
        assert_eq!(found.machine.kas_file.as_deref(), Some("ci/rb3gen2-core-kit.yml"));
    }

    #[test]
    fn iq_8275_isolates_cpu_3() {
        let catalog = Catalog::embedded();
        let m = catalog.lookup("iq-8275-evk").unwrap().machine;
        assert_eq!(m.rt.rt_cpus.to_string(), "3");
        assert_eq!(m.rt.housekeeping.to_string(), "0-2,4-7");
    }

    /// Issue 13 item 3: `cpus: 4294967295` aborted on a 16 GiB allocation.
    #[test]
    fn numbers_are_bounded_before_anything_is_allocated() {
        let board = |cpus: &str, extra: &str| {
            format!(
                "name: b\ndescription: d\nkas_file: ci/b.yml\nsoc: s\nsoc_family: f\n\
                 cpus: {cpus}\nrt: {{rt_cpus: \"1\", housekeeping: \"0\", rcu_expedited: \"1\", \
                 cpuidle_off: \"1\"}}\nserial_console: c\nstorage: ufs\n{extra}"
            )
        };
        assert!(parse(Path::new("ok.yaml"), &board("2", "")).is_ok());
        for cpus in ["4294967295", "4097", "0"] {
            let err = parse(Path::new("b.yaml"), &board(cpus, "")).unwrap_err().to_string();
            assert_eq!(
                err,
                "machine file b.yaml is not valid: cpus must be 1 to 4096; fix the file or remove it"
            );
        }
        let err = parse(Path::new("b.yaml"), &board("4294967296", "")).unwrap_err().to_string();
        assert!(err.starts_with("machine file b.yaml is not valid: "), "{err}");
        for us in ["0", "18446744073709551615"] {
            let extra = format!("latency_requirement_us: {us}\n");
            let err = parse(Path::new("b.yaml"), &board("2", &extra)).unwrap_err().to_string();
            assert!(err.contains("latency_requirement_us must be 1 to 1000000"), "{err}");
        }
    }

    #[test]
    fn unknown_name_lists_the_closest() {
        let err = Catalog::embedded().lookup("qcs649-rb3gen2").unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown machine `qcs649-rb3gen2`; did you mean qcs6490-rb3gen2? See `rtbuild machines`"
        );
        let err = Catalog::embedded().lookup("zzz").unwrap_err().to_string();
        assert!(err.starts_with("unknown machine `zzz`; known machines: iq-615-evk, "), "{err}");
    }
}
