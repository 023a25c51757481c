//! `rtbuild doctor --meta-qcom DIR`: what rtbuild relies on in meta-qcom against what a
//! checkout has, one row each, so a lab learns of a rename the day it lands: the `ci/` files
//! rtbuild composes, how the hypervisor is chosen, the RT recipe and its `LINUX_VERSION`, each
//! board's RT variables and `MACHINE_FEATURES`, where the `qcomflash` image type is switched
//! on, and who writes `KERNEL_CMDLINE_EXTRA`. A row is `ok`, `differs` (meta-qcom moved:
//! worth reading, the build still works) or `missing` (something rtbuild needs is gone: exit 1).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::catalog::meta_qcom::{ConfMachine, MetaQcom, MetaQcomError};
use crate::catalog::{Catalog, Machine};
use crate::plan::compose::{
    Checkout, DISTRO_KVM_FILE, GUNYAH_FILE, QCOM_DISTRO_FILE, ci_files, revision,
};
use crate::plan::{KERNEL_KAS_FILE, KERNEL_RECIPE, KERNEL_VERSION};

/// How one row came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RowStatus {
    Ok,
    /// The checkout says something else than rtbuild remembers; the build still works.
    Differs,
    /// Something rtbuild needs is not in the checkout.
    Missing,
}

/// One thing rtbuild relies on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Row {
    /// What it is: a `ci/` file, `hypervisor`, `RT recipe`, `<board> QCOM_*`, …
    pub item: String,
    /// What rtbuild relies on (or remembers).
    pub rtbuild: String,
    /// What the checkout has.
    pub checkout: String,
    pub status: RowStatus,
}

/// The whole comparison (`--json`).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct UpstreamReport {
    pub meta_qcom: PathBuf,
    pub revision: Option<String>,
    pub rows: Vec<Row>,
    pub missing: usize,
    pub differs: usize,
}

impl UpstreamReport {
    /// Nothing rtbuild needs is missing.
    pub(crate) fn complete(&self) -> bool {
        self.missing == 0
    }
}

/// Compares `meta_qcom` with what rtbuild relies on, for `machines` (every catalog board when
/// empty).
pub(crate) fn compare(
    meta_qcom: &MetaQcom,
    catalog: &Catalog,
    machines: &[&Machine],
) -> Result<UpstreamReport, MetaQcomError> {
    let dir = &meta_qcom.dir;
    let checkout = Checkout::read(meta_qcom);
    let mut rows = Vec::new();
    // Boards rtbuild only measures are not meta-qcom's: nothing upstream to compare.
    let all: Vec<&Machine> = if machines.is_empty() {
        catalog.machines().filter(|m| m.kas_file.is_some()).collect()
    } else {
        machines.to_vec()
    };

    // The ci/ files rtbuild composes.
    for (file, why) in [
        ("ci/base.yml", "every machine file includes it"),
        (QCOM_DISTRO_FILE, "the qcom-distro distro"),
        (KERNEL_KAS_FILE, "selects linux-qcom-rt 6.18"),
    ] {
        rows.push(ci_row(&checkout, file, why));
    }
    for (machine, kas_file) in all.iter().filter_map(|m| Some((m, m.kas_file.as_deref()?))) {
        rows.push(ci_row(&checkout, kas_file, &format!("{}'s kas file", machine.name)));
    }
    rows.push(hypervisor_row(&checkout));
    rows.push(recipe_row(dir));
    for machine in &all {
        let conf = meta_qcom.machine(&machine.name)?;
        rows.push(rt_row(machine, conf.as_ref()));
        rows.push(features_row(meta_qcom, machine));
    }
    rows.push(qcomflash_row(dir));
    rows.push(cmdline_row(dir));
    let count = |status| rows.iter().filter(|r| r.status == status).count();
    Ok(UpstreamReport {
        meta_qcom: dir.clone(),
        revision: revision(dir),
        missing: count(RowStatus::Missing),
        differs: count(RowStatus::Differs),
        rows,
    })
}

fn ci_row(checkout: &Checkout, file: &str, why: &str) -> Row {
    let has = checkout.has(file);
    Row {
        item: file.to_string(),
        rtbuild: format!("included: {why}"),
        checkout: if has {
            "present".to_string()
        } else {
            format!("absent; has {}", checkout.instead(file))
        },
        status: if has { RowStatus::Ok } else { RowStatus::Missing },
    }
}

