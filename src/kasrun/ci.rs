//! CI pipelines that run rtbuild's build matrix on GitLab CI or GitHub Actions, one job per
//! machine × distro, in kas's own container image for the pinned kas version
//! (`ghcr.io/siemens/kas/kas:<PINNED_KAS>`, whose `builder` user runs BitBake: BitBake refuses
//! root). Downloads and sstate persist between runs (`DL_DIR`/`SSTATE_DIR`: a folder the runners
//! keep, or the CI's own cache), rtbuild is installed on the runner in a stated way, and every
//! job keeps the bundle, the lock, the verify JSON and JUnit, and the build log. With LAVA, a
//! test stage submits `rtbuild lava` jobs with lavacli and fails on a FAIL verdict.
//!
//! The text is deterministic (same input, same bytes). Every value written is a catalog machine
//! name, a known distro or an already validated flag value, and each is quoted twice: for the
//! shell that runs the job script and as a YAML string.

use crate::quote;

use super::kas::PINNED_KAS;

/// kas's container image for the pinned kas version.
pub(crate) fn kas_image() -> String {
    format!("ghcr.io/siemens/kas/kas:{PINNED_KAS}")
}

/// The unprivileged user of kas's image (uid 30000, home /builder, password-less sudo).
pub(crate) const BUILD_USER: &str = "builder";

/// Puts where [`Install`] leaves rtbuild (and cargo) on PATH.
const PATH_LINE: &str = "export PATH=\"$HOME/.local/bin:$HOME/.cargo/bin:$PATH\"";

/// How rtbuild gets onto the runner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Install {
    /// `cargo install --locked rtbuild@=VERSION` (crates.io, once rtbuild is published there),
    /// with a minimal rustup toolchain.
    Crate { version: String },
    /// `cargo install --locked --path DIR`: rtbuild's source inside the checked-out repository
    /// (a git submodule or a vendored copy), so the pipeline needs nothing from outside.
    Path { dir: String },
    /// `cargo install --locked --git URL [--rev REV] rtbuild`.
    Git { url: String, rev: Option<String> },
    /// A prebuilt binary downloaded with curl (https:// or file://).
    Binary { url: String },
}

/// A bad `--rtbuild-from` value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "bad --rtbuild-from `{0}`; pass path:DIR (rtbuild's source in the repository, cargo install --path), git+https://HOST/REPO[#REV] (cargo install --git), the https:// or file:// URL of an rtbuild binary, or `crates` (crates.io)"
)]
pub(crate) struct BadInstall(pub String);

fn url_safe(text: &str) -> bool {
    !text.is_empty()
        && text.chars().all(|c| c.is_ascii_alphanumeric() || "-._~:/?[]@!&()*+,;=%".contains(c))
}

/// A folder inside the checkout: relative, no `..`, plain characters only.
fn relative_dir_ok(dir: &str) -> bool {
    !dir.is_empty()
        && !dir.starts_with('/')
        && dir.chars().all(|c| c.is_ascii_alphanumeric() || "-._/".contains(c))
        && dir.split('/').all(|part| part != "..")
}

impl Install {
    pub(crate) fn parse(text: &str, version: &str) -> Result<Install, BadInstall> {
        let bad = || BadInstall(text.chars().take(80).collect());
        if text == "crates" {
            return Ok(Install::Crate { version: version.to_string() });
        }
        if let Some(dir) = text.strip_prefix("path:") {
            return if relative_dir_ok(dir) {
                Ok(Install::Path { dir: dir.to_string() })
            } else {
                Err(bad())
            };
        }
        if let Some(rest) = text.strip_prefix("git+") {
            let (url, rev) = match rest.split_once('#') {
                Some((url, rev)) => (url, Some(rev)),
                None => (rest, None),
            };
            let scheme_ok = url.starts_with("https://") || url.starts_with("http://");
            let rev_ok = rev.is_none_or(|r| {
                !r.is_empty() && r.chars().all(|c| c.is_ascii_alphanumeric() || "-._/".contains(c))
            });
            if !scheme_ok || !url_safe(url) || url.len() <= "https://".len() || !rev_ok {
                return Err(bad());
            }
            return Ok(Install::Git { url: url.to_string(), rev: rev.map(str::to_string) });
        }
        let scheme_ok = ["https://", "http://", "file:///"].iter().any(|s| text.starts_with(s));
        if !scheme_ok || !url_safe(text) || text.ends_with('/') {
            return Err(bad());
        }
        Ok(Install::Binary { url: text.to_string() })
    }

