//! `rtbuild ci`: print a pipeline for the CI system the user already has (GitLab CI or GitHub
//! Actions) that runs the same matrix as `rtbuild matrix`, one job per cell, with the shared
//! sstate mirror, hash-equivalence and PR-server settings. Scale goes to existing runners.

use clap::{Args, ValueEnum};

use super::args::{CacheArgs, CatalogArgs, CpuFlags, MachineArgs, PlanArgs};
use crate::cli::error::Refusal;
use crate::error::Exit;
use crate::host::cpus::CpuLayout;
use crate::image::ci::{Install, LavaStage, Pipeline, render_github, render_gitlab};
use crate::text::ui::Ui;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum Format {
    Gitlab,
    Github,
}

/// The jobs take their board and distro from the matrix: kas's KAS_MACHINE and KAS_DISTRO in
/// this shell are no flags of `ci`.
#[derive(Debug, Args)]
#[command(mut_arg("machine", |arg| arg.env(None)), mut_arg("distro", |arg| arg.env(None)))]
pub(crate) struct CiArgs {
    /// Pipeline syntax to print.
    #[arg(long, value_enum)]
    pub format: Format,
    /// Machines to build, comma-separated (one job each).
    #[arg(long, value_delimiter = ',', required_unless_present = "canary", value_name = "A,B,…")]
    pub machines: Vec<String>,
    /// Distros to build, comma-separated [default: qcom-distro].
    #[arg(long, value_delimiter = ',', value_name = "A,B,…")]
    pub distros: Vec<String>,
    /// Folder on the runners that keeps downloads and sstate between jobs (DL_DIR and
    /// SSTATE_DIR beneath it); leave out on runners without persistent storage.
    #[arg(long, value_name = "DIR")]
    pub runner_cache: Option<std::path::PathBuf>,
    /// Each job also verifies and bundles its image (`rtbuild image --bundle`) and keeps the
    /// bundle (*.tar.zst, manifest, SHA256SUMS) as a job artifact.
    #[arg(long)]
    pub bundle: bool,
    /// Build from this lock file (path in the repository; `rtbuild image --lock`). Without
    /// it, each job pins what it built with `rtbuild lock` and keeps that lock.
    #[arg(long, value_name = "FILE")]
    pub lock: Option<std::path::PathBuf>,
    /// Add a test stage: publish each bundle, submit an `rtbuild lava` job with lavacli, wait,
    /// and fail the pipeline on a FAIL verdict (implies --bundle).
    #[arg(long)]
    pub lava: bool,
    /// Scenarios of the LAVA jobs.
    #[arg(long, value_name = "LIST", default_value = "idle,stress", requires = "lava")]
    pub lava_scenario: String,
    /// Run time of each LAVA scenario (as `rtbuild lava --duration`).
    #[arg(long, value_name = "TIME", default_value = "smoke", requires = "lava")]
    pub lava_duration: String,
    /// rt-tests programs of the LAVA jobs (as `rtbuild lava --tests`; see `rtbuild test --help`).
    #[arg(long, value_name = "LIST", default_value = "cyclictest", requires = "lava")]
    pub lava_tests: String,
    /// With --lava: record each LAVA run in the latency history and fail on a REGRESSION.
    /// NAME is the CI secret (GitHub) or masked variable (GitLab) holding the database URL
    /// (`postgres://…`); the jobs pass it to `rtbuild history add` and `rtbuild report
    /// --history` through the environment (RTBUILD_DB), never inside a script's text.
    #[arg(long, value_name = "NAME", requires = "lava")]
    pub history_db_secret: Option<String>,
    /// With --lava: the LAVA jobs send header NAME with the bundle's download (the Qualcomm
    /// lab's qcomflash deploy), its value from CI secret (GitHub) or masked variable (GitLab)
    /// SECRET, handed to `rtbuild lava --qcomflash-header` through the job's environment,
    /// never written into the pipeline; repeatable (at most 8).
    #[arg(long, value_name = "NAME=SECRET", requires = "lava")]
    pub qcomflash_header: Vec<String>,
    /// Sign each bundle (implies --bundle): NAME is the CI secret (GitHub, in the deployment
    /// environment `rtbuild-signing`) or masked variable (GitLab) holding the ed25519 private
    /// key (`openssl genpkey -algorithm ed25519`: the PEM, or the PEM base64-encoded on one
    /// line, the form GitLab can mask). Each build job writes it to a file of its own
    /// temporary folder, runs `rtbuild bundle --signing-key` and removes it; the key never
    /// appears in the pipeline. The public key is kept beside the bundle
    /// (`<stem>.pub.pem`) for `rtbuild bundle --verify --key`.
    #[arg(long, value_name = "NAME")]
    pub signing_key_secret: Option<String>,
    /// How the jobs install rtbuild (required: no source is known to work everywhere):
    /// path:DIR (rtbuild's source in the repository, e.g. a submodule; cargo install --path),
    /// git+https://HOST/REPO[#REV] (cargo install --git), the https:// or file:// URL of an
    /// rtbuild binary, or `crates` (this version from crates.io, once it is published there).
    #[arg(long, value_name = "SOURCE")]
    pub rtbuild_from: String,
    /// GitHub: name each action by the commit of its release from rtbuild's pin table (`uses:
    /// actions/checkout@<commit> # v6.1.0`), as zizmor's `unpinned-uses` asks; `false` names
    /// the moving major tag (`@v6`). docs/build.md says how the table is refreshed.
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    pub pin_actions: bool,
    /// The jobs' container image, pinned by digest (REGISTRY/NAME[:TAG]@sha256:HEX, e.g.
    /// ghcr.io/siemens/kas/kas:5.5@sha256:… as `docker buildx imagetools inspect` prints it);
    /// a tag alone is refused. Default: kas's image for the pinned kas version, by digest when
    /// rtbuild's pin table has one (docs/build.md).
    #[arg(long, value_name = "IMAGE@sha256:HEX", conflicts_with = "canary")]
    pub kas_image: Option<String>,
    /// SHA-256 of the binary --rtbuild-from downloads (64 hex digits, as `sha256sum` prints);
    /// required for a binary URL: the pipeline's first job checks it before anything runs it.
    #[arg(long, value_name = "HEX")]
    pub rtbuild_sha256: Option<String>,
    /// Print a scheduled canary instead of the build pipeline: one job that clones the head of
    /// the meta-qcom branch (--meta-qcom-url, --meta-qcom-branch) and runs `rtbuild doctor
    /// --meta-qcom` on it, failing when something rtbuild needs is missing upstream.
    #[arg(long, conflicts_with_all = ["machines", "lava", "bundle", "lock"])]
    pub canary: bool,
    /// When the canary runs (GitHub's `schedule` cron; GitLab: a pipeline schedule's cron).
    #[arg(long, value_name = "CRON", default_value = "17 5 * * *", requires = "canary")]
    pub canary_cron: String,
    #[command(flatten)]
    pub caches: CacheArgs,
    /// Machine catalog options (the machines are checked against it).
    #[command(flatten)]
    pub plan: PlanArgs,
}

