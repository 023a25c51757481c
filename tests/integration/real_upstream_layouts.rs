//! Issue 33: rtbuild composes from the meta-qcom checkout that is built, on both layouts meta-qcom
//! has had, with the real kas 5.5 and the real BitBake over the real meta-qcom `wrynose`
//! snapshot, offline, as the unprivileged test user.
//!
//! - The old layout is the snapshot itself (`f415a09a`, before #3189): `ci/qcom-distro-kvm.yml`
//!   adds `kvm` to `MACHINE_FEATURES`.
//! - The new layout is built here, as `../shared/research/today.md` §1 lists the change of
//!   meta-qcom #2879 (wrynose backport #3189): one commit on top of the snapshot in a temporary
//!   repository that renames `ci/qcom-distro-kvm.yml` to `ci/gunyah.yml` holding only
//!   `MACHINE_FEATURES:remove = "kvm"`, adds `kvm` to `MACHINE_FEATURES` of
//!   `rb3gen2-core-kit.conf` and `qcm6490-idp.conf`, and makes the RT entry of meta-qcom's CI
//!   `:ci/linux-qcom-rt-6.18.yml`.
//!
//! The snapshot has no meta-qcom-distro nor the other layers `ci/qcom-distro.yml` names, so for
//! `kas dump` of the default (qcom-distro) build each is a stand-in made here: a one-commit
//! repository holding a `conf/layer.conf` per layer kas lists (kas only checks them out). BitBake
//! parses the nodistro build, which needs nothing but the snapshot.

use std::path::{Path, PathBuf};

use crate::support::harness::Test;
use crate::support::upstream::{ok, upstream};

fn test_dir() -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix("rtbuild-layouts").tempdir().unwrap();
    upstream().user.own(dir.path());
    dir
}

/// `git` as the test user in `repo`, with a committer identity.
fn git(repo: &Path, args: &[&str]) -> String {
    let out = upstream()
        .as_user("git")
        .args(["-c", "user.name=rtbuild test", "-c", "user.email=test@rtbuild.invalid"])
        .arg("-C")
        .arg(repo)
        .args(args)
        .env("HOME", repo)
        .output()
        .unwrap();
    ok(&out, &format!("git {args:?}"))
}

/// Writes `text` to `path` as the test user would see it (the caller chowns afterwards).
fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `text` with `from` replaced by `to`, which must be there.
fn replaced(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "`{from}` not in:\n{text}");
    text.replacen(from, to, 1)
}

/// The post-#2879 layout: a clone of the snapshot's meta-qcom with one commit on top. Returns
/// the work tree (a git repository kas can clone from, branch `wrynose`).
fn new_layout(dir: &Path) -> PathBuf {
    let up = upstream();
    let repo = dir.join("meta-qcom-new");
    up.checkout("meta-qcom", &repo);
    git(&repo, &["mv", "ci/qcom-distro-kvm.yml", "ci/gunyah.yml"]);
    write(
        &repo.join("ci/gunyah.yml"),
        "# yaml-language-server: $schema=https://raw.githubusercontent.com/siemens/kas/master/kas/schema-kas.json\n\n\
         header:\n  version: 14\n\nlocal_conf_header:\n  gunyah: |\n    MACHINE_FEATURES:remove = \"kvm\"\n",
    );
    for (conf, from, to) in [
        (
            "conf/machine/rb3gen2-core-kit.conf",
            "MACHINE_FEATURES += \"efi m2connector pci tpm2 phone\"",
            "MACHINE_FEATURES += \"efi kvm m2connector pci tpm2 phone\"",
        ),
        (
            "conf/machine/qcm6490-idp.conf",
            "MACHINE_FEATURES += \"efi pci phone\"",
            "MACHINE_FEATURES += \"efi kvm pci phone\"",
        ),
    ] {
        let path = repo.join(conf);
        write(&path, &replaced(&std::fs::read_to_string(&path).unwrap(), from, to));
    }
    let workflow = repo.join(".github/workflows/build-yocto.yml");
    let text = std::fs::read_to_string(&workflow).unwrap();
    let text = replaced(
        &text,
        "          - type: rt-6.18-distro-kvm\n            dirname: \"_linux-qcom-rt-6.18_qcom-distro-kvm\"\n            yamlfile: \":ci/linux-qcom-rt-6.18.yml:ci/qcom-distro-kvm.yml\"",
        "          - type: rt-6.18\n            dirname: \"_linux-qcom-rt-6.18\"\n            yamlfile: \":ci/linux-qcom-rt-6.18.yml\"",
    )
    .replace("':ci/qcom-distro-kvm.yml'", "':ci/qcom-distro.yml'")
    .replace("name: qcom-distro-kvm", "name: qcom-distro");
    write(&workflow, &text);
    up.user.own(&repo);
    git(&repo, &["add", "-A"]);
    git(
        &repo,
        &["commit", "-q", "-m", "Switch to KVM hypervisor on Rb3Gen2-Core-Kit and QCM6490-IDP"],
    );
    assert!(!repo.join("ci/qcom-distro-kvm.yml").exists());
    repo
}