    /// Shell lines that leave `rtbuild` on PATH (in `$HOME/.local/bin` or `$CARGO_HOME/bin`);
    /// they skip the work when the right rtbuild is already there (a persistent home).
    pub(crate) fn script(&self) -> Vec<String> {
        let path = PATH_LINE;
        let rustup = "command -v cargo >/dev/null || curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --no-modify-path";
        match self {
            Install::Crate { version } => vec![
                path.to_string(),
                format!(
                    "rtbuild --version 2>/dev/null | grep -qx {} || {{ {rustup} && cargo install --locked rtbuild --version {}; }}",
                    quote::sh(&format!("rtbuild {version}")),
                    quote::sh(&format!("={version}"))
                ),
            ],
            Install::Path { dir } => vec![
                path.to_string(),
                format!("{rustup} && cargo install --locked --path {}", quote::sh(dir)),
            ],
            Install::Git { url, rev } => {
                let rev = rev.as_ref().map_or(String::new(), |r| format!(" --rev {}", quote::sh(r)));
                vec![
                    path.to_string(),
                    format!(
                        "{rustup} && cargo install --locked --git {}{rev} rtbuild",
                        quote::sh(url)
                    ),
                ]
            }
            Install::Binary { url } => vec![
                path.to_string(),
                "mkdir -p \"$HOME/.local/bin\"".to_string(),
                format!(
                    "curl --fail --silent --show-error --location -o \"$HOME/.local/bin/rtbuild\" {}",
                    quote::sh(url)
                ),
                "chmod 0755 \"$HOME/.local/bin/rtbuild\"".to_string(),
            ],
        }
        .into_iter()
        .chain(std::iter::once("rtbuild --version".to_string()))
        .collect()
    }

    fn describe(&self) -> String {
        match self {
            Install::Crate { version } => {
                format!("`cargo install --locked rtbuild --version ={version}` (rustup if needed)")
            }
            Install::Path { dir } => {
                format!(
                    "`cargo install --locked --path {dir}` from this repository (rustup if needed)"
                )
            }
            Install::Git { url, rev } => format!(
                "`cargo install --locked --git {url}{}` (rustup if needed)",
                rev.as_ref().map_or(String::new(), |r| format!(" --rev {r}"))
            ),
            Install::Binary { url } => format!("the binary {url}, downloaded with curl"),
        }
    }
}

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
}

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
}

/// Where a cell's files are, relative to the checkout (`rtbuild image`'s default layout).
const OUT: &str = "rtbuild/$MACHINE";
/// Where the build job leaves the published bundle's URL for the LAVA job (one per cell: two
/// distros of one machine share `rtbuild/<machine>/`).
const BUNDLE_URL_FILE: &str = "bundle-url-$MACHINE-$DISTRO.txt";
/// The CI-cache folder for downloads and sstate when the runners keep none.
const CACHE_DIR: &str = ".rtbuild-cache";

/// A YAML double-quoted scalar (JSON strings are valid YAML).
fn y(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_string())
}

fn list(items: &[String]) -> String {
    format!("[{}]", items.iter().map(|i| y(i)).collect::<Vec<_>>().join(", "))
}

impl Pipeline {
    fn bundling(&self) -> bool {
        self.bundle || self.lava.is_some()
    }