pub(super) fn run(args: CiArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    let text = pipeline_text(&args)?;
    if ui.json() {
        ui.out_json(&serde_json::json!({ "format": format!("{:?}", args.format).to_lowercase(), "pipeline": text }))?;
    } else {
        ui.out(text.trim_end());
    }
    Ok(Exit::Ok)
}

/// The pipeline `args` ask for, every flag checked (exit 2 on bad input).
pub(super) fn pipeline_text(args: &CiArgs) -> crate::cli::error::Result<String> {
    if args.canary {
        return canary_text(args);
    }
    let flags = job_flags(&args.plan)?;
    let distros = if args.distros.is_empty() {
        vec![None]
    } else {
        args.distros.iter().map(|d| Some(d.clone())).collect()
    };
    let mut machines = Vec::new();
    let mut layouts = Vec::new();
    let mut thresholds = Vec::new();
    let mut distro_names = Vec::new();
    for distro in &distros {
        for machine in &args.machines {
            let mut cell = args.plan.clone();
            cell.machine.name = Some(machine.trim().to_string());
            cell.distro = distro.clone();
            let plan = cell.plan()?;
            if !machines.contains(&plan.machine.name) {
                machines.push(plan.machine.name.clone());
                layouts.push(plan.layout.clone());
                thresholds.push((
                    plan.machine.name.clone(),
                    plan.machine
                        .latency_requirement_us
                        .unwrap_or(crate::catalog::latency::DEFAULT_THRESHOLD_US as u64),
                ));
            }
            let name = plan.settings.distro.to_string();
            if !distro_names.contains(&name) {
                distro_names.push(name);
            }
        }
    }
    let caches = args.caches.settings().map_err(Refusal::BuildSetting)?;
    let runner_cache = args.runner_cache.as_deref().map(runner_cache_dir).transpose()?;
    // Validated above (exit 2 on a bad value); the jobs get the flags as typed.
    let _ = caches;
    let install = Install::parse(
        &args.rtbuild_from,
        args.rtbuild_sha256.as_deref(),
        env!("CARGO_PKG_VERSION"),
    )
    .map_err(Refusal::Install)?;
    let lock = args.lock.as_deref().map(lock_in_repo).transpose()?;
    let lava = args.lava.then(|| lava_stage(args, &layouts, thresholds)).transpose()?;
    let signing_secret = args.signing_key_secret.as_deref().map(signing_secret).transpose()?;
    let pipeline = Pipeline {
        machines,
        distros: distro_names,
        plan_flags: flags.image,
        catalog_flags: flags.catalog,
        cpu_flags: flags.cpus,
        cache_flags: args.caches.flags(),
        runner_cache,
        bundle: args.bundle,
        lock,
        install,
        lava,
        pin_actions: args.pin_actions,
        kas_image: match &args.kas_image {
            Some(image) if crate::image::ci::pins::is_pinned_image(image) => image.clone(),
            Some(image) => return Err(Refusal::KasImageDigest(image.clone()).into()),
            None => crate::image::ci::kas_image(),
        },
        signing_secret,
    };
    Ok(match args.format {
        Format::Gitlab => render_gitlab(&pipeline),
        Format::Github => render_github(&pipeline),
    })
}

