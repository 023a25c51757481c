//! The generated kas file and layer, checked by the real tools: kas 5.5 composes it over a
//! meta-qcom-shaped repository, and real BitBake (the `bb` library with rtbuild's launcher)
//! parses the result.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::fixtures::{Bitbake, Fixtures};
use crate::support::harness::{Test, venv};
use crate::support::project::generated;

/// Runs kas from the test venv with a fresh work folder; returns its output.
fn kas(args: &[&str], work: &Path) -> Output {
    std::fs::create_dir_all(work).unwrap();
    Command::new(venv().join("bin/kas"))
        .args(args)
        .env_clear()
        .env("PATH", format!("{}:/usr/sbin:/usr/bin:/sbin:/bin", venv().join("bin").display()))
        .env("HOME", work)
        .env("KAS_WORK_DIR", work)
        .env("LANG", "C.UTF-8")
        .output()
        .unwrap()
}

fn ok(out: &Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed: {}\n--- stdout ---\n{stdout}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Generates for `args` against the fixture meta-qcom and returns the kas file path.
fn generate(test_dir: &Path, fixtures: &Fixtures, args: &[&str]) -> PathBuf {
    let url = fixtures.url("meta-qcom");
    let out = test_dir.join("out");
    let mut all = vec!["generate", "--meta-qcom-url", &url, "--out"];
    let out_str = out.to_string_lossy().into_owned();
    all.push(&out_str);
    all.extend(args);
    // A setup step: its callers test the kas file with kas (their `generate` output varies with
    // `args`, and generate's own tests state it).
    let run = Test::new().cwd(test_dir).args(all).run().ignore_stderr().success();
    PathBuf::from(run.stdout().trim())
}

#[test]
fn real_kas_dump_composes_the_generated_file_over_meta_qcom_ci_files() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures =
        Fixtures::create(&dir.path().join("repos"), Bitbake::Fake("#!/bin/sh\nexit 0\n"));
    // Composed from the fixture's checkout, which has meta-qcom's layout before #2879.
    let qcom = fixtures.repo("meta-qcom");
    let kas_file = generate(
        dir.path(),
        &fixtures,
        &[
            "--machine",
            "qcs6490-rb3gen2",
            "--rt-cpus",
            "6,7",
            "--meta-qcom",
            qcom.to_str().unwrap(),
        ],
    );
    assert!(kas_file.ends_with("rb3gen2-core-kit-rt.yml"), "{}", kas_file.display());
    let dump =
        ok(&kas(&["dump", kas_file.to_str().unwrap()], &dir.path().join("work")), "kas dump");
    let merged: serde_yaml::Value = serde_yaml::from_str(&dump).unwrap();
    assert_eq!(merged["machine"], "rb3gen2-core-kit");
    assert_eq!(merged["distro"], "qcom-distro");
    assert_eq!(merged["target"][0], "qcom-multimedia-image");
    let headers = &merged["local_conf_header"];
    assert!(headers["kernelprovider"].as_str().unwrap().contains("\"linux-qcom-rt\""), "{dump}");
    assert!(headers["kvm"].as_str().is_some(), "qcom-distro-kvm.yml not included:\n{dump}");
    let rt = headers["rtbuild"].as_str().unwrap();
    assert!(rt.contains("QCOM_RT_CPU:forcevariable = \"6-7\""), "{rt}");
    assert!(rt.contains("QCOM_IRQAFF:forcevariable = \"0-5\""), "{rt}");
    for repo in ["meta-qcom", "oe-core", "bitbake", "meta-qcom-distro", "rtbuild"] {
        assert!(merged["repos"].get(repo).is_some(), "repo {repo} missing:\n{dump}");
    }
    assert_eq!(merged["repos"]["meta-qcom"]["branch"], "wrynose");
}

#[test]
fn real_kas_dump_accepts_nodistro_on_base_yml() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures =
        Fixtures::create(&dir.path().join("repos"), Bitbake::Fake("#!/bin/sh\nexit 0\n"));
    let kas_file =
        generate(dir.path(), &fixtures, &["--machine", "iq-8275-evk", "--distro", "nodistro"]);
    let dump =
        ok(&kas(&["dump", kas_file.to_str().unwrap()], &dir.path().join("work")), "kas dump");
    let merged: serde_yaml::Value = serde_yaml::from_str(&dump).unwrap();
    assert_eq!(merged["distro"], "nodistro");
    assert_eq!(merged["target"][0], "core-image-base");
    assert!(merged["repos"].get("meta-qcom-distro").is_none());
    let rt = merged["local_conf_header"]["rtbuild"].as_str().unwrap();
    assert!(rt.contains("QCOM_RT_CPU:forcevariable = \"3\""), "{rt}");
    assert!(rt.contains("QCOM_IRQAFF:forcevariable = \"0-2,4-7\""), "{rt}");
}