    /// The build job's commands; `$MACHINE`, `$DISTRO`, `$DL_DIR` and `$SSTATE_DIR` come from
    /// the job's variables.
    fn build_script(&self, pipeline_id: &str) -> Vec<String> {
        let mut image = vec![
            "rtbuild image --plain --json".to_string(),
            "--machine \"$MACHINE\" --distro \"$DISTRO\"".to_string(),
            "--dl-dir \"$DL_DIR\" --sstate-dir \"$SSTATE_DIR\"".to_string(),
        ];
        image.extend(self.plan_flags.iter().map(|f| quote::sh(f)));
        if let Some(lock) = &self.lock {
            image.push(format!("--lock {}", quote::sh(lock)));
        }
        if self.bundling() {
            image.push("--bundle".to_string());
        }
        image.extend(self.cache_flags.iter().map(|f| quote::sh(f)));
        image.push("> \"rtbuild-$MACHINE-$DISTRO.json\"".to_string());
        let mut script = vec!["mkdir -p \"$DL_DIR\" \"$SSTATE_DIR\"".to_string(), image.join(" ")];
        if self.lock.is_none() {
            // Pin what was built: every repo at the commit the build used.
            let mut lock = vec!["rtbuild lock --machine \"$MACHINE\"".to_string()];
            lock.extend(self.catalog_flags.iter().map(|f| quote::sh(f)));
            script.push(lock.join(" "));
        }
        if self.bundling() {
            script.push(format!(
                "(cd {OUT}/bundle && sha256sum -- *.tar.zst *.manifest.json > SHA256SUMS)"
            ));
        }
        if self.lava.is_some() {
            // The LAVA lab downloads the bundle: publish it where the lab can reach it.
            script.push(format!(
                "bundle=$(ls {OUT}/bundle/*.tar.zst) && dest=\"{pipeline_id}/$MACHINE-$DISTRO/$(basename \"$bundle\")\" && curl --fail --silent --show-error --upload-file \"$bundle\" \"$RTBUILD_BUNDLE_UPLOAD_URL/$dest\" && echo \"${{RTBUILD_BUNDLE_BASE_URL:-$RTBUILD_BUNDLE_UPLOAD_URL}}/$dest\" > {BUNDLE_URL_FILE}"
            ));
        }
        script
    }

    /// The LAVA job's commands: make the job, submit it, wait, fetch the log, judge it.
    fn lava_script(&self, lava: &LavaStage) -> Vec<String> {
        vec![
            "sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends lavacli".to_string(),
            format!(
                "rtbuild lava --machine \"$MACHINE\" --distro \"$DISTRO\"{} --bundle-url \"$(cat {BUNDLE_URL_FILE})\" --scenario {} --duration {} --tests {} --out lava-job.yaml",
                self.catalog_flags
                    .iter()
                    .chain(&self.cpu_flags)
                    .map(|f| format!(" {}", quote::sh(f)))
                    .collect::<String>(),
                quote::sh(&lava.scenarios),
                quote::sh(&lava.duration),
                quote::sh(&lava.tests)
            ),
            "lavacli identities add --uri \"$LAVA_URL\" --username \"$LAVA_USER\" --token \"$LAVA_TOKEN\" default".to_string(),
            "job=$(lavacli jobs submit lava-job.yaml) && echo \"LAVA job $job\"".to_string(),
            "lavacli jobs wait \"$job\"".to_string(),
            "lavacli jobs logs --raw \"$job\" > lava-log.yaml".to_string(),
            // Exit 1 on a FAIL verdict (and 2 when the log holds no result): the pipeline fails.
            "rtbuild report lava-log.yaml --junit lava-junit.xml --html lava-report.html".to_string(),
        ]
    }

    /// The files each build job keeps.
    fn artifacts(&self) -> Vec<String> {
        let mut paths = vec![
            "rtbuild-$MACHINE-$DISTRO.json".to_string(),
            format!("{OUT}/build/rtbuild-image.log"),
            format!("{OUT}/verify.json"),
            format!("{OUT}/verify.junit.xml"),
            format!("{OUT}/$MACHINE-rt.lock.yml"),
        ];
        if self.bundling() {
            paths.extend([
                format!("{OUT}/bundle/*.tar.zst"),
                format!("{OUT}/bundle/*.manifest.json"),
                format!("{OUT}/bundle/SHA256SUMS"),
            ]);
        }
        if self.lava.is_some() {
            paths.push(BUNDLE_URL_FILE.to_string());
        }
        paths
    }

    fn header(&self, kind: &str) -> String {
        let mut t = format!(
            "# Generated by `rtbuild ci --format {kind}`: the rtbuild build matrix, one job per machine\n\
             # and distro, in kas's container image {} as its build user `{BUILD_USER}`\n\
             # (BitBake refuses root).\n\
             # rtbuild on the runner: {}.\n",
            kas_image(),
            self.install.describe()
        );
        match &self.runner_cache {
            Some(dir) => t.push_str(&format!(
                "# DL_DIR and SSTATE_DIR live in {dir} on the runner host: mount it into the job\n\
                 # containers at the same path, writable by uid 30000 ({BUILD_USER}).\n"
            )),
            None => t.push_str(&format!(
                "# DL_DIR and SSTATE_DIR live in {CACHE_DIR}/, kept by the CI's cache between runs (for\n\
                 # large sstate, prefer --runner-cache DIR or a shared --sstate-mirror).\n"
            )),
        }
        if self.lava.is_some() {
            t.push_str(
                "# LAVA stage, CI variables: LAVA_URL (the server's RPC2 URL), LAVA_USER, LAVA_TOKEN;\n\
                 # RTBUILD_BUNDLE_UPLOAD_URL (HTTP PUT target for bundles) and, when the lab downloads\n\
                 # from elsewhere, RTBUILD_BUNDLE_BASE_URL.\n",
            );
        }
        t
    }
}

