//! The GitHub Actions model, for self-hosted runners: job `rtbuild` builds rtbuild once,
//! `image` builds each cell, `lava` tests each cell whose build succeeded.
//!
//! Everything the build user writes lives beside the checkout (`$RTBUILD_WORK`, with
//! `KAS_WORK_DIR` in it, as meta-qcom's own workflows keep kas's work folder), so the next
//! `actions/checkout` never meets a file it cannot remove. Workflow expressions (`${{ … }}`)
//! appear only in `env:`, `with:` and `if:`, never inside a `run:` script.

use std::collections::BTreeMap;

use serde::Serialize;

use super::script::{
    BUNDLE_MANIFESTS, BUNDLE_URL_FILE, HISTORY_DB_VAR, KAS_WORK, LAVA_FILES, Places, SIGN_STEP,
    SIGNING_KEY_VAR, Step,
};
use super::{BUILD_USER, Pipeline, to_yaml};

// Each by its major tag here; [`render`] names the commit of the release `pins::PINS` holds
// for it unless `--pin-actions false`.
const CHECKOUT: &str = "actions/checkout@v6";
const CACHE: &str = "actions/cache@v5";
const UPLOAD: &str = "actions/upload-artifact@v6";
const DOWNLOAD: &str = "actions/download-artifact@v7";
/// The deployment environment the LAVA jobs run in: its secrets (`LAVA_TOKEN`, the history
/// database's) are given to those jobs only, and its protection rules apply to them.
const LAVA_ENVIRONMENT: &str = "rtbuild-lava";
/// The deployment environment the build jobs run in when they sign (`--signing-key-secret`):
/// the signing key is its secret, given to those jobs only, under its protection rules.
const SIGNING_ENVIRONMENT: &str = "rtbuild-signing";
/// The artifact that carries the install job's rtbuild to the others.
const BINARY_ARTIFACT: &str = "rtbuild-binary";

#[derive(Debug, Serialize)]
struct Workflow {
    name: &'static str,
    on: On,
    permissions: BTreeMap<&'static str, &'static str>,
    concurrency: Concurrency,
    jobs: Jobs,
}

/// The jobs in the order they run.
#[derive(Debug, Serialize)]
struct Jobs {
    rtbuild: Job,
    image: Job,
    #[serde(skip_serializing_if = "Option::is_none")]
    lava: Option<Job>,
}

#[derive(Debug, Serialize)]
struct On {
    push: Option<()>,
    pull_request: Option<()>,
    workflow_dispatch: Option<()>,
}

#[derive(Debug, Serialize)]
struct Concurrency {
    group: &'static str,
    #[serde(rename = "cancel-in-progress")]
    cancel_in_progress: &'static str,
}

#[derive(Debug, Serialize)]
struct Job {
    name: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    needs: Vec<&'static str>,
    #[serde(rename = "if", skip_serializing_if = "Option::is_none")]
    condition: Option<&'static str>,
    #[serde(rename = "runs-on")]
    runs_on: [&'static str; 2],
    #[serde(rename = "timeout-minutes", skip_serializing_if = "Option::is_none")]
    timeout_minutes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    environment: Option<&'static str>,
    container: Container,
    #[serde(skip_serializing_if = "Option::is_none")]
    strategy: Option<Strategy>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    env: BTreeMap<&'static str, String>,
    steps: Vec<GhStep>,
}

#[derive(Debug, Serialize)]
struct Container {
    image: String,
    options: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    volumes: Vec<String>,
}

#[derive(Debug, Serialize)]
struct Strategy {
    #[serde(rename = "fail-fast")]
    fail_fast: bool,
    matrix: BTreeMap<&'static str, Vec<String>>,
}

#[derive(Debug, Default, Serialize)]
struct GhStep {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(rename = "if", skip_serializing_if = "Option::is_none")]
    condition: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    uses: Option<&'static str>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    with: BTreeMap<&'static str, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    env: BTreeMap<&'static str, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shell: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    run: Option<String>,
}

/// A `with:` value naming a file under the results folder (`$RTBUILD_WORK/out`), with the
/// matrix cell filled in.
fn result_path(name: &str) -> String {
    match name.strip_prefix(KAS_WORK) {
        Some(rest) => format!("${{{{ env.KAS_WORK_DIR }}}}{rest}"),
        None => format!("${{{{ env.RTBUILD_WORK }}}}/out/{name}"),
    }
    .replace("$MACHINE", "${{ matrix.machine }}")
    .replace("$DISTRO", "${{ matrix.distro }}")
}