/// The old layout: the snapshot's meta-qcom as it is.
fn old_layout(dir: &Path) -> PathBuf {
    let repo = dir.join("meta-qcom-old");
    upstream().checkout("meta-qcom", &repo);
    assert!(repo.join("ci/qcom-distro-kvm.yml").is_file());
    repo
}

/// Stand-ins for the repositories `ci/qcom-distro.yml` names (URL, branch, layers), each a
/// one-commit repository; returns `KAS_PREMIRRORS` lines mapping the URLs to them, and a kas
/// file pinning each to its commit (`ci/base.lock.yml` pins commits of the real layers, which
/// the stand-ins do not have; offline.yml does the same for meta-lts-mixins).
fn distro_stand_ins(dir: &Path) -> (String, String) {
    let repos: [(&str, &str, &[&str]); 7] = [
        ("https://github.com/qualcomm-linux/meta-qcom-distro", "wrynose", &["."]),
        (
            "https://github.com/openembedded/meta-openembedded",
            "wrynose",
            &[
                "meta-filesystems",
                "meta-gnome",
                "meta-multimedia",
                "meta-networking",
                "meta-oe",
                "meta-python",
                "meta-xfce",
            ],
        ),
        ("https://git.yoctoproject.org/meta-virtualization", "wrynose", &["."]),
        ("https://github.com/AudioReach/meta-audioreach", "master", &["."]),
        ("https://git.yoctoproject.org/meta-selinux", "wrynose", &["."]),
        ("https://github.com/uptane/meta-updater", "wrynose", &["."]),
        ("https://git.yoctoproject.org/meta-security", "wrynose", &[".", "meta-tpm"]),
    ];
    let mut lines = Vec::new();
    let mut pins = String::from("header:\n  version: 14\noverrides:\n  repos:\n");
    for (url, branch, layers) in repos {
        let name = url.rsplit('/').next().unwrap();
        let repo = dir.join("stand-ins").join(name);
        for layer in layers {
            write(
                &repo.join(layer).join("conf/layer.conf"),
                &format!(
                    "# A stand-in for {url} in rtbuild's tests.\nBBFILE_COLLECTIONS += \"{name}-{}\"\n",
                    layer.replace('.', "top")
                ),
            );
        }
        upstream().user.own(&dir.join("stand-ins"));
        git(&repo, &["init", "-q", "-b", branch]);
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-q", "-m", "stand-in"]);
        lines.push(format!("{url}$ {}", repo.display()));
        let commit = git(&repo, &["rev-parse", "HEAD"]);
        pins.push_str(&format!("    {name}:\n      commit: {}\n", commit.trim()));
    }
    (lines.join("\n"), pins)
}

/// `rtbuild generate` for rb3gen2-core-kit over the checkout `layout` into `dir/<out>` (kas
/// clones meta-qcom from `url` when given), with offline.yml beside the kas file; returns the
/// kas file and the run's stderr.
fn generate(
    dir: &Path,
    out: &str,
    layout: &Path,
    url: Option<&Path>,
    extra: &[&str],
) -> (PathBuf, String) {
    let out = dir.join(out);
    let mut test = Test::new()
        .cwd(dir)
        .args(["generate", "--machine", "rb3gen2-core-kit", "--meta-qcom"])
        .arg_path(layout)
        .args(["--out"])
        .arg_path(&out)
        .args(extra);
    if let Some(url) = url {
        test = test.args(["--meta-qcom-url", &format!("file://{}", url.display())]);
    }
    let run = test.run().success();
    std::fs::copy(upstream().offline_yml(), out.join("offline.yml")).unwrap();
    upstream().user.own(dir);
    (PathBuf::from(run.stdout().trim()), run.stderr())
}

