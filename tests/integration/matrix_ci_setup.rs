//! `rtbuild matrix` over the FAKE bitbake, `rtbuild ci` pipelines and `rtbuild setup` with a
//! FAKE python.

use crate::fixtures::write_executable;
use crate::harness::{Test, venv};
use crate::image_fake_bitbake::Project;

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

#[test]
fn matrix_with_fake_bitbake_shares_caches_continues_past_a_failure_and_tabulates() {
    let project = Project::new("ok");
    std::fs::write(project.control.join("mode.rb3gen2-core-kit"), "fail").unwrap();
    let run = matrix(&project, &[]).run().code_is(1);
    let table: Vec<String> = run.stdout().lines().map(str::to_string).collect();
    assert_eq!(table.len(), 3, "{}", run.stdout());
    assert!(table[0].starts_with("MACHINE           DISTRO           STATUS"), "{}", run.stdout());
    assert!(table[1].starts_with("rb3gen2-core-kit  qcom-distro-kvm  failed"), "{}", run.stdout());
    assert!(table[1].ends_with("linux-qcom-rt_6.18:do_compile"), "{}", run.stdout());
    assert!(
        table[2].starts_with("iq-9075-evk       qcom-distro-kvm  succeeded"),
        "{}",
        run.stdout()
    );
    assert!(table[2].contains("80%"), "{}", run.stdout());
    let work = project.root.join("proj/rtbuild");
    for machine in ["rb3gen2-core-kit", "iq-9075-evk"] {
        let env = project.recorded(&format!("env.{machine}"));
        assert!(env.contains(&format!("DL_DIR={}\n", work.join("downloads").display())), "{env}");
        assert!(env.contains(&format!("SSTATE_DIR={}\n", work.join("sstate-cache").display())));
    }
}

#[test]
fn matrix_with_fake_bitbake_fail_fast_skips_the_rest_and_json_lists_cells() {
    let project = Project::new("fail");
    let run = matrix(&project, &["--fail-fast", "--json"]).run().code_is(1);
    let cells = run.json();
    assert_eq!(cells[0]["status"], "failed");
    assert_eq!(cells[0]["result"]["failures"][0]["task"], "linux-qcom-rt_6.18:do_compile");
    assert_eq!(cells[1]["status"], "skipped");
    assert_eq!(project.recorded("argv").lines().count(), 1);
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
        assert!(!yaml.is_null());
        assert!(text.contains("[\"rb3gen2-core-kit\", \"iq-9075-evk\"]"), "{text}");
        assert!(text.contains("[\"qcom-distro\", \"nodistro\"]"), "{text}");
        assert!(text.contains("--hashserv hashserv.example.com:8686"), "{text}");
        assert!(text.contains("/srv/rtbuild/sstate-cache"), "{text}");
    }
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
    ];
    for (extra, want) in cases {
        let mut args = vec!["ci", "--format", "gitlab"];
        args.extend(extra.iter());
        let run = Test::new().args(args).run().code_is(2);
        assert!(run.stderr().starts_with(want), "{extra:?}: {}", run.stderr());
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
