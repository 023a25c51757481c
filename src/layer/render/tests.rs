//! Snapshot and property tests of the rendered tree, for every catalog board.

use super::*;
use crate::catalog::Catalog;
use crate::plan::PlanRequest;

fn plan_for(machine: &str, tweak: impl FnOnce(&mut PlanRequest)) -> Plan {
    let mut request = PlanRequest { machine: Some(machine.into()), ..PlanRequest::default() };
    tweak(&mut request);
    Plan::new(&request, &Catalog::embedded()).expect("valid plan")
}

fn rendered(plan: &Plan) -> Tree {
    render(plan, &LayerPlacement::default()).expect("renders")
}

/// The whole tree as one text: each file under a `==> path <==` header.
fn tree_text(tree: &Tree) -> String {
    tree.iter()
        .map(|(path, bytes)| {
            format!("==> {} <==\n{}", path.display(), String::from_utf8_lossy(bytes))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn snapshot_every_catalog_board() {
    // Boards rtbuild only measures have no build to render.
    for machine in Catalog::embedded().machines().filter(|m| m.build().is_ok()) {
        let tree = rendered(&plan_for(&machine.name, |_| {}));
        insta::assert_snapshot!(format!("default-{}", machine.name), tree_text(&tree));
    }
}

#[test]
fn snapshot_nodistro_with_user_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let frag = dir.path().join("extra.cfg");
    crate::files::write::fixture(
        &frag,
        "# user fragment\nCONFIG_HZ_1000=y\n# CONFIG_DEBUG_PREEMPT is not set\n",
    )
    .unwrap();
    let patch = dir.path().join("0001-fix.patch");
    crate::files::write::fixture(&patch, "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n").unwrap();
    let plan = plan_for("qcs6490-rb3gen2", |r| {
        r.distro = Some("nodistro".into());
        r.rt_cpus = Some("6,7".into());
        r.fragments = vec![frag];
        r.patches = vec![patch];
        r.configs = vec!["CONFIG_HZ=1000".into(), "CONFIG_NO_HZ_FULL=y".into()];
        r.cmdline = vec!["threadirqs".into()];
        r.meta_qcom_commit = Some("ef0004df267743cc89d6a09bc724bc99ff541c01".into());
        r.dl_dir = Some("/srv/yocto/downloads".into());
        r.sstate_dir = Some("/srv/yocto/sstate".into());
        r.analyzer = Some("rtla".into());
        r.cve_check = Some(true);
    });
    let tree = rendered(&plan);
    insta::assert_snapshot!("nodistro-user-inputs", tree_text(&tree));
}

#[test]
fn rtla_puts_both_tracers_in_the_fragment_and_the_plan_file_and_a_bad_analyzer_is_refused() {
    let plan = plan_for("iq-8275-evk", |r| r.analyzer = Some("rtla".into()));
    let tree = rendered(&plan);
    let fragment = tree_text(&tree);
    for symbol in ["CONFIG_TIMERLAT_TRACER=y", "CONFIG_OSNOISE_TRACER=y"] {
        assert!(fragment.contains(&format!("\n{symbol}\n")), "{symbol} missing");
    }
    let expectations = plan.expectations();
    let want: Vec<&str> = expectations
        .kernel_config
        .iter()
        .filter(|c| c.symbol.ends_with("_TRACER"))
        .map(|c| c.symbol.as_str())
        .collect();
    assert_eq!(want, ["CONFIG_TIMERLAT_TRACER", "CONFIG_OSNOISE_TRACER"]);
    assert_eq!(plan.expectations().analyzer.as_deref(), Some("rtla"));
    let ftrace = plan_for("iq-8275-evk", |r| r.analyzer = Some("ftrace".into()));
    assert!(!tree_text(&rendered(&ftrace)).contains("TIMERLAT"));
    let request = PlanRequest {
        machine: Some("iq-8275-evk".into()),
        analyzer: Some("perf".into()),
        ..PlanRequest::default()
    };
    let err = Plan::new(&request, &Catalog::embedded()).unwrap_err().to_string();
    assert_eq!(
        err,
        "--analyzer `perf` is not a trace analyzer; pass --analyzer ftrace or --analyzer rtla"
    );
}

#[test]
fn same_plan_same_bytes() {
    let plan = plan_for("iq-8275-evk", |_| {});
    assert_eq!(rendered(&plan), rendered(&plan));
}

#[test]
fn rt_cpus_drive_every_variable_together() {
    let plan = plan_for("rb3gen2-core-kit", |r| r.rt_cpus = Some("6-7".into()));
    let tree = rendered(&plan);
    let kas = tree.text("rb3gen2-core-kit-rt.yml").unwrap();
    for want in [
        "QCOM_RT_CPU:forcevariable = \"6-7\"",
        "QCOM_RCU_NOCBS:forcevariable = \"6-7\"",
        "QCOM_IRQAFF:forcevariable = \"0-5\"",
        "KERNEL_CMDLINE_EXTRA:append = \" nohz_full=6-7\"",
    ] {
        assert!(kas.contains(want), "missing {want} in\n{kas}");
    }
    assert!(!kas.contains("QCOM_RT_CPU ="), "a plain assignment would lose to the machine conf");
    let cmdline = plan.rt_cmdline();
    assert!(cmdline.contains(&"isolcpus=6-7".to_string()));
    assert!(cmdline.contains(&"irqaffinity=0-5".to_string()));
}

#[test]
fn kas_file_parses_and_composes_meta_qcom_files() {
    let tree = rendered(&plan_for("iq-9075-evk", |_| {}));
    let kas: serde_yaml::Value =
        serde_yaml::from_str(tree.text("iq-9075-evk-rt.yml").unwrap()).unwrap();
    assert_eq!(kas["header"]["version"], 14);
    let includes = kas["header"]["includes"].as_sequence().unwrap();
    let (lock, files) = includes.split_last().unwrap();
    let files: Vec<&str> = files.iter().map(|i| i["file"].as_str().unwrap()).collect();
    assert_eq!(files, ["ci/iq-9075-evk.yml", "ci/qcom-distro.yml", "ci/linux-qcom-rt-6.18.yml"]);
    // The lock comes last, after meta-qcom's files (and so after ci/base.lock.yml).
    assert_eq!(lock.as_str(), Some("iq-9075-evk-rt.lock.yml"));
    assert_eq!(kas["repos"]["meta-qcom"]["branch"], "wrynose");
    assert_eq!(kas["target"][0], "qcom-multimedia-image");
    assert!(kas["repos"]["rtbuild"]["layers"].get("meta-rtbuild").is_some());
}

#[test]
fn no_nohz_full_drops_option_and_argument() {
    let plan = plan_for("rb3gen2-core-kit", |r| r.nohz_full = Some(false));
    let tree = rendered(&plan);
    let kas = tree.text("rb3gen2-core-kit-rt.yml").unwrap();
    assert!(!kas.contains("nohz_full"), "{kas}");
    let frag = tree
        .text(format!("meta-rtbuild/recipes-kernel/linux/{FILES_DIR}/{RT_FRAGMENT_NAME}"))
        .unwrap();
    assert!(!frag.contains("CONFIG_NO_HZ_FULL=y"), "{frag}");
}

#[test]
fn inside_a_git_work_tree_the_lock_include_starts_at_its_top() {
    let plan = plan_for("iq-9075-evk", |_| {});
    let layout = LayerPlacement { layer_in_repo: "bsp/rt/meta-rtbuild".to_string() };
    let tree = render(&plan, &layout).unwrap();
    let kas: serde_yaml::Value =
        serde_yaml::from_str(tree.text("iq-9075-evk-rt.yml").unwrap()).unwrap();
    let includes = kas["header"]["includes"].as_sequence().unwrap();
    assert_eq!(includes.last().unwrap().as_str(), Some("bsp/rt/iq-9075-evk-rt.lock.yml"));
}
