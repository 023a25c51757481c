//! The composition decided over checkouts of both meta-qcom layouts and over the remembered facts.

use std::path::Path;

use super::*;
use crate::catalog::Catalog;
use crate::catalog::meta_qcom::MetaQcom;

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
    let err =
        run(bumped.path(), Distro::QcomDistro, request(None, false), &[]).unwrap_err().to_string();
    assert!(err.starts_with("rtbuild's composition names ci/linux-qcom-rt-6.18.yml"), "{err}");
    assert!(err.contains("it has ci/linux-qcom-rt-6.24.yml;"), "{err}");
}

#[test]
fn without_a_checkout_the_catalog_s_remembered_facts_are_used_and_labelled() {
    let catalog = Catalog::embedded();
    let machine = catalog.lookup("rb3gen2-core-kit").unwrap().machine;
    let offer = Offer::remembered(machine);
    let (c, _) = compose(machine, Distro::QcomDistro, request(None, false), &[], &offer).unwrap();
    assert_eq!(c.source, "catalog");
    assert_eq!(c.machine_features_from, "catalog");
    assert_eq!(
        c.files,
        ["ci/rb3gen2-core-kit.yml", "ci/qcom-distro.yml", "ci/linux-qcom-rt-6.18.yml"]
    );
    assert_eq!(c.hypervisor, "kvm");
}
