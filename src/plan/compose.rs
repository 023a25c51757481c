//! Which of meta-qcom's kas files a build composes, decided from the checkout that is built
//! (`--meta-qcom DIR`, or kas's own checkout at the branch, commit and lock of the build), never
//! from a remembered list of file names.
//!
//! meta-qcom chose the hypervisor two ways. Before #2879 (wrynose before the #3189 backport),
//! `ci/qcom-distro-kvm.yml` included `ci/qcom-distro.yml` and appended `kvm` to
//! `MACHINE_FEATURES`; meta-qcom's RT CI built `ci/linux-qcom-rt-6.18.yml:ci/qcom-distro-kvm.yml`.
//! Since #2879, the boards that run either put `kvm` in their own `MACHINE_FEATURES`,
//! `ci/gunyah.yml` only removes it, and meta-qcom's RT CI builds `ci/linux-qcom-rt-6.18.yml` over
//! the plain distro. Both are read here from what the checkout has: its `ci/*.yml` files and the
//! machine conf's `MACHINE_FEATURES`. Without a checkout (a plain `rtbuild generate`), the
//! catalog's remembered facts stand in, labelled as such in `rtbuild-plan.json`.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use super::{Distro, Include, KERNEL_KAS_FILE, PlanError};
use crate::catalog::Machine;
use crate::catalog::meta_qcom::MetaQcom;
pub(crate) use crate::formats::plan_json::Composition;

/// meta-qcom's plain distro kas file.
pub(crate) const QCOM_DISTRO_FILE: &str = "ci/qcom-distro.yml";
/// Before #2879: qcom-distro plus `MACHINE_FEATURES:append = " kvm"`.
pub(crate) const DISTRO_KVM_FILE: &str = "ci/qcom-distro-kvm.yml";
/// Since #2879: `MACHINE_FEATURES:remove = "kvm"`, the opt-in to Gunyah.
pub(crate) const GUNYAH_FILE: &str = "ci/gunyah.yml";

/// A meta-qcom file the build names that the checkout lacks.
#[derive(Debug, thiserror::Error)]
#[error(
    "{by} names {file}, which meta-qcom at {revision} ({}) does not have; it has {instead}; pick a file this checkout has (`rtbuild doctor --meta-qcom {}` lists what rtbuild relies on)",
    .dir.display(), .dir.display()
)]
pub(crate) struct MissingCiFile {
    pub file: String,
    /// What names it: `rtbuild's composition`, `--include`, `--include FILE`.
    pub by: String,
    pub revision: String,
    pub dir: PathBuf,
    pub instead: String,
}

/// The hypervisor the image boots under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hypervisor {
    /// KVM (`kvm` in `MACHINE_FEATURES`): what meta-qcom's RT CI builds.
    Kvm,
    /// Qualcomm's Gunyah (no `kvm` in `MACHINE_FEATURES`).
    Gunyah,
}

impl Hypervisor {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Hypervisor::Kvm => "kvm",
            Hypervisor::Gunyah => "gunyah",
        }
    }
}

impl fmt::Display for Hypervisor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Hypervisor {
    type Err = PlanError;
    fn from_str(s: &str) -> Result<Hypervisor, PlanError> {
        match s {
            "kvm" => Ok(Hypervisor::Kvm),
            "gunyah" => Ok(Hypervisor::Gunyah),
            other => Err(PlanError::Hypervisor { given: super::values::printable(other) }),
        }
    }
}

/// What the hypervisor request is, once `--distro qcom-distro-kvm` (an alias) is unfolded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HypervisorRequest {
    /// `--hypervisor`, or `kvm` from the alias; `None`: the default (KVM where the checkout
    /// gives it).
    pub wanted: Option<Hypervisor>,
    /// The user typed `--distro qcom-distro-kvm`.
    pub from_alias: bool,
}

/// What a meta-qcom checkout offers the composition, or what rtbuild remembers of meta-qcom.
#[derive(Debug, Clone)]
pub(crate) struct Offer {
    /// The checkout, or `None` for the remembered facts.
    pub checkout: Option<Checkout>,
    /// The machine's `MACHINE_FEATURES` (its conf's appends, or the catalog's).
    pub machine_features: Vec<String>,
    /// The machine conf they were read from, relative to the checkout, or `None` (catalog).
    pub features_from: Option<PathBuf>,
}

