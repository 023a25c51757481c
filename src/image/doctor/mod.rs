//! Is this host ready to build? `rtbuild doctor`, and the same preflight that `image`, `matrix`
//! and `shell` run before kas is started.
//!
//! 1. [`facts::Facts::gather`] reads the host once: user, PATH, locales, python3, git, kas (or
//!    kas-container and the container engine), free space, inotify and open-file limits;
//! 2. [`evaluate`] turns the facts into [`Check`]s, each `ok`, `warning` or `problem`, with the
//!    fix a user can act on (pure: unit-tested without touching the host);
//! 3. [`repos::check`] asks whether the repositories kas will clone answer (the only check that
//!    may touch the network; skipped when mirrors cover them).
//!
//! A problem makes the host not ready (exit 2); a warning is printed and the build goes on.

pub(crate) mod disk;
pub(crate) mod facts;
pub(crate) mod host_packages;
pub(crate) mod hosttools;
pub(crate) mod repos;
pub(crate) mod upstream;

use std::path::PathBuf;

use serde::Serialize;

pub(crate) use facts::Facts;

#[cfg(test)]
use crate::image::kas::version::KasVersion;
use crate::image::kas::{Engine, Kas, KasError, PINNED_KAS};

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Severity {
    Ok,
    /// Worth knowing; the build can still start.
    Warning,
    /// The build cannot work until this is fixed.
    Problem,
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Check {
    /// A stable id: `user`, `locale`, `hosttools`, `python3`, `git`, `kas`, `container`,
    /// `disk`, `inotify`, `open-files`, `repos`.
    pub check: &'static str,
    pub status: Severity,
    pub message: String,
    /// What to do about it (`None` when there is nothing to do).
    pub fix: Option<String>,
}

impl Check {
    fn ok(check: &'static str, message: impl Into<String>) -> Check {
        Check { check, status: Severity::Ok, message: message.into(), fix: None }
    }

    fn problem(check: &'static str, message: impl Into<String>, fix: impl Into<String>) -> Check {
        Check { check, status: Severity::Problem, message: message.into(), fix: Some(fix.into()) }
    }

    fn warning(check: &'static str, message: impl Into<String>, fix: impl Into<String>) -> Check {
        Check { check, status: Severity::Warning, message: message.into(), fix: Some(fix.into()) }
    }

    /// `<message>; <fix>`: the one line a user reads.
    pub(crate) fn line(&self) -> String {
        match &self.fix {
            Some(fix) => format!("{}; {fix}", self.message),
            None => self.message.clone(),
        }
    }
}

/// A problem as `--json` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Problem {
    pub check: &'static str,
    pub message: String,
    pub fix: String,
}

/// `rtbuild doctor --json`: `{"ready", "problems": [{check, message, fix}], "checks": [...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct DoctorReport {
    pub ready: bool,
    pub problems: Vec<Problem>,
    pub checks: Vec<Check>,
}

impl DoctorReport {
    pub(crate) fn new(checks: Vec<Check>) -> DoctorReport {
        let problems: Vec<Problem> = checks
            .iter()
            .filter(|c| c.status == Severity::Problem)
            .map(|c| Problem {
                check: c.check,
                message: c.message.clone(),
                fix: c.fix.clone().unwrap_or_default(),
            })
            .collect();
        DoctorReport { ready: problems.is_empty(), problems, checks }
    }

    pub(crate) fn warnings(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| c.status == Severity::Warning)
    }
}

/// What is being prepared: where the build's folders are and how kas runs.
#[derive(Debug, Clone, Default)]
pub(crate) struct Target {
    /// `KAS_WORK_DIR`: the cloned layers and the per-machine output folders.
    pub work: PathBuf,
    pub dl_dir: PathBuf,
    pub sstate_dir: PathBuf,
    /// The build runs through kas-container with this engine, not on the host.
    pub container: Option<Engine>,
    /// The repositories kas will clone.
    pub urls: Vec<String>,
    /// `KAS_PREMIRRORS`: kas clones through these mirrors instead of the URLs.
    pub kas_premirrors: Option<String>,
}