pub(crate) fn render_gitlab(p: &Pipeline) -> String {
    let mut t = p.header("gitlab");
    t.push_str("stages:\n  - build\n");
    if p.lava.is_some() {
        t.push_str("  - test\n");
    }
    t.push_str("\n.rtbuild:\n");
    t.push_str(&format!("  image:\n    name: {}\n", y(&kas_image())));
    t.push_str("  parallel:\n    matrix:\n");
    t.push_str(&format!("      - MACHINE: {}\n", list(&p.machines)));
    t.push_str(&format!("        DISTRO: {}\n", list(&p.distros)));
    t.push_str("  before_script:\n");
    for line in p.install.script() {
        t.push_str(&format!("    - {}\n", y(&line)));
    }
    t.push('\n');

    t.push_str("rtbuild-image:\n  extends: .rtbuild\n  stage: build\n  variables:\n");
    push_cache_dirs(&mut t, "    ", p.runner_cache.as_deref(), "$CI_PROJECT_DIR");
    if p.runner_cache.is_none() {
        t.push_str("  cache:\n");
        t.push_str(&format!("    key: {}\n", y("rtbuild-$MACHINE-$DISTRO")));
        t.push_str(&format!("    paths:\n      - {}\n", y(&format!("{CACHE_DIR}/"))));
        t.push_str("    when: always\n");
    }
    t.push_str("  script:\n");
    for line in p.build_script("$CI_PIPELINE_ID") {
        t.push_str(&format!("    - {}\n", y(&line)));
    }
    t.push_str("  artifacts:\n    when: always\n    reports:\n");
    t.push_str(&format!("      junit: {}\n", y(&format!("{OUT}/verify.junit.xml"))));
    t.push_str("    paths:\n");
    for path in p.artifacts() {
        t.push_str(&format!("      - {}\n", y(&path)));
    }

    if let Some(lava) = &p.lava {
        t.push_str("\nrtbuild-lava:\n  extends: .rtbuild\n  stage: test\n");
        t.push_str(&format!("  timeout: {}\n", y(&format!("{} minutes", lava.wait_minutes))));
        // Every build's artifacts: each cell's files have their own names.
        t.push_str("  needs:\n    - job: rtbuild-image\n      artifacts: true\n");
        t.push_str("  script:\n");
        for line in p.lava_script(lava) {
            t.push_str(&format!("    - {}\n", y(&line)));
        }
        t.push_str("  artifacts:\n    when: always\n    reports:\n");
        t.push_str(&format!("      junit: {}\n", y("lava-junit.xml")));
        t.push_str("    paths:\n");
        for path in ["lava-job.yaml", "lava-log.yaml", "lava-junit.xml", "lava-report.html"] {
            t.push_str(&format!("      - {}\n", y(path)));
        }
    }
    t
}

/// The `DL_DIR` and `SSTATE_DIR` variables, indented by `indent`: under the runner's own cache
/// folder when one is given, else under the CI's cached `CACHE_DIR` in `workspace`.
fn push_cache_dirs(t: &mut String, indent: &str, runner_cache: Option<&str>, workspace: &str) {
    let root = match runner_cache {
        Some(dir) => dir.to_string(),
        None => format!("{workspace}/{CACHE_DIR}"),
    };
    t.push_str(&format!("{indent}DL_DIR: {}\n", y(&format!("{root}/downloads"))));
    t.push_str(&format!("{indent}SSTATE_DIR: {}\n", y(&format!("{root}/sstate-cache"))));
}