/// `bitbake -e linux-qcom-rt` inside `kas shell`, for a kas file generated with `args`.
fn bitbake_env(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = Fixtures::create(&dir.path().join("repos"), Bitbake::Real);
    let kas_file = generate(dir.path(), &fixtures, args);
    let work = dir.path().join("work");
    let out = kas(&["shell", kas_file.to_str().unwrap(), "-c", "bitbake -e linux-qcom-rt"], &work);
    let log =
        std::fs::read_to_string(work.join("build/bitbake-cookerdaemon.log")).unwrap_or_default();
    ok(&out, &format!("kas shell -c 'bitbake -e linux-qcom-rt' (server log:\n{log})"))
}

fn var<'a>(env: &'a str, name: &str) -> &'a str {
    let prefix = format!("\n{name}=\"");
    let start = env.find(&prefix).unwrap_or_else(|| panic!("{name} not in bitbake -e output"))
        + prefix.len();
    let end = env[start..].find("\"\n").unwrap() + start;
    &env[start..end]
}

#[test]
fn real_bitbake_parse_sees_fragment_patch_and_overridden_rt_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let frag = dir.path().join("low-latency.cfg");
    std::fs::write(&frag, "CONFIG_HZ_1000=y\n").unwrap();
    let patch = dir.path().join("0001-rt-fix.patch");
    std::fs::write(&patch, "--- a/README\n+++ b/README\n@@ -1 +1 @@\n-a\n+b\n").unwrap();
    let env = bitbake_env(&[
        "--machine",
        "rb3gen2-core-kit",
        "--rt-cpus",
        "5-7",
        "--fragment",
        frag.to_str().unwrap(),
        "--patch",
        patch.to_str().unwrap(),
        "--cmdline",
        "threadirqs",
    ]);
    let src_uri = var(&env, "SRC_URI");
    for entry in ["file://rtbuild-rt.cfg", "file://low-latency.cfg", "file://0001-rt-fix.patch"] {
        assert!(src_uri.contains(entry), "SRC_URI lacks {entry}: {src_uri}");
    }
    let extra = var(&env, "FILESEXTRAPATHS");
    assert!(!extra.contains("${THISDIR}"), "FILESEXTRAPATHS kept a literal ${{THISDIR}}: {extra}");
    assert!(extra.contains("meta-rtbuild/recipes-kernel/linux/linux-qcom-rt-rtbuild:"), "{extra}");
    let cmdline = var(&env, "KERNEL_CMDLINE_EXTRA");
    for arg in [
        "isolcpus=5-7",
        "irqaffinity=0-4",
        "rcu_nocbs=5-7",
        "nohz_full=5-7",
        "threadirqs",
        "efi=runtime",
    ] {
        assert!(
            cmdline.split_whitespace().any(|a| a == arg),
            "KERNEL_CMDLINE_EXTRA lacks {arg}: {cmdline}"
        );
    }
    assert!(!cmdline.contains("isolcpus=7 "), "the machine's hard QCOM_RT_CPU won: {cmdline}");
    assert_eq!(var(&env, "QCOM_RT_CPU"), "5-7");
}

#[test]
fn real_bitbake_parse_with_default_machine_settings() {
    let env = bitbake_env(&["--machine", "iq-8275-evk", "--no-nohz-full"]);
    let cmdline = var(&env, "KERNEL_CMDLINE_EXTRA");
    assert!(cmdline.contains("isolcpus=3 irqaffinity=0-2,4-7 rcu_nocbs=3"), "{cmdline}");
    assert!(!cmdline.contains("nohz_full"), "{cmdline}");
    assert_eq!(var(&env, "PREFERRED_PROVIDER_virtual/kernel"), "linux-qcom-rt");
}

