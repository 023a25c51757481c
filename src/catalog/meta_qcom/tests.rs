use super::*;
use crate::catalog::Catalog;

fn layer(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut all =
        vec![("conf/layer.conf", "BBFILE_COLLECTIONS += \"qcom\"\nLAYERDEPENDS_qcom = \"core\"\n")];
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
    let conf = MetaQcom::open(dir.path()).unwrap().machine("rb3gen2-core-kit").unwrap().unwrap();
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