pub(crate) fn render_github(p: &Pipeline) -> String {
    let mut t = p.header("github");
    t.push_str("name: rtbuild\n\non:\n  push:\n  workflow_dispatch:\n\n");
    t.push_str("jobs:\n  image:\n    runs-on: [self-hosted, linux]\n");
    push_container(&mut t, p);
    push_matrix(&mut t, p);
    t.push_str(
        "    env:\n      MACHINE: ${{ matrix.machine }}\n      DISTRO: ${{ matrix.distro }}\n",
    );
    push_cache_dirs(&mut t, "      ", p.runner_cache.as_deref(), "${{ github.workspace }}");
    if p.lava.is_some() {
        t.push_str("      RTBUILD_BUNDLE_UPLOAD_URL: ${{ vars.RTBUILD_BUNDLE_UPLOAD_URL }}\n");
        t.push_str("      RTBUILD_BUNDLE_BASE_URL: ${{ vars.RTBUILD_BUNDLE_BASE_URL }}\n");
    }
    let mut fetch = String::new();
    if p.runner_cache.is_none() {
        fetch.push_str("      - name: Downloads and sstate from earlier runs\n");
        fetch.push_str("        uses: actions/cache@v4\n        with:\n");
        fetch.push_str(&format!("          path: {CACHE_DIR}\n"));
        fetch.push_str("          key: rtbuild-${{ matrix.machine }}-${{ matrix.distro }}-${{ github.run_id }}\n");
        fetch.push_str(
            "          restore-keys: rtbuild-${{ matrix.machine }}-${{ matrix.distro }}-\n",
        );
    }
    push_steps_start(&mut t, p, &fetch);
    t.push_str(&format!(
        "      - name: Build, verify{}\n        run: |\n",
        if p.bundling() { ", bundle" } else { "" }
    ));
    t.push_str(&format!("          {PATH_LINE}\n"));
    for line in p.build_script("${{ github.run_id }}-${{ github.run_attempt }}") {
        t.push_str(&format!("          {line}\n"));
    }
    t.push_str("      - name: Keep the results\n        if: always()\n");
    t.push_str("        uses: actions/upload-artifact@v4\n        with:\n");
    t.push_str("          name: rtbuild-${{ matrix.machine }}-${{ matrix.distro }}\n");
    t.push_str("          path: |\n");
    for path in p.artifacts() {
        t.push_str(&format!(
            "            {}\n",
            path.replace("$MACHINE", "${{ matrix.machine }}")
                .replace("$DISTRO", "${{ matrix.distro }}")
        ));
    }

    if let Some(lava) = &p.lava {
        t.push_str("\n  lava:\n    needs: image\n    runs-on: [self-hosted, linux]\n");
        t.push_str(&format!("    timeout-minutes: {}\n", lava.wait_minutes));
        push_container(&mut t, p);
        push_matrix(&mut t, p);
        t.push_str(
            "    env:\n      MACHINE: ${{ matrix.machine }}\n      DISTRO: ${{ matrix.distro }}\n",
        );
        t.push_str(
            "      LAVA_URL: ${{ vars.LAVA_URL }}\n      LAVA_USER: ${{ vars.LAVA_USER }}\n",
        );
        t.push_str("      LAVA_TOKEN: ${{ secrets.LAVA_TOKEN }}\n");
        let fetch = "      - name: The build's results\n        uses: actions/download-artifact@v4\n        with:\n          name: rtbuild-${{ matrix.machine }}-${{ matrix.distro }}\n          path: .\n";
        push_steps_start(&mut t, p, fetch);
        t.push_str("      - name: Flash and measure on the LAVA farm\n        run: |\n");
        t.push_str(&format!("          {PATH_LINE}\n"));
        for line in p.lava_script(lava) {
            t.push_str(&format!("          {line}\n"));
        }
        t.push_str("      - name: Keep the LAVA job, log and reports\n        if: always()\n");
        t.push_str("        uses: actions/upload-artifact@v4\n        with:\n");
        t.push_str("          name: lava-${{ matrix.machine }}-${{ matrix.distro }}\n");
        t.push_str("          path: |\n            lava-job.yaml\n            lava-log.yaml\n            lava-junit.xml\n            lava-report.html\n");
    }
    t
}