/// What a cell's build hands its LAVA job: the bundle's URL and, for the latency history,
/// the bundle's manifest (the build identity `history add --bundle` records).
fn handed_to_lava(p: &Pipeline) -> String {
    let history = p.lava.as_ref().is_some_and(|l| l.history_secret.is_some());
    if !history {
        return result_path(BUNDLE_URL_FILE);
    }
    [BUNDLE_URL_FILE, BUNDLE_MANIFESTS].iter().map(|f| format!("{}\n", result_path(f))).collect()
}

fn uses(name: &str, action: &'static str, with: &[(&'static str, String)]) -> GhStep {
    GhStep {
        name: Some(name.to_string()),
        uses: Some(action),
        with: with.iter().cloned().collect(),
        ..GhStep::default()
    }
}

/// A step the container's root runs: only the ones that make or hand over the folders beside
/// the checkout (the runner's, and what the actions, which run as the container's user, fetched).
fn as_root(name: &str, lines: &[String]) -> GhStep {
    GhStep {
        name: Some(name.to_string()),
        shell: Some("bash"),
        run: Some(lines.iter().map(|l| format!("{l}\n")).collect()),
        ..GhStep::default()
    }
}

/// The first line of a build user's step: GitHub's plain `bash` runs the step's script file
/// (`$0`) as the container's root, and this line runs the same file again as kas's build user
/// (BitBake refuses root), the job's environment kept; as the build user it does nothing.
pub(super) fn builder_line() -> String {
    format!(
        "[ \"$(id -u)\" != 0 ] || exec sudo --preserve-env --set-home -u {BUILD_USER} bash -e \"$0\""
    )
}

/// A step the build user runs (plain `bash`, dropping root on its first line), rtbuild on its
/// PATH.
fn as_builder(step: Step) -> GhStep {
    let path = "export PATH=\"$RTBUILD_WORK/tools/bin:$PATH\"".to_string();
    GhStep {
        name: Some(step.name.to_string()),
        shell: Some("bash"),
        run: Some(
            [builder_line(), path]
                .into_iter()
                .chain(step.lines)
                .map(|l| format!("{l}\n"))
                .collect(),
        ),
        ..GhStep::default()
    }
}

/// The folders beside the checkout, made fresh for the build user, and their names in the
/// job's environment (`$GITHUB_ENV`) for the steps after this one.
fn prepare(p: &Pipeline) -> GhStep {
    let mut lines = vec![
        "work=\"$(dirname \"$GITHUB_WORKSPACE\")/rtbuild-work\"".to_string(),
        // Results of an earlier run on this runner go; kas's checkouts and build stay.
        "rm -rf \"$work/out\" \"$work/tools\"".to_string(),
        "mkdir -p \"$work/out\" \"$work/tools/bin\" \"$work/kas\" \"$work/target\"".to_string(),
        format!(
            "chown {BUILD_USER}:{BUILD_USER} \"$work\" \"$work/out\" \"$work/tools\" \"$work/tools/bin\" \"$work/kas\""
        ),
        // cargo's build folder of the install job, kept between runs (a run before rtbuild
        // built as the build user left it root's).
        format!("chown -R {BUILD_USER}:{BUILD_USER} \"$work/target\""),
        "echo \"RTBUILD_WORK=$work\" >> \"$GITHUB_ENV\"".to_string(),
        "echo \"KAS_WORK_DIR=$work/kas\" >> \"$GITHUB_ENV\"".to_string(),
    ];
    if p.runner_cache.is_none() {
        lines.extend([
            "echo \"DL_DIR=$work/cache/downloads\" >> \"$GITHUB_ENV\"".to_string(),
            "echo \"SSTATE_DIR=$work/cache/sstate-cache\" >> \"$GITHUB_ENV\"".to_string(),
        ]);
    }
    as_root("Work folders beside the checkout", &lines)
}

fn checkout() -> GhStep {
    uses("Check out", CHECKOUT, &[("persist-credentials", "false".to_string())])
}

fn download_binary() -> GhStep {
    uses(
        "rtbuild from the rtbuild job",
        DOWNLOAD,
        &[
            ("name", BINARY_ARTIFACT.to_string()),
            ("path", "${{ env.RTBUILD_WORK }}/tools/bin".to_string()),
        ],
    )
}

/// Hands what the root steps fetched to the build user.
fn hand_over(p: &Pipeline, cache: bool) -> GhStep {
    let mut lines = vec!["chmod 0755 \"$RTBUILD_WORK/tools/bin/rtbuild\"".to_string()];
    if cache && p.runner_cache.is_none() {
        lines.push("mkdir -p \"$DL_DIR\" \"$SSTATE_DIR\"".to_string());
        lines.push(format!("chown -R {BUILD_USER}:{BUILD_USER} \"$RTBUILD_WORK/cache\""));
    }
    as_root("Hand the downloads to the build user", &lines)
}