/// A checkout's `ci/*.yml` files and revision.
#[derive(Debug, Clone)]
pub(crate) struct Checkout {
    pub dir: PathBuf,
    pub revision: Option<String>,
    /// `ci/NAME.yml`, sorted.
    pub ci_files: BTreeSet<String>,
}

impl Checkout {
    /// Reads `meta_qcom`'s `ci/` folder (regular `*.yml` files only) and its git HEAD.
    pub(crate) fn read(meta_qcom: &MetaQcom) -> Checkout {
        let dir = meta_qcom.dir.clone();
        let ci_files = ci_files(&dir);
        Checkout { revision: revision(&dir), dir, ci_files }
    }

    pub(crate) fn has(&self, file: &str) -> bool {
        self.ci_files.contains(file)
    }

    /// The revision as messages show it: the commit's first 12 digits, or that it is no git
    /// checkout.
    pub(crate) fn shown_revision(&self) -> String {
        match &self.revision {
            Some(commit) => commit.chars().take(12).collect(),
            None => "an unknown revision (not a git checkout)".to_string(),
        }
    }

    /// What the checkout has in place of `missing`, as a phrase.
    pub(crate) fn instead(&self, missing: &str) -> String {
        if missing == DISTRO_KVM_FILE && self.has(GUNYAH_FILE) {
            return format!(
                "{GUNYAH_FILE} (meta-qcom #2879 renamed it: KVM now comes from the machine's MACHINE_FEATURES; choose with --hypervisor kvm|gunyah)"
            );
        }
        let stem = |f: &str| f.trim_start_matches("ci/").trim_end_matches(".yml").to_string();
        let words: BTreeSet<String> = stem(missing)
            .split(['-', '_', '.'])
            .filter(|w| w.len() > 1 && *w != "qcom" && *w != "ci")
            .map(String::from)
            .collect();
        let like: Vec<&str> = self
            .ci_files
            .iter()
            .filter(|f| stem(f).split(['-', '_', '.']).any(|w| words.contains(w)))
            .map(String::as_str)
            .take(6)
            .collect();
        if like.is_empty() {
            format!("none like it among its {} ci/*.yml files", self.ci_files.len())
        } else {
            like.join(", ")
        }
    }
}

/// `dir/ci/*.yml`, regular files only, as `ci/NAME.yml`.
pub(crate) fn ci_files(dir: &Path) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(dir.join("ci")) else { return BTreeSet::new() };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().to_str().map(String::from))
        .filter(|n| n.ends_with(".yml"))
        .map(|n| format!("ci/{n}"))
        .collect()
}

/// The commit `dir`'s HEAD names, when `dir` is the top of a git work tree. Read from the files
/// themselves (`.git/HEAD`, the branch's ref or `packed-refs`), through the bounded reader: a
/// checkout kas made as another user is one libgit2 refuses to open.
pub(crate) fn revision(dir: &Path) -> Option<String> {
    let read = |path: &Path| crate::files::input::read_to_string(path, 1 << 20).ok();
    let dot_git = dir.join(".git");
    let git_dir = if dot_git.is_dir() {
        dot_git
    } else {
        let text = read(&dot_git)?;
        dir.join(text.trim().strip_prefix("gitdir:")?.trim())
    };
    let common = match read(&git_dir.join("commondir")) {
        Some(text) => git_dir.join(text.trim()),
        None => git_dir.clone(),
    };
    let head = read(&git_dir.join("HEAD"))?;
    let head = head.trim();
    let is_commit = |text: &str| text.len() == 40 && text.bytes().all(|b| b.is_ascii_hexdigit());
    let Some(name) = head.strip_prefix("ref:").map(str::trim) else {
        return is_commit(head).then(|| head.to_string());
    };
    if !name.starts_with("refs/") || name.split('/').any(|part| part == "..") {
        return None;
    }
    for base in [&git_dir, &common] {
        if let Some(text) = read(&base.join(name)) {
            let commit = text.trim();
            return is_commit(commit).then(|| commit.to_string());
        }
    }
    let packed = read(&common.join("packed-refs"))?;
    packed.lines().find_map(|line| {
        let (commit, reference) = line.split_once(' ')?;
        (reference.trim() == name && is_commit(commit)).then(|| commit.to_string())
    })
}