/// `--include FILE` with a local kas file: the project folder is a git work tree holding the
/// file and the output folder, so the generated kas file names the file by its path inside
/// that repository (where kas resolves local includes from), and real kas merges it after
/// rtbuild's own files; the plan records the file's path.
#[test]
fn real_kas_dump_merges_a_local_include_named_from_the_repository_top() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures =
        Fixtures::create(&dir.path().join("repos"), Bitbake::Fake("#!/bin/sh\nexit 0\n"));
    let proj = dir.path().join("proj");
    std::fs::create_dir_all(proj.join("kas")).unwrap();
    std::fs::write(
        proj.join("kas/extra.yml"),
        "header:\n  version: 14\nlocal_conf_header:\n  extra: |\n    RTBUILD_LOCAL_INCLUDE = \"1\"\n",
    )
    .unwrap();
    crate::support::fixtures::git_commit_all(&proj, "project");
    let url = fixtures.url("meta-qcom");
    let run = Test::new()
        .cwd(&proj)
        .args(["generate", "--machine", "rb3gen2-core-kit", "--meta-qcom-url", &url])
        .args(["--include", "kas/extra.yml", "--include", "ci/performance.yml"])
        .args(["--out", "bsp/rtbuild/rb3"])
        .run()
        .stderr_is(&generated(
            "rb3gen2-core-kit (RT CPUs 7, housekeeping 0-6, qcom-distro, qcom-multimedia-image)",
            "rb3gen2-core-kit",
            &proj.join("bsp/rtbuild/rb3").display().to_string(),
            &[],
        ))
        .success();
    let kas_file = PathBuf::from(run.stdout().trim());
    let text = std::fs::read_to_string(&kas_file).unwrap();
    let local = text.find("    - \"kas/extra.yml\"\n").expect(&text);
    assert!(local > text.find("ci/linux-qcom-rt-6.18.yml").unwrap(), "after rtbuild's own: {text}");
    assert!(text.find("ci/performance.yml").unwrap() > local, "in the order given: {text}");
    let plan: serde_json::Value = serde_json::from_slice(
        &std::fs::read(kas_file.parent().unwrap().join("rtbuild-plan.json")).unwrap(),
    )
    .unwrap();
    let real = std::fs::canonicalize(proj.join("kas/extra.yml")).unwrap();
    assert_eq!(
        plan["includes"],
        serde_json::json!([real.to_string_lossy(), "ci/performance.yml"]),
        "{plan}"
    );
    // The fixture meta-qcom has no ci/performance.yml: dump without it, from the same file.
    let without = text.replace("    - repo: meta-qcom\n      file: \"ci/performance.yml\"\n", "");
    std::fs::write(&kas_file, without).unwrap();
    let dump =
        ok(&kas(&["dump", kas_file.to_str().unwrap()], &dir.path().join("work")), "kas dump");
    let merged: serde_yaml::Value = serde_yaml::from_str(&dump).unwrap();
    let extra = merged["local_conf_header"]["extra"].as_str().expect(&dump);
    assert!(extra.contains("RTBUILD_LOCAL_INCLUDE = \"1\""), "{dump}");
    assert!(merged["local_conf_header"]["rtbuild"].as_str().is_some(), "{dump}");
}

/// A local `--include` that kas could not read from the repository holding the kas file (here
/// the output folder itself: no git work tree around it), or that is not a plain kas file, is
/// refused with exit 2 on one line, and nothing is generated. File names that try to break out
/// of the YAML string or into a shell are refused before anything is written.
#[test]
fn generate_refuses_bad_local_includes_on_one_line() {
    let kas = "header:\n  version: 14\n";
    let test = Test::new()
        .file("outside.yml", kas)
        .file("nokas.yml", "machine: x\n")
        .file("notyaml.yml", "header: [\n")
        .file("extra.txt", kas)
        .file("folder.yml/x", "")
        .file("big.yml", format!("{kas}# {}\n", "x".repeat(1 << 20)))
        .file("q\"uote.yml", kas)
        .file("$(touch pwned).yml", kas)
        .file("new\nline.yml", kas);
    let root = test.path().to_path_buf();
    let fifo = root.join("fifo.yml");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let outside = std::fs::canonicalize(root.join("outside.yml")).unwrap();
    let out = std::fs::canonicalize(&root).unwrap().join("out");
    let cases: Vec<(&str, String)> = vec![
        (
            "outside.yml",
            format!(
                "--include {}: kas reads local includes from the repository holding the kas file, {1}, and this file is outside it; move the file into {1}, or put the output folder (--out) in the git work tree that holds the file",
                outside.display(),
                out.display()
            ),
        ),
        ("missing.yml", "--include `missing.yml` does not exist; check the path".into()),
        (
            "nokas.yml",
            "--include `nokas.yml`: not a kas file: it has no `header:`; pass a kas file with a `header:` that sets `version:`".into(),
        ),
        ("notyaml.yml", "--include `notyaml.yml`: not a kas file: not YAML (".into()),
        (
            "extra.txt",
            "--include `extra.txt`: a local kas file must end in .yml or .yaml; rename it, or name one of meta-qcom's ci/*.yml files".into(),
        ),
        ("folder.yml", "--include `folder.yml` is a folder, not a file; pass a file".into()),
        ("fifo.yml", "--include `fifo.yml` is a FIFO, not a file; pass a regular file".into()),
        ("big.yml", "--include `big.yml` is over 1 MiB".into()),
        ("q\"uote.yml", "invalid --include path `".into()),
        ("$(touch pwned).yml", "invalid --include path `".into()),
        ("new\nline.yml", "invalid --include path `".into()),
    ];
    for (file, want) in cases {
        let run = Test::new()
            .cwd(&root)
            .args(["generate", "--machine", "rb3gen2-core-kit", "--include", file, "--out"])
            .arg_path(&out)
            .run()
            .code_is(2);
        let stderr = run.stderr();
        // The error is one line (a refusal found while generating follows the status line).
        let errors: Vec<&str> =
            stderr.lines().filter(|l| !l.starts_with("  Generating ")).collect();
        assert_eq!(errors.len(), 1, "{file:?}: {stderr}");
        assert!(errors[0].starts_with(&format!("error: {want}")), "{file:?}: {stderr}");
        assert!(!out.exists(), "{file:?}: generated into {}", out.display());
        assert!(!root.join("pwned").exists(), "{file:?} ran a shell");
    }
}