fn job(
    p: &Pipeline,
    name: &'static str,
    needs: Vec<&'static str>,
    matrix: bool,
    steps: Vec<GhStep>,
) -> Job {
    let mut env = BTreeMap::new();
    if matrix {
        env.insert("MACHINE", "${{ matrix.machine }}".to_string());
        env.insert("DISTRO", "${{ matrix.distro }}".to_string());
    }
    Job {
        name,
        needs,
        condition: None,
        runs_on: ["self-hosted", "linux"],
        timeout_minutes: None,
        environment: None,
        container: Container {
            image: p.kas_image.clone(),
            // Root for the actions (they write the runner's workspace and `$GITHUB_ENV`) and
            // for the two steps that make and hand over the work folders; every other step
            // drops to the build user on its first line ([`builder_line`]).
            options: "--user root",
            volumes: p.runner_cache.iter().map(|dir| format!("{dir}:{dir}")).collect(),
        },
        strategy: matrix.then(|| Strategy {
            fail_fast: false,
            matrix: BTreeMap::from([
                ("machine", p.machines.clone()),
                ("distro", p.distros.clone()),
            ]),
        }),
        env,
        steps,
    }
}

pub(super) fn render(p: &Pipeline) -> String {
    let places = Places::BesideCheckout;

    let mut install = vec![
        "cd \"$GITHUB_WORKSPACE\"".to_string(),
        "export CARGO_TARGET_DIR=\"$RTBUILD_WORK/target\"".to_string(),
    ];
    install.extend(p.install.script("\"$RTBUILD_WORK/tools\""));
    let rtbuild = job(
        p,
        "rtbuild",
        Vec::new(),
        false,
        vec![
            checkout(),
            prepare(p),
            as_builder(Step { name: "Build or fetch rtbuild", lines: install }),
            uses(
                "Hand rtbuild to the other jobs",
                UPLOAD,
                &[
                    ("name", BINARY_ARTIFACT.to_string()),
                    ("path", "${{ env.RTBUILD_WORK }}/tools/bin/rtbuild".to_string()),
                    ("retention-days", "1".to_string()),
                ],
            ),
        ],
    );

    let mut env_dirs = BTreeMap::new();
    if let Some(dir) = &p.runner_cache {
        env_dirs.insert("DL_DIR", format!("{dir}/downloads"));
        env_dirs.insert("SSTATE_DIR", format!("{dir}/sstate-cache"));
    }
    let mut steps = vec![checkout(), prepare(p), download_binary()];
    if p.runner_cache.is_none() {
        steps.push(uses(
            "Downloads and sstate from earlier runs",
            CACHE,
            &[
                ("path", "${{ env.RTBUILD_WORK }}/cache".to_string()),
                (
                    "key",
                    "rtbuild-${{ matrix.machine }}-${{ matrix.distro }}-${{ github.run_id }}"
                        .to_string(),
                ),
                ("restore-keys", "rtbuild-${{ matrix.machine }}-${{ matrix.distro }}-".to_string()),
            ],
        ));
    }
    steps.push(hand_over(p, true));
    let mut build_env = BTreeMap::new();
    if p.lava.is_some() {
        build_env.insert("RTBUILD_BUNDLE_UPLOAD_URL", "${{ vars.RTBUILD_BUNDLE_UPLOAD_URL }}");
        build_env.insert("RTBUILD_BUNDLE_BASE_URL", "${{ vars.RTBUILD_BUNDLE_BASE_URL }}");
        build_env.insert("RUN_ID", "${{ github.run_id }}-${{ github.run_attempt }}");
    }
    for step in p.build_steps(places, "$RUN_ID") {
        let signs = step.name == SIGN_STEP;
        let mut step = as_builder(step);
        if let (true, Some(secret)) = (signs, &p.signing_secret) {
            // The signing key reaches this one step only, through its environment.
            step.env.insert(SIGNING_KEY_VAR, format!("${{{{ secrets.{secret} }}}}"));
        }
        steps.push(step);
    }
    let paths: String =
        p.artifacts(places).iter().map(|a| format!("{}\n", result_path(a))).collect();
    steps.push(GhStep {
        condition: Some("always()"),
        ..uses(
            "Keep the results",
            UPLOAD,
            &[
                ("name", "rtbuild-${{ matrix.machine }}-${{ matrix.distro }}".to_string()),
                ("path", paths),
            ],
        )
    });
    if p.lava.is_some() {
        // Only a successful build hands its bundle to the LAVA leg of its cell.
        steps.push(GhStep {
            condition: Some("success()"),
            ..uses(
                "Hand the bundle to this cell's LAVA job",
                UPLOAD,
                &[
                    ("name", "bundle-${{ matrix.machine }}-${{ matrix.distro }}".to_string()),
                    ("path", handed_to_lava(p)),
                ],
            )
        });
    }
    // Plain job names: GitHub shows each matrix cell's values after them.
    let mut image = job(p, "image", vec!["rtbuild"], true, steps);
    if p.signing_secret.is_some() {
        image.environment = Some(SIGNING_ENVIRONMENT);
    }
    image.env.extend(env_dirs.clone());
    image.env.extend(build_env.into_iter().map(|(k, v)| (k, v.to_string())));
    let lava = p.lava.as_ref().map(|lava| {
        let mut steps = vec![
            checkout(),
            prepare(p),
            download_binary(),
            uses(
                "This cell's bundle (absent when its build failed)",
                DOWNLOAD,
                &[
                    ("name", "bundle-${{ matrix.machine }}-${{ matrix.distro }}".to_string()),
                    ("path", "${{ env.RTBUILD_WORK }}/out".to_string()),
                ],
            ),
            hand_over(p, false),
        ];
        steps.extend(p.lava_steps(lava, places).into_iter().map(as_builder));
        let paths: String = LAVA_FILES.iter().map(|f| format!("{}\n", result_path(f))).collect();
        steps.push(GhStep {
            condition: Some("always()"),
            ..uses(
                "Keep the LAVA job, log and reports",
                UPLOAD,
                &[
                    ("name", "lava-${{ matrix.machine }}-${{ matrix.distro }}".to_string()),
                    ("path", paths),
                ],
            )
        });
        let mut job = job(p, "lava", vec!["rtbuild", "image"], true, steps);
        job.environment = Some(LAVA_ENVIRONMENT);
        // Each leg runs when its own cell built: one failed board does not skip the others.
        job.condition = Some("${{ !cancelled() }}");
        job.timeout_minutes = Some(lava.wait_minutes);
        job.env.insert("LAVA_URL", "${{ vars.LAVA_URL }}".to_string());
        job.env.insert("LAVA_USER", "${{ vars.LAVA_USER }}".to_string());
        job.env.insert("LAVA_TOKEN", "${{ secrets.LAVA_TOKEN }}".to_string());
        if let Some(secret) = &lava.history_secret {
            job.env.insert(HISTORY_DB_VAR, format!("${{{{ secrets.{secret} }}}}"));
        }
        // Each download header's secret, for `rtbuild lava --qcomflash-header NAME=VAR`.
        for ((_, secret), var) in lava.headers.iter().zip(super::HEADER_VARIABLES) {
            job.env.insert(var, format!("${{{{ secrets.{secret} }}}}"));
        }
        job
    });

    let text = to_yaml(&Workflow {
        name: "rtbuild",
        on: On { push: None, pull_request: None, workflow_dispatch: None },
        permissions: BTreeMap::from([("contents", "read")]),
        concurrency: Concurrency {
            group: "rtbuild-${{ github.workflow }}-${{ github.ref }}",
            cancel_in_progress: "${{ github.event_name == 'pull_request' }}",
        },
        jobs: Jobs { rtbuild, image, lava },
    });
    pin(&text, p.pin_actions)
}

