//! `rtbuild matrix` over the FAKE bitbake, `rtbuild ci` pipelines and `rtbuild setup` with a
//! FAKE python.

use crate::support::fixtures::write_executable;
use crate::support::harness::{Test, venv};
use crate::support::project::{Project, build_started, build_succeeded, checking_out, generated};

fn matrix(project: &Project, extra: &[&str]) -> Test {
    let mut args: Vec<String> = vec![
        "matrix".into(),
        "--plain".into(),
        "--machines".into(),
        "rb3gen2-core-kit,iq-9075-evk".into(),
        "--meta-qcom-url".into(),
        project.fixtures.url("meta-qcom"),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    Test::new()
        .unprivileged()
        .cwd(project.root.join("proj"))
        .path_prepend(venv().join("bin"))
        .args(args)
}

/// What `matrix --plain` writes to stderr for one cell of `machine` (qcom-distro) building in
/// `build`, through [`Project::build_redacted`]: the layer generated, kas run, the fake build's
/// progress, then the build and verify summary when it `succeeds`, else the failed task.
fn cell(machine: &str, build: &str, succeeds: bool) -> String {
    let out = format!("[ROOT]/proj/rtbuild/{machine}");
    let mut text = format!("        Cell {machine} / qcom-distro\n");
    text += &generated(
        &format!("{machine} (RT CPUs 7, housekeeping 0-6, qcom-distro, qcom-multimedia-image)"),
        machine,
        &out,
        &[],
    );
    text += &format!("       Wrote {out}/caches.yml\n");
    text += &build_started(machine, &out, build);
    let task_log = format!(
        "{build}/tmp/work/{}-qcom-linux/linux-qcom-rt/6.18.37/temp/log.do_compile.4242",
        machine.replace('-', "_")
    );
    text += &if succeeds {
        build_succeeded(machine, &out, build)
    } else {
        format!(
            "  [CLOCK] {machine} ERROR: linux-qcom-rt-6.18.37-r0 do_compile: oe_runmake failed
  [CLOCK] {machine} ERROR: task linux-qcom-rt_6.18:do_compile failed
error: build of qcom-multimedia-image for {machine} failed after [TIME] (exit code 2)
             task linux-qcom-rt_6.18:do_compile failed (recipe linux-qcom-rt-6.18.37-r0): oe_runmake failed
             task log: {task_log}
             ------------------------------------------------------------
             make -C arch/arm64
             | kernel/sched/core.c:42: error: expected ; before }}
             | make: *** [Makefile:1234] Error 2
             ------------------------------------------------------------
note: full log: {build}/rtbuild-image.log
note: the build folder {build} is kept; look inside with `rtbuild shell --machine {machine}`
"
        )
    };
    text
}

#[test]
fn matrix_with_fake_bitbake_shares_caches_continues_past_a_failure_and_tabulates() {
    let project = Project::new("ok");
    std::fs::write(project.control.join("mode.rb3gen2-core-kit"), "fail").unwrap();
    let run = matrix(&project, &[])
        .run()
        .stderr_redacted_is(
            project.build_redacted(),
            &[
                checking_out("[ROOT]/proj/rtbuild"),
                cell("rb3gen2-core-kit", "[ROOT]/proj/rtbuild/rb3gen2-core-kit/build", false),
                cell("iq-9075-evk", "[ROOT]/proj/rtbuild/iq-9075-evk/build", true),
            ]
            .concat(),
        )
        .code_is(1);
    let table: Vec<String> = run.stdout().lines().map(str::to_string).collect();
    assert_eq!(table.len(), 3, "{}", run.stdout());
    assert!(table[0].starts_with("MACHINE           DISTRO       STATUS"), "{}", run.stdout());
    assert!(table[1].starts_with("rb3gen2-core-kit  qcom-distro  failed"), "{}", run.stdout());
    assert!(table[1].ends_with("linux-qcom-rt_6.18:do_compile"), "{}", run.stdout());
    assert!(table[2].starts_with("iq-9075-evk       qcom-distro  succeeded"), "{}", run.stdout());
    assert!(table[2].contains("80%"), "{}", run.stdout());
    let work = project.root.join("proj/rtbuild");
    for machine in ["rb3gen2-core-kit", "iq-9075-evk"] {
        let env = project.recorded(&format!("env.{machine}"));
        assert!(env.contains(&format!("DL_DIR={}\n", work.join("downloads").display())), "{env}");
        assert!(env.contains(&format!("SSTATE_DIR={}\n", work.join("sstate-cache").display())));
    }
}

/// Issue 25 item 8: `matrix --work-dir DIR` (and KAS_WORK_DIR, a flag winning) is kas's work
/// folder for every cell: kas clones there, every cell builds in `DIR/build` (where `bundle`
/// then finds it with the same KAS_WORK_DIR), downloads and sstate default beneath it. One
/// build folder holds one distro: several distros with a work dir are refused, exit 2.
#[test]
fn matrix_with_fake_bitbake_builds_every_cell_in_kas_work_dir_and_bundle_follows() {
    let project = Project::new("ok");
    let proj = project.root.join("proj");
    let work = project.root.join("kaswork");
    std::fs::create_dir_all(&work).unwrap();
    crate::support::harness::Unprivileged::get().own(&work);
    let flag = work.display().to_string();
    let run = matrix(&project, &["--work-dir", &flag])
        .env("KAS_WORK_DIR", project.root.join("elsewhere"))
        .run()
        .stderr_redacted_is(
            project.build_redacted(),
            &[
                checking_out("[ROOT]/kaswork"),
                cell("rb3gen2-core-kit", "[ROOT]/kaswork/build", true),
                cell("iq-9075-evk", "[ROOT]/kaswork/build", true),
            ]
            .concat(),
        )
        .success();
    let table = run.stdout();
    assert_eq!(table.matches("succeeded").count(), 2, "{table}");
    assert!(work.join("meta-qcom/.git").exists(), "no checkout in the work folder");
    for machine in ["rb3gen2-core-kit", "iq-9075-evk"] {
        assert!(work.join(format!("build/tmp/deploy/images/{machine}")).is_dir(), "{machine}");
        assert!(!proj.join(format!("rtbuild/{machine}/build")).exists(), "{machine}: wrong folder");
        // The generated files stay in --work's per-machine folders.
        assert!(proj.join(format!("rtbuild/{machine}/{machine}-rt.yml")).is_file(), "{machine}");
        let env = project.recorded(&format!("env.{machine}"));
        assert!(env.contains(&format!("DL_DIR={}\n", work.join("downloads").display())), "{env}");
        assert!(env.contains(&format!("SSTATE_DIR={}\n", work.join("sstate-cache").display())));
    }
    assert!(!project.root.join("elsewhere").exists(), "the flag wins over KAS_WORK_DIR");
    assert!(
        table.contains(&work.join("build/tmp/deploy/images/").display().to_string()),
        "{table}"
    );
    Test::new()
        .unprivileged()
        .cwd(&proj)
        .env("KAS_WORK_DIR", &work)
        .args(["bundle", "--machine", "iq-9075-evk"])
        .run()
        .stderr_contains("using the verify result")
        .success()
        .stdout_contains("rtbuild/iq-9075-evk/bundle/");

    let run = matrix(&project, &["--distro", "qcom-distro,nodistro"])
        .env("KAS_WORK_DIR", &work)
        .run()
        .code_is(2)
        .stdout_is("");
    let line = run.stderr();
    assert!(
        line.starts_with("error: --work-dir ")
            && line.contains("(or KAS_WORK_DIR) puts every cell in one build folder")
            && line.contains("; run one matrix per distro")
            && line.lines().count() == 1,
        "{line}"
    );
}