impl Offer {
    /// What the checkout has for `machine` (its conf's `MACHINE_FEATURES` when the conf is
    /// there, else the catalog's).
    pub(crate) fn of_checkout(meta_qcom: &MetaQcom, machine: &Machine) -> Offer {
        let conf = PathBuf::from(format!("conf/machine/{}.conf", machine.name));
        let (features, from) = match meta_qcom.machine_features(&conf) {
            Some(features) => (features, Some(conf)),
            None => (machine.machine_features.clone(), None),
        };
        Offer {
            checkout: Some(Checkout::read(meta_qcom)),
            machine_features: features,
            features_from: from,
        }
    }

    /// rtbuild's remembered facts, for a plan made without a checkout: meta-qcom as the
    /// catalog describes it (after #2879 on master and wrynose).
    pub(crate) fn remembered(machine: &Machine) -> Offer {
        Offer {
            checkout: None,
            machine_features: machine.machine_features.clone(),
            features_from: None,
        }
    }

    fn has(&self, file: &str) -> bool {
        match &self.checkout {
            Some(checkout) => checkout.has(file),
            // Remembered: meta-qcom after #2879.
            None => file != DISTRO_KVM_FILE,
        }
    }

    fn layout(&self) -> &'static str {
        if self.has(GUNYAH_FILE) {
            "gunyah.yml"
        } else if self.has(DISTRO_KVM_FILE) {
            "qcom-distro-kvm.yml"
        } else {
            "none"
        }
    }

    fn features_shown(&self, machine: &str) -> String {
        match &self.features_from {
            Some(conf) => conf.display().to_string(),
            None => format!("rtbuild's catalog entry for {machine}"),
        }
    }
}

