//! rtbuild against the real thing: the generated files through real kas 5.5 and real BitBake
//! over the real meta-qcom `wrynose`, openembedded-core and BitBake (the snapshot
//! [`crate::support::upstream`] unpacks), as the unprivileged test user, offline. A full BitBake parse
//! takes about 70 s on two idle cores, so one test parses every recipe, in one build folder that
//! `rtbuild image`, `rtbuild shell` and a warm `rtbuild image` share; the second board is checked
//! with BitBake's configuration-only `bitbake -e` (the global environment every image recipe
//! starts from: the SPDX and sbom-cve-check settings are checked there).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::support::harness::{Test, venv};
use crate::support::upstream::{ok, upstream};

/// A folder for one test, owned by the test user (kas and BitBake run as that user).
fn test_dir() -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix("rtbuild-real").tempdir().unwrap();
    upstream().user.own(dir.path());
    dir
}

/// `rtbuild generate` for `machine` (nodistro: the snapshot holds no meta-qcom-distro) into
/// `dir/<out>`, with offline.yml beside the kas file; returns the kas file.
fn generate(dir: &Path, out: &str, machine: &str, extra: &[&str]) -> PathBuf {
    let out = dir.join(out);
    let run = Test::new()
        .cwd(dir)
        .args(["generate", "--machine", machine, "--distro", "nodistro", "--out"])
        .arg_path(&out)
        .args(extra)
        .run()
        .ignore_stderr()
        .success();
    std::fs::copy(upstream().offline_yml(), out.join("offline.yml")).unwrap();
    upstream().user.own(dir);
    PathBuf::from(run.stdout().trim())
}

/// `KEY="value"` lines of a `bitbake -e` dump.
fn variables(dump: &str) -> BTreeMap<String, String> {
    dump.lines()
        .filter_map(|line| {
            let (key, value) = line.split_once("=\"")?;
            if key.starts_with('#') || key.contains(' ') {
                return None;
            }
            Some((key.to_string(), value.strip_suffix('"').unwrap_or(value).to_string()))
        })
        .collect()
}

/// The RT arguments of a command line, by key; each key at most once.
fn rt_args(cmdline: &str) -> BTreeMap<&str, &str> {
    let mut found = BTreeMap::new();
    for arg in cmdline.split_whitespace() {
        if let Some((key, value)) = arg.split_once('=')
            && ["isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity"].contains(&key)
        {
            assert!(found.insert(key, value).is_none(), "{key} twice in {cmdline}");
        }
    }
    found
}

/// The command line BitBake computed is the one rtbuild planned: isolcpus, nohz_full and
/// rcu_nocbs name the plan's RT CPUs, irqaffinity its housekeeping CPUs.
fn assert_consistent(vars: &BTreeMap<String, String>, plan_file: &Path, rt: &str, hk: &str) {
    let plan: serde_json::Value =
        serde_json::from_slice(&std::fs::read(plan_file).unwrap()).unwrap();
    assert_eq!(plan["rt_cpus"], rt);
    assert_eq!(plan["housekeeping"], hk);
    let cmdline = &vars["KERNEL_CMDLINE_EXTRA"];
    let args = rt_args(cmdline);
    let want: BTreeMap<&str, &str> =
        [("isolcpus", rt), ("nohz_full", rt), ("rcu_nocbs", rt), ("irqaffinity", hk)].into();
    assert_eq!(args, want, "KERNEL_CMDLINE_EXTRA={cmdline}");
    for planned in plan["cmdline"].as_array().unwrap() {
        let planned = planned.as_str().unwrap();
        assert!(cmdline.split_whitespace().any(|a| a == planned), "{planned} not in {cmdline}");
    }
    assert_eq!(vars["PREFERRED_PROVIDER_virtual/kernel"], "linux-qcom-rt");
    assert_eq!(vars["QCOM_RT_CPU"], rt);
    assert_eq!(vars["QCOM_IRQAFF"], hk);
}