#[test]
fn matrix_with_fake_bitbake_fail_fast_skips_the_rest_and_json_lists_cells() {
    let project = Project::new("fail");
    // The first cell fails; the second is skipped, and stderr says which and why, as the JSON
    // on stdout does.
    let run = matrix(&project, &["--fail-fast", "--json"])
        .run()
        .stderr_redacted_is(
            project.build_redacted(),
            &(checking_out("[ROOT]/proj/rtbuild")
                + &cell("rb3gen2-core-kit", "[ROOT]/proj/rtbuild/rb3gen2-core-kit/build", false)
                + "warning: skipped 1 cell after rb3gen2-core-kit / qcom-distro failed (--fail-fast): iq-9075-evk / qcom-distro\n"),
        )
        .code_is(1);
    let cells = run.json();
    assert_eq!(cells[0]["status"], "failed");
    assert_eq!(cells[0]["result"]["failures"][0]["task"], "linux-qcom-rt_6.18:do_compile");
    assert_eq!(cells[1]["status"], "skipped");
    assert_eq!(project.recorded("argv").lines().count(), 1);
}

/// The cell's rtbuild-plan.json `composition`, as the generated file says it.
fn composition(project: &Project, machine: &str) -> serde_json::Value {
    let plan = std::fs::read(project.out(machine).join("rtbuild-plan.json")).unwrap();
    serde_json::from_slice::<serde_json::Value>(&plan).unwrap()["composition"].clone()
}

/// The fixture meta-qcom's HEAD, as git itself says it.
fn meta_qcom_head(project: &Project) -> String {
    crate::support::fixtures::git(&project.fixtures.repo("meta-qcom"), &["rev-parse", "HEAD"])
        .trim()
        .to_string()
}

/// Each cell's plan is composed from kas's meta-qcom checkout in the shared work folder, checked
/// out once for every cell: the plan names the checkout, its revision, and the files of its
/// layout (the fixture's is the one before meta-qcom #2879: `ci/qcom-distro-kvm.yml` adds KVM,
/// which rtbuild's catalog no longer remembers).
#[test]
fn matrix_cells_compose_from_the_meta_qcom_checkout_with_its_revision() {
    let project = Project::new("ok");
    let run = matrix(&project, &[]).run().ignore_stdout().success();
    let stderr = project.build_redacted()(&run.stderr());
    let checkouts: Vec<&str> = stderr.lines().filter(|l| l.starts_with("Checking out")).collect();
    assert_eq!(checkouts, [checking_out("[ROOT]/proj/rtbuild").trim_end()], "{stderr}");
    let head = meta_qcom_head(&project);
    let checkout = project.root.join("proj/rtbuild/meta-qcom").display().to_string();
    for machine in ["rb3gen2-core-kit", "iq-9075-evk"] {
        let c = composition(&project, machine);
        assert_eq!(c["source"], "checkout", "{machine}: {c:#}");
        assert_eq!(c["revision"], head.as_str(), "{machine}: {c:#}");
        assert_eq!(c["meta_qcom"], checkout.as_str(), "{machine}: {c:#}");
        assert_eq!(c["layout"], "qcom-distro-kvm.yml", "{machine}: {c:#}");
        assert_eq!(
            c["files"],
            serde_json::json!([
                format!("ci/{machine}.yml"),
                "ci/qcom-distro-kvm.yml",
                "ci/linux-qcom-rt-6.18.yml"
            ]),
            "{machine}: {c:#}"
        );
    }
}

/// On a checkout with meta-qcom's newer layout (#2879: `ci/qcom-distro-kvm.yml` renamed to
/// `ci/gunyah.yml`, `kvm` in the machine conf's MACHINE_FEATURES), made here as one commit on
/// the fixture repository, the cells compose that layout's own files: no
/// `ci/qcom-distro-kvm.yml`, KVM from the machine conf, `ci/gunyah.yml` for `--hypervisor
/// gunyah`.
#[test]
fn matrix_cells_compose_the_newer_meta_qcom_layout_from_its_checkout() {
    let project = Project::new("ok");
    let repo = project.fixtures.repo("meta-qcom");
    let git = |args: &[&str]| crate::support::fixtures::git(&repo, args);
    git(&["mv", "ci/qcom-distro-kvm.yml", "ci/gunyah.yml"]);
    std::fs::write(
        repo.join("ci/gunyah.yml"),
        "header:\n  version: 14\nlocal_conf_header:\n  gunyah: |\n    MACHINE_FEATURES:remove = \"kvm\"\n",
    )
    .unwrap();
    for machine in ["rb3gen2-core-kit", "iq-9075-evk"] {
        let conf = repo.join(format!("conf/machine/{machine}.conf"));
        let text = std::fs::read_to_string(&conf).unwrap();
        assert!(text.contains("MACHINE_FEATURES += \"efi pci\""), "{text}");
        let text =
            text.replace("MACHINE_FEATURES += \"efi pci\"", "MACHINE_FEATURES += \"efi kvm pci\"");
        std::fs::write(&conf, text).unwrap();
    }
    crate::support::fixtures::git_commit_all(&repo, "Switch to KVM in the machine confs");
    crate::support::harness::Unprivileged::get().own(&repo);
    let head = meta_qcom_head(&project);
    let run = matrix(&project, &[]).run().ignore_stdout().success();
    // One checkout for both cells.
    let stderr = project.build_redacted()(&run.stderr());
    let checkouts: Vec<&str> = stderr.lines().filter(|l| l.starts_with("Checking out")).collect();
    assert_eq!(checkouts, [checking_out("[ROOT]/proj/rtbuild").trim_end()], "{stderr}");
    for machine in ["rb3gen2-core-kit", "iq-9075-evk"] {
        let c = composition(&project, machine);
        assert_eq!(c["source"], "checkout", "{machine}: {c:#}");
        assert_eq!(c["revision"], head.as_str(), "{machine}: {c:#}");
        assert_eq!(c["layout"], "gunyah.yml", "{machine}: {c:#}");
        assert_eq!(c["hypervisor"], "kvm", "{machine}: {c:#}");
        assert_eq!(
            c["machine_features_from"],
            format!("conf/machine/{machine}.conf"),
            "{machine}: {c:#}"
        );
        assert_eq!(
            c["files"],
            serde_json::json!([
                format!("ci/{machine}.yml"),
                "ci/qcom-distro.yml",
                "ci/linux-qcom-rt-6.18.yml"
            ]),
            "{machine}: {c:#}"
        );
        let kas = std::fs::read_to_string(project.out(machine).join(format!("{machine}-rt.yml")))
            .unwrap();
        assert!(!kas.contains("qcom-distro-kvm"), "{machine}: {kas}");
    }
    // Gunyah on this layout: the checkout's ci/gunyah.yml removes the conf's kvm.
    matrix(&project, &["--hypervisor", "gunyah"])
        .run()
        .ignore_stdout()
        .stderr_has_line("        Cell rb3gen2-core-kit / qcom-distro")
        .stderr_has_line("        Cell iq-9075-evk / qcom-distro")
        .success();
    for machine in ["rb3gen2-core-kit", "iq-9075-evk"] {
        let c = composition(&project, machine);
        assert_eq!(c["hypervisor"], "gunyah", "{machine}: {c:#}");
        assert_eq!(
            c["files"],
            serde_json::json!([
                format!("ci/{machine}.yml"),
                "ci/qcom-distro.yml",
                "ci/gunyah.yml",
                "ci/linux-qcom-rt-6.18.yml"
            ]),
            "{machine}: {c:#}"
        );
    }
    // A file this checkout lacks is refused for every cell before the first is built: exit 2,
    // nothing generated or built (the catalog alone would not know it is missing).
    let builds = project.recorded("argv").lines().count();
    let short = &head[..12];
    matrix(&project, &["--include", "ci/qcom-distro-kvm.yml"])
        .run()
        .stderr_redacted_is(
            project.build_redacted(),
            &format!(
                "error: --include names ci/qcom-distro-kvm.yml, which meta-qcom at {short} ([ROOT]/proj/rtbuild/meta-qcom) does not have; it has ci/gunyah.yml (meta-qcom #2879 renamed it: KVM now comes from the machine's MACHINE_FEATURES; choose with --hypervisor kvm|gunyah); pick a file this checkout has (`rtbuild doctor --meta-qcom [ROOT]/proj/rtbuild/meta-qcom` lists what rtbuild relies on)\n"
            ),
        )
        .code_is(2)
        .stdout_is("");
    assert_eq!(project.recorded("argv").lines().count(), builds);
}

