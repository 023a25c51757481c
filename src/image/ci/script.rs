//! The jobs' shell steps, the same for both CIs except for where the files go ([`Places`]).
//! `$MACHINE`, `$DISTRO`, `$DL_DIR` and `$SSTATE_DIR` come from the job's variables.

use super::{LavaStage, Pipeline};
use crate::text::quote;

/// `threshold_us=N`: the LAVA job's latency threshold for `$MACHINE` (each machine's own when
/// they differ), set before the job is made and again before its log is judged.
fn threshold_line(lava: &LavaStage) -> String {
    let first = lava
        .thresholds
        .first()
        .map_or(crate::catalog::latency::DEFAULT_THRESHOLD_US as u64, |t| t.1);
    if lava.thresholds.iter().all(|(_, us)| *us == first) {
        return format!("threshold_us={first}");
    }
    let arms: String = lava
        .thresholds
        .iter()
        .map(|(machine, us)| format!(" {}) threshold_us={us} ;;", quote::sh(machine)))
        .collect();
    format!(
        "case \"$MACHINE\" in{arms} *) echo \"error: no LAVA threshold for machine $MACHINE; regenerate the pipeline with rtbuild ci\" >&2; exit 2 ;; esac"
    )
}

/// One step of a job: a name (a GitHub step's name) and its shell lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Step {
    pub name: &'static str,
    pub lines: Vec<String>,
}

/// Where a job's files are. GitLab keeps them in the checkout (`rtbuild image`'s own layout);
/// on GitHub's self-hosted runners they live beside the checkout under `$RTBUILD_WORK`, so no
/// file of the build user's is left where the next `actions/checkout` cleans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Places {
    Checkout,
    BesideCheckout,
}

/// The results folder beside the checkout (GitHub), as the shell and as the workflow see it.
pub(super) const RESULTS_SHELL: &str = "$RTBUILD_WORK/out";

impl Places {
    /// A result file as one shell word (`name` may hold `$MACHINE`/`$DISTRO`).
    pub(super) fn file(self, name: &str) -> String {
        match self {
            Places::Checkout if name.contains('$') => format!("\"{name}\""),
            Places::Checkout => name.to_string(),
            Places::BesideCheckout => format!("\"{RESULTS_SHELL}/{name}\""),
        }
    }

    /// The generated folder of `$MACHINE`, as `rtbuild image --out` and `lock --dir` take it.
    fn out_flag(self, flag: &str) -> Option<String> {
        match self {
            Places::Checkout => None,
            Places::BesideCheckout => Some(format!("{flag} {}", self.file("$MACHINE"))),
        }
    }
}

/// The generated folder of a cell relative to the results folder (`rtbuild/$MACHINE` in the
/// checkout, `$MACHINE` beside it).
pub(super) fn out_dir(places: Places) -> &'static str {
    match places {
        Places::Checkout => "rtbuild/$MACHINE",
        Places::BesideCheckout => "$MACHINE",
    }
}

/// Where the build job leaves the published bundle's URL for the LAVA job (one per cell: two
/// distros of one machine share the machine's folder).
pub(super) const BUNDLE_URL_FILE: &str = "bundle-url-$MACHINE-$DISTRO.txt";
/// `rtbuild image --json`'s output of a cell.
pub(super) const IMAGE_JSON: &str = "rtbuild-$MACHINE-$DISTRO.json";
/// kas's work folder beside the checkout; `rtbuild image` builds in its `build/`.
pub(super) const KAS_WORK: &str = "$KAS_WORK_DIR";
/// The variable `rtbuild history` reads its database URL from (`--db`'s environment).
pub(super) const HISTORY_DB_VAR: &str = "RTBUILD_DB";
/// The bundle's manifest under the results folder, which the LAVA job records with its run.
pub(super) const BUNDLE_MANIFESTS: &str = "$MACHINE/bundle/*.manifest.json";
/// The GitHub step variable that holds the signing key secret's value (GitLab's job has the
/// masked variable itself).
pub(super) const SIGNING_KEY_VAR: &str = "RTBUILD_SIGNING_KEY";
/// The step that packs the bundle again and signs it (`--signing-key-secret`).
pub(super) const SIGN_STEP: &str = "Bundle and sign";
/// The LAVA job's files.
pub(super) const LAVA_FILES: [&str; 4] =
    ["lava-job.yaml", "lava-log.yaml", "lava-junit.xml", "lava-report.html"];

