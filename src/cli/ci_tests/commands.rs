//! Every `rtbuild` command of every pipeline parses, carries the plan and every `ci` flag, and
//! stays inside the repository; the canary pipeline's doctor run.

use super::*;

#[test]
fn every_ci_flag_reaches_the_jobs_commands_or_is_refused() {
    let mut cli = Cli::command();
    cli.build();
    let ci = cli.find_subcommand("ci").expect("ci");
    let ids: Vec<String> = ci
        .get_arguments()
        .filter(|a| !a.is_global_set() && !matches!(a.get_id().as_str(), "help" | "version"))
        .map(|a| a.get_id().to_string())
        .collect();
    let unhandled: Vec<&String> = ids.iter().filter(|id| handling(id).is_none()).collect();
    assert!(
        unhandled.is_empty(),
        "`rtbuild ci` shows flags that neither reach the jobs' rtbuild commands nor are refused: {unhandled:?}; pass each on in cli/ci.rs (job_flags) or refuse it there, and add it to `handling` here"
    );
    let base = pipeline_text(&ci_args(&argv(&[]))).expect("base pipeline");
    for id in &ids {
        match handling(id).expect("checked above") {
            Handling::Refused(args) => {
                let err = pipeline_text(&ci_args(&argv(&[args]))).expect_err(id);
                assert_eq!(
                    err.code(),
                    crate::error::Exit::Usage,
                    "{id}: refused as bad input (exit 2): {err}"
                );
                let text = err.to_string();
                assert!(text.contains("instead of --"), "{id}: says what to pass: {text}");
            }
            Handling::OwnPipeline | Handling::ShapesWorkflow => {}
            Handling::Reaches { args, needs } => {
                let before = ci_args(&argv(&[needs]));
                let with = ci_args(&argv(&[needs, args]));
                let text = pipeline_text(&with).unwrap_or_else(|e| panic!("{id}: {e:#}"));
                match pipeline_text(&before) {
                    Ok(before) => {
                        assert_ne!(text, before, "{id}: {args:?} does not change the pipeline");
                    }
                    // A flag its prerequisites need (a binary URL needs its checksum).
                    Err(e) => assert!(format!("{e:#}").contains(args[0]), "{id}: {e:#}"),
                }
                if needs.is_empty() {
                    assert_ne!(text, base, "{id}");
                }
                jobs_build_the_plan(&with, &text);
                // The other format carries the flag as well.
                if id != "format" {
                    let other = ci_args(&argv(&[needs, args, &["--format", "github"]]));
                    jobs_build_the_plan(&other, &pipeline_text(&other).expect(id));
                }
            }
        }
    }
}

#[test]
fn every_rtbuild_command_of_every_pipeline_parses() {
    let richest: &[&str] = &[
        "--machines",
        "rb3gen2-core-kit,iq-9075-evk",
        "--distros",
        "qcom-distro,nodistro",
        "--lava",
        "--rt-cpus",
        "6-7",
        "--machines-dir",
        "machines",
        "--fragment",
        "tests/data/ci/extra.cfg",
        "--cmdline",
        "threadirqs",
        "--sstate-mirror",
        "https://sstate.example.com/all",
        "--history-db-secret",
        "RTBUILD_HISTORY_DB",
    ];
    for format in ["gitlab", "github"] {
        for from in ["crates", "path:.", "git+https://git.example.com/rtbuild.git#v0.1.0"] {
            for extra in [
                &[][..],
                &["--bundle"],
                &["--lock", "tests/data/ci/rt.lock.yml"],
                &["--signing-key-secret", "RELEASE_SIGNING_KEY"],
                &["--signing-key-secret", "KEY", "--lava", "--lock", "tests/data/ci/rt.lock.yml"],
                richest,
            ] {
                let mut all = vec!["--format", format, "--rtbuild-from", from];
                if !extra.contains(&"--machines") {
                    all.extend(["--machines", "rb3gen2-core-kit"]);
                }
                all.extend(extra);
                let args = ci_args(&all);
                let text = pipeline_text(&args).expect("pipeline");
                let commands = parsed_commands(&text, "rb3gen2-core-kit", "qcom-distro");
                let names: Vec<&str> = commands
                    .iter()
                    .filter_map(|(_, cli)| cli.as_ref())
                    .map(|cli| command_name(&cli.command))
                    .collect();
                assert!(names.contains(&"image"), "{format} {all:?}: {names:?}");
                if args.lava {
                    assert!(names.contains(&"lava") && names.contains(&"report"), "{names:?}");
                }
                if args.history_db_secret.is_some() {
                    assert!(names.contains(&"history"), "{names:?}");
                }
                jobs_build_the_plan(&args, &text);
            }
        }
    }
}