#[test]
fn matrix_with_an_unknown_machine_builds_nothing() {
    let run = Test::new()
        .args(["matrix", "--machines", "rb3gen2-core-kit,qcs649", "--dry-run"])
        .run()
        .code_is(2);
    assert!(run.stderr().starts_with("error: unknown machine `qcs649`"), "{}", run.stderr());
    run.nothing_written("rtbuild");
}

#[test]
fn matrix_dry_run_plans_machine_by_distro_cells_and_writes_nothing() {
    let run = Test::new()
        .args([
            "matrix",
            "--machines",
            "rb3gen2-core-kit,iq-9075-evk",
            "--distro",
            "qcom-distro,nodistro",
        ])
        .args(["--dry-run", "--kas", "/opt/kas/bin/kas"])
        .run()
        // Each cell named, then what its dry run would write (the file lists between are
        // generate's own, tested there).
        .stderr_has_line("        Cell rb3gen2-core-kit / qcom-distro")
        .stderr_has_line("        Cell iq-9075-evk / qcom-distro")
        .stderr_has_line("        Cell rb3gen2-core-kit / nodistro")
        .stderr_has_line("        Cell iq-9075-evk / nodistro")
        .stderr_has_line("     Dry run [TMP]/rtbuild/rb3gen2-core-kit-qcom-distro: 9 new, 0 updated, 0 removed, 0 unchanged")
        .stderr_has_line("     Dry run [TMP]/rtbuild/iq-9075-evk-nodistro: 9 new, 0 updated, 0 removed, 0 unchanged")
        .success();
    let stdout = run.stdout();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", run.stdout());
    assert!(lines[0].starts_with("rb3gen2-core-kit /opt/kas/bin/kas build "), "{}", lines[0]);
    assert!(lines[0].contains("rtbuild/rb3gen2-core-kit-qcom-distro/rb3gen2-core-kit-rt.yml"));
    assert!(lines[3].contains("rtbuild/iq-9075-evk-nodistro/iq-9075-evk-rt.yml:"), "{}", lines[3]);
    run.nothing_written("rtbuild");
}

fn ci(format: &str) -> String {
    let run = Test::new()
        .args([
            "ci",
            "--format",
            format,
            "--machines",
            "qcs6490-rb3gen2,iq-9075-evk",
            "--distros",
            "qcom-distro,nodistro",
            "--sstate-mirror",
            "https://sstate.example.com/all",
            "--hashserv",
            "hashserv.example.com:8686",
            "--runner-cache",
            "/srv/rtbuild",
            "--rtbuild-from",
            "path:tools/rtbuild",
        ])
        .run()
        .success();
    run.stdout()
}

#[test]
fn ci_pipelines_run_the_matrix_with_shared_cache_settings() {
    for format in ["gitlab", "github"] {
        let text = ci(format);
        assert_eq!(text, ci(format), "{format} output is not deterministic");
        let yaml: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
        let matrix = match format {
            "gitlab" => yaml["rtbuild-image"]["parallel"]["matrix"][0].clone(),
            _ => yaml["jobs"]["image"]["strategy"]["matrix"].clone(),
        };
        let get = |upper: &str| {
            let node = matrix.get(upper).or_else(|| matrix.get(upper.to_lowercase())).unwrap();
            strings(node)
        };
        assert_eq!(get("MACHINE"), ["rb3gen2-core-kit", "iq-9075-evk"], "{text}");
        assert_eq!(get("DISTRO"), ["qcom-distro", "nodistro"], "{text}");
        assert!(text.contains("--hashserv hashserv.example.com:8686"), "{text}");
        assert!(text.contains("/srv/rtbuild/sstate-cache"), "{text}");
    }
}

/// `rtbuild ci` for one board; rtbuild comes from a git repository unless `extra` says otherwise.
fn pipeline(format: &str, extra: &[&str]) -> (String, serde_yaml::Value) {
    let from: &[&str] = if extra.contains(&"--rtbuild-from") {
        &[]
    } else {
        &["--rtbuild-from", "git+https://git.example.com/rtbuild.git#v0.1.0"]
    };
    let run = Test::new()
        .file("ci/rt.lock.yml", LOCK)
        .args(["ci", "--format", format, "--machines", "qcs6490-rb3gen2"])
        .args(extra.iter().copied())
        .args(from.iter().copied())
        .run()
        .success();
    let text = run.stdout();
    let yaml = serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    (text, yaml)
}

/// A lock in kas's `overrides: repos:` form, as meta-qcom's ci/base.lock.yml is written.
const LOCK: &str = "header:\n    version: 14\noverrides:\n    repos:\n        meta-qcom:\n            commit: 0123456789abcdef0123456789abcdef01234567\n";

