//! CI pipelines that run rtbuild's build matrix on GitLab CI or GitHub Actions, one job per
//! machine × distro, in kas's own container image for the pinned kas version
//! (`ghcr.io/siemens/kas/kas:<PINNED_KAS>`, whose `builder` user runs BitBake: BitBake refuses
//! root). One job per pipeline builds rtbuild (or downloads a binary and checks its SHA-256)
//! and hands it on as an artifact. Downloads and sstate persist between runs (`DL_DIR`/
//! `SSTATE_DIR`: a folder the runners keep, or the CI's own cache), and every job keeps the
//! bundle, the lock, the verify JSON and JUnit, and the build log. With LAVA, each board's
//! test job waits for that board's build only, submits an `rtbuild lava` job with lavacli and
//! fails on a FAIL verdict.
//!
//! A job is a list of [`script::Step`]s (a name and its shell lines); each CI's file is a
//! `derive(Serialize)` model ([`gitlab`], [`github`]) filled from those steps, so adding a
//! step is one entry in [`script`]. The text is deterministic (same input, same bytes). Every
//! value in a script is a catalog machine name, a known distro or an already validated flag
//! value, quoted for the shell that runs it; YAML quoting is serde's.

pub(crate) mod canary;
mod github;
mod gitlab;
mod install;
pub(crate) mod pins;
mod script;

pub(crate) use install::{BadInstall, Install};

use crate::image::kas::PINNED_KAS;

/// kas's container image for the pinned kas version, by digest when [`pins::KAS_IMAGE_DIGEST`]
/// holds one.
pub(crate) fn kas_image() -> String {
    match pins::KAS_IMAGE_DIGEST {
        Some(digest) => format!("ghcr.io/siemens/kas/kas:{PINNED_KAS}@{digest}"),
        None => format!("ghcr.io/siemens/kas/kas:{PINNED_KAS}"),
    }
}

/// The unprivileged user of kas's image (uid 30000, home /builder, password-less sudo).
pub(crate) const BUILD_USER: &str = "builder";

/// The test stage on a LAVA farm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LavaStage {
    /// `--scenario` and `--duration` for `rtbuild lava`, already validated.
    pub scenarios: String,
    pub duration: String,
    /// `--tests` for `rtbuild lava`, already validated.
    pub tests: String,
    /// Minutes the CI job may wait: the LAVA job's own timeout plus queueing time.
    pub wait_minutes: u64,
    /// Each machine's latency threshold, µs (its requirement, else 100): the job's
    /// `--threshold-us`, and the one `report` and `history add` judge its log against (never
    /// the one the board's console prints).
    pub thresholds: Vec<(String, u64)>,
    /// The CI secret (GitHub) or masked variable (GitLab) holding the latency history's
    /// database URL, an environment-variable name already validated: each LAVA job records
    /// its run there and checks it for regressions.
    pub history_secret: Option<String>,
    /// `--qcomflash-header`: each download header's name and the CI secret (GitHub) or masked
    /// variable (GitLab) holding its value, both names already validated. The value reaches
    /// `rtbuild lava --qcomflash-header NAME=VAR` through the job's environment only: GitHub
    /// puts the secret in [`HEADER_VARIABLES`]`[k]`, GitLab's job has the variable itself.
    pub headers: Vec<(String, String)>,
}

/// At most this many `--qcomflash-header` (GitHub's job has one variable for each).
pub(crate) const MAX_HEADERS: usize = 8;

/// The GitHub job's environment variable for header `k` (0-based): the secret's value.
pub(crate) const HEADER_VARIABLES: [&str; MAX_HEADERS] = [
    "RTBUILD_QCOMFLASH_HEADER_1",
    "RTBUILD_QCOMFLASH_HEADER_2",
    "RTBUILD_QCOMFLASH_HEADER_3",
    "RTBUILD_QCOMFLASH_HEADER_4",
    "RTBUILD_QCOMFLASH_HEADER_5",
    "RTBUILD_QCOMFLASH_HEADER_6",
    "RTBUILD_QCOMFLASH_HEADER_7",
    "RTBUILD_QCOMFLASH_HEADER_8",
];