#[test]
fn a_path_outside_the_repository_is_refused() {
    for (flag, value) in [
        ("--fragment", "/etc/passwd"),
        ("--fragment", "../x.cfg"),
        ("--fragment", "tests/data/ci/missing.cfg"),
        ("--patch", "tests/data/ci"),
        ("--machines-dir", "tests/data/ci/extra.cfg"),
        ("--fragment", "tests/data/ci/extra.cfg;id"),
        ("--project", "$(id).yaml"),
    ] {
        let args = ci_args(&[
            "--format",
            "gitlab",
            "--machines",
            "rb3gen2-core-kit",
            "--rtbuild-from",
            "crates",
            flag,
            value,
        ]);
        let err = pipeline_text(&args).expect_err(value);
        assert_eq!(err.code(), crate::error::Exit::Usage, "{flag} {value}: {err}");
        assert!(err.to_string().contains(flag), "{err}");
    }
}

#[test]
fn argv_helper_keeps_base_flags_unless_replaced() {
    assert_eq!(
        argv(&[&["--format", "github"]]),
        ["--machines", "rb3gen2-core-kit", "--rtbuild-from", "path:.", "--format", "github"]
    );
}

#[test]
fn a_canary_pipeline_runs_doctor_on_the_branch_head() {
    let parse = |extra: &[&str]| {
        let mut all = vec!["--format", "github", "--canary", "--rtbuild-from", "crates"];
        all.extend_from_slice(extra);
        ci_args(&all)
    };
    let text = pipeline_text(&parse(&["--meta-qcom-branch", "master"])).unwrap();
    let yaml: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    assert_eq!(yaml["on"]["schedule"][0]["cron"], "17 5 * * *");
    assert!(
        text.contains("git clone --depth 1 --branch master https://github.com/qualcomm-linux/meta-qcom meta-qcom-head"),
        "{text}"
    );
    assert!(text.contains("doctor --meta-qcom meta-qcom-head"), "{text}");
    let text = pipeline_text(&parse(&["--canary-cron", "0 3 * * 1-5"])).unwrap();
    assert!(text.contains("cron: 0 3 * * 1-5"), "{text}");
    // A cron line that is not one is refused (exit 2), and so is a bad branch.
    for (extra, want) in [
        (
            &["--canary-cron", "daily; rm -rf /"][..],
            "--canary-cron `daily; rm -rf /` is not a cron line",
        ),
        (&["--meta-qcom-branch", "x y"][..], "x y"),
    ] {
        let err = pipeline_text(&parse(extra)).unwrap_err();
        assert_eq!(err.code(), crate::error::Exit::Usage, "{err}");
        assert!(err.to_string().contains(want), "{err}");
    }
    // The build matrix's flags do not mix with it.
    let with_machines = Cli::try_parse_from([
        "rtbuild",
        "ci",
        "--format",
        "github",
        "--canary",
        "--rtbuild-from",
        "crates",
        "--machines",
        "rb3gen2-core-kit",
    ]);
    assert!(with_machines.is_err());
}