fn strings(v: &serde_yaml::Value) -> Vec<String> {
    v.as_sequence().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

const ARTIFACTS: [&str; 8] = [
    "rtbuild/$MACHINE/build/rtbuild-image.log",
    "rtbuild/$MACHINE/verify.json",
    "rtbuild/$MACHINE/verify.junit.xml",
    "rtbuild/$MACHINE/$MACHINE-rt.lock.yml",
    // A LAVA pipeline keeps the .tar.gz flavour its qdl deploy unpacks.
    "rtbuild/$MACHINE/bundle/*.tar.gz",
    "rtbuild/$MACHINE/bundle/*.manifest.json",
    "rtbuild/$MACHINE/bundle/SHA256SUMS",
    "bundle-url-$MACHINE-$DISTRO.txt",
];

#[test]
fn gitlab_pipeline_builds_rtbuild_once_and_each_lava_job_needs_only_its_own_build() {
    let (text, yaml) = pipeline(
        "gitlab",
        &[
            "--lava",
            "--lock",
            "ci/rt.lock.yml",
            "--machines",
            "iq-9075-evk",
            "--distros",
            "qcom-distro,nodistro",
        ],
    );
    assert_eq!(strings(&yaml["stages"]), ["prepare", "build", "test"]);
    // One job builds rtbuild and hands the binary on; nothing else compiles it.
    let binary = &yaml["rtbuild-binary"];
    assert_eq!(binary["stage"], "prepare");
    assert_eq!(strings(&binary["artifacts"]["paths"]), [".rtbuild-tools/bin/rtbuild"]);
    assert_eq!(text.matches("cargo install --locked --root").count(), 1, "{text}");
    let base = &yaml[".rtbuild"];
    assert_eq!(base["image"]["name"], "ghcr.io/siemens/kas/kas:5.5");
    assert_eq!(
        strings(&base["before_script"]),
        ["export PATH=\"$CI_PROJECT_DIR/.rtbuild-tools/bin:$PATH\"", "rtbuild --version"]
    );
    // The image's own user (builder) runs the jobs: nothing switches to root.
    assert!(!text.contains("--user root") && !text.contains("USER_ID"), "{text}");
    let build = &yaml["rtbuild-image"];
    assert_eq!(build["extends"], ".rtbuild");
    assert_eq!(build["needs"][0]["job"], "rtbuild-binary");
    assert_eq!(build["variables"]["DL_DIR"], "$CI_PROJECT_DIR/.rtbuild-cache/downloads");
    assert_eq!(build["variables"]["SSTATE_DIR"], "$CI_PROJECT_DIR/.rtbuild-cache/sstate-cache");
    assert_eq!(strings(&build["cache"]["paths"]), [".rtbuild-cache/"]);
    let script = strings(&build["script"]).join("\n");
    assert!(
        script.contains(
            "--dl-dir \"$DL_DIR\" --sstate-dir \"$SSTATE_DIR\" --lock ci/rt.lock.yml --bundle"
        ),
        "{script}"
    );
    assert!(!script.contains("rtbuild lock"), "a given lock is the lock: {script}");
    assert!(script.contains("sha256sum -- *.tar.gz *.manifest.json > SHA256SUMS"), "{script}");
    let paths = strings(&build["artifacts"]["paths"]);
    for want in ARTIFACTS {
        assert!(paths.contains(&want.to_string()), "{want}: {paths:?}");
    }
    assert_eq!(build["artifacts"]["reports"]["junit"], "rtbuild/$MACHINE/verify.junit.xml");
    for (machine, distro) in [
        ("rb3gen2-core-kit", "qcom-distro"),
        ("rb3gen2-core-kit", "nodistro"),
        ("iq-9075-evk", "qcom-distro"),
        ("iq-9075-evk", "nodistro"),
    ] {
        let lava = &yaml[format!("rtbuild-lava-{machine}-{distro}").as_str()];
        assert_eq!(lava["stage"], "test", "{text}");
        assert_eq!(lava["variables"]["MACHINE"], machine);
        assert_eq!(lava["variables"]["DISTRO"], distro);
        // This cell's build only: its own bundle, and a failed board holds no other back.
        let needs = lava["needs"].as_sequence().unwrap();
        assert_eq!(needs.len(), 2);
        assert_eq!(needs[0]["job"], "rtbuild-binary");
        assert_eq!(needs[1]["job"], "rtbuild-image");
        let cell = &needs[1]["parallel"]["matrix"][0];
        assert_eq!(
            (cell["MACHINE"].as_str(), cell["DISTRO"].as_str()),
            (Some(machine), Some(distro))
        );
        let script = strings(&lava["script"]).join("\n");
        for want in [
            "rtbuild lava --machine \"$MACHINE\" --distro \"$DISTRO\" --bundle-url \"$(cat \"bundle-url-$MACHINE-$DISTRO.txt\")\" --scenario idle,stress --duration smoke --tests cyclictest --threshold-us \"$threshold_us\" --out lava-job.yaml",
            "> \"$HOME/.config/lavacli.yaml\"",
            "job=$(lavacli jobs submit lava-job.yaml)",
            "lavacli jobs wait \"$job\"",
            "lavacli jobs logs --raw \"$job\" > lava-log.yaml",
            "rtbuild report lava-log.yaml --threshold-us \"$threshold_us\" --junit lava-junit.xml",
        ] {
            assert!(script.contains(want), "{want}: {script}");
        }
        // The token goes into lavacli's config file, never onto a command line.
        assert!(!script.contains("--token") && !script.contains("identities add"), "{script}");
        assert_eq!(lava["artifacts"]["reports"]["junit"], "lava-junit.xml");
    }
}

#[test]
fn github_workflow_works_beside_the_checkout_and_each_lava_leg_waits_for_its_own_board() {
    let (text, yaml) = pipeline("github", &["--lava", "--lava-duration", "10m"]);
    assert_eq!(yaml["permissions"]["contents"], "read");
    assert_eq!(
        yaml["concurrency"]["cancel-in-progress"],
        "${{ github.event_name == 'pull_request' }}"
    );
    assert!(yaml["on"].get("pull_request").is_some(), "{text}");
    let job = &yaml["jobs"]["image"];
    assert_eq!(job["needs"][0], "rtbuild");
    assert_eq!(job["container"]["image"], "ghcr.io/siemens/kas/kas:5.5");
    // No default shell (an auditor's misfeature): every `run:` step is plain bash, and each
    // that is not one of the two root steps starts by dropping to the build user.
    assert!(job.get("defaults").is_none(), "{text}");
    let steps = job["steps"].as_sequence().unwrap();
    for step in steps.iter().filter(|s| s.get("run").is_some()) {
        assert_eq!(step["shell"], "bash", "{step:?}");
    }
    let as_builder: Vec<&str> = steps
        .iter()
        .filter(|s| s["run"].as_str().is_some_and(|r| r.starts_with(DROP_ROOT)))
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert!(as_builder.contains(&"Build, verify, bundle"), "{as_builder:?}");
    assert!(!as_builder.contains(&"Work folders beside the checkout"), "{as_builder:?}");
    let uses: Vec<&str> = steps.iter().filter_map(|s| s["uses"].as_str()).collect();
    assert_eq!(
        uses,
        // Each by the commit of its release (rtbuild's pin table, issue 38 item 6).
        [
            "actions/checkout@d23441a48e516b6c34aea4fa41551a30e30af803",
            "actions/download-artifact@37930b1c2abaa49bbe596cd826c3c89aef350131",
            "actions/cache@27d5ce7f107fe9357f9df03efb73ab90386fccae",
            "actions/upload-artifact@b7c566a772e6b6bfb58ed0dc250532a479d7789f",
            "actions/upload-artifact@b7c566a772e6b6bfb58ed0dc250532a479d7789f"
        ]
    );
    assert_eq!(steps[0]["with"]["persist-credentials"], "false");
    // Nothing the build user writes is inside the checkout: no chown of the workspace.
    assert!(!text.contains("chown -R builder:builder \"$GITHUB_WORKSPACE\""), "{text}");
    let prepare = steps[1]["run"].as_str().unwrap();
    assert!(
        prepare.contains("work=\"$(dirname \"$GITHUB_WORKSPACE\")/rtbuild-work\""),
        "{prepare}"
    );
    assert!(prepare.contains("echo \"KAS_WORK_DIR=$work/kas\" >> \"$GITHUB_ENV\""), "{prepare}");
    let cache = steps
        .iter()
        .find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("actions/cache@")))
        .unwrap();
    assert_eq!(cache["with"]["path"], "${{ env.RTBUILD_WORK }}/cache");
    let build = steps.iter().find(|s| s["name"] == "Build, verify, bundle").unwrap();
    let script = build["run"].as_str().unwrap();
    assert!(script.contains("--out \"$RTBUILD_WORK/out/$MACHINE\""), "{script}");
    assert!(
        script.contains("rtbuild lock --machine \"$MACHINE\" --dir \"$RTBUILD_WORK/out/$MACHINE\""),
        "pins what it built: {script}"
    );
    // No workflow expression inside any script.
    for step in
        yaml["jobs"].as_mapping().unwrap().values().flat_map(|j| j["steps"].as_sequence().unwrap())
    {
        if let Some(run) = step["run"].as_str() {
            assert!(!run.contains("${{"), "{run}");
        }
    }
    let upload = steps.iter().find(|s| s["name"] == "Keep the results").unwrap();
    assert_eq!(upload["if"], "always()");
    let paths = upload["with"]["path"].as_str().unwrap();
    assert!(
        paths.lines().any(|l| l == "${{ env.KAS_WORK_DIR }}/build/rtbuild-image.log"),
        "{paths}"
    );
    assert!(
        paths
            .lines()
            .any(|l| l == "${{ env.RTBUILD_WORK }}/out/${{ matrix.machine }}/verify.junit.xml"),
        "{paths}"
    );
    let handed = steps.iter().find(|s| s["if"] == "success()").unwrap();
    assert_eq!(handed["with"]["name"], "bundle-${{ matrix.machine }}-${{ matrix.distro }}");
    let lava = &yaml["jobs"]["lava"];
    assert_eq!(strings(&lava["needs"]), ["rtbuild", "image"]);
    // A failed board fails its own leg (its bundle is missing); the others still run.
    assert_eq!(lava["if"], "${{ !cancelled() }}");
    assert_eq!(lava["strategy"]["fail-fast"], false);
    assert_eq!(lava["env"]["LAVA_TOKEN"], "${{ secrets.LAVA_TOKEN }}");
    let lava_steps = lava["steps"].as_sequence().unwrap();
    let fetch = lava_steps
        .iter()
        .find(|s| s["with"]["name"] == "bundle-${{ matrix.machine }}-${{ matrix.distro }}");
    assert!(fetch.is_some(), "{text}");
    let run: String = lava_steps.iter().filter_map(|s| s["run"].as_str()).collect();
    assert!(
        run.contains("--duration 10m --tests cyclictest --threshold-us \"$threshold_us\" --out \"$RTBUILD_WORK/out/lava-job.yaml\""),
        "{run}"
    );
    assert!(run.contains("> \"$HOME/.config/lavacli.yaml\""), "{run}");
    assert!(!run.contains("--token"), "{run}");
    assert!(run.contains("rtbuild report \"$RTBUILD_WORK/out/lava-log.yaml\""), "{run}");
    // Job `rtbuild` builds rtbuild once and hands it on.
    let rtbuild = &yaml["jobs"]["rtbuild"];
    let last = rtbuild["steps"].as_sequence().unwrap().last().unwrap();
    assert_eq!(last["with"]["name"], "rtbuild-binary");
    assert_eq!(text.matches("cargo install --locked --root").count(), 1, "{text}");
}