/// `--canary`: the scheduled check of meta-qcom's branch head.
fn canary_text(args: &CiArgs) -> crate::cli::error::Result<String> {
    let request = args.plan.request()?;
    let settings = crate::plan::Settings::new(&request)?;
    let fields: Vec<&str> = args.canary_cron.split_whitespace().collect();
    let plain = fields.len() == 5
        && fields.iter().all(|f| f.chars().all(|c| c.is_ascii_digit() || "*/,-".contains(c)));
    if !plain {
        return Err(Refusal::CanaryCron(crate::plan::values::printable(&args.canary_cron)).into());
    }
    let flags = job_flags(&args.plan)?;
    let install = Install::parse(
        &args.rtbuild_from,
        args.rtbuild_sha256.as_deref(),
        env!("CARGO_PKG_VERSION"),
    )
    .map_err(Refusal::Install)?;
    let canary = crate::image::ci::canary::Canary {
        url: settings.meta_qcom.url.to_string(),
        branch: settings.meta_qcom.branch.to_string(),
        catalog_flags: flags.catalog,
        install,
        cron: fields.join(" "),
    };
    Ok(match args.format {
        Format::Gitlab => crate::image::ci::canary::render_gitlab(&canary),
        Format::Github => crate::image::ci::canary::render_github(&canary),
    })
}