/// A second board with another RT CPU (iq-x7181-evk, Hamoa, 12 CPUs, isolates CPU 11), with
/// `--cve-check` and `--analyzer rtla`: BitBake's configuration only (`bitbake -e`, no recipe
/// parse), enough for the command line and the global environment every image recipe starts from.
#[test]
fn real_bitbake_reads_a_second_boards_configuration_with_its_own_rt_cpu() {
    let up = upstream();
    let dir = test_dir();
    let kas_b = generate(dir.path(), "b", "iq-x7181-evk", &["--cve-check", "--analyzer", "rtla"]);
    let work = dir.path().join("work");
    let config = format!("{}:{}", kas_b.display(), kas_b.with_file_name("offline.yml").display());
    let env_b = dir.path().join("b.env");
    let command = format!("bitbake -e > {}", env_b.display());
    let build_b = work.join("build-b");
    let out = up.kas(
        dir.path(),
        &work,
        &["shell", &config, "-c", &command],
        &[("KAS_BUILD_DIR", build_b.to_str().unwrap())],
    );
    ok(&out, "kas shell (iq-x7181-evk): bitbake -e");
    let vars = variables(&std::fs::read_to_string(&env_b).unwrap());
    assert_eq!(vars["MACHINE"], "iq-x7181-evk");
    // --cve-check: oe-core's own fragment is in force (VEX for every CVE, the image class).
    assert!(vars["OE_FRAGMENTS"].split_whitespace().any(|f| f == "core/yocto/sbom-cve-check"));
    assert_eq!(vars["SPDX_INCLUDE_VEX"], "all");
    assert!(vars["IMAGE_CLASSES"].split_whitespace().any(|c| c == "sbom-cve-check"));
    // What the image recipe inherits (no recipe override sets these): SPDX with the kernel
    // config, and compiled sources for the RT kernel only, not for every recipe.
    assert_eq!(vars["SPDX_INCLUDE_KERNEL_CONFIG"], "1");
    assert_eq!(vars["SPDX_INCLUDE_COMPILED_SOURCES"], "0");
    assert!(vars["INHERIT"].split_whitespace().any(|c| c == "create-spdx"));
    // --analyzer rtla: both tracers in rtbuild's fragment and in the plan verify reads.
    let fragment = std::fs::read_to_string(
        kas_b
            .parent()
            .unwrap()
            .join("meta-rtbuild/recipes-kernel/linux/linux-qcom-rt-rtbuild/rtbuild-rt.cfg"),
    )
    .unwrap();
    for option in ["CONFIG_TIMERLAT_TRACER=y", "CONFIG_OSNOISE_TRACER=y"] {
        assert!(fragment.lines().any(|l| l == option), "{option} not in {fragment}");
    }
    assert_consistent(&vars, &kas_b.with_file_name("rtbuild-plan.json"), "11", "0-10");
}

#[test]
fn real_kas_checks_out_our_lock_over_the_real_ci_base_lock() {
    let up = upstream();
    let dir = test_dir();
    let kas_file = generate(dir.path(), "gen", "iq-8275-evk", &[]);
    let stand_in = up.commit("meta-lts-mixins");
    let base_lock: serde_yaml::Value =
        serde_yaml::from_str(&up.file("meta-qcom", "ci/base.lock.yml")).unwrap();
    let base_pin = base_lock["overrides"]["repos"]["meta-lts-mixins"]["commit"].as_str().unwrap();
    assert_ne!(base_pin, stand_in);

    // Without a pin of ours, the real ci/base.lock.yml is in force: kas wants a commit of the
    // real layer that the stand-in does not have.
    let work = dir.path().join("work");
    let out = up.kas(dir.path(), &work, &["checkout", kas_file.to_str().unwrap()], &[]);
    assert!(!out.status.success(), "kas checked out without the stand-in's pin");
    assert!(String::from_utf8_lossy(&out.stderr).contains(base_pin), "{out:?}");

    // rtbuild installs a release lock pinning the stand-in; plain kas now checks it out.
    let release = dir.path().join("release.lock.yml");
    std::fs::write(
        &release,
        format!("header:\n  version: 14\noverrides:\n  repos:\n    meta-lts-mixins:\n      commit: {stand_in}\n"),
    )
    .unwrap();
    Test::new()
        .cwd(dir.path())
        .args(["lock", "--machine", "iq-8275-evk", "--dir"])
        .arg_path(kas_file.parent().unwrap())
        .args(["--install"])
        .arg_path(&release)
        .run()
        .ignore_stdout()
        .ignore_stderr()
        .success();
    up.user.own(dir.path());
    let out = up.kas(dir.path(), &work, &["checkout", kas_file.to_str().unwrap()], &[]);
    ok(&out, "kas checkout with rtbuild's lock");
    let head = up
        .as_user("git")
        .arg("-C")
        .arg(work.join("meta-lts-mixins"))
        .args(["rev-parse", "HEAD"])
        .output()
        .unwrap();
    assert_eq!(ok(&head, "git rev-parse").trim(), stand_in);
    // The other pins of ci/base.lock.yml still hold.
    let head = up
        .as_user("git")
        .arg("-C")
        .arg(work.join("oe-core"))
        .args(["rev-parse", "HEAD"])
        .output()
        .unwrap();
    assert_eq!(
        ok(&head, "git rev-parse").trim(),
        base_lock["overrides"]["repos"]["oe-core"]["commit"].as_str().unwrap()
    );
}