#[test]
fn ci_lava_jobs_run_the_chosen_rt_tests_and_wait_long_enough_for_them() {
    let minutes = |extra: &[&str]| {
        let mut args = vec!["--lava", "--lava-duration", "10m"];
        args.extend(extra);
        let (text, yaml) = pipeline("github", &args);
        let minutes = yaml["jobs"]["lava"]["timeout-minutes"].as_u64().unwrap();
        (text, minutes)
    };
    let (_, cyclictest_only) = minutes(&[]);
    let (text, suite) = minutes(&["--lava-tests", "cyclictest,oslat,pi_stress"]);
    assert!(text.contains("--tests oslat,cyclictest,pi_stress --threshold-us"), "{text}");
    // oslat (on each RT CPU) and pi_stress run 10 minutes each after cyclictest's 10, in both
    // scenarios: the CI job waits at least that much longer.
    assert!(suite >= cyclictest_only + 2 * 2 * 10, "{cyclictest_only} -> {suite}");
    let run = Test::new()
        .args(["ci", "--format", "gitlab", "--machines", "iq-9075-evk", "--lava"])
        .args(["--lava-tests", "cyclictest,nosuchtest", "--rtbuild-from", "path:tools/rtbuild"])
        .run()
        .code_is(2);
    assert!(run.stderr().starts_with("error: --lava-tests: "), "{}", run.stderr());
    assert!(run.stderr().contains("; "), "{}", run.stderr());
    assert_eq!(run.stderr().lines().count(), 1, "{}", run.stderr());
    assert_eq!(run.stdout(), "");
}

#[test]
fn ci_install_job_checks_a_downloaded_binary_and_leaves_it_for_the_other_jobs() {
    let test = Test::new();
    let work = test.path().join("job");
    std::fs::create_dir_all(&work).unwrap();
    let binary = crate::support::harness::rtbuild_bin();
    let sum = {
        use sha2::Digest;
        let bytes = std::fs::read(&binary).unwrap();
        sha2::Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    let install_lines = |from: &str, sha: Option<&str>| {
        let mut extra = vec!["--rtbuild-from", from];
        if let Some(sha) = sha {
            extra.extend(["--rtbuild-sha256", sha]);
        }
        let (_, yaml) = pipeline("gitlab", &extra);
        strings(&yaml["rtbuild-binary"]["script"]).join("\n")
    };
    // A RECORDING FAKE cargo (no network here for a real build) shows what the job runs.
    let fake = test.path().join("fake");
    write_executable(
        &fake.join("cargo"),
        "#!/bin/sh\n# FAKE\necho \"cargo $*\" >> \"$HOME/called\"\nexit 9\n",
    );
    let bash = |script: &str| {
        std::process::Command::new("bash")
            .args(["-e", "-c", script])
            .current_dir(&work)
            .env("HOME", &work)
            .env("PATH", format!("{}:/usr/bin:/bin", fake.display()))
            .output()
            .unwrap()
    };
    let url = format!("file://{}", binary.display());
    let out = bash(&install_lines(&url, Some(&sum)));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.ends_with(&format!("rtbuild {}\n", env!("CARGO_PKG_VERSION"))), "{stdout}");
    assert!(work.join(".rtbuild-tools/bin/rtbuild").is_file());
    // A binary that is not the one named by its checksum never runs.
    std::fs::remove_dir_all(work.join(".rtbuild-tools")).unwrap();
    let wrong = "0".repeat(64);
    let out = bash(&install_lines(&url, Some(&wrong)));
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("FAILED"), "{out:?}");
    // A binary URL without its checksum is refused.
    let run = Test::new()
        .args(["ci", "--format", "gitlab", "--machines", "iq-9075-evk", "--rtbuild-from", &url])
        .run()
        .code_is(2);
    assert!(run.stderr().contains("pass --rtbuild-sha256 HEX"), "{}", run.stderr());
    // From the repository's own copy of rtbuild's source, into the tools folder.
    write_executable(
        &fake.join("cargo"),
        "#!/bin/sh\n# FAKE\necho \"cargo $*\" >> \"$HOME/called\"\nmkdir -p .rtbuild-tools/bin && cp \"$RTBUILD_BIN\" .rtbuild-tools/bin/rtbuild\n",
    );
    let out = std::process::Command::new("bash")
        .args(["-e", "-c", &install_lines("path:tools/rtbuild", None)])
        .current_dir(&work)
        .env("HOME", &work)
        .env("RTBUILD_BIN", &binary)
        .env("PATH", format!("{}:/usr/bin:/bin", fake.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(work.join("called")).unwrap(),
        "cargo install --locked --root .rtbuild-tools --path tools/rtbuild\n"
    );
}

#[test]
fn ci_needs_to_be_told_where_rtbuild_comes_from() {
    let run = Test::new()
        .args(["ci", "--format", "github", "--machines", "iq-9075-evk"])
        .run()
        .code_is(2);
    assert_eq!(
        run.stderr(),
        "error: missing --rtbuild-from <SOURCE>; pass it; see `rtbuild ci --help`\n"
    );
    assert_eq!(run.stdout(), "");
}