/// Composes the meta-qcom kas files for `machine`, `distro` and the hypervisor request over
/// `offer`; every meta-qcom file the build names (rtbuild's and each `--include`) must be in the
/// checkout. Also returns notes for the user.
pub(crate) fn compose(
    machine: &Machine,
    distro: Distro,
    request: HypervisorRequest,
    includes: &[Include],
    offer: &Offer,
) -> Result<(Composition, Vec<String>), PlanError> {
    let mut reasons = Vec::new();
    let mut notes = Vec::new();
    let kvm_in_conf = offer.machine_features.iter().any(|f| f == "kvm");
    let meta = match offer.checkout {
        Some(_) => "this meta-qcom",
        None => "meta-qcom as rtbuild's catalog remembers it (no checkout read)",
    };
    let from = offer.features_shown(&machine.name);
    let mut files = Vec::new();
    // A board for measuring only has none (its plan is never built: `Plan::new` refuses it).
    if let Some(kas_file) = &machine.kas_file {
        files.push(kas_file.clone());
        reasons.push(format!("{kas_file}: the machine's own kas file"));
    }
    let mut distro_file = match distro {
        Distro::Nodistro => None,
        _ => Some(QCOM_DISTRO_FILE),
    };
    if let Some(file) = distro_file {
        reasons.push(format!("{file}: the {distro} distro"));
    }
    let mut hypervisor_file = None;
    let unavailable = |hypervisor: Hypervisor, reason: String| PlanError::HypervisorUnavailable {
        hypervisor: hypervisor.name(),
        reason,
    };
    let hypervisor = match request.wanted.unwrap_or(Hypervisor::Kvm) {
        Hypervisor::Kvm if kvm_in_conf => {
            reasons.push(format!("kvm: {from} puts kvm in MACHINE_FEATURES"));
            Hypervisor::Kvm
        }
        Hypervisor::Kvm if distro_file.is_some() && offer.has(DISTRO_KVM_FILE) => {
            distro_file = Some(DISTRO_KVM_FILE);
            reasons.push(format!(
                "kvm: {from} has no kvm in MACHINE_FEATURES; {DISTRO_KVM_FILE} (qcom-distro plus kvm, meta-qcom before #2879) adds it, as meta-qcom's RT CI builds there"
            ));
            Hypervisor::Kvm
        }
        Hypervisor::Kvm => {
            let why = if distro_file.is_none() && offer.has(DISTRO_KVM_FILE) {
                format!(
                    "{from} has no kvm in MACHINE_FEATURES, and {meta} adds it only with {DISTRO_KVM_FILE}, which is qcom-distro (not {distro})"
                )
            } else {
                format!(
                    "{from} has no kvm in MACHINE_FEATURES, and {meta} has no {DISTRO_KVM_FILE} to add it"
                )
            };
            if request.wanted.is_some() {
                let fix = if distro_file.is_none() && offer.has(DISTRO_KVM_FILE) {
                    "pass --distro qcom-distro, or --hypervisor gunyah"
                } else {
                    "pass --hypervisor gunyah, or a meta-qcom whose machine conf has kvm"
                };
                return Err(unavailable(Hypervisor::Kvm, format!("{why}; {fix}")));
            }
            reasons.push(format!("gunyah: {why}; the machine's own hypervisor is built"));
            // Worth a note only where KVM was to be had (another distro): elsewhere the
            // machine's own hypervisor is what meta-qcom's CI builds too.
            if offer.has(DISTRO_KVM_FILE) {
                notes.push(format!(
                    "{} builds with Gunyah, not KVM: {why} (pass --hypervisor to choose)",
                    machine.name
                ));
            }
            Hypervisor::Gunyah
        }
        Hypervisor::Gunyah if !kvm_in_conf => {
            reasons.push(format!(
                "gunyah: {from} has no kvm in MACHINE_FEATURES, so the machine's own hypervisor is Gunyah"
            ));
            Hypervisor::Gunyah
        }
        Hypervisor::Gunyah if offer.has(GUNYAH_FILE) => {
            hypervisor_file = Some(GUNYAH_FILE);
            reasons.push(format!(
                "gunyah: {from} puts kvm in MACHINE_FEATURES; {GUNYAH_FILE} removes it"
            ));
            Hypervisor::Gunyah
        }
        Hypervisor::Gunyah => {
            return Err(unavailable(
                Hypervisor::Gunyah,
                format!(
                    "{from} puts kvm in MACHINE_FEATURES and {meta} has no {GUNYAH_FILE} to remove it; pass --hypervisor kvm"
                ),
            ));
        }
    };
    if request.from_alias {
        let how = match distro_file {
            Some(DISTRO_KVM_FILE) => format!("this meta-qcom still has {DISTRO_KVM_FILE}"),
            _ => format!("KVM comes from {from}"),
        };
        notes.push(format!(
            "--distro qcom-distro-kvm is kept as an alias of --distro qcom-distro --hypervisor kvm ({how})"
        ));
    }
    files.extend(distro_file.map(String::from));
    files.extend(hypervisor_file.map(String::from));
    files.push(KERNEL_KAS_FILE.to_string());
    reasons.push(format!(
        "{KERNEL_KAS_FILE}: meta-qcom's selection of the RT kernel, linux-qcom-rt 6.18"
    ));
    if let Some(checkout) = &offer.checkout {
        let named = files.iter().map(|f| (f.clone(), "rtbuild's composition"));
        let included = includes.iter().filter_map(|i| match i {
            Include::MetaQcom(name) => Some((name.clone(), "--include")),
            Include::Local(_) => None,
        });
        let mut wanted: Vec<(String, String)> =
            named.chain(included).map(|(f, by)| (f, by.to_string())).collect();
        for include in includes {
            if let Include::Local(path) = include {
                for file in local_meta_qcom_files(path.as_path()) {
                    wanted.push((file, format!("--include {}", path.as_path().display())));
                }
            }
        }
        for (file, by) in wanted {
            if !checkout.has(&file) {
                return Err(PlanError::MissingCiFile(Box::new(MissingCiFile {
                    instead: checkout.instead(&file),
                    file,
                    by,
                    revision: checkout.shown_revision(),
                    dir: checkout.dir.clone(),
                })));
            }
        }
    }
    let composition = Composition {
        source: if offer.checkout.is_some() { "checkout" } else { "catalog" }.to_string(),
        meta_qcom: offer.checkout.as_ref().map(|c| c.dir.clone()),
        revision: offer.checkout.as_ref().and_then(|c| c.revision.clone()),
        layout: offer.layout().to_string(),
        distro: distro.to_string(),
        hypervisor: hypervisor.to_string(),
        machine_features: offer.machine_features.clone(),
        machine_features_from: offer
            .features_from
            .as_ref()
            .map_or_else(|| "catalog".to_string(), |p| p.display().to_string()),
        files,
        reasons,
    };
    Ok((composition, notes))
}