/// The oldest Python BitBake 2.18 runs on (its `lib/bb/__init__.py`, oe-core's sanity check).
pub(crate) const MIN_PYTHON: (u32, u32) = (3, 9);
/// oe-core `sanity.bbclass` `check_git_version`: older git "has bugs which will break builds".
pub(crate) const MIN_GIT: [u32; 4] = [1, 8, 3, 1];
/// Below this `fs.inotify.max_user_watches`, tools that watch a build tree (devtool, editors,
/// file managers) fail with "no space left on device".
pub(crate) const MIN_INOTIFY_WATCHES: u64 = 65536;
/// Below this many open files per process, BitBake's parallel tasks can fail with EMFILE.
pub(crate) const MIN_OPEN_FILES: u64 = 1024;

/// Every check that needs no network, from the gathered facts.
pub(crate) fn evaluate(facts: &Facts, target: &Target) -> Vec<Check> {
    let mut checks = vec![user(facts, target)];
    match target.container {
        None => {
            checks.push(locale(facts));
            checks.push(hosttools(facts));
            checks.push(python(facts));
            checks.push(git(facts));
            checks.push(kas(facts));
        }
        Some(engine) => checks.push(container(facts, engine)),
    }
    checks.extend(disk::evaluate(&facts.disks));
    if target.container.is_none() {
        checks.push(inotify(facts));
        checks.push(open_files(facts));
    }
    checks
}

fn user(facts: &Facts, target: &Target) -> Check {
    if facts.uid != 0 {
        return Check::ok("user", format!("running as uid {}, not root", facts.uid));
    }
    match target.container {
        None => Check::problem(
            "user",
            "running as root, and BitBake refuses root (oe-core sanity.bbclass: \"Do not use \
             Bitbake as root.\")",
            "run rtbuild as an ordinary user (e.g. `runuser -u USER -- rtbuild …`), or build \
             in a container with --container as a user allowed to run docker or podman",
        ),
        Some(_) => Check::problem(
            "user",
            "running as root: kas-container refuses root (\"Running as root - may break certain \
             recipes\"), and its image would run BitBake as root, which BitBake refuses",
            "run rtbuild --container as an ordinary user in the `docker` group, or with \
             rootless podman",
        ),
    }
}

fn locale(facts: &Facts) -> Check {
    let has = facts.locales.iter().any(|l| {
        let l = l.to_ascii_lowercase();
        l == "en_us.utf8" || l == "en_us.utf-8"
    });
    if has {
        return Check::ok("locale", "en_US.UTF-8 is available");
    }
    Check::problem(
        "locale",
        "the en_US.UTF-8 locale is missing, and BitBake switches to it (oe-core sanity.bbclass)",
        format!("{} (or `rtbuild setup --host`)", facts.os.locale_fix()),
    )
}

fn hosttools(facts: &Facts) -> Check {
    let tools = &facts.hosttools;
    if tools.missing.is_empty() {
        return Check::ok(
            "hosttools",
            format!("all {} HOSTTOOLS are on PATH ({})", tools.names.len(), tools.source),
        );
    }
    let packages = host_packages::packages_for(&tools.missing, facts.os);
    Check::problem(
        "hosttools",
        format!(
            "{} HOSTTOOLS missing from PATH: {} ({})",
            tools.missing.len(),
            tools.missing.join(", "),
            tools.source
        ),
        format!(
            "install them with `{}` (Debian/Ubuntu: {}; Fedora: {}), or run `rtbuild setup --host`",
            facts.os.install_command(&packages),
            host_packages::packages_for(&tools.missing, host_packages::Os::Debian).join(" "),
            host_packages::packages_for(&tools.missing, host_packages::Os::Fedora).join(" "),
        ),
    )
}

fn python(facts: &Facts) -> Check {
    let install = facts.os.install_command(&["python3".to_string()]);
    match &facts.python {
        None => Check::problem(
            "python3",
            "python3 is not on PATH; BitBake and kas are Python programs",
            format!("install it with `{install}`"),
        ),
        Some(version) if version_at_least(version, &[MIN_PYTHON.0, MIN_PYTHON.1]) => {
            Check::ok("python3", format!("python3 {version}"))
        }
        Some(version) => Check::problem(
            "python3",
            format!(
                "python3 {version} is too old; BitBake 2.18 needs Python {}.{} or newer",
                MIN_PYTHON.0, MIN_PYTHON.1
            ),
            "use a newer distribution (Debian 12 ships 3.11) or put a newer python3 first on PATH",
        ),
    }
}