/// The plan flags again, as the jobs' `rtbuild` commands take them.
struct JobFlags {
    /// For `rtbuild image`: every plan flag given to `ci`.
    image: Vec<String>,
    /// For every command that looks a machine up (`image`, `lock`, `lava`): `--machines-dir`.
    catalog: Vec<String>,
    /// For `rtbuild lava`: the RT and housekeeping CPUs the image isolates.
    cpus: Vec<String>,
}

/// Each plan flag of `ci` either reaches the jobs or is refused (exit 2): a flag that is taken
/// and dropped builds a kernel other than the one asked for. Files are passed as paths in the
/// repository, where the jobs find them. The destructuring names every field, so a flag added
/// to [`PlanArgs`] does not compile until it is handled here.
fn job_flags(plan: &PlanArgs) -> crate::cli::error::Result<JobFlags> {
    let PlanArgs {
        machine: MachineArgs { name, catalog: CatalogArgs { machines_dir } },
        cpus: CpuFlags { rt_cpus, housekeeping },
        fragments,
        configs,
        patches,
        includes,
        cmdline,
        no_nohz_full,
        distro,
        hypervisor,
        image: image_recipe,
        meta_qcom_url,
        meta_qcom_branch,
        meta_qcom_commit,
        dl_dir,
        sstate_dir,
        meta_qcom,
        analyzer,
        cve_check,
        project,
    } = plan;
    if let Some(name) = name {
        return Err(Refusal::CiMachine(name.clone()).into());
    }
    if let Some(distro) = distro {
        return Err(Refusal::CiDistro(distro.clone()).into());
    }
    if dl_dir.is_some() || sstate_dir.is_some() {
        return Err(Refusal::CiCacheDirs.into());
    }
    let mut catalog = Vec::new();
    if let Some(dir) = machines_dir {
        catalog.extend(flag("--machines-dir", &in_repo("--machines-dir", dir, Kind::Dir)?));
    }
    let mut cpus = Vec::new();
    for (name, value) in [("--rt-cpus", rt_cpus), ("--housekeeping", housekeeping)] {
        if let Some(value) = value {
            cpus.extend(flag(name, value));
        }
    }
    let mut image = catalog.clone();
    if let Some(file) = project {
        image.extend(flag("--project", &in_repo("--project", file, Kind::File)?));
    }
    if let Some(dir) = meta_qcom {
        image.extend(flag("--meta-qcom", &in_repo("--meta-qcom", dir, Kind::Dir)?));
    }
    image.extend(cpus.iter().cloned());
    for file in fragments {
        image.extend(flag("--fragment", &in_repo("--fragment", file, Kind::File)?));
    }
    for value in configs {
        image.extend(flag("--config", value));
    }
    for file in patches {
        image.extend(flag("--patch", &in_repo("--patch", file, Kind::File)?));
    }
    for value in includes {
        image.extend(flag("--include", value));
    }
    for value in cmdline {
        image.extend(flag("--cmdline", value));
    }
    if *no_nohz_full {
        image.push("--no-nohz-full".to_string());
    }
    if let Some(analyzer) = analyzer {
        image.extend(flag("--analyzer", analyzer));
    }
    if *cve_check {
        image.push("--cve-check".to_string());
    }
    for (name, value) in [
        ("--hypervisor", hypervisor.as_deref()),
        ("--image", image_recipe.as_deref()),
        ("--meta-qcom-url", meta_qcom_url.as_deref()),
        ("--meta-qcom-branch", meta_qcom_branch.as_deref()),
        ("--meta-qcom-commit", meta_qcom_commit.as_deref()),
    ] {
        if let Some(value) = value {
            image.extend(flag(name, value));
        }
    }
    // A value is quoted for the shell, but GitHub Actions pastes `${{ … }}` into a `run:` script
    // before the shell sees it: no value a job's command carries may hold one.
    for list in [&image, &catalog] {
        if let Some(at) = list.iter().position(|v| v.contains("${{")) {
            let flag = at.checked_sub(1).map_or("a value", |i| list[i].as_str()).to_string();
            return Err(Refusal::WorkflowExpression { flag, value: list[at].clone() }.into());
        }
    }
    Ok(JobFlags { image, catalog, cpus })
}