/// Each `uses: ACTION@MAJOR` line of `text` naming the commit of the release [`pins::PINS`]
/// holds for it, the release in a comment (`# v6.1.0`, which Dependabot and Renovate read);
/// `text` as it is when `pinned` is off.
pub(super) fn pin(text: &str, pinned: bool) -> String {
    if !pinned {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        let pinned_line = body.split_once("uses: ").and_then(|(indent, reference)| {
            let (action, major) = reference.split_once('@')?;
            let pin = super::pins::pin(action).filter(|p| p.major == major)?;
            Some(format!("{indent}uses: {action}@{} # {}", pin.commit, pin.release))
        });
        match pinned_line {
            Some(l) => {
                out.push_str(&l);
                if line.ends_with('\n') {
                    out.push('\n');
                }
            }
            None => out.push_str(line),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn pinning_names_the_commit_and_its_release_and_leaves_other_lines() {
        let text = "      uses: actions/checkout@v6\n      uses: actions/cache@v4\n      run: uses: x@v1\n";
        assert_eq!(
            super::pin(text, true),
            "      uses: actions/checkout@d23441a48e516b6c34aea4fa41551a30e30af803 # v6.1.0\n\
             \x20     uses: actions/cache@v4\n      run: uses: x@v1\n"
        );
        assert_eq!(super::pin(text, false), text);
    }
}