fn git(facts: &Facts) -> Check {
    match &facts.git {
        None => Check::problem(
            "git",
            "git is not on PATH; kas clones every layer with it",
            format!("install it with `{}`", facts.os.install_command(&["git".to_string()])),
        ),
        Some(version) if version_at_least(version, &MIN_GIT) => {
            Check::ok("git", format!("git {version}"))
        }
        Some(version) => Check::problem(
            "git",
            format!("git {version} is older than 1.8.3.1, which oe-core refuses"),
            format!("install a newer git with `{}`", facts.os.install_command(&["git".into()])),
        ),
    }
}

fn kas(facts: &Facts) -> Check {
    match &facts.kas {
        Ok(found) if found.version.to_string() == PINNED_KAS => {
            Check::ok("kas", format!("kas {} at {}", found.version, found.program.display()))
        }
        Ok(found) => Check::warning(
            "kas",
            format!(
                "kas {} at {} works, but rtbuild is tested with kas {PINNED_KAS}",
                found.version,
                found.program.display()
            ),
            format!("`pip install kas=={PINNED_KAS}` or `rtbuild setup` for the tested version"),
        ),
        Err(err) => {
            let text = err.to_string();
            let (message, fix) = text.split_once("; ").unwrap_or((&text, ""));
            Check::problem("kas", message, fix)
        }
    }
}

fn container(facts: &Facts, engine: Engine) -> Check {
    let Some(container) = &facts.container else {
        return Check::problem(
            "container",
            "kas-container was not found beside kas nor on PATH",
            format!("{} (kas-container ships with kas)", crate::image::kas::install_hint()),
        );
    };
    if !container.engine_found {
        return Check::problem(
            "container",
            format!(
                "--container {} was asked for, but `{}` is not on PATH",
                engine.name(),
                engine.name()
            ),
            format!(
                "install {} (Debian: `apt-get install {}`), or pick the other engine",
                engine.name(),
                if engine == Engine::Docker { "docker.io" } else { "podman" }
            ),
        );
    }
    Check::ok(
        "container",
        format!(
            "{} with {} (image ghcr.io/siemens/kas/kas:{PINNED_KAS})",
            container.program.display(),
            engine.name()
        ),
    )
}

fn inotify(facts: &Facts) -> Check {
    match facts.inotify_watches {
        Some(n) if n < MIN_INOTIFY_WATCHES => Check::warning(
            "inotify",
            format!("fs.inotify.max_user_watches is {n}, below {MIN_INOTIFY_WATCHES}"),
            "raise it with `sudo sysctl fs.inotify.max_user_watches=524288` and keep it in \
             /etc/sysctl.d/90-rtbuild.conf",
        ),
        Some(n) => Check::ok("inotify", format!("fs.inotify.max_user_watches is {n}")),
        None => Check::ok("inotify", "fs.inotify.max_user_watches is not readable here"),
    }
}

fn open_files(facts: &Facts) -> Check {
    match facts.open_files {
        Some((soft, hard)) if soft < MIN_OPEN_FILES => Check::warning(
            "open-files",
            format!("the open-file limit is {soft}, below {MIN_OPEN_FILES}"),
            match hard {
                Some(hard) if hard > soft => format!("raise it with `ulimit -n {hard}`"),
                _ => "raise `nofile` in /etc/security/limits.conf, then log in again".to_string(),
            },
        ),
        Some((soft, _)) => Check::ok("open-files", format!("the open-file limit is {soft}")),
        None => Check::ok("open-files", "the open-file limit is not known"),
    }
}

/// `3.11.7` ≥ `[3, 9]`; a part that is not a number ends the comparison there (`2.39.2.windows`).
pub(crate) fn version_at_least(version: &str, min: &[u32]) -> bool {
    let parts: Vec<u32> =
        version.split('.').map_while(|p| p.trim().parse().ok()).take(min.len()).collect();
    let mut padded = parts.clone();
    padded.resize(min.len(), 0);
    padded.as_slice() >= min
}

/// Every check: the local ones, then the repositories unless a local check already failed and
/// `stop_early` is set (the preflight stops in well under a second when, say, it runs as root).
pub(crate) fn run(facts: &Facts, target: &Target, stop_early: bool) -> DoctorReport {
    let mut checks = evaluate(facts, target);
    let failed = checks.iter().any(|c| c.status == Severity::Problem);
    if !(failed && stop_early) {
        checks.push(repos::check(&target.urls, facts.kas_premirrors.as_deref()));
    }
    DoctorReport::new(checks)
}