fn config(kas: &Path) -> String {
    format!("{}:{}", kas.display(), kas.parent().unwrap().join("offline.yml").display())
}

fn plan_json(kas: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(kas.with_file_name("rtbuild-plan.json")).unwrap())
        .unwrap()
}

/// The includes of a generated kas file that name meta-qcom files, in order.
fn meta_qcom_includes(kas: &Path) -> Vec<String> {
    let doc: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(kas).unwrap()).unwrap();
    doc["header"]["includes"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter(|i| i["repo"] == "meta-qcom")
        .map(|i| i["file"].as_str().unwrap().to_string())
        .collect()
}

/// `MACHINE_FEATURES` of a `bitbake -e` dump, as words.
fn machine_features(dump: &str) -> Vec<String> {
    let line = dump
        .lines()
        .find(|l| l.starts_with("MACHINE_FEATURES=\""))
        .unwrap_or_else(|| panic!("no MACHINE_FEATURES in the dump"));
    line["MACHINE_FEATURES=\"".len()..]
        .trim_end_matches('"')
        .split_whitespace()
        .map(String::from)
        .collect()
}

fn value<'a>(dump: &'a str, name: &str) -> &'a str {
    let prefix = format!("{name}=\"");
    let line = dump.lines().find(|l| l.starts_with(&prefix)).unwrap_or_else(|| panic!("no {name}"));
    line[prefix.len()..].trim_end_matches('"')
}