impl Pipeline {
    /// The build job's steps; `run_id` is the shell word naming this pipeline run.
    pub(super) fn build_steps(&self, places: Places, run_id: &str) -> Vec<Step> {
        let out = |name: &str| places.file(&format!("{}/{name}", out_dir(places)));
        let mut image = vec![
            "rtbuild image --plain --json".to_string(),
            "--machine \"$MACHINE\" --distro \"$DISTRO\"".to_string(),
            "--dl-dir \"$DL_DIR\" --sstate-dir \"$SSTATE_DIR\"".to_string(),
        ];
        image.extend(places.out_flag("--out"));
        image.extend(self.plan_flags.iter().map(|f| quote::sh(f)));
        if let Some(lock) = &self.lock {
            image.push(format!("--lock {}", quote::sh(lock)));
        }
        if self.bundling() {
            image.push("--bundle".to_string());
        }
        if self.lava.is_some() {
            // LAVA's qdl deploy gunzips what it downloads: the .tar.gz flavour.
            image.push("--gzip".to_string());
        }
        image.extend(self.cache_flags.iter().map(|f| quote::sh(f)));
        image.push(format!("> {}", places.file(IMAGE_JSON)));
        let mut build = vec!["mkdir -p \"$DL_DIR\" \"$SSTATE_DIR\"".to_string(), image.join(" ")];
        if self.lock.is_none() {
            // Pin what was built: every repo at the commit the build used. The lock can only
            // be made from the build's checkouts, so it comes after `image`; the bundle is then
            // packed again from the same build (the verify result and the resolved kas
            // configuration `image --bundle` left) so that it carries the lock, not the
            // placeholder `generate` wrote, and passes `bundle --check`.
            let mut lock = vec!["rtbuild lock --machine \"$MACHINE\"".to_string()];
            lock.extend(places.out_flag("--dir"));
            lock.extend(self.catalog_flags.iter().map(|f| quote::sh(f)));
            build.push(lock.join(" "));
            if self.bundling() && self.signing_secret.is_none() {
                build.push(self.bundle_line(places, None));
            }
        }
        let mut steps = vec![Step {
            name: if self.bundling() { "Build, verify, bundle" } else { "Build, verify" },
            lines: build,
        }];
        if let Some(secret) = &self.signing_secret {
            steps.push(self.sign_step(places, secret));
        }
        if self.bundling() {
            let signed =
                if self.signing_secret.is_some() { " *.intoto.json *.pub.pem" } else { "" };
            steps.push(Step {
                name: "Checksums of the bundle",
                lines: vec![format!(
                    "(cd {} && sha256sum -- *.{} *.manifest.json{signed} > SHA256SUMS)",
                    out("bundle"),
                    self.archive_extension()
                )],
            });
        }
        if self.lava.is_some() {
            // The LAVA lab downloads the bundle: publish it where the lab can reach it.
            steps.push(Step {
                name: "Publish the bundle for the LAVA lab",
                lines: vec![format!(
                    "bundle=$(ls {}/*.tar.gz) && dest=\"{run_id}/$MACHINE-$DISTRO/$(basename \"$bundle\")\" && curl --fail --silent --show-error --upload-file \"$bundle\" \"$RTBUILD_BUNDLE_UPLOAD_URL/$dest\" && echo \"${{RTBUILD_BUNDLE_BASE_URL:-$RTBUILD_BUNDLE_UPLOAD_URL}}/$dest\" > {}",
                    out("bundle"),
                    places.file(BUNDLE_URL_FILE)
                )],
            });
        }
        steps
    }

    /// `rtbuild bundle` packing the cell's bundle again from its build (after `rtbuild lock`,
    /// or to sign it), in the flavour `image --bundle` made; `key` is the shell word naming the
    /// signing key's file.
    fn bundle_line(&self, places: Places, key: Option<&str>) -> String {
        let mut bundle = vec!["rtbuild bundle --machine \"$MACHINE\"".to_string()];
        bundle.extend(places.out_flag("--dir"));
        bundle.extend(self.catalog_flags.iter().map(|f| quote::sh(f)));
        if self.lava.is_some() {
            // The .tar.gz LAVA downloads, packed again: not a .tar.zst beside a stale .tar.gz.
            bundle.push("--gzip".to_string());
        }
        if let Some(key) = key {
            bundle.push(format!("--signing-key {key}"));
        }
        bundle.join(" ")
    }

    /// `--signing-key-secret`: the bundle packed again and signed. The secret's value (the PEM,
    /// or the PEM base64-encoded on one line, the form GitLab can mask) is written by the
    /// shell's own `printf` (in no process's arguments) to a file of a folder `mktemp -d` made
    /// (mode 0700, outside the checkout and the results), itself mode 0600; the folder goes
    /// when the subshell ends, also when signing fails. The bundle's public key lands beside
    /// the archive (`<stem>.pub.pem`) and is kept with it.
    fn sign_step(&self, places: Places, secret: &str) -> Step {
        let var = match places {
            Places::Checkout => secret,
            Places::BesideCheckout => SIGNING_KEY_VAR,
        };
        let key = "\"$key_dir/signing-key.pem\"";
        Step {
            name: SIGN_STEP,
            lines: vec![
                format!(
                    "test -n \"${var}\" || {{ echo \"error: the CI secret {secret} (the bundle's signing key) is empty or not set; set it in the CI settings\" >&2; exit 2; }}"
                ),
                format!(
                    "(key_dir=\"$(mktemp -d)\" && trap 'rm -rf -- \"$key_dir\"' EXIT && (umask 077 && case \"${var}\" in -----BEGIN*) printf '%s\\n' \"${var}\" ;; *) printf '%s' \"${var}\" | base64 -d ;; esac > {key}) && {})",
                    self.bundle_line(places, Some(key))
                ),
            ],
        }
    }