/// kas's image, started as root only so that the first step can hand the workspace (owned by
/// the runner's user) to `builder`; every rtbuild step then runs as `builder`.
fn push_container(t: &mut String, p: &Pipeline) {
    t.push_str(&format!(
        "    container:\n      image: {}\n      options: --user root\n",
        y(&kas_image())
    ));
    if let Some(dir) = &p.runner_cache {
        t.push_str(&format!("      volumes:\n        - {}\n", y(&format!("{dir}:{dir}"))));
    }
    t.push_str(&format!(
        "    defaults:\n      run:\n        shell: sudo --preserve-env --set-home -u {BUILD_USER} bash -e {{0}}\n"
    ));
}

fn push_matrix(t: &mut String, p: &Pipeline) {
    t.push_str("    strategy:\n      fail-fast: false\n      matrix:\n");
    t.push_str(&format!("        machine: {}\n", list(&p.machines)));
    t.push_str(&format!("        distro: {}\n", list(&p.distros)));
}

/// Checkout and `fetch` (cache restore, artifact download) run as root; then the workspace is
/// handed to the build user and rtbuild is installed.
fn push_steps_start(t: &mut String, p: &Pipeline, fetch: &str) {
    t.push_str("    steps:\n      - uses: actions/checkout@v4\n");
    t.push_str(fetch);
    t.push_str("      - name: Hand the workspace to the build user\n");
    t.push_str(&format!(
        "        shell: bash\n        run: chown -R {BUILD_USER}:{BUILD_USER} \"$GITHUB_WORKSPACE\"\n"
    ));
    t.push_str("      - name: Install rtbuild\n        run: |\n");
    for line in p.install.script() {
        t.push_str(&format!("          {line}\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pipeline() -> Pipeline {
        Pipeline {
            machines: vec!["rb3gen2-core-kit".into(), "iq-9075-evk".into()],
            distros: vec!["qcom-distro-kvm".into()],
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
            }),
        }
    }

    #[test]
    fn install_sources() {
        assert_eq!(
            Install::parse("crates", "0.1.0").unwrap(),
            Install::Crate { version: "0.1.0".into() }
        );
        assert_eq!(
            Install::parse("git+https://git.example.com/rtbuild.git#v0.1.0", "x").unwrap(),
            Install::Git {
                url: "https://git.example.com/rtbuild.git".into(),
                rev: Some("v0.1.0".into())
            }
        );
        assert!(matches!(Install::parse("file:///opt/rtbuild", "x"), Ok(Install::Binary { .. })));
        for bad in [
            "",
            "cargo",
            "git+ssh://h/r",
            "https://h/a b",
            "https://h/$(id)",
            "git+https://h/r#a;b",
            "/opt/rtbuild",
            "path:",
            "path:/opt/rtbuild",
            "path:../rtbuild",
            "path:tools/../../x",
            "path:a b",
            "path:$(id)",
            "path:x;y",
        ] {
            assert!(Install::parse(bad, "x").is_err(), "{bad}");
        }
        assert_eq!(
            Install::parse("path:tools/rtbuild", "x").unwrap(),
            Install::Path { dir: "tools/rtbuild".into() }
        );
        let script = Install::Path { dir: "tools/rtbuild".into() }.script().join("\n");
        assert!(script.contains("cargo install --locked --path tools/rtbuild"), "{script}");
        let script = Install::Crate { version: "0.1.0".into() }.script().join("\n");
        assert!(script.contains("grep -qx 'rtbuild 0.1.0'"), "{script}");
        assert!(script.contains("cargo install --locked rtbuild --version =0.1.0"), "{script}");
    }

    #[test]
    fn both_formats_are_valid_yaml_with_one_job_per_cell() {
        for (text, machines) in [
            (render_gitlab(&pipeline()), [".rtbuild", "parallel", "matrix"]),
            (render_github(&pipeline()), ["jobs", "image", "strategy"]),
        ] {
            let yaml: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
            let node = machines.iter().fold(&yaml, |v, k| &v[*k]);
            let node = node.get("matrix").unwrap_or(node);
            let node = if node.is_sequence() { &node[0] } else { node };
            let list = node.get("MACHINE").or_else(|| node.get("machine")).unwrap();
            assert_eq!(list.as_sequence().unwrap().len(), 2, "{text}");
            assert!(text.contains("--sstate-mirror https://sstate.example.com/all --hashserv hashserv.example.com:8686"), "{text}");
            assert!(text.contains("/srv/rtbuild/sstate-cache"), "{text}");
            assert!(
                text.contains("--rt-cpus 6-7 --lock locks/rb3.lock.yml --bundle --sstate-mirror"),
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