#[test]
fn kas_dump_and_bitbake_compose_from_the_checkout_on_both_meta_qcom_layouts() {
    let up = upstream();
    let dir = test_dir();
    let old = old_layout(dir.path());
    let new = new_layout(dir.path());
    // The stand-ins first: the snapshot's meta-qcom line, a regular expression, also matches
    // the start of meta-qcom-distro's URL.
    let (stand_ins, pins) = distro_stand_ins(dir.path());
    let premirrors = format!("{stand_ins}\n{}", up.premirrors);
    let work = dir.path().join("work");

    // The default build, no flag: what meta-qcom's RT CI builds on each revision.
    let (kas_old, _) = generate(dir.path(), "old", &old, None, &[]);
    let (kas_new, _) = generate(dir.path(), "new", &new, Some(&new), &[]);
    let (kas_gunyah, _) =
        generate(dir.path(), "gunyah", &new, Some(&new), &["--hypervisor", "gunyah"]);
    let (kas_alias, stderr) =
        generate(dir.path(), "alias", &new, Some(&new), &["--distro", "qcom-distro-kvm"]);
    assert_eq!(
        meta_qcom_includes(&kas_old),
        ["ci/rb3gen2-core-kit.yml", "ci/qcom-distro-kvm.yml", "ci/linux-qcom-rt-6.18.yml"]
    );
    assert_eq!(
        meta_qcom_includes(&kas_new),
        ["ci/rb3gen2-core-kit.yml", "ci/qcom-distro.yml", "ci/linux-qcom-rt-6.18.yml"]
    );
    assert_eq!(
        meta_qcom_includes(&kas_gunyah),
        [
            "ci/rb3gen2-core-kit.yml",
            "ci/qcom-distro.yml",
            "ci/gunyah.yml",
            "ci/linux-qcom-rt-6.18.yml"
        ]
    );
    assert_eq!(meta_qcom_includes(&kas_alias), meta_qcom_includes(&kas_new));
    assert!(
        stderr.contains("--distro qcom-distro-kvm is kept as an alias of --distro qcom-distro --hypervisor kvm (KVM comes from conf/machine/rb3gen2-core-kit.conf)"),
        "{stderr}"
    );
    // rtbuild-plan.json says what was found and why.
    let plan = plan_json(&kas_old);
    let composition = &plan["composition"];
    assert_eq!(composition["source"], "checkout");
    assert_eq!(composition["layout"], "qcom-distro-kvm.yml");
    assert_eq!(composition["hypervisor"], "kvm");
    assert_eq!(composition["revision"], up.commit("meta-qcom"));
    assert_eq!(plan["distro"], "qcom-distro");
    let plan = plan_json(&kas_new);
    assert_eq!(plan["composition"]["layout"], "gunyah.yml");
    assert_eq!(plan["composition"]["machine_features_from"], "conf/machine/rb3gen2-core-kit.conf");
    assert!(plan["composition"]["machine_features"].as_array().unwrap().contains(&"kvm".into()));
    assert_ne!(plan["composition"]["revision"], up.commit("meta-qcom"), "the new commit");

    // Real kas dump of each (qcom-distro: its layers are the stand-ins).
    for (name, kas, kvm_conf, gunyah_conf) in [
        ("old", &kas_old, true, false),
        ("new", &kas_new, false, false),
        ("gunyah", &kas_gunyah, false, true),
    ] {
        let pinned = kas.with_file_name("stand-ins.yml");
        std::fs::write(&pinned, &pins).unwrap();
        up.user.own(&pinned);
        let config = format!("{}:{}", config(kas), pinned.display());
        let out = up.kas(
            dir.path(),
            &work.join(name),
            &["dump", &config],
            &[("KAS_PREMIRRORS", premirrors.as_str())],
        );
        let dump = ok(&out, &format!("kas dump ({name})"));
        assert!(dump.contains("distro: qcom-distro"), "{name}: {dump}");
        assert_eq!(dump.contains("MACHINE_FEATURES:append = \" kvm\""), kvm_conf, "{name}: {dump}");
        assert_eq!(
            dump.contains("MACHINE_FEATURES:remove = \"kvm\""),
            gunyah_conf,
            "{name}: {dump}"
        );
        assert!(dump.contains("PREFERRED_PROVIDER_virtual/kernel = \"linux-qcom-rt\""), "{name}");
    }

    // Real BitBake on the nodistro RT build of each layout: every recipe parsed for the new
    // layout (never tried before), the configuration for the others.
    let (nodistro_new, _) =
        generate(dir.path(), "nd-new", &new, Some(&new), &["--distro", "nodistro"]);
    let (nodistro_old, stderr_old) =
        generate(dir.path(), "nd-old", &old, None, &["--distro", "nodistro"]);
    let (nodistro_gunyah, _) = generate(
        dir.path(),
        "nd-gunyah",
        &new,
        Some(&new),
        &["--distro", "nodistro", "--hypervisor", "gunyah"],
    );
    // On the old layout, nodistro has no KVM (only ci/qcom-distro-kvm.yml added it): said so.
    assert!(stderr_old.contains("rb3gen2-core-kit builds with Gunyah, not KVM"), "{stderr_old}");
    for (name, kas, command, kvm) in [
        ("nd-new", &nodistro_new, "bitbake -e linux-qcom-rt", true),
        ("nd-old", &nodistro_old, "bitbake -e", false),
        ("nd-gunyah", &nodistro_gunyah, "bitbake -e", false),
    ] {
        let env = dir.path().join(format!("{name}.env"));
        let build = work.join(format!("build-{name}"));
        let out = up.kas(
            dir.path(),
            &work.join(name),
            &["shell", &config(kas), "-c", &format!("{command} > {}", env.display())],
            &[("KAS_BUILD_DIR", build.to_str().unwrap())],
        );
        ok(&out, &format!("kas shell ({name}): {command}"));
        let dump = std::fs::read_to_string(&env).unwrap();
        let features = machine_features(&dump);
        assert_eq!(features.contains(&"kvm".to_string()), kvm, "{name}: {features:?}");
        assert_eq!(value(&dump, "PREFERRED_PROVIDER_virtual/kernel"), "linux-qcom-rt", "{name}");
        assert!(value(&dump, "KERNEL_CMDLINE_EXTRA").contains("isolcpus=7"), "{name}");
        if name == "nd-new" {
            assert_eq!(value(&dump, "PN"), "linux-qcom-rt");
        }
        assert_eq!(plan_json(kas)["composition"]["hypervisor"], if kvm { "kvm" } else { "gunyah" });
    }
}

