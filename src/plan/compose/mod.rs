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

mod hypervisor;
mod offer;

use std::path::{Path, PathBuf};

use super::{Distro, Include, KERNEL_KAS_FILE, PlanError};
use crate::catalog::Machine;
pub(crate) use crate::formats::plan_json::Composition;
pub(crate) use hypervisor::{Hypervisor, HypervisorRequest};
pub(crate) use offer::{Checkout, Offer, ci_files, revision};

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
    #[cfg(test)]
    composed::count();
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
mod tests;

/// How many times [`compose`] ran on this thread (for the tests that count it).
#[cfg(test)]
pub(crate) mod composed {
    use std::cell::Cell;

    thread_local! {
        static COMPOSED: Cell<u32> = const { Cell::new(0) };
    }

    pub(super) fn count() {
        COMPOSED.with(|c| c.set(c.get() + 1));
    }

    /// The count so far, set back to 0.
    pub(crate) fn take() -> u32 {
        COMPOSED.with(|c| c.replace(0))
    }
}