#[test]
fn machines_meta_qcom_reads_the_real_checkout() {
    let up = upstream();
    let dir = test_dir();
    let qcom = dir.path().join("meta-qcom");
    up.checkout("meta-qcom", &qcom);
    let json = Test::new()
        .args(["--json", "machines", "--meta-qcom"])
        .arg_path(&qcom)
        .run()
        .success()
        .json();
    let entries = json.as_array().unwrap();
    let status = |name: &str| -> serde_json::Value {
        entries
            .iter()
            .find(|e| e["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing: {json}"))
            .clone()
    };
    // Every board of the catalog that rtbuild builds is in the real layer and agrees with it; the
    // measuring-only boards (no `kas_file`: RK3588, RK3562J, Phytium) are not meta-qcom's.
    let catalog = Test::new().args(["--json", "machines"]).run().success().json();
    let built: Vec<&serde_json::Value> =
        catalog.as_array().unwrap().iter().filter(|m| m.get("kas_file").is_some()).collect();
    assert!(built.len() >= 9, "the Qualcomm boards: {catalog}");
    for machine in built {
        let name = machine["name"].as_str().unwrap();
        let entry = status(name);
        assert_eq!(entry["status"], "matches", "{name}: {entry}");
        assert_eq!(entry["rt"], machine["rt"], "{name}");
        assert_eq!(entry["sources"]["QCOM_RT_CPU"]["op"], "=", "{name}: meta-qcom assigns hard");
    }
    assert_eq!(status("iq-x7181-evk")["rt"]["rt_cpus"], "11");
    // MACHINE_FEATURES are the conf's; the catalog follows meta-qcom after #2879 (kvm on
    // rb3gen2-core-kit), which this snapshot predates.
    let rb3 = status("rb3gen2-core-kit");
    assert_eq!(
        rb3["machine_features"],
        serde_json::json!(["efi", "m2connector", "pci", "tpm2", "phone"])
    );
    assert_eq!(
        rb3["catalog_machine_features"],
        serde_json::json!(["efi", "kvm", "m2connector", "pci", "tpm2", "phone"])
    );
    assert!(status("qcs615-ride").get("catalog_machine_features").is_none());
    assert_eq!(status("qcs6490-rb3gen2-core-kit")["catalog_name"], "rb3gen2-core-kit");
    // What only meta-qcom has: the open-firmware variants (they require the base boards' confs).
    let unknown: Vec<&str> = entries
        .iter()
        .filter(|e| e["status"] == "unknown")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(unknown, ["iq-9075-evk-open-fw", "rb3gen2-core-kit-open-fw"]);
    let open_fw = status("rb3gen2-core-kit-open-fw");
    assert_eq!(open_fw["sources"]["QCOM_RT_CPU"]["file"], "conf/machine/rb3gen2-core-kit.conf");
}