#[test]
fn doctor_meta_qcom_names_what_moved_and_a_missing_ci_file_is_refused_before_anything_is_written() {
    let dir = test_dir();
    let old = old_layout(dir.path());
    let new = new_layout(dir.path());
    let row = |json: &serde_json::Value, item: &str| -> serde_json::Value {
        json["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["item"] == item)
            .unwrap_or_else(|| panic!("no row {item}: {json}"))
            .clone()
    };
    let doctor = |layout: &Path| {
        Test::new()
            .args(["--json", "doctor", "--meta-qcom"])
            .arg_path(layout)
            .run()
            .success()
            .json()
    };
    let on_old = doctor(&old);
    let on_new = doctor(&new);
    assert!(
        row(&on_old, "hypervisor")["checkout"]
            .as_str()
            .unwrap()
            .starts_with("ci/qcom-distro-kvm.yml")
    );
    assert!(row(&on_new, "hypervisor")["checkout"].as_str().unwrap().starts_with("ci/gunyah.yml"));
    // The catalog follows meta-qcom today (kvm on rb3gen2-core-kit); the snapshot predates it.
    let features = row(&on_old, "rb3gen2-core-kit MACHINE_FEATURES");
    assert_eq!(features["status"], "differs", "{features}");
    assert_eq!(features["checkout"], "efi m2connector pci phone tpm2");
    assert_eq!(row(&on_new, "rb3gen2-core-kit MACHINE_FEATURES")["status"], "ok");
    assert_eq!(row(&on_new, "qcm6490-idp MACHINE_FEATURES")["status"], "ok");
    for board in ["qcs615-ride", "qcs8300-ride-sx", "qcs9100-ride-sx"] {
        assert_eq!(row(&on_old, &format!("{board} MACHINE_FEATURES"))["status"], "ok", "{board}");
    }
    // The snapshot predates #2983: qcomflash is switched on in ci/base.yml.
    assert!(
        row(&on_old, "qcomflash image")["checkout"].as_str().unwrap().starts_with("ci/base.yml:")
    );
    let recipe = row(&on_old, "RT recipe");
    assert!(
        recipe["checkout"]
            .as_str()
            .unwrap()
            .contains("LINUX_VERSION 6.18.37 (set in linux-qcom_6.18.bb)"),
        "{recipe}"
    );
    let cmdline = row(&on_old, "KERNEL_CMDLINE_EXTRA");
    assert!(
        cmdline["checkout"].as_str().unwrap().contains("conf/machine/include/qcom-common.inc:"),
        "{cmdline}"
    );
    assert!(cmdline["checkout"].as_str().unwrap().contains("ci/base.yml:"), "{cmdline}");
    assert_eq!(on_new["missing"], 0);

    // A ci/ file named by --include, or by a local kas file, that the checkout lacks: one line,
    // exit 2, nothing written.
    let revision = git(&new, &["rev-parse", "HEAD"]);
    let short = &revision.trim()[..12];
    let test = Test::new()
        .args(["generate", "--machine", "rb3gen2-core-kit", "--meta-qcom"])
        .arg_path(&new)
        .args(["--include", "ci/qcom-distro-kvm.yml", "--out", "bad"]);
    let run = test.run().code_is(2).stdout_is("");
    let stderr = run.stderr();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "error: --include names ci/qcom-distro-kvm.yml, which meta-qcom at {short} ("
        )),
        "{stderr}"
    );
    assert!(stderr.contains("it has ci/gunyah.yml (meta-qcom #2879 renamed it"), "{stderr}");
    run.nothing_written("bad");
    let local = Test::new().file(
        "extra.yml",
        "header:\n  version: 14\n  includes:\n    - repo: meta-qcom\n      file: ci/qcom-distro-kvm.yml\n",
    );
    let extra = local.path().join("extra.yml");
    let run = local
        .args(["generate", "--machine", "rb3gen2-core-kit", "--meta-qcom"])
        .arg_path(&new)
        .args(["--include", extra.to_str().unwrap(), "--out", "bad"])
        .run()
        .code_is(2);
    assert!(
        run.stderr().contains("names ci/qcom-distro-kvm.yml, which meta-qcom at"),
        "{}",
        run.stderr()
    );
    run.nothing_written("bad");

    // Something rtbuild needs gone (the RT kernel's kas file): doctor exits 1 and names it.
    std::fs::remove_file(new.join("ci/linux-qcom-rt-6.18.yml")).unwrap();
    let run = Test::new().args(["--json", "doctor", "--meta-qcom"]).arg_path(&new).run().code_is(1);
    let json = run.json();
    assert_eq!(row(&json, "ci/linux-qcom-rt-6.18.yml")["status"], "missing");
    assert_eq!(json["missing"], 1, "{json}");
}