/// Variables a job of the pipeline sets or relies on itself: no header or signing-key secret
/// may be one.
pub(crate) const JOB_VARIABLES: &[&str] = &[
    "key_dir",
    "LAVA_URL",
    "LAVA_USER",
    "LAVA_TOKEN",
    script::HISTORY_DB_VAR,
    "MACHINE",
    "DISTRO",
    "PATH",
    "HOME",
    "RTBUILD_BUNDLE_UPLOAD_URL",
    "RTBUILD_BUNDLE_BASE_URL",
    "RTBUILD_WORK",
    "KAS_WORK_DIR",
    "DL_DIR",
    "SSTATE_DIR",
    "RUN_ID",
    "threshold_us",
    "job",
    "verdict",
    "bundle",
    "dest",
];

/// What the pipeline runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pipeline {
    pub machines: Vec<String>,
    pub distros: Vec<String>,
    /// The plan flags of `rtbuild ci` for every job's `rtbuild image` (values unquoted).
    pub plan_flags: Vec<String>,
    /// `--machines-dir` for every command that looks the machine up.
    pub catalog_flags: Vec<String>,
    /// `--rt-cpus`/`--housekeeping` for `rtbuild lava`.
    pub cpu_flags: Vec<String>,
    /// Validated `--sstate-mirror`/`--hashserv`/`--prserv`/`--premirror` arguments.
    pub cache_flags: Vec<String>,
    /// Persistent folder on the runners for DL_DIR and SSTATE_DIR; `None`: the CI's cache.
    pub runner_cache: Option<String>,
    /// Jobs also bundle (`--bundle`) and keep the bundle.
    pub bundle: bool,
    /// Lock file in the repository the jobs build from (`rtbuild image --lock`).
    pub lock: Option<String>,
    pub install: Install,
    pub lava: Option<LavaStage>,
    /// GitHub: `uses:` names each action by the commit of its release in [`pins::PINS`]
    /// (`--pin-actions`, on by default), not by its moving major tag.
    pub pin_actions: bool,
    /// The jobs' container image: `--kas-image` (checked to carry a digest), else
    /// [`kas_image`].
    pub kas_image: String,
    /// `--signing-key-secret`: the CI secret (GitHub) or masked variable (GitLab) holding the
    /// ed25519 private key each build job signs its bundle with, a name already validated. The
    /// key reaches a file of the job's own temporary folder through the environment only (see
    /// [`script`]); the bundle's public key is kept beside it.
    pub signing_secret: Option<String>,
}

impl Pipeline {
    fn bundling(&self) -> bool {
        self.bundle || self.lava.is_some() || self.signing_secret.is_some()
    }

    /// Every machine × distro cell, in matrix order.
    fn cells(&self) -> Vec<(&str, &str)> {
        self.machines
            .iter()
            .flat_map(|m| self.distros.iter().map(move |d| (m.as_str(), d.as_str())))
            .collect()
    }

    /// The comment at the top of the file.
    fn header(&self, kind: &str) -> String {
        let mut lines = vec![
            format!(
                "Generated by `rtbuild ci --format {kind}`: the rtbuild build matrix, one job per machine"
            ),
            format!(
                "and distro, in kas's container image {} as its build user `{BUILD_USER}`",
                self.kas_image
            ),
            "(BitBake refuses root).".to_string(),
            format!(
                "rtbuild: built once per pipeline by its first job, {}.",
                self.install.describe()
            ),
        ];
        match &self.runner_cache {
            Some(dir) => lines.extend([
                format!(
                    "DL_DIR and SSTATE_DIR live in {dir} on the runner host: mount it into the job"
                ),
                format!("containers at the same path, writable by uid 30000 ({BUILD_USER})."),
            ]),
            None => lines.extend([
                "DL_DIR and SSTATE_DIR are kept by the CI's cache between runs (for large"
                    .to_string(),
                "sstate, prefer --runner-cache DIR or a shared --sstate-mirror).".to_string(),
            ]),
        }
        if self.lava.is_some() {
            lines.extend([
                "LAVA stage, CI variables: LAVA_URL (the server's RPC2 URL), LAVA_USER, LAVA_TOKEN;"
                    .to_string(),
                "RTBUILD_BUNDLE_UPLOAD_URL (HTTP PUT target for bundles) and, when the lab downloads"
                    .to_string(),
                "from elsewhere, RTBUILD_BUNDLE_BASE_URL.".to_string(),
            ]);
        }
        if let Some(name) = &self.signing_secret {
            let (kind, form) = if kind == "github" {
                ("a secret of the deployment environment rtbuild-signing", "the PEM file as it is")
            } else {
                ("a masked, protected CI/CD variable", "the PEM file base64-encoded on one line")
            };
            lines.extend([
                format!("Signing: {name}, {kind}, holds the ed25519 private key"),
                format!(
                    "(`openssl genpkey -algorithm ed25519`; {form}); each build job signs its bundle"
                ),
                "with it (`rtbuild bundle --signing-key`) and keeps the public key beside it."
                    .to_string(),
            ]);
        }
        if let Some(name) = self.lava.as_ref().and_then(|l| l.history_secret.as_deref()) {
            let kind = if kind == "github" {
                "a repository or organisation secret"
            } else {
                "a masked, protected CI/CD variable"
            };
            lines.extend([
                format!("Latency history: {name}, {kind}, holds the database URL"),
                "(postgres://USER:PASSWORD@HOST/DB); each LAVA job records its run there with"
                    .to_string(),
                "`rtbuild history add` and fails on a REGRESSION (`rtbuild report --history`)."
                    .to_string(),
            ]);
        }
        lines.iter().map(|l| format!("# {l}\n")).collect()
    }
}