/// The Qualcomm guide's build (seed 002): `--include ci/performance.yml` over the real meta-qcom
/// checkout is included after rtbuild's own files and recorded in rtbuild-plan.json, and the
/// guide's `--cmdline qcom_scm.download_mode=1`, which the real `ci/base.yml` already appends,
/// is warned about and written once (by meta-qcom), never twice.
#[test]
fn include_performance_yml_and_a_cmdline_meta_qcom_already_sets() {
    let up = upstream();
    let dir = test_dir();
    let qcom = dir.path().join("meta-qcom");
    up.checkout("meta-qcom", &qcom);
    assert!(
        up.file("meta-qcom", "ci/base.yml").contains("qcom_scm.download_mode=1"),
        "the real ci/base.yml appends it"
    );
    let out = dir.path().join("out");
    let run = Test::new()
        .args(["generate", "--machine", "iq-8275-evk", "--meta-qcom"])
        .arg_path(&qcom)
        .args(["--include", "ci/performance.yml", "--include", "ci/performance.yml"])
        .args(["--cmdline", "qcom_scm.download_mode=1", "--cmdline", "threadirqs", "--out"])
        .arg_path(&out)
        .run()
        .ignore_stdout()
        .success();
    assert!(
        run.stderr().contains(
            "warning: --cmdline qcom_scm.download_mode=1 is already set by meta-qcom's ci/base.yml; not adding it twice"
        ),
        "{}",
        run.stderr()
    );
    let plan: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("rtbuild-plan.json")).unwrap()).unwrap();
    assert_eq!(plan["includes"], serde_json::json!(["ci/performance.yml"]));
    let kas_name = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.ends_with("-rt.yml"))
        .unwrap();
    let kas = std::fs::read_to_string(out.join(&kas_name)).unwrap();
    assert_eq!(kas.matches("file: \"ci/performance.yml\"").count(), 1, "{kas}");
    let kernel = kas.find("ci/linux-qcom-rt-6.18.yml").unwrap();
    assert!(kas.find("ci/performance.yml").unwrap() > kernel, "after rtbuild's own: {kas}");
    let everything: String = walk(&out);
    assert!(!everything.contains("download_mode"), "written by meta-qcom only");
    assert!(everything.contains("threadirqs"), "the other --cmdline stays");
    // A meta-qcom name that is not a plain ci/*.yml is refused; any other path is a local kas
    // file, which must exist.
    for bad in ["ci/$(id).yml", "ci/x.yaml"] {
        Test::new()
            .args(["generate", "--machine", "iq-8275-evk", "--include", bad, "--out", "bad"])
            .run()
            .usage_error(&format!(
                "--include `{}`: not a meta-qcom kas file; name one of meta-qcom's ci/*.yml files, e.g. --include ci/performance.yml",
                bad.escape_debug()
            ))
            .nothing_written("bad");
    }
    for bad in ["../etc/passwd.yml", "/abs/ci/x.yml", "ci/../x.yml"] {
        Test::new()
            .args(["generate", "--machine", "iq-8275-evk", "--include", bad, "--out", "bad"])
            .run()
            .usage_error(&format!("--include `{bad}` does not exist; check the path"))
            .nothing_written("bad");
    }
}

/// The entries BitBake loaded from its parse cache, as its output says ("Loaded N entries from
/// dependency cache.").
fn cached_entries(log: &str) -> u64 {
    let line = log
        .lines()
        .find(|l| l.contains(" entries from dependency cache"))
        .unwrap_or_else(|| panic!("BitBake never said what it loaded from its cache:\n{log}"));
    let (before, _) = line.split_once(" entries from dependency cache").unwrap();
    before.rsplit(' ').next().unwrap().parse().unwrap()
}