    /// The bundle archive's extension: `.tar.gz` for a LAVA lab (its qdl deploy gunzips the
    /// download), else `.tar.zst`.
    fn archive_extension(&self) -> &'static str {
        if self.lava.is_some() { "tar.gz" } else { "tar.zst" }
    }

    /// `--meta-qcom-branch BRANCH` of the plan flags, for `rtbuild lava` (the lab's view of the
    /// board follows the branch's lava-test-plans pin).
    fn branch_flags(&self) -> Vec<String> {
        let at = self.plan_flags.iter().position(|f| f == "--meta-qcom-branch");
        at.and_then(|i| self.plan_flags.get(i..i + 2)).map(<[String]>::to_vec).unwrap_or_default()
    }

    /// The LAVA job's steps: make the job, hand lavacli its identity in its own config file
    /// (never on a command line, where `ps` shows it), submit, wait, fetch the log, judge it.
    pub(super) fn lava_steps(&self, lava: &LavaStage, places: Places) -> Vec<Step> {
        let file = |name: &str| places.file(name);
        // Each header's value is read by `rtbuild lava` from the variable named here: GitLab's
        // masked variable itself, GitHub's job variable holding the secret (see `github`).
        let headers: String = lava
            .headers
            .iter()
            .enumerate()
            .map(|(k, (name, secret))| {
                let var = match places {
                    Places::Checkout => secret.as_str(),
                    Places::BesideCheckout => super::HEADER_VARIABLES[k],
                };
                format!(" --qcomflash-header {}", quote::sh(&format!("{name}={var}")))
            })
            .collect();
        let job = format!(
            "rtbuild lava --machine \"$MACHINE\" --distro \"$DISTRO\"{}{headers} --bundle-url \"$(cat {})\" --scenario {} --duration {} --tests {} --threshold-us \"$threshold_us\" --out {}",
            self.catalog_flags
                .iter()
                .chain(&self.cpu_flags)
                .chain(&self.branch_flags())
                .map(|f| format!(" {}", quote::sh(f)))
                .collect::<String>(),
            file(BUNDLE_URL_FILE),
            quote::sh(&lava.scenarios),
            quote::sh(&lava.duration),
            quote::sh(&lava.tests),
            file(LAVA_FILES[0]),
        );
        vec![
            Step {
                name: "Install lavacli",
                lines: vec!["sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends lavacli".to_string()],
            },
            Step { name: "The LAVA job", lines: vec![threshold_line(lava), job] },
            Step {
                name: "lavacli's identity",
                // printf is the shell's own: the token is in no process's arguments.
                lines: vec![
                    "umask 077 && mkdir -p \"$HOME/.config\"".to_string(),
                    "printf 'default:\\n  uri: \"%s\"\\n  username: \"%s\"\\n  token: \"%s\"\\n' \"$LAVA_URL\" \"$LAVA_USER\" \"$LAVA_TOKEN\" > \"$HOME/.config/lavacli.yaml\"".to_string(),
                ],
            },
            Step {
                name: "Flash and measure on the LAVA farm",
                lines: vec![
                    format!("job=$(lavacli jobs submit {}) && echo \"LAVA job $job\"", file(LAVA_FILES[0])),
                    "lavacli jobs wait \"$job\"".to_string(),
                    format!("lavacli jobs logs --raw \"$job\" > {}", file(LAVA_FILES[1])),
                ],
            },
            self.verdict_step(lava, places),
        ]
    }

    /// The verdict and reports of the LAVA log; with a latency history, the run is checked
    /// against the database's earlier runs (`report --history`) and then recorded in it
    /// (`history add`), also when the verdict fails, and the step ends with the verdict.
    fn verdict_step(&self, lava: &LavaStage, places: Places) -> Step {
        let file = |name: &str| places.file(name);
        // Exit 1 on a FAIL verdict (and 2 when the log holds no result): the job fails.
        // The job's threshold, given explicitly: never the one the board's console printed.
        let report = format!(
            "rtbuild report {} --threshold-us \"$threshold_us\" --junit {} --html {}",
            file(LAVA_FILES[1]),
            file(LAVA_FILES[2]),
            file(LAVA_FILES[3])
        );
        let Some(secret) = &lava.history_secret else {
            return Step { name: "Verdict and reports", lines: vec![threshold_line(lava), report] };
        };
        let mut lines = Vec::new();
        if places == Places::Checkout {
            // GitLab: the masked variable, expanded once by this shell (never by GitLab's own
            // variable expansion, which would read a `$` in the password as a variable).
            lines.push(format!("export {HISTORY_DB_VAR}=\"${secret}\""));
        }
        lines.push(threshold_line(lava));
        lines.extend([
            // Without the URL, `history add` would record into a file of this job's container.
            format!(
                "test -n \"${HISTORY_DB_VAR}\" || {{ echo \"error: the CI secret {secret} (the latency history's database URL) is empty or not set; set it in the CI settings\" >&2; exit 2; }}"
            ),
            "verdict=0".to_string(),
            format!("{report} --history \"${HISTORY_DB_VAR}\" || verdict=$?"),
            // `history add` reads the URL from RTBUILD_DB: it is on no command line.
            format!(
                "rtbuild history add {} --threshold-us \"$threshold_us\" --bundle \"$(ls {}/*.manifest.json)\"",
                file(LAVA_FILES[1]),
                places.file(&format!("{}/bundle", out_dir(places)))
            ),
            "exit \"$verdict\"".to_string(),
        ]);
        Step { name: "Verdict, reports and the latency history", lines }
    }

    /// The files each build job keeps, relative to the results folder (or under
    /// `$KAS_WORK_DIR/`, beside the checkout).
    pub(super) fn artifacts(&self, places: Places) -> Vec<String> {
        let out = out_dir(places);
        let log = match places {
            Places::Checkout => format!("{out}/build/rtbuild-image.log"),
            // `rtbuild image` builds in $KAS_WORK_DIR/build when KAS_WORK_DIR is set.
            Places::BesideCheckout => format!("{KAS_WORK}/build/rtbuild-image.log"),
        };
        let mut paths = vec![
            IMAGE_JSON.to_string(),
            log,
            format!("{out}/verify.json"),
            format!("{out}/verify.junit.xml"),
            format!("{out}/$MACHINE-rt.lock.yml"),
        ];
        if self.bundling() {
            paths.extend([
                format!("{out}/bundle/*.{}", self.archive_extension()),
                format!("{out}/bundle/*.manifest.json"),
                format!("{out}/bundle/SHA256SUMS"),
            ]);
        }
        if self.signing_secret.is_some() {
            paths
                .extend([format!("{out}/bundle/*.intoto.json"), format!("{out}/bundle/*.pub.pem")]);
        }
        if self.lava.is_some() {
            paths.push(BUNDLE_URL_FILE.to_string());
        }
        paths
    }
}