#[test]
fn ci_refuses_bad_values() {
    let cases: &[(&[&str], &str)] = &[
        (&["--machines", "qcs649"], "error: unknown machine `qcs649`"),
        (
            &["--machines", "iq-9075-evk", "--sstate-mirror", "https://x/$(id)"],
            "error: bad --sstate-mirror",
        ),
        (&["--machines", "iq-9075-evk", "--runner-cache", "/srv/a b"], "error: bad --runner-cache"),
        (
            &["--machines", "iq-9075-evk", "--lock", "missing.lock.yml"],
            "error: no lock file at missing.lock.yml",
        ),
        (
            &["--machines", "iq-9075-evk", "--lock", "../x.lock.yml"],
            "error: bad --lock `../x.lock.yml`",
        ),
        (&["--machines", "iq-9075-evk", "--lock", "a;b.yml"], "error: bad --lock `a;b.yml`"),
        (
            &["--machines", "iq-9075-evk", "--rtbuild-from", "path:../rtbuild"],
            "error: bad --rtbuild-from `path:../rtbuild`; pass path:DIR",
        ),
        (
            &["--machines", "iq-9075-evk", "--rtbuild-from", "git+ssh://h/r"],
            "error: bad --rtbuild-from",
        ),
        (
            &["--machines", "iq-9075-evk", "--rtbuild-from", "https://h/$(id)"],
            "error: bad --rtbuild-from",
        ),
        (
            &["--machines", "iq-9075-evk", "--lava", "--lava-duration", "8d"],
            "error: --lava-duration: 2 scenarios of --duration 8d make a LAVA job of",
        ),
        (
            &["--machines", "iq-9075-evk", "--lava", "--lava-scenario", "idle,custom"],
            "error: --lava-scenario: `custom` needs a --load-cmd",
        ),
        (
            &["--machines", "iq-9075-evk", "--signing-key-secret", "KEY }}${{ github.token"],
            "error: bad --signing-key-secret `KEY }}${{ github.token`: not a CI secret name",
        ),
        (
            &["--machines", "iq-9075-evk", "--signing-key-secret", "K\"; curl x | sh; \""],
            "error: bad --signing-key-secret",
        ),
    ];
    for (extra, want) in cases {
        let mut args = vec!["ci", "--format", "gitlab"];
        args.extend(extra.iter());
        if !extra.contains(&"--rtbuild-from") {
            args.extend(["--rtbuild-from", "path:tools/rtbuild"]);
        }
        let run = Test::new().args(args).run().code_is(2);
        assert!(run.stderr().starts_with(want), "{extra:?}: {}", run.stderr());
        assert_eq!(run.stderr().lines().count(), 1, "{extra:?}: {}", run.stderr());
        assert_eq!(run.stdout(), "");
    }
}

/// A FAKE python3 whose `-m venv DIR` makes a FAKE pip that installs a FAKE kas 5.5.
const FAKE_PYTHON: &str = r#"#!/bin/sh
# FAKE python3 for rtbuild's tests
[ "$1 $2" = "-m venv" ] || exit 3
mkdir -p "$3/bin"
cat > "$3/bin/pip" <<PIP
#!/bin/sh
# FAKE pip
echo "\$*" > "$3/pip-args"
printf '#!/bin/sh\necho "kas 5.5 (configuration format version 23, earliest compatible version 1)"\n' > "$3/bin/kas"
chmod +x "$3/bin/kas"
PIP
chmod +x "$3/bin/pip"
"#;

#[test]
fn setup_with_fake_python_creates_a_venv_with_pinned_kas() {
    let test = Test::new();
    let python = test.path().join("fake/python3");
    write_executable(&python, FAKE_PYTHON);
    let venv = test.path().join("v");
    let run = test
        .args(["setup", "--python", python.to_str().unwrap(), "--venv", venv.to_str().unwrap()])
        .run()
        .success();
    assert_eq!(run.stdout().trim_end(), venv.join("bin/kas").display().to_string());
    let pip_args = std::fs::read_to_string(venv.join("pip-args")).unwrap();
    assert_eq!(pip_args.trim_end(), "install --disable-pip-version-check --quiet kas==5.5");
    assert!(run.stderr().contains("Ready kas 5.5"), "{}", run.stderr());
}

#[test]
fn setup_dry_run_prints_the_commands() {
    let run = Test::new().args(["setup", "--dry-run", "--venv", "/opt/kas"]).run().success();
    assert_eq!(
        run.stdout(),
        "python3 -m venv /opt/kas\n/opt/kas/bin/pip install --disable-pip-version-check --quiet kas==5.5\n"
    );
}

/// A LAVA job log as `lavacli jobs logs --raw` gives it: rtbuild's markers around the real
/// cyclictest 2.4 JSON of `file` (tests/data), one scenario `stress`, threshold 800 µs.
fn lava_log(file: &str) -> String {
    let entry = |msg: &str| {
        format!(
            "- {{\"dt\": \"2026-11-30T14:00:00.000000\", \"lvl\": \"target\", \"msg\": {}}}\n",
            serde_json::to_string(msg).unwrap()
        )
    };
    let mut log = entry(
        "<<<RTBUILD-RUN machine=rb3gen2-core-kit threshold_us=800 scenarios=stress duration=1m>>>",
    );
    log.push_str(&entry("<<<RTBUILD-RAW-BEGIN scenario=stress format=json>>>"));
    for line in std::fs::read_to_string(crate::support::harness::data(file)).unwrap().lines() {
        log.push_str(&entry(line));
    }
    log.push_str(&entry("<<<RTBUILD-RAW-END scenario=stress exit=0>>>"));
    log
}

/// A bundle manifest as `rtbuild bundle` writes it beside the archive.
const MANIFEST: &str = r#"{"format": 1, "rtbuild_version": "0.1.0", "machine": "rb3gen2-core-kit",
  "image": "qcom-multimedia-image", "qcomflash": "qcom-multimedia-image-rb3gen2-core-kit.rootfs-20261201.qcomflash",
  "build_time": null,
  "kernel": {"version": "6.6.52-rt43", "cmdline": "console=ttyMSM0", "cmdline_source": "rtbuild-plan.json", "config_sha256": "abc"},
  "verify": {"status": "passed", "allowed_unverified": false, "checks": []},
  "repos": [{"name": "meta-qcom", "url": "https://github.com/qualcomm-linux/meta-qcom", "branch": "master", "commit": "0123456789abcdef0123456789abcdef01234567", "dirty": false}],
  "lock": null, "flash_command": ["qdl"], "files": []}"#;

/// Runs `script` with bash -e (as both CIs run a step) in `dir`, the real rtbuild on PATH.
/// The first line of every GitHub step the build user runs: as root (the job's container user)
/// it reruns the step's file under `sudo -u builder`. Proved in real bash, as root with a
/// recording `sudo` and as an ordinary user, by
/// `ci_lint::github_steps_are_plain_bash_and_rtbuild_steps_drop_root`.
const DROP_ROOT: &str = "[ \"$(id -u)\" != 0 ] || exec sudo ";

