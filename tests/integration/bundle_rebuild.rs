//! Issue 38 item 3: a bundle rebuilds from its own contents. The generated layer (with the
//! user's fragment and patch) and the rebuild kas file made from the build's real `kas dump
//! --resolve-refs --resolve-local --resolve-env` are in the bundle; unpacked in an empty folder
//! outside any git work tree, real kas 5.5 dumps and checks it out offline (meta-qcom,
//! openembedded-core, BitBake and meta-lts-mixins through `KAS_PREMIRRORS` to the snapshot's
//! local repositories, [`crate::support::upstream`]), and the layer kas puts in bblayers.conf
//! is byte-identical to the generated one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::harness::Test;
use crate::support::project::generated;
use crate::support::upstream::{ok, upstream};

const MACHINE: &str = "iq-8275-evk";

/// Every file under `dir`, by path relative to it.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            let relative = entry.path().strip_prefix(dir).unwrap().display().to_string();
            out.insert(relative, std::fs::read(entry.path()).unwrap());
        }
    }
    out
}

/// A deploy folder as meta-qcom's `image_types_qcom` leaves it (the flash files are not what
/// this test is about).
fn deploy(build: &Path, image: &str) {
    let deploy = build.join(format!("tmp/deploy/images/{MACHINE}"));
    let folder = format!("{image}-{MACHINE}.rootfs-20261201120000.qcomflash");
    for (name, bytes) in [("rawprogram0.xml", "<data/>\n"), ("efi.bin", "ESP")] {
        let path = deploy.join(&folder).join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    std::os::unix::fs::symlink(&folder, deploy.join(format!("{image}-{MACHINE}.rootfs.qcomflash")))
        .unwrap();
}

#[test]
fn an_unpacked_bundle_checks_out_with_real_kas_and_its_layer_is_the_generated_one() {
    let up = upstream();
    let dir = tempfile::Builder::new().prefix("rtbuild-rebuild").tempdir().unwrap();
    let proj = dir.path().join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join("extra.cfg"), "CONFIG_IKCONFIG_PROC=y\n").unwrap();
    std::fs::write(proj.join("fix.patch"), "--- a/Makefile\n+++ b/Makefile\n@@ -1 +1 @@\n-a\n+b\n")
        .unwrap();
    Test::new()
        .cwd(&proj)
        .args(["generate", "--machine", MACHINE, "--distro", "nodistro"])
        .args(["--fragment", "extra.cfg", "--patch", "fix.patch"])
        .run()
        .ignore_stdout()
        .stderr_is(&generated(
            &format!("{MACHINE} (RT CPUs 3, housekeeping 0-2,4-7, nodistro, core-image-base)"),
            MACHINE,
            &proj.join(format!("rtbuild/{MACHINE}")).display().to_string(),
            &[
                "meta-rtbuild/recipes-kernel/linux/linux-qcom-rt-rtbuild/extra.cfg",
                "meta-rtbuild/recipes-kernel/linux/linux-qcom-rt-rtbuild/fix.patch",
            ],
        ))
        .success();
    let generated = proj.join(format!("rtbuild/{MACHINE}"));
    let layer = files(&generated.join("meta-rtbuild"));
    assert!(layer.keys().any(|k| k.ends_with("/extra.cfg")), "{:?}", layer.keys());
    assert!(layer.keys().any(|k| k.ends_with("/fix.patch")), "{:?}", layer.keys());
    std::fs::copy(up.offline_yml(), generated.join("offline.yml")).unwrap();
    up.user.own(dir.path());

    // What `rtbuild image --bundle` keeps: real kas's resolved configuration of the build.
    let config = format!("rtbuild/{MACHINE}/{MACHINE}-rt.yml:rtbuild/{MACHINE}/offline.yml");
    let work = dir.path().join("work");
    let dump = up.kas(
        &proj,
        &work,
        &["dump", "--resolve-refs", "--resolve-local", "--resolve-env", &config],
        &[],
    );
    let dump = ok(&dump, "kas dump of the build");
    assert!(dump.contains("meta-rtbuild"), "{dump}");
    std::fs::write(generated.join("kas-dump.yml"), &dump).unwrap();
    // The lock `rtbuild lock` makes before the bundle (issue 38 item 1): every repo with a URL
    // pinned to the commit kas resolved (written here: `rtbuild lock` has its own tests).
    let resolved: serde_yaml::Value = serde_yaml::from_str(&dump).unwrap();
    let mut lock = String::from("header:\n  version: 14\noverrides:\n  repos:\n");
    for (name, repo) in resolved["repos"].as_mapping().unwrap() {
        if repo["url"].as_str().is_some() {
            let commit = repo["commit"].as_str().unwrap();
            lock.push_str(&format!("    {}:\n      commit: {commit}\n", name.as_str().unwrap()));
        }
    }
    std::fs::write(generated.join(format!("{MACHINE}-rt.lock.yml")), lock).unwrap();
    let plan: serde_json::Value =
        serde_json::from_slice(&std::fs::read(generated.join("rtbuild-plan.json")).unwrap())
            .unwrap();
    let image = plan["image"].as_str().unwrap().to_string();
    deploy(&work.join("build"), &image);

    let run = Test::new()
        .cwd(&proj)
        .env("KAS_WORK_DIR", &work)
        .args(["bundle", "--machine", MACHINE, "--out", "out", "--allow-unverified"])
        .run()
        .stderr_has_line(&format!("    Bundling core-image-base-{MACHINE}"))
        .stderr_has_line(
            "warning: bundled with --allow-unverified (verify: unverified); the manifest says so",
        )
        .success();
    let archive = proj.join(run.stdout().lines().next().unwrap());
    Test::new()
        .args(["bundle", "--check"])
        .arg_path(&archive)
        .run()
        .ignore_stdout()
        .stderr_is("     Checked 15 files against the manifest and SHA256SUMS\n")
        .success();

    // Unpacked in an empty folder outside any git work tree.
    let unpacked = tempfile::Builder::new().prefix("rtbuild-unpacked").tempdir().unwrap();
    let status = Command::new("tar")
        .arg("--zstd")
        .arg("-xf")
        .arg(&archive)
        .arg("-C")
        .arg(unpacked.path())
        .status()
        .unwrap();
    assert!(status.success());
    let top = unpacked.path().join(format!("{image}-{MACHINE}"));
    assert!(top.join("release/rebuild/kas.yml").is_file(), "{:?}", files(&top).keys());
    up.user.own(unpacked.path());
    let rebuild_work = unpacked.path().join("work");
    let redump = up.kas(&top, &rebuild_work, &["dump", "release/rebuild/kas.yml"], &[]);
    let redump = ok(&redump, "kas dump of the unpacked bundle");
    assert!(redump.contains(&up.commit("meta-qcom")), "meta-qcom at its built commit: {redump}");
    assert!(redump.contains(&up.commit("oe-core")), "{redump}");
    let checkout = up.kas(&top, &rebuild_work, &["checkout", "release/rebuild/kas.yml"], &[]);
    ok(&checkout, "kas checkout of the unpacked bundle");
    let bblayers = std::fs::read_to_string(rebuild_work.join("build/conf/bblayers.conf")).unwrap();
    let checked_out = bblayers
        .split_whitespace()
        .map(|w| w.trim_matches('"'))
        .find(|w| w.ends_with("/meta-rtbuild"))
        .unwrap_or_else(|| panic!("no meta-rtbuild in bblayers.conf:\n{bblayers}"));
    // kas writes it relative to the build folder (`${TOPDIR}/../…`).
    let topdir = rebuild_work.join("build").display().to_string();
    let checked_out =
        std::fs::canonicalize(PathBuf::from(checked_out.replace("${TOPDIR}", &topdir)))
            .unwrap_or_else(|e| panic!("{checked_out}: {e}"));
    let inside = std::fs::canonicalize(&top).unwrap();
    assert!(checked_out.starts_with(&inside), "{}", checked_out.display());
    assert_eq!(files(&checked_out), layer, "the layer kas checked out is the generated one");
    // kas checked out meta-qcom and oe-core too (no BitBake runs here).
    assert!(bblayers.contains("meta-qcom"), "{bblayers}");
}