fn hypervisor_row(checkout: &Checkout) -> Row {
    let rtbuild = format!(
        "KVM by MACHINE_FEATURES with {GUNYAH_FILE} opt-in (#2879 and later), or {DISTRO_KVM_FILE} (before)"
    );
    let (text, status) = match (checkout.has(GUNYAH_FILE), checkout.has(DISTRO_KVM_FILE)) {
        (true, false) => {
            (format!("{GUNYAH_FILE}: KVM by MACHINE_FEATURES (after #2879)"), RowStatus::Ok)
        }
        (false, true) => (
            format!("{DISTRO_KVM_FILE}: KVM added by the distro file (before #2879)"),
            RowStatus::Ok,
        ),
        (true, true) => (format!("both {GUNYAH_FILE} and {DISTRO_KVM_FILE}"), RowStatus::Differs),
        (false, false) => (
            format!(
                "neither {GUNYAH_FILE} nor {DISTRO_KVM_FILE}: only the machines' own hypervisor can be built"
            ),
            RowStatus::Differs,
        ),
    };
    Row { item: "hypervisor".to_string(), rtbuild, checkout: text, status }
}

/// The RT recipe and the `LINUX_VERSION` it builds (from the recipe or the files it requires).
fn recipe_row(dir: &Path) -> Row {
    let folder = Path::new("recipes-kernel/linux");
    let name = format!("{KERNEL_RECIPE}_{KERNEL_VERSION}.bb");
    let rtbuild = format!("{}/{name} ({KERNEL_RECIPE} {KERNEL_VERSION})", folder.display());
    let recipe = dir.join(folder).join(&name);
    if !recipe.is_file() {
        let others: Vec<String> = std::fs::read_dir(dir.join(folder))
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().to_str().map(String::from))
            .filter(|n| n.starts_with(&format!("{KERNEL_RECIPE}_")) && n.ends_with(".bb"))
            .collect();
        let has = if others.is_empty() { "no other".to_string() } else { others.join(", ") };
        return Row {
            item: "RT recipe".to_string(),
            rtbuild,
            checkout: format!("absent; has {has}"),
            status: RowStatus::Missing,
        };
    }
    let checkout = match linux_version(&recipe, 0) {
        Some((version, file)) => format!("present, LINUX_VERSION {version} (set in {file})"),
        None => "present, no LINUX_VERSION found".to_string(),
    };
    Row { item: "RT recipe".to_string(), rtbuild, checkout, status: RowStatus::Ok }
}

/// `LINUX_VERSION` as `file` or a recipe it `require`s (beside it) sets it, with the file name.
fn linux_version(file: &Path, depth: usize) -> Option<(String, String)> {
    let text = crate::files::input::read_to_string(file, 1 << 20).ok()?;
    let mut required = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some((name, value)) = line.split_once('=') {
            let name = name.trim_end_matches(['?', ':', ' ']);
            if name == "LINUX_VERSION" {
                let value = value.trim().trim_matches('"').to_string();
                let shown = file.file_name()?.to_string_lossy().into_owned();
                return Some((value, shown));
            }
        }
        if let Some(target) =
            line.strip_prefix("require ").or_else(|| line.strip_prefix("include "))
        {
            let target = target.trim();
            if !target.contains('/') && !target.contains('$') {
                required.push(file.with_file_name(target));
            }
        }
    }
    if depth >= 3 {
        return None;
    }
    required.iter().find_map(|r| linux_version(r, depth + 1))
}

fn rt_values(rt_cpus: &str, irqaff: &str, nocbs: &str, expedited: &str, idle: &str) -> String {
    format!(
        "QCOM_RT_CPU={rt_cpus} QCOM_IRQAFF={irqaff} QCOM_RCU_NOCBS={nocbs} QCOM_RCU_EXPEDITED={expedited} QCOM_CPUIDLE_OFF={idle}"
    )
}

fn rt_row(machine: &Machine, conf: Option<&ConfMachine>) -> Row {
    let rt = &machine.rt;
    let rtbuild = rt_values(
        &rt.rt_cpus.to_string(),
        &rt.housekeeping.to_string(),
        &rt.rt_cpus.to_string(),
        &rt.rcu_expedited,
        &rt.cpuidle_off,
    );
    let item = format!("{} QCOM_*", machine.name);
    let Some(conf) = conf else {
        return Row {
            item,
            rtbuild,
            checkout: format!("conf/machine/{}.conf absent or sets no QCOM_RT_CPU", machine.name),
            status: RowStatus::Missing,
        };
    };
    let checkout = rt_values(
        &conf.rt_cpus.to_string(),
        &conf.housekeeping.to_string(),
        &conf.rcu_nocbs.to_string(),
        &conf.rcu_expedited,
        &conf.cpuidle_off,
    );
    let status = if checkout == rtbuild { RowStatus::Ok } else { RowStatus::Differs };
    Row { item, rtbuild, checkout, status }
}