/// The pipeline as GitLab CI YAML.
pub(crate) fn render_gitlab(p: &Pipeline) -> String {
    format!("{}{}", p.header("gitlab"), gitlab::render(p))
}

/// The pipeline as a GitHub Actions workflow.
pub(crate) fn render_github(p: &Pipeline) -> String {
    format!("{}{}", p.header("github"), github::render(p))
}

/// serde_yaml's text for a model built here (plain strings, maps and lists only).
fn to_yaml(value: &impl serde::Serialize) -> String {
    serde_yaml::to_string(value).unwrap_or_else(|e| format!("# cannot write YAML: {e}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn pipeline() -> Pipeline {
        Pipeline {
            machines: vec!["rb3gen2-core-kit".into(), "iq-9075-evk".into()],
            distros: vec!["qcom-distro".into()],
            plan_flags: vec!["--rt-cpus".into(), "6-7".into()],
            catalog_flags: Vec::new(),
            cpu_flags: vec!["--rt-cpus".into(), "6-7".into()],
            cache_flags: vec![
                "--sstate-mirror".into(),
                "https://sstate.example.com/all".into(),
                "--hashserv".into(),
                "hashserv.example.com:8686".into(),
            ],
            runner_cache: Some("/srv/rtbuild".into()),
            bundle: true,
            lock: Some("locks/rb3.lock.yml".into()),
            install: Install::Crate { version: "0.1.0".into() },
            lava: Some(LavaStage {
                scenarios: "idle,stress".into(),
                duration: "smoke".into(),
                tests: "cyclictest".into(),
                wait_minutes: 200,
                history_secret: None,
                headers: vec![("QLIAuthorization".into(), "QCOM_LAB_TOKEN".into())],
                thresholds: vec![("rb3gen2-core-kit".into(), 100)],
            }),
            pin_actions: true,
            kas_image: kas_image(),
            signing_secret: None,
        }
    }

    #[test]
    fn both_formats_are_valid_yaml_with_one_job_per_cell() {
        for (text, path) in [
            (render_gitlab(&pipeline()), ["rtbuild-image", "parallel", "matrix"]),
            (render_github(&pipeline()), ["jobs", "image", "strategy"]),
        ] {
            let yaml: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
            let node = path.iter().fold(&yaml, |v, k| &v[*k]);
            let node = node.get("matrix").unwrap_or(node);
            let node = if node.is_sequence() { &node[0] } else { node };
            let list = node.get("MACHINE").or_else(|| node.get("machine")).unwrap();
            assert_eq!(list.as_sequence().unwrap().len(), 2, "{text}");
            assert!(text.contains("--sstate-mirror https://sstate.example.com/all --hashserv hashserv.example.com:8686"), "{text}");
            assert!(text.contains("/srv/rtbuild/sstate-cache"), "{text}");
            assert!(
                // A LAVA stage: the .tar.gz flavour its qdl deploy unpacks.
                text.contains(
                    "--rt-cpus 6-7 --lock locks/rb3.lock.yml --bundle --gzip --sstate-mirror"
                ),
                "{text}"
            );
        }
    }

    #[test]
    fn output_is_deterministic() {
        assert_eq!(render_gitlab(&pipeline()), render_gitlab(&pipeline()));
        assert_eq!(render_github(&pipeline()), render_github(&pipeline()));
    }
}