fn flag(name: &str, value: &str) -> [String; 2] {
    [name.to_string(), value.to_string()]
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
}

/// A file or folder the jobs read from the checkout: a plain relative path (no `..`) that is
/// there now, in the repository the pipeline runs in.
fn in_repo(
    flag: &'static str,
    path: &std::path::Path,
    kind: Kind,
) -> crate::cli::error::Result<String> {
    let text = path.to_string_lossy();
    let plain = !text.is_empty()
        && path.is_relative()
        && !path.components().any(|c| matches!(c, std::path::Component::ParentDir))
        && text.chars().all(|c| c.is_ascii_alphanumeric() || "-_./+@".contains(c));
    let what = if kind == Kind::File { "file" } else { "folder" };
    if !plain {
        return Err(Refusal::NotInRepo { flag, path: path.to_path_buf(), what }.into());
    }
    let meta = std::fs::symlink_metadata(path);
    let ok = match kind {
        Kind::File => meta.as_ref().is_ok_and(std::fs::Metadata::is_file),
        Kind::Dir => meta.as_ref().is_ok_and(std::fs::Metadata::is_dir),
    };
    if !ok {
        return Err(Refusal::MissingInRepo { flag, path: path.to_path_buf(), what }.into());
    }
    Ok(text.into_owned())
}

/// `--lock FILE`: a readable lock, named by a plain relative path (the jobs run in the checkout).
fn lock_in_repo(path: &std::path::Path) -> crate::cli::error::Result<String> {
    let text = path.to_string_lossy();
    let plain = !text.is_empty()
        && path.is_relative()
        && !path.components().any(|c| matches!(c, std::path::Component::ParentDir))
        && text.chars().all(|c| c.is_ascii_alphanumeric() || "-_./+@".contains(c));
    if !plain {
        return Err(Refusal::LockNotInRepo(path.to_path_buf()).into());
    }
    crate::release::lock::LockFile::read(path).map_err(Refusal::LockFile)?;
    Ok(text.into_owned())
}

/// `--lava-scenario`/`--lava-duration`/`--lava-tests`, checked as `rtbuild lava` checks them,
/// and how long the CI job may wait for the longest LAVA job (its timeout on the machine with
/// the most RT CPUs, plus two hours in the queue).
fn lava_stage(
    args: &CiArgs,
    layouts: &[CpuLayout],
    thresholds: Vec<(String, u64)>,
) -> crate::cli::error::Result<LavaStage> {
    let scenarios =
        crate::measure::testrun::parse_list(&args.lava_scenario).map_err(Refusal::LavaScenario)?;
    if scenarios.contains(&crate::measure::testrun::Scenario::Custom) {
        return Err(Refusal::LavaCustom.into());
    }
    let tests =
        crate::measure::rttests::parse_list(&args.lava_tests).map_err(Refusal::LavaTests)?;
    let span =
        crate::measure::testrun::Span::parse(&args.lava_duration).map_err(Refusal::LavaDuration)?;
    let mut minutes = 0;
    for layout in layouts {
        let job = crate::lab::job::job_minutes(
            &args.lava_duration,
            span.length,
            span.interval_us.unwrap_or(1000),
            layout,
            &tests,
            scenarios.len(),
        )
        .map_err(Refusal::LavaJobLength)?;
        minutes = minutes.max(job);
    }
    let history_secret = args.history_db_secret.as_deref().map(secret_name).transpose()?;
    let headers = header_secrets(&args.qcomflash_header)?;
    Ok(LavaStage {
        history_secret,
        headers,
        scenarios: scenarios.iter().map(ToString::to_string).collect::<Vec<_>>().join(","),
        duration: args.lava_duration.clone(),
        tests: tests.iter().map(ToString::to_string).collect::<Vec<_>>().join(","),
        wait_minutes: minutes + 120,
        thresholds,
    })
}