#[cfg(test)]
mod threshold_tests {
    use super::*;

    fn stage(thresholds: &[(&str, u64)]) -> LavaStage {
        LavaStage {
            scenarios: "idle".into(),
            duration: "smoke".into(),
            tests: "cyclictest".into(),
            wait_minutes: 1,
            history_secret: None,
            headers: Vec::new(),
            thresholds: thresholds.iter().map(|(m, t)| (m.to_string(), *t)).collect(),
        }
    }

    /// Each machine's LAVA threshold reaches the job and `report` as a number set in the
    /// script (one literal when they agree, the machine's own when they differ), never read
    /// from the board's console.
    #[test]
    fn each_machines_threshold_is_set_in_the_script() {
        assert_eq!(threshold_line(&stage(&[("a", 80), ("b", 80)])), "threshold_us=80");
        assert_eq!(
            threshold_line(&stage(&[("rb3gen2-core-kit", 80), ("iq-9075-evk", 100)])),
            "case \"$MACHINE\" in rb3gen2-core-kit) threshold_us=80 ;; iq-9075-evk) threshold_us=100 ;; *) echo \"error: no LAVA threshold for machine $MACHINE; regenerate the pipeline with rtbuild ci\" >&2; exit 2 ;; esac"
        );
        // The case line runs in a real shell and picks the machine's own.
        let line = threshold_line(&stage(&[("rb3gen2-core-kit", 80), ("iq-9075-evk", 100)]));
        for (machine, want) in [("rb3gen2-core-kit", "80\n"), ("iq-9075-evk", "100\n")] {
            let out = duct::cmd("sh", ["-c", &format!("{line}\necho \"$threshold_us\"")])
                .env("MACHINE", machine)
                .stdout_capture()
                .unchecked()
                .run()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&out.stdout), want);
        }
        let out = duct::cmd("sh", ["-c", line.as_str()])
            .env("MACHINE", "other")
            .stderr_capture()
            .unchecked()
            .run()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
    }
}