fn run_step(script: &str, dir: &std::path::Path, env: &[(&str, &str)]) -> std::process::Output {
    let bin = crate::support::harness::rtbuild_bin();
    // This test runs the step as root, where no `sudo` nor `builder` exists: the step is run
    // from its second line, as the build user would (the first line is proved elsewhere).
    let script = match script.strip_prefix(DROP_ROOT) {
        Some(rest) => rest.split_once('\n').map_or("", |(_, body)| body),
        None => script,
    };
    let mut cmd = std::process::Command::new("bash");
    cmd.args(["-e", "-c", script])
        .current_dir(dir)
        .env_remove("RTBUILD_DB")
        .env("PATH", format!("{}:/usr/bin:/bin", bin.parent().unwrap().display()))
        .env("HOME", dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// The runs the history at `url` holds, oldest first.
fn history_runs(url: &str) -> Vec<serde_json::Value> {
    let run = Test::new().args(["--json", "history", "list", "--db", url]).run().success();
    run.json()["runs"].as_array().unwrap().clone()
}

/// Issue 28 item 4: `ci --history-db-secret NAME`. Each LAVA job's verdict step, taken from
/// the generated pipeline and run by bash with the real rtbuild, a LAVA log and a SQLite
/// history at the URL the secret holds: the run is checked against the earlier runs
/// (`report --history`), then recorded with the bundle's manifest (`history add`, the URL
/// from the environment only); a FAIL is recorded too and fails the step; a secret that is not
/// set is one error line, exit 2, with nothing recorded. GitHub passes the secret through the
/// job's `env:` and no script holds it.
#[test]
fn ci_lava_jobs_check_and_record_each_run_in_the_history_the_secret_names() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("db/history.sqlite").display());
    let manifest_sha = {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(MANIFEST.as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect::<String>()
    };

    // GitLab: the masked variable, read by the job's shell.
    let (text, yaml) = pipeline("gitlab", &["--lava", "--history-db-secret", "LAB_HISTORY_DB"]);
    assert!(text.contains("LAB_HISTORY_DB, a masked, protected CI/CD variable"), "{text}");
    let job = &yaml["rtbuild-lava-rb3gen2-core-kit-qcom-distro"];
    let script = strings(&job["script"]);
    let from = script.iter().position(|l| l.starts_with("export RTBUILD_DB=")).expect(&text);
    assert_eq!(script[from], "export RTBUILD_DB=\"$LAB_HISTORY_DB\"");
    assert!(script[..from].iter().any(|l| l.contains("lavacli jobs logs --raw")), "{text}");
    // The job's threshold is the machine's requirement, set in the script (100 µs here); run
    // as the job of a machine whose requirement is 800 µs, so the first log passes. The log's
    // own `threshold_us=800` is never used.
    let step = script[from..].join("\n");
    assert!(step.contains("\nthreshold_us=100\n"), "{step}");
    let step = step.replace("\nthreshold_us=100\n", "\nthreshold_us=800\n");
    let gitlab = dir.path().join("gitlab");
    crate::support::fixtures::write(
        &gitlab.join("rtbuild/rb3gen2-core-kit/bundle/b.manifest.json"),
        MANIFEST,
    );
    let env = [("MACHINE", "rb3gen2-core-kit"), ("DISTRO", "qcom-distro")];
    let with_secret = |extra: &[(&'static str, &str)]| -> Vec<(&str, String)> {
        env.iter().chain(extra).map(|(k, v)| (*k, v.to_string())).collect()
    };
    let run = |log: &str, vars: &[(&str, String)]| {
        std::fs::write(gitlab.join("lava-log.yaml"), log).unwrap();
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
        run_step(&step, &gitlab, &vars)
    };
    let out = run(
        &lava_log("cyclictest-2.4-json-1thread-cpu1.json"),
        &with_secret(&[("LAB_HISTORY_DB", &url)]),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("PASS run ") && stdout.contains("no earlier valid run"),
        "the history was consulted: {stdout}{stderr}"
    );
    assert!(gitlab.join("lava-junit.xml").is_file() && gitlab.join("lava-report.html").is_file());
    let runs = history_runs(&url);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["kind"], "lava-log");
    assert_eq!(runs[0]["bundle_digest"], manifest_sha.as_str(), "{:#}", runs[0]);

    // A FAIL (3000 µs over the 800 µs threshold) fails the step and is recorded all the same.
    let fail = lava_log("cyclictest-2.4-json-2threads-overflow.json");
    let out = run(&fail, &with_secret(&[("LAB_HISTORY_DB", &url)]));
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(history_runs(&url).len(), 2);

    // The secret is not set: one line, exit 2, nothing recorded (never a file in the job).
    let out = run(&fail, &with_secret(&[]));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: the CI secret LAB_HISTORY_DB (the latency history's database URL) is empty or not set; set it in the CI settings\n"
    );
    assert_eq!(history_runs(&url).len(), 2);

    // GitHub: the secret reaches the job's environment as RTBUILD_DB, never a script.
    let (text, yaml) = pipeline("github", &["--lava", "--history-db-secret", "LAB_HISTORY_DB"]);
    let job = &yaml["jobs"]["lava"];
    assert_eq!(job["env"]["RTBUILD_DB"], "${{ secrets.LAB_HISTORY_DB }}");
    assert_eq!(text.matches("secrets.LAB_HISTORY_DB").count(), 1, "{text}");
    let handed = yaml["jobs"]["image"]["steps"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Hand the bundle to this cell's LAVA job")
        .unwrap();
    assert!(
        handed["with"]["path"].as_str().unwrap().contains("/bundle/*.manifest.json"),
        "the manifest goes to the LAVA job: {handed:?}"
    );
    let step = job["steps"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Verdict, reports and the latency history")
        .expect(&text)["run"]
        .as_str()
        .unwrap()
        .to_string();
    let work = dir.path().join("github");
    let results = work.join("out");
    crate::support::fixtures::write(
        &results.join("rb3gen2-core-kit/bundle/b.manifest.json"),
        MANIFEST,
    );
    std::fs::write(
        results.join("lava-log.yaml"),
        lava_log("cyclictest-2.4-json-1thread-cpu1.json"),
    )
    .unwrap();
    let tools = work.join("tools/bin");
    std::fs::create_dir_all(&tools).unwrap();
    std::os::unix::fs::symlink(crate::support::harness::rtbuild_bin(), tools.join("rtbuild"))
        .unwrap();
    let work_text = work.display().to_string();
    let vars = [
        ("MACHINE", "rb3gen2-core-kit"),
        ("DISTRO", "qcom-distro"),
        ("RTBUILD_WORK", work_text.as_str()),
        ("RTBUILD_DB", url.as_str()),
    ];
    assert!(step.contains("threshold_us=100\n"), "{step}");
    let step = step.replace("threshold_us=100\n", "threshold_us=800\n");
    let out = run_step(&step, &work, &vars);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // The same log as the first GitLab run: known already, recorded once.
    assert_eq!(history_runs(&url).len(), 2);
}

/// The build job's shell lines of a generated pipeline, in the order the CI runs them: GitLab's
/// `rtbuild-image` script; GitHub's `image` job's steps run by the build user (the root steps
/// that make the folders beside the checkout are stood in for by the test).
fn build_job_lines(format: &str, yaml: &serde_yaml::Value) -> Vec<String> {
    match format {
        "gitlab" => strings(&yaml["rtbuild-image"]["script"]),
        _ => yaml["jobs"]["image"]["steps"]
            .as_sequence()
            .unwrap()
            .iter()
            .filter_map(|s| s["run"].as_str())
            .filter_map(|r| r.strip_prefix(DROP_ROOT))
            .map(|r| r.split_once('\n').map_or("", |(_, body)| body).to_string())
            .collect(),
    }
}

/// Issue 38 item 1: the build job of each generated pipeline, its steps run in order by bash
/// (as the build user, with the real rtbuild and the real kas; BitBake is the FAKE of
/// `Project`), leaves a bundle that carries the lock `rtbuild lock` made of this build, not
/// the placeholder `generate` wrote, and the bundle passes `bundle --check`; SHA256SUMS covers
/// the bundle that is published.
///
/// Issue 38 "done when": with `--signing-key-secret`, the same job signs the bundle with the
/// key the secret holds (an ed25519 key openssl made; GitLab's masked variable base64-encoded
/// on one line, GitHub's step variable the PEM as it is, trailing newline included), leaves no
/// key file behind (its temporary folder is empty afterwards) and keeps the public key beside
/// the bundle: the bundle passes `bundle --check` and `bundle --verify --key` with that
/// published key and with openssl's own public key, in-toto's own library verifies its
/// envelope, a wrong key fails the verify (exit 1), and an empty secret stops the signing step
/// with one error line, exit 2.
#[test]
fn ci_build_job_steps_in_order_publish_a_bundle_with_the_lock_that_passes_check_fake_bitbake() {
    let user = crate::support::harness::Unprivileged::get();
    for (format, signing) in
        [("gitlab", false), ("github", false), ("gitlab", true), ("github", true)]
    {
        let project = Project::new("ok");
        let url = project.fixtures.url("meta-qcom");
        let mut extra =
            vec!["--bundle", "--meta-qcom-url", &url, "--rtbuild-from", "path:tools/rtbuild"];
        if signing {
            extra.extend(["--signing-key-secret", "RELEASE_SIGNING_KEY"]);
        }
        let (text, yaml) = pipeline(format, &extra);
        let lines = build_job_lines(format, &yaml);
        let script = lines.join("\n");
        let lock_at = script.find("rtbuild lock --machine").expect(&text);
        let bundle_at = script.find("rtbuild bundle --machine").expect(&text);
        assert!(script.find("rtbuild image ").unwrap() < lock_at && lock_at < bundle_at, "{text}");
        assert_eq!(script.matches("rtbuild bundle --machine").count(), 1, "{text}");

        let proj = project.root.join("proj");
        let tools = project.root.join("tools");
        std::fs::create_dir_all(&tools).unwrap();
        std::os::unix::fs::symlink(crate::support::harness::rtbuild_bin(), tools.join("rtbuild"))
            .unwrap();
        let work = project.root.join("ghwork");
        for dir in ["out", "kas", "tools/bin"] {
            std::fs::create_dir_all(work.join(dir)).unwrap();
        }
        std::os::unix::fs::symlink(
            crate::support::harness::rtbuild_bin(),
            work.join("tools/bin/rtbuild"),
        )
        .unwrap();
        let caches = project.root.join("caches");
        std::fs::create_dir_all(&caches).unwrap();
        // The job's temporary folder (`mktemp -d` makes the key's folder in it).
        let tmp = project.root.join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let keys = project.root.join("keys");
        std::fs::create_dir_all(&keys).unwrap();
        let (private, public) = crate::bundle::key_pair(&keys, "release");
        let (_, wrong) = crate::bundle::key_pair(&keys, "other");
        let pem = std::fs::read_to_string(&private).unwrap();
        user.own(&project.root);
        let mut cmd = std::process::Command::new("setpriv");
        cmd.args(user.setpriv_args())
            .args(["bash", "-e", "-c", &script])
            .current_dir(&proj)
            .env_clear()
            .env(
                "PATH",
                format!("{}:{}:/usr/bin:/bin", tools.display(), venv().join("bin").display()),
            )
            .env("HOME", &project.root)
            .env("TMPDIR", &tmp)
            .env("LANG", "C.UTF-8")
            .env("MACHINE", "rb3gen2-core-kit")
            .env("DISTRO", "qcom-distro-kvm")
            .env("DL_DIR", caches.join("downloads"))
            .env("SSTATE_DIR", caches.join("sstate-cache"))
            .env("SOURCE_DATE_EPOCH", "1767225600");
        if format == "github" {
            cmd.env("RTBUILD_WORK", &work).env("KAS_WORK_DIR", work.join("kas"));
        }
        if signing {
            match format {
                // GitLab's masked variable: the PEM base64-encoded on one line, as masking needs.
                "gitlab" => {
                    use base64::Engine;
                    let one_line = base64::engine::general_purpose::STANDARD.encode(&pem);
                    cmd.env("RELEASE_SIGNING_KEY", one_line);
                }
                // GitHub: the secret, the PEM file as it is, reaches the signing step as
                // RTBUILD_SIGNING_KEY.
                _ => {
                    let steps = yaml["jobs"]["image"]["steps"].as_sequence().unwrap();
                    let sign = steps.iter().find(|s| s["name"] == "Bundle and sign").expect(&text);
                    assert_eq!(
                        sign["env"]["RTBUILD_SIGNING_KEY"], "${{ secrets.RELEASE_SIGNING_KEY }}",
                        "{text}"
                    );
                    cmd.env("RTBUILD_SIGNING_KEY", &pem);
                }
            }
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{format}: the build job failed:\n{script}\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let results = match format {
            "gitlab" => proj.join("rtbuild/rb3gen2-core-kit"),
            _ => work.join("out/rb3gen2-core-kit"),
        };
        let bundles: Vec<_> = std::fs::read_dir(results.join("bundle"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".tar.zst"))
            .collect();
        assert_eq!(bundles.len(), 1, "{format}: {bundles:?}");
        let manifest: serde_json::Value = serde_json::from_slice(
            &std::fs::read(bundles[0].to_string_lossy().replace(".tar.zst", ".manifest.json"))
                .unwrap(),
        )
        .unwrap();
        let lock = manifest["lock"]["content"].as_str().unwrap_or_default();
        let made = std::fs::read_to_string(results.join("rb3gen2-core-kit-rt.lock.yml")).unwrap();
        assert_eq!(lock, made, "{format}: the bundle holds the lock the job made");
        assert!(lock.contains("meta-qcom:") && lock.contains("commit:"), "{format}: {lock}");
        let roles: Vec<&str> = manifest["release"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["role"].as_str().unwrap())
            .collect();
        assert!(roles.contains(&"lock") && roles.contains(&"resolved-config"), "{roles:?}");
        Test::new()
            .args(["bundle", "--check"])
            .arg_path(&bundles[0])
            .run()
            .stderr_contains("files against the manifest and SHA256SUMS")
            .success()
            .stdout_is("");
        let sums = std::process::Command::new("sha256sum")
            .args(["-c", "SHA256SUMS"])
            .current_dir(results.join("bundle"))
            .output()
            .unwrap();
        assert!(sums.status.success(), "{}", String::from_utf8_lossy(&sums.stdout));
        let summed = String::from_utf8_lossy(&sums.stdout).to_string();
        let published = bundles[0].to_string_lossy().replace(".tar.zst", ".pub.pem");
        if !signing {
            assert!(!std::path::Path::new(&published).exists(), "{format}: {published}");
            assert!(manifest["signing_key"].is_null(), "{format}: {manifest}");
            continue;
        }
        // The key file is gone, and the job's temporary folder is as it was.
        let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().map(|e| e.unwrap().path()).collect();
        assert!(left.is_empty(), "{format}: the signing key's folder is left: {left:?}");
        // The public key is published beside the bundle, summed with it: openssl's own.
        assert_eq!(
            std::fs::read_to_string(&published).unwrap().trim(),
            std::fs::read_to_string(&public).unwrap().trim(),
            "{format}"
        );
        assert!(summed.contains(".pub.pem: OK") && summed.contains(".intoto.json: OK"), "{summed}");
        for key in [std::path::PathBuf::from(&published), public.clone()] {
            Test::new()
                .args(["bundle", "--verify"])
                .arg_path(&bundles[0])
                .args(["--key"])
                .arg_path(&key)
                .run()
                .stderr_contains("Verified the signature of")
                .success()
                .stdout_is("");
        }
        // in-toto's own library (PyPI in-toto/securesystemslib) accepts the envelope too.
        let out = crate::bundle::intoto_verify(&bundles[0], &public);
        let said = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(out.status.success(), "{format}: {said}{}", String::from_utf8_lossy(&out.stderr));
        assert!(said.starts_with("signature: verified\n"), "{format}: {said}");
        let run = Test::new()
            .args(["bundle", "--verify"])
            .arg_path(&bundles[0])
            .args(["--key"])
            .arg_path(&wrong)
            .run()
            .code_is(1)
            .stderr_contains("2 problems in");
        assert!(
            run.stdout().contains("no signature of the envelope verifies with this key"),
            "{}",
            run.stdout()
        );
        // An empty or unset secret: the signing step says so in one line and exits 2.
        let check =
            lines.iter().flat_map(|l| l.lines()).find(|l| l.starts_with("test -n ")).expect(&text);
        let out = std::process::Command::new("bash")
            .args(["-e", "-c", check])
            .env_remove("RELEASE_SIGNING_KEY")
            .env_remove("RTBUILD_SIGNING_KEY")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{format}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "error: the CI secret RELEASE_SIGNING_KEY (the bundle's signing key) is empty or not set; set it in the CI settings\n"
        );
    }
}