/// `--history-db-secret NAME`: a name both CIs accept for a secret or variable and a shell
/// reads as one (`[A-Za-z_][A-Za-z0-9_]*`, not GitHub's reserved `GITHUB_…`), so it reaches
/// the workflow expression and the script as exactly that name.
fn secret_name(name: &str) -> crate::cli::error::Result<String> {
    if !is_secret_name(name) {
        return Err(Refusal::SecretName(name.to_string()).into());
    }
    Ok(name.to_string())
}

/// Whether `name` is a secret name both CIs accept and a shell reads as one variable.
fn is_secret_name(name: &str) -> bool {
    let mut chars = name.chars();
    let identifier = name.len() <= 128
        && chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    identifier && !name.to_ascii_uppercase().starts_with("GITHUB_")
}

/// `--signing-key-secret NAME`: [`secret_name`]'s rule, and none of the variables the jobs set
/// or rely on themselves (on GitLab the masked variable is in the job's environment as it is).
fn signing_secret(name: &str) -> crate::cli::error::Result<String> {
    if !is_secret_name(name) || crate::image::ci::JOB_VARIABLES.contains(&name) {
        return Err(Refusal::SigningSecretName(name.to_string()).into());
    }
    Ok(name.to_string())
}

/// `--qcomflash-header NAME=SECRET`, each checked as `rtbuild lava` checks `NAME=VAR` (an HTTP
/// header name, a variable name), SECRET also a name both CIs accept for a secret
/// ([`secret_name`]'s rule) and none the LAVA job sets itself; each header once.
fn header_secrets(flags: &[String]) -> crate::cli::error::Result<Vec<(String, String)>> {
    let refuse =
        |flag: &str, why: &'static str| Refusal::HeaderSecret { flag: flag.to_string(), why };
    if flags.len() > crate::image::ci::MAX_HEADERS {
        return Err(refuse(&flags[crate::image::ci::MAX_HEADERS], "more than 8 headers").into());
    }
    let mut headers: Vec<(String, String)> = Vec::new();
    for flag in flags {
        let (name, secret) =
            crate::lab::job::DownloadHeader::parse_flag(flag).map_err(Refusal::Job)?;
        if secret.to_ascii_uppercase().starts_with("GITHUB_") {
            return Err(refuse(flag, "GitHub reserves secret names starting GITHUB_").into());
        }
        if crate::image::ci::JOB_VARIABLES.contains(&secret.as_str()) {
            return Err(refuse(flag, "the LAVA job sets that variable itself").into());
        }
        if headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(&name)) {
            return Err(refuse(flag, "that header is given twice").into());
        }
        headers.push((name, secret));
    }
    Ok(headers)
}

/// `--runner-cache DIR`: a folder on the runner host, mounted into every job container at the
/// same path (`DIR:DIR`) and written into DL_DIR and SSTATE_DIR, so it is checked as a build
/// path is (no `:` to split the volume, no `$`, `{`, space) and must be absolute. Not resolved
/// here: it names a folder on the runners, not on this machine.
fn runner_cache_dir(dir: &std::path::Path) -> Result<String, Refusal> {
    let text = dir.to_string_lossy();
    if dir.to_str().is_some() && dir.is_absolute() && crate::plan::build_path::is_safe(&text) {
        return Ok(text.into_owned());
    }
    Err(Refusal::BuildSetting(crate::image::kasrun::BuildError::BadSetting {
        flag: "--runner-cache",
        value: text.into_owned(),
        expected: "an absolute folder whose path has only letters, digits and `-_./+@%,` (it becomes each job's volume DIR:DIR and BitBake's DL_DIR and SSTATE_DIR)",
    }))
}