/// The host is not ready: each problem becomes one `error: <message>; <fix>` line (exit 2).
#[derive(Debug, thiserror::Error)]
#[error("{}", .problems.iter().map(|p| format!("{}; {}", p.message, p.fix)).collect::<Vec<_>>().join("\nerror: "))]
pub(crate) struct NotReady {
    pub problems: Vec<Problem>,
}

/// Always the user's input (exit 2).
impl crate::error::ErrorCode for NotReady {
    fn exit(&self) -> crate::error::Exit {
        crate::error::Exit::Usage
    }
}

/// The folders and repositories a build of `plan` into `out` uses.
pub(crate) fn target_for(
    plan: &crate::plan::Plan,
    out: &std::path::Path,
    work_dir: Option<&std::path::Path>,
    container: Option<Engine>,
    env: &crate::image::kasrun::caches::CacheEnv,
) -> Target {
    let files: Vec<&str> = plan.composition.files.iter().map(String::as_str).collect();
    let build = Build {
        dl_dir: plan.settings.dl_dir.as_ref().map(|p| p.as_path()),
        sstate_dir: plan.settings.sstate_dir.as_ref().map(|p| p.as_path()),
        kas_files: &files,
        meta_qcom_url: plan.settings.meta_qcom.url.as_str(),
        work_dir,
        env,
    };
    target(&build, out, container)
}

/// What [`target`] needs to know about a build before its plan is made.
pub(crate) struct Build<'a> {
    pub dl_dir: Option<&'a std::path::Path>,
    pub sstate_dir: Option<&'a std::path::Path>,
    /// meta-qcom's kas files the build includes (their repos are checked when meta-qcom is
    /// already checked out).
    pub kas_files: &'a [&'a str],
    pub meta_qcom_url: &'a str,
    /// kas's work folder (`--work-dir`, `KAS_WORK_DIR`), when the build is given one.
    pub work_dir: Option<&'a std::path::Path>,
    /// The caches' environment (`DL_DIR`, `SSTATE_DIR`, `KAS_PREMIRRORS`).
    pub env: &'a crate::image::kasrun::caches::CacheEnv,
}

/// The folders and repositories `build` into `out` uses.
pub(crate) fn target(
    build: &Build<'_>,
    out: &std::path::Path,
    container: Option<Engine>,
) -> Target {
    let out = std::path::absolute(out).unwrap_or_else(|_| out.to_path_buf());
    // kas's work folder: `KAS_WORK_DIR` when the build is given one, else the output folder's
    // parent (where `rtbuild image` lets kas clone), as the build itself resolves it.
    let work = match build.work_dir {
        Some(dir) => std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()),
        None => out.parent().map(std::path::Path::to_path_buf).unwrap_or(out.clone()),
    };
    let dirs = crate::image::kas::CacheDirs::resolve(
        build.dl_dir,
        build.sstate_dir,
        build.env.dl_dir.clone(),
        build.env.sstate_dir.clone(),
        &work,
    );
    let urls = repos::urls(build.meta_qcom_url, &work, build.kas_files);
    Target {
        work,
        dl_dir: dirs.dl_dir,
        sstate_dir: dirs.sstate_dir,
        container,
        urls,
        kas_premirrors: build.env.kas_premirrors.clone(),
    }
}

/// The preflight `image`, `matrix` and `shell` run before kas starts: warnings are printed, and
/// any problem stops the command with [`NotReady`] (exit 2) before anything is generated; programs are
/// looked for on `search_path`.
pub(crate) fn preflight(
    target: &Target,
    kas: Result<Kas, KasError>,
    search_path: &std::ffi::OsStr,
    ui: &crate::text::ui::Ui,
) -> Result<(), NotReady> {
    let facts = Facts::gather(target, kas, Some(search_path), &crate::host::runner::System);
    let report = run(&facts, target, true);
    for warning in report.warnings() {
        ui.warn(warning.line());
    }
    if report.ready { Ok(()) } else { Err(NotReady { problems: report.problems }) }
}

#[cfg(test)]
mod tests;