/// One build folder through rtbuild with real kas 5.5 and real BitBake 2.18 over the real
/// meta-qcom, offline, for iq-8275-evk (RT CPU 3) with a user's fragment and patch:
/// 1. `rtbuild image --json` runs `linux-qcom-rt:do_listtasks` (a real task that fetches nothing;
///    a partial build, so nothing is verified), cold: every recipe parsed. Issue 27's overhead:
///    it exits 0, reports `rtbuild_overhead_s` as a part of its whole time, and BitBake really
///    ran the task (its log names it and holds the task's own listing).
/// 2. `rtbuild shell` with the same arguments dumps the kernel recipe's environment (`bitbake -e
///    linux-qcom-rt`): the generated layer is in force (fragments in merge order, the patch,
///    FILESEXTRAPATHS, the command line of the plan). BitBake parses every recipe again here: it
///    keys its parse cache on a configuration hash that takes in what its code parser found in
///    oe-core's Python modules, and its code-parser cache drops the functions a module function
///    runs through `bb.build.exec_func` (`oe.spdx_common.get_patched_src`), so a build folder's
///    first parse never matches a later one (BitBake 2.18 at meta-qcom's pin).
/// 3. `rtbuild image` again: every recipe loaded from the cache step 2 left, and meta-qcom's
///    checkout read as it is instead of running `kas checkout` first. Behaviour only: no time is
///    judged.
#[test]
fn image_shell_and_a_warm_image_with_real_bitbake_share_one_build_folder() {
    let up = upstream();
    let dir = test_dir();
    let proj = dir.path().join("proj");
    let out = proj.join("rtbuild/iq-8275-evk");
    std::fs::create_dir_all(&out).unwrap();
    // kas reads local includes from the repository of the kas file: offline.yml goes beside it.
    std::fs::copy(up.offline_yml(), out.join("offline.yml")).unwrap();
    let inputs = dir.path().join("inputs");
    std::fs::create_dir_all(&inputs).unwrap();
    let fragment = inputs.join("lab-timers.cfg");
    std::fs::write(&fragment, "CONFIG_HZ_1000=y\n").unwrap();
    let patch = inputs.join("0001-lab-fix.patch");
    std::fs::write(
        &patch,
        "From: Lab <lab@example.com>\nSubject: [PATCH] lab fix\n\n---\n a | 1 +\n\n\
         --- a/a\n+++ b/a\n@@ -0,0 +1 @@\n+x\n",
    )
    .unwrap();
    up.user.own(dir.path());
    let same_arguments = |command: &str| {
        Test::new()
            .unprivileged()
            .cwd(&proj)
            .path_prepend(venv().join("bin"))
            .env("KAS_PREMIRRORS", &up.premirrors)
            .env("LANG", "en_US.UTF-8")
            .args([command, "--machine", "iq-8275-evk", "--distro", "nodistro"])
            .args(["--include", "rtbuild/iq-8275-evk/offline.yml", "--fragment"])
            .arg_path(&fragment)
            .args(["--patch"])
            .arg_path(&patch)
    };
    let log = out.join("build/rtbuild-image.log");
    let image = |run: &str| {
        let started = std::time::Instant::now();
        let result = same_arguments("image")
            .args(["--plain", "-v", "--json", "--target", "linux-qcom-rt", "--task", "listtasks"])
            .run()
            .success();
        let whole = started.elapsed().as_secs_f64();
        let stderr = result.stderr();
        let json = result.json();
        assert_eq!(json["status"], "succeeded", "{run}: {json}");
        assert_eq!(json["tasks"]["attempted"], 1, "{run}: {json}");
        assert_eq!(json["tasks"]["failed"], 0, "{run}: {json}");
        let overhead = json["rtbuild_overhead_s"].as_f64().expect("rtbuild_overhead_s a number");
        let kas = json["duration_secs"].as_f64().expect("duration_secs a number");
        assert!(overhead >= 0.0, "{run}: {overhead}");
        assert!(overhead + kas <= whole, "{run}: {overhead} s + kas {kas} s > {whole} s");
        assert!(stderr.contains("rtbuild's own time outside kas: "), "{run}:\n{stderr}");
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.contains("linux-qcom-rt_6.18.bb:do_listtasks)"), "{run}:\n{text}");
        // The task's own output: BitBake's list of the recipe's tasks.
        assert!(text.contains("do_listtasks ") && text.contains("do_compile "), "{text}");
        (stderr, cached_entries(&text))
    };

    let (_, cold) = image("cold image");
    assert_eq!(cold, 0, "the first run is cold");

    let env_a = dir.path().join("a.env");
    same_arguments("shell")
        .args(["-c", &format!("bitbake -e linux-qcom-rt > {}", env_a.display())])
        .run()
        .ignore_stdout()
        .ignore_stderr()
        .success();
    let vars = variables(&std::fs::read_to_string(&env_a).unwrap());
    assert_eq!(vars["PN"], "linux-qcom-rt");
    // The SBOM carries the RT kernel's .config and its compiled sources.
    assert_eq!(vars["SPDX_INCLUDE_KERNEL_CONFIG"], "1");
    assert_eq!(vars["SPDX_INCLUDE_COMPILED_SOURCES"], "1");
    // Without --cve-check, no sbom-cve-check.
    assert!(!vars["IMAGE_CLASSES"].contains("sbom-cve-check"));
    assert_consistent(&vars, &out.join("rtbuild-plan.json"), "3", "0-2,4-7");
    let src_uri: Vec<&str> = vars["SRC_URI"].split_whitespace().collect();
    for file in ["file://rtbuild-rt.cfg", "file://lab-timers.cfg", "file://0001-lab-fix.patch"] {
        assert!(src_uri.contains(&file), "{file} not in SRC_URI: {src_uri:?}");
    }
    // rtbuild's fragment after meta-qcom's, the user's after rtbuild's (merge order).
    let position = |f: &str| src_uri.iter().position(|u| *u == f).unwrap();
    assert!(position("file://configs/bsp-additions.cfg") < position("file://rtbuild-rt.cfg"));
    assert!(position("file://rtbuild-rt.cfg") < position("file://lab-timers.cfg"));
    assert!(
        vars["FILESEXTRAPATHS"].contains("meta-rtbuild/recipes-kernel/linux/linux-qcom-rt-rtbuild"),
        "{} not on FILESEXTRAPATHS: {}",
        out.join("meta-rtbuild").display(),
        vars["FILESEXTRAPATHS"]
    );

    let (stderr, warm) = image("warm image");
    assert!(warm > 0, "the last run parses from BitBake's cache: it loaded {warm} entries");
    assert!(!stderr.contains("Checking out"), "warm: no kas checkout first:\n{stderr}");
    assert!(stderr.contains("reading it as it is"), "{stderr}");
}

/// Every file under `dir`, concatenated.
fn walk(dir: &std::path::Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            text.push_str(&walk(&path));
        } else {
            text.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
        }
    }
    text
}