fn features_row(meta_qcom: &MetaQcom, machine: &Machine) -> Row {
    let conf = PathBuf::from(format!("conf/machine/{}.conf", machine.name));
    let mut remembered = machine.machine_features.clone();
    remembered.sort();
    let item = format!("{} MACHINE_FEATURES", machine.name);
    let rtbuild = remembered.join(" ");
    match meta_qcom.machine_features(&conf) {
        None => Row {
            item,
            rtbuild,
            checkout: format!("{} absent", conf.display()),
            status: RowStatus::Missing,
        },
        Some(mut found) => {
            found.sort();
            found.dedup();
            let status = if found == remembered { RowStatus::Ok } else { RowStatus::Differs };
            Row { item, rtbuild, checkout: found.join(" "), status }
        }
    }
}

/// Where `IMAGE_FSTYPES += "qcomflash"` is: `ci/base.yml` before meta-qcom #2983, a machine
/// include (`conf/machine/include/qcom-base.inc`) after.
fn qcomflash_row(dir: &Path) -> Row {
    let found: Vec<String> =
        writers(dir, |name, rest| name == "IMAGE_FSTYPES" && rest.contains("qcomflash"));
    let rtbuild = "IMAGE_FSTYPES += \"qcomflash\" (ci/base.yml before #2983, conf/machine/include/qcom-base.inc after)".to_string();
    Row {
        item: "qcomflash image".to_string(),
        rtbuild,
        status: if found.is_empty() { RowStatus::Missing } else { RowStatus::Ok },
        checkout: if found.is_empty() { "nothing sets it".to_string() } else { found.join(", ") },
    }
}

/// Every writer of `KERNEL_CMDLINE_EXTRA` in `conf/` and `ci/`; rtbuild relies on the one that
/// appends the RT arguments made from the `QCOM_*` variables.
fn cmdline_row(dir: &Path) -> Row {
    let all = writers(dir, |name, _| name == "KERNEL_CMDLINE_EXTRA");
    let rt = writers(dir, |name, rest| {
        name == "KERNEL_CMDLINE_EXTRA"
            && (rest.contains("RT_KERNEL_CMDLINE") || rest.contains("QCOM_RT_CPU"))
    });
    Row {
        item: "KERNEL_CMDLINE_EXTRA".to_string(),
        rtbuild:
            "an append of the RT arguments made from QCOM_* (qcom-common.inc's RT_KERNEL_CMDLINE)"
                .to_string(),
        status: if rt.is_empty() { RowStatus::Missing } else { RowStatus::Ok },
        checkout: if all.is_empty() {
            "no writer".to_string()
        } else {
            let rt_note = if rt.is_empty() { "; none appends the RT arguments" } else { "" };
            format!("written by {}{rt_note}", all.join(", "))
        },
    }
}