/// The meta-qcom `ci/` files a local kas file includes (`header: includes:` entries with
/// `repo: meta-qcom`), read through the bounded reader; a file that cannot be read names none
/// (it was checked when the plan's settings were made).
pub(crate) fn local_meta_qcom_files(path: &Path) -> Vec<String> {
    let Ok(text) = crate::files::input::read_to_string(path, 1 << 20) else { return Vec::new() };
    let Ok(doc) = crate::text::yaml::from_str::<serde_yaml::Value>(&text) else {
        return Vec::new();
    };
    let Some(includes) = doc.get("header").and_then(|h| h.get("includes")) else {
        return Vec::new();
    };
    includes
        .as_sequence()
        .into_iter()
        .flatten()
        .filter(|entry| entry.get("repo").and_then(|r| r.as_str()) == Some("meta-qcom"))
        .filter_map(|entry| entry.get("file").and_then(|f| f.as_str()))
        .map(|f| f.trim_start_matches("./").to_string())
        .filter(|f| super::include::names_meta_qcom_file(f))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    /// A meta-qcom folder with `ci/` files and an rb3gen2-core-kit conf appending `features`.
    fn checkout(ci: &[&str], features: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let mut files = vec![
            ("conf/layer.conf".to_string(), "BBFILE_COLLECTIONS += \"qcom\"\n".to_string()),
            (
                "conf/machine/rb3gen2-core-kit.conf".to_string(),
                format!(
                    "MACHINE_FEATURES += \"{features}\"\nQCOM_RT_CPU = \"7\"\nQCOM_IRQAFF = \"0-6\"\n"
                ),
            ),
        ];
        for file in ci {
            files.push((file.to_string(), "header:\n  version: 14\n".to_string()));
        }
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            crate::files::write::fixture(path, &text).unwrap();
        }
        dir
    }

    const OLD: [&str; 5] = [
        "ci/base.yml",
        "ci/rb3gen2-core-kit.yml",
        "ci/qcom-distro.yml",
        "ci/qcom-distro-kvm.yml",
        "ci/linux-qcom-rt-6.18.yml",
    ];
    const NEW: [&str; 5] = [
        "ci/base.yml",
        "ci/rb3gen2-core-kit.yml",
        "ci/qcom-distro.yml",
        "ci/gunyah.yml",
        "ci/linux-qcom-rt-6.18.yml",
    ];

    fn request(wanted: Option<Hypervisor>, from_alias: bool) -> HypervisorRequest {
        HypervisorRequest { wanted, from_alias }
    }

    fn run(
        dir: &Path,
        distro: Distro,
        req: HypervisorRequest,
        includes: &[Include],
    ) -> Result<(Composition, Vec<String>), PlanError> {
        let catalog = Catalog::embedded();
        let machine = catalog.lookup("rb3gen2-core-kit").unwrap().machine;
        let meta = MetaQcom::open(dir).unwrap();
        compose(machine, distro, req, includes, &Offer::of_checkout(&meta, machine))
    }

    #[test]
    fn the_old_layout_gets_kvm_from_qcom_distro_kvm_yml_and_the_new_from_the_machine_conf() {
        let old = checkout(&OLD, "efi m2connector pci tpm2 phone");
        let (c, notes) = run(old.path(), Distro::QcomDistro, request(None, false), &[]).unwrap();
        assert_eq!(
            c.files,
            ["ci/rb3gen2-core-kit.yml", "ci/qcom-distro-kvm.yml", "ci/linux-qcom-rt-6.18.yml"]
        );
        assert_eq!((c.hypervisor.as_str(), c.layout.as_str()), ("kvm", "qcom-distro-kvm.yml"));
        assert_eq!(c.source, "checkout");
        assert!(notes.is_empty(), "{notes:?}");

        let new = checkout(&NEW, "efi kvm m2connector pci tpm2 phone");
        let (c, _) = run(new.path(), Distro::QcomDistro, request(None, false), &[]).unwrap();
        assert_eq!(
            c.files,
            ["ci/rb3gen2-core-kit.yml", "ci/qcom-distro.yml", "ci/linux-qcom-rt-6.18.yml"]
        );
        assert_eq!((c.hypervisor.as_str(), c.layout.as_str()), ("kvm", "gunyah.yml"));
        assert_eq!(c.machine_features_from, "conf/machine/rb3gen2-core-kit.conf");
        assert!(c.reasons.iter().any(|r| r.contains("puts kvm in MACHINE_FEATURES")), "{c:?}");
    }

    #[test]
    fn gunyah_is_the_opt_in_file_on_the_new_layout_and_the_plain_distro_on_the_old() {
        let new = checkout(&NEW, "efi kvm pci");
        let gunyah = request(Some(Hypervisor::Gunyah), false);
        let (c, _) = run(new.path(), Distro::QcomDistro, gunyah, &[]).unwrap();
        assert_eq!(
            c.files,
            [
                "ci/rb3gen2-core-kit.yml",
                "ci/qcom-distro.yml",
                "ci/gunyah.yml",
                "ci/linux-qcom-rt-6.18.yml"
            ]
        );
        let old = checkout(&OLD, "efi pci");
        let (c, _) = run(old.path(), Distro::QcomDistro, gunyah, &[]).unwrap();
        assert_eq!(
            c.files,
            ["ci/rb3gen2-core-kit.yml", "ci/qcom-distro.yml", "ci/linux-qcom-rt-6.18.yml"]
        );
        assert_eq!(c.hypervisor, "gunyah");
        // Neither file, and kvm in the conf: Gunyah cannot be built.
        let neither = checkout(&OLD[..3], "efi kvm pci");
        let err = run(neither.path(), Distro::QcomDistro, gunyah, &[]).unwrap_err().to_string();
        assert!(
            err.starts_with("--hypervisor gunyah cannot be built: conf/machine/rb3gen2-core-kit.conf puts kvm in MACHINE_FEATURES and this meta-qcom has no ci/gunyah.yml"),
            "{err}"
        );
    }

    #[test]
    fn the_qcom_distro_kvm_alias_works_on_both_layouts_with_a_note() {
        let alias = request(Some(Hypervisor::Kvm), true);
        let old = checkout(&OLD, "efi pci");
        let (c, notes) = run(old.path(), Distro::QcomDistro, alias, &[]).unwrap();
        assert!(c.files.contains(&"ci/qcom-distro-kvm.yml".to_string()));
        assert!(notes[0].contains("still has ci/qcom-distro-kvm.yml"), "{notes:?}");
        let new = checkout(&NEW, "efi kvm pci");
        let (c, notes) = run(new.path(), Distro::QcomDistro, alias, &[]).unwrap();
        assert!(!c.files.contains(&"ci/qcom-distro-kvm.yml".to_string()), "{c:?}");
        assert_eq!(
            notes,
            [
                "--distro qcom-distro-kvm is kept as an alias of --distro qcom-distro --hypervisor kvm (KVM comes from conf/machine/rb3gen2-core-kit.conf)"
            ]
        );
    }

    #[test]
    fn nodistro_without_kvm_falls_back_to_gunyah_unless_kvm_is_asked_for() {
        let old = checkout(&OLD, "efi pci");
        let (c, notes) = run(old.path(), Distro::Nodistro, request(None, false), &[]).unwrap();
        assert_eq!(c.files, ["ci/rb3gen2-core-kit.yml", "ci/linux-qcom-rt-6.18.yml"]);
        assert_eq!(c.hypervisor, "gunyah");
        assert!(notes[0].starts_with("rb3gen2-core-kit builds with Gunyah, not KVM"), "{notes:?}");
        let kvm = request(Some(Hypervisor::Kvm), false);
        let err = run(old.path(), Distro::Nodistro, kvm, &[]).unwrap_err().to_string();
        assert!(
            err.contains("which is qcom-distro (not nodistro); pass --distro qcom-distro"),
            "{err}"
        );
    }

    #[test]
    fn a_meta_qcom_file_the_checkout_lacks_is_refused_naming_what_it_has() {
        let new = checkout(&NEW, "efi kvm pci");
        let include = [Include::MetaQcom("ci/qcom-distro-kvm.yml".into())];
        let err = run(new.path(), Distro::QcomDistro, request(None, false), &include)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("--include names ci/qcom-distro-kvm.yml, which meta-qcom at an unknown revision (not a git checkout) ("),
            "{err}"
        );
        assert!(err.contains("it has ci/gunyah.yml (meta-qcom #2879 renamed it"), "{err}");
        assert!(!err.contains('\n'), "one line: {err}");
        // The RT kernel's file gone (a kernel bump): the checkout's others are named.
        let bumped = checkout(
            &[
                "ci/base.yml",
                "ci/rb3gen2-core-kit.yml",
                "ci/qcom-distro.yml",
                "ci/linux-qcom-rt-6.24.yml",
            ],
            "efi kvm pci",
        );
        let err = run(bumped.path(), Distro::QcomDistro, request(None, false), &[])
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("rtbuild's composition names ci/linux-qcom-rt-6.18.yml"), "{err}");
        assert!(err.contains("it has ci/linux-qcom-rt-6.24.yml;"), "{err}");
    }

    #[test]
    fn without_a_checkout_the_catalog_s_remembered_facts_are_used_and_labelled() {
        let catalog = Catalog::embedded();
        let machine = catalog.lookup("rb3gen2-core-kit").unwrap().machine;
        let offer = Offer::remembered(machine);
        let (c, _) =
            compose(machine, Distro::QcomDistro, request(None, false), &[], &offer).unwrap();
        assert_eq!(c.source, "catalog");
        assert_eq!(c.machine_features_from, "catalog");
        assert_eq!(
            c.files,
            ["ci/rb3gen2-core-kit.yml", "ci/qcom-distro.yml", "ci/linux-qcom-rt-6.18.yml"]
        );
        assert_eq!(c.hypervisor, "kvm");
    }

    #[test]
    fn the_revision_is_read_from_head_its_ref_or_packed_refs() {
        let dir = tempfile::tempdir().unwrap();
        let repo = git2::Repository::init(dir.path()).unwrap();
        assert_eq!(revision(dir.path()), None, "no commit yet");
        let sig = git2::Signature::now("t", "t@example.com").unwrap();
        let tree = repo.find_tree(repo.index().unwrap().write_tree().unwrap()).unwrap();
        let id = repo.commit(Some("HEAD"), &sig, &sig, "c", &tree, &[]).unwrap();
        assert_eq!(revision(dir.path()), Some(id.to_string()));
        // The ref packed (as a clone leaves it).
        let head = repo.head().unwrap().name().unwrap().to_string();
        std::fs::remove_file(dir.path().join(".git").join(&head)).unwrap();
        crate::files::write::fixture(
            dir.path().join(".git/packed-refs"),
            format!("# pack-refs\n{id} {head}\n"),
        )
        .unwrap();
        assert_eq!(revision(dir.path()), Some(id.to_string()));
        assert_eq!(revision(&dir.path().join("nope")), None);
    }

    #[test]
    fn unknown_hypervisors_are_refused() {
        let err = "xen".parse::<Hypervisor>().unwrap_err().to_string();
        assert_eq!(
            err,
            "--hypervisor `xen` is not a hypervisor; pass --hypervisor kvm or --hypervisor gunyah"
        );
    }
}
