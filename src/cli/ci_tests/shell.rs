//! The job script reader splits as a shell does, and a value reaches the job as one word.

use super::*;

#[test]
fn the_script_reader_splits_as_a_shell_does() {
    let env = job_env("rb3gen2-core-kit", "nodistro");
    assert_eq!(
        rtbuild_commands(
            "rtbuild --version 2>/dev/null | grep -qx 'rtbuild 0.1.0' || { rtbuild a 'b c' \"$MACHINE-x\" > \"out-$DISTRO.json\"; }",
            &env
        ),
        [vec!["rtbuild", "--version"], vec!["rtbuild", "a", "b c", "rb3gen2-core-kit-x"]]
    );
    assert_eq!(
        rtbuild_commands(
            "job=$(rtbuild x) && rtbuild y --u \"$(cat f-$MACHINE.txt)\" 'it'\\''s'",
            &env
        ),
        [vec!["rtbuild", "y", "--u", SUBSTITUTED, "it's"]]
    );
    assert_eq!(rtbuild_commands("echo rtbuild; (cd x && rtbuild z)", &env), [vec!["rtbuild", "z"]]);
}

#[test]
fn a_flag_value_reaches_the_job_as_one_word_unexpanded() {
    let value = "CONFIG_LOCALVERSION=\"-rt $(id) `id`\"";
    let args = ci_args(&[
        "--format",
        "gitlab",
        "--machines",
        "rb3gen2-core-kit",
        "--rtbuild-from",
        "crates",
        "--config",
        value,
    ]);
    let text = pipeline_text(&args).expect("pipeline");
    let commands = parsed_commands(&text, "rb3gen2-core-kit", "qcom-distro");
    let image = commands.iter().find(|(argv, _)| argv[1] == "image").expect("image");
    let at = image.0.iter().position(|w| w == "--config").expect("--config");
    assert_eq!(image.0[at + 1], value);
}

/// A value quoted for the shell is still pasted into a GitHub `run:` script with its `${{ … }}`
/// expanded first (the probe's `--config 'CONFIG_X="a${{ github.token }}"'`): refused in one
/// line, exit 2, in every value a job's command carries (checked before any plan is made).
#[test]
fn a_workflow_expression_inside_a_quoted_value_is_refused() {
    for extra in [
        &["--config", "CONFIG_X=\"a${{ github.token }}\""][..],
        &["--config", "CONFIG_Y=\"${{secrets.LAB}}\""][..],
    ] {
        let err =
            pipeline_text(&ci_args(&argv(&[extra, &["--format", "github"]]))).expect_err(extra[0]);
        assert_eq!(err.code(), crate::error::Exit::Usage, "{err}");
        let text = err.to_string();
        assert!(text.starts_with(&format!("bad {} `", extra[0])), "{text}");
        assert!(text.contains("GitHub Actions expands"), "{text}");
        assert!(!text.contains('\n'), "one line: {text}");
    }
}
