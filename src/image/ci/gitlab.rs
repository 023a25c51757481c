//! The GitLab CI model: a `prepare` job builds rtbuild once, `rtbuild-image` builds each cell
//! (`parallel: matrix`), and each cell's LAVA job `needs` exactly that cell's build.

use std::collections::BTreeMap;

use serde::Serialize;

use super::install::TOOLS_DIR;
use super::script::{LAVA_FILES, Places, Step, out_dir};
use super::{Pipeline, to_yaml};

/// The CI-cache folder for downloads and sstate when the runners keep none.
const CACHE_DIR: &str = ".rtbuild-cache";
const INSTALL_JOB: &str = "rtbuild-binary";
const BUILD_JOB: &str = "rtbuild-image";

#[derive(Debug, Default, Serialize)]
struct Job {
    #[serde(skip_serializing_if = "Option::is_none")]
    extends: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stage: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    image: Option<Image>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel: Option<Parallel>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    variables: BTreeMap<&'static str, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    needs: Vec<Need>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache: Option<Cache>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    before_script: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    script: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    artifacts: Option<Artifacts>,
}

#[derive(Debug, Serialize)]
struct Image {
    name: String,
}

/// `parallel: matrix:` (also the form `needs:` names one cell of a matrix job by).
#[derive(Debug, Clone, Serialize)]
struct Parallel {
    matrix: Vec<BTreeMap<&'static str, Values>>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
enum Values {
    Many(Vec<String>),
    One(String),
}

#[derive(Debug, Serialize)]
struct Need {
    job: &'static str,
    artifacts: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    parallel: Option<Parallel>,
}

#[derive(Debug, Serialize)]
struct Cache {
    key: String,
    paths: Vec<String>,
    when: &'static str,
}

#[derive(Debug, Serialize)]
struct Artifacts {
    when: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    expire_in: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reports: Option<Reports>,
    paths: Vec<String>,
}

#[derive(Debug, Serialize)]
struct Reports {
    junit: String,
}

/// The file: `stages`, the `.rtbuild` template, then the jobs in the order they run.
#[derive(Debug, Serialize)]
struct File {
    stages: Vec<&'static str>,
    #[serde(rename = ".rtbuild")]
    template: Job,
    #[serde(flatten)]
    jobs: serde_yaml::Mapping,
}

fn lines(steps: Vec<Step>) -> Vec<String> {
    steps.into_iter().flat_map(|s| s.lines).collect()
}

fn job_value(job: Job) -> serde_yaml::Value {
    serde_yaml::to_value(job).unwrap_or(serde_yaml::Value::Null)
}

pub(super) fn render(p: &Pipeline) -> String {
    let places = Places::Checkout;
    let mut stages = vec!["prepare", "build"];
    if p.lava.is_some() {
        stages.push("test");
    }
    // Every job but the install job runs the install job's rtbuild.
    let template = Job {
        image: Some(Image { name: p.kas_image.clone() }),
        before_script: vec![
            format!("export PATH=\"$CI_PROJECT_DIR/{TOOLS_DIR}/bin:$PATH\""),
            "rtbuild --version".to_string(),
        ],
        ..Job::default()
    };
    let needs_binary = || Need { job: INSTALL_JOB, artifacts: true, parallel: None };
    let mut jobs = serde_yaml::Mapping::new();
    jobs.insert(
        INSTALL_JOB.into(),
        job_value(Job {
            stage: Some("prepare"),
            image: Some(Image { name: p.kas_image.clone() }),
            script: p.install.script(TOOLS_DIR),
            artifacts: Some(Artifacts {
                when: "on_success",
                expire_in: Some("1 day"),
                reports: None,
                paths: vec![format!("{TOOLS_DIR}/bin/rtbuild")],
            }),
            ..Job::default()
        }),
    );

    let root = match &p.runner_cache {
        Some(dir) => dir.clone(),
        None => format!("$CI_PROJECT_DIR/{CACHE_DIR}"),
    };
    let matrix = BTreeMap::from([
        ("MACHINE", Values::Many(p.machines.clone())),
        ("DISTRO", Values::Many(p.distros.clone())),
    ]);
    let out = out_dir(places);
    jobs.insert(
        BUILD_JOB.into(),
        job_value(Job {
            extends: Some(".rtbuild"),
            stage: Some("build"),
            parallel: Some(Parallel { matrix: vec![matrix] }),
            variables: BTreeMap::from([
                ("DL_DIR", format!("{root}/downloads")),
                ("SSTATE_DIR", format!("{root}/sstate-cache")),
            ]),
            needs: vec![needs_binary()],
            cache: p.runner_cache.is_none().then(|| Cache {
                key: "rtbuild-$MACHINE-$DISTRO".to_string(),
                paths: vec![format!("{CACHE_DIR}/")],
                when: "always",
            }),
            script: lines(p.build_steps(places, "$CI_PIPELINE_ID")),
            artifacts: Some(Artifacts {
                when: "always",
                expire_in: None,
                reports: Some(Reports { junit: format!("{out}/verify.junit.xml") }),
                paths: p.artifacts(places),
            }),
            ..Job::default()
        }),
    );

    if let Some(lava) = &p.lava {
        // One job per cell, each needing only its own cell's build: a board whose build
        // failed does not hold the others back, and no job downloads another's bundle.
        for (machine, distro) in p.cells() {
            let cell = BTreeMap::from([
                ("MACHINE", Values::One(machine.to_string())),
                ("DISTRO", Values::One(distro.to_string())),
            ]);
            jobs.insert(
                format!("rtbuild-lava-{machine}-{distro}").into(),
                job_value(Job {
                    extends: Some(".rtbuild"),
                    stage: Some("test"),
                    timeout: Some(format!("{} minutes", lava.wait_minutes)),
                    variables: BTreeMap::from([
                        ("MACHINE", machine.to_string()),
                        ("DISTRO", distro.to_string()),
                    ]),
                    needs: vec![
                        needs_binary(),
                        Need {
                            job: BUILD_JOB,
                            artifacts: true,
                            parallel: Some(Parallel { matrix: vec![cell] }),
                        },
                    ],
                    script: lines(p.lava_steps(lava, places)),
                    artifacts: Some(Artifacts {
                        when: "always",
                        expire_in: None,
                        reports: Some(Reports { junit: LAVA_FILES[2].to_string() }),
                        paths: LAVA_FILES.iter().map(ToString::to_string).collect(),
                    }),
                    ..Job::default()
                }),
            );
        }
    }
    to_yaml(&File { stages, template, jobs })
}