/// `file:line` of each assignment in `ci/*.yml` and `conf/**/*.{conf,inc}` whose variable
/// (with any `:override` dropped) and the rest of its logical line (continuations joined)
/// satisfy `matches`.
fn writers(dir: &Path, matches: impl Fn(&str, &str) -> bool) -> Vec<String> {
    let mut files: Vec<PathBuf> = ci_files(dir).into_iter().map(PathBuf::from).collect();
    for entry in walkdir::WalkDir::new(dir.join("conf")).max_depth(4).sort_by_file_name() {
        let Ok(entry) = entry else { continue };
        let name = entry.file_name().to_string_lossy();
        if entry.file_type().is_file() && (name.ends_with(".conf") || name.ends_with(".inc")) {
            if let Ok(rel) = entry.path().strip_prefix(dir) {
                files.push(rel.to_path_buf());
            }
        }
    }
    let mut out = Vec::new();
    for file in files {
        let Ok(text) = crate::files::input::read_to_string(&dir.join(&file), 1 << 20) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        let mut index = 0;
        while index < lines.len() {
            let start = index;
            let mut logical = lines[index].trim().to_string();
            while logical.ends_with('\\') && index + 1 < lines.len() {
                logical.pop();
                index += 1;
                logical.push_str(lines[index].trim());
            }
            index += 1;
            if logical.starts_with('#') {
                continue;
            }
            let Some(end) = logical.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) else {
                continue;
            };
            let (name, rest) = logical.split_at(end);
            // An override (`:append`, `[flag]`) or an operator must follow the name.
            if !rest.trim_start().starts_with([':', '=', '?', '+', '.', '[']) || !rest.contains('=')
            {
                continue;
            }
            if matches(name, rest) {
                out.push(format!("{}:{}", file.display(), start + 1));
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
        let mut all = vec![("conf/layer.conf", "BBFILE_COLLECTIONS += \"qcom\"\n")];
        all.extend_from_slice(files);
        for (path, text) in all {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            crate::files::write::fixture(path, text).unwrap();
        }
        dir
    }

    const RB3: &str = "require conf/machine/include/qcom-base.inc\n\
        MACHINE_FEATURES += \"efi m2connector pci tpm2 phone\"\nMACHINE_FEATURES:append = \" kvm\"\n\
        QCOM_RT_CPU = \"7\"\nQCOM_IRQAFF = \"0-6\"\nQCOM_RCU_NOCBS = \"7\"\n\
        QCOM_RCU_EXPEDITED = \"1\"\nQCOM_CPUIDLE_OFF = \"1\"\n";

    fn row<'a>(report: &'a UpstreamReport, item: &str) -> &'a Row {
        report.rows.iter().find(|r| r.item == item).unwrap_or_else(|| panic!("no {item}"))
    }

    #[test]
    fn a_checkout_after_2983_and_2879_has_everything_and_says_where() {
        let dir = layer(&[
            ("ci/base.yml", "header:\n  version: 14\n"),
            ("ci/qcom-distro.yml", "header:\n  version: 14\n"),
            ("ci/gunyah.yml", "header:\n  version: 14\n"),
            ("ci/linux-qcom-rt-6.18.yml", "header:\n  version: 14\n"),
            ("ci/rb3gen2-core-kit.yml", "header:\n  version: 14\n"),
            ("conf/machine/rb3gen2-core-kit.conf", RB3),
            (
                "conf/machine/include/qcom-base.inc",
                "IMAGE_CLASSES += \"image_types_qcom\"\nIMAGE_FSTYPES += \"qcomflash\"\n\
                 KERNEL_CMDLINE_EXTRA:append = \"${@bb.utils.contains_any('PREFERRED_PROVIDER_virtual/kernel',\\\n    'linux-qcom-rt', \\\n    ' ${RT_KERNEL_CMDLINE}', '', d)}\"\n",
            ),
            ("recipes-kernel/linux/linux-qcom-rt_6.18.bb", "require linux-qcom_6.18.bb\n"),
            ("recipes-kernel/linux/linux-qcom_6.18.bb", "LINUX_VERSION ?= \"6.18.44\"\n"),
        ]);
        let catalog = Catalog::embedded();
        let rb3 = catalog.lookup("rb3gen2-core-kit").unwrap().machine;
        let meta = MetaQcom::open(dir.path()).unwrap();
        let report = compare(&meta, &catalog, &[rb3]).unwrap();
        assert_eq!((report.missing, report.differs), (0, 0), "{:#?}", report.rows);
        assert_eq!(
            row(&report, "qcomflash image").checkout,
            "conf/machine/include/qcom-base.inc:2"
        );
        assert_eq!(
            row(&report, "KERNEL_CMDLINE_EXTRA").checkout,
            "written by conf/machine/include/qcom-base.inc:3"
        );
        assert_eq!(
            row(&report, "RT recipe").checkout,
            "present, LINUX_VERSION 6.18.44 (set in linux-qcom_6.18.bb)"
        );
        assert_eq!(
            row(&report, "rb3gen2-core-kit MACHINE_FEATURES").checkout,
            "efi kvm m2connector pci phone tpm2"
        );
        assert!(row(&report, "hypervisor").checkout.starts_with("ci/gunyah.yml"));
    }

    #[test]
    fn what_moved_differs_and_what_is_gone_is_missing() {
        let dir = layer(&[
            ("ci/base.yml", "header:\n  version: 14\n"),
            ("ci/linux-qcom-rt-6.24.yml", "header:\n  version: 14\n"),
            (
                "conf/machine/rb3gen2-core-kit.conf",
                "MACHINE_FEATURES += \"efi pci\"\nQCOM_RT_CPU = \"6-7\"\nQCOM_IRQAFF = \"0-5\"\n",
            ),
        ]);
        let catalog = Catalog::embedded();
        let rb3 = catalog.lookup("rb3gen2-core-kit").unwrap().machine;
        let meta = MetaQcom::open(dir.path()).unwrap();
        let report = compare(&meta, &catalog, &[rb3]).unwrap();
        let status = |item: &str| row(&report, item).status;
        assert_eq!(status("ci/linux-qcom-rt-6.18.yml"), RowStatus::Missing);
        assert!(
            row(&report, "ci/linux-qcom-rt-6.18.yml")
                .checkout
                .contains("ci/linux-qcom-rt-6.24.yml")
        );
        assert_eq!(status("ci/qcom-distro.yml"), RowStatus::Missing);
        assert_eq!(status("ci/rb3gen2-core-kit.yml"), RowStatus::Missing);
        assert_eq!(status("RT recipe"), RowStatus::Missing);
        assert_eq!(status("qcomflash image"), RowStatus::Missing);
        assert_eq!(status("KERNEL_CMDLINE_EXTRA"), RowStatus::Missing);
        assert_eq!(status("hypervisor"), RowStatus::Differs);
        assert_eq!(status("rb3gen2-core-kit QCOM_*"), RowStatus::Differs);
        assert_eq!(status("rb3gen2-core-kit MACHINE_FEATURES"), RowStatus::Differs);
        assert!(!report.complete());
        assert_eq!(report.missing, 6, "{:#?}", report.rows);
    }
}
