//! The stage before planning: where meta-qcom is read from. `--meta-qcom DIR` was opened by the
//! command; otherwise (and not in a dry run) kas checks meta-qcom out into the work folder, at
//! the branch, commit and lock the build will use, so the plan is made once, from meta-qcom's
//! own machine conf and kas files.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::prepare::{Site, site};
use super::{ImageError, ImageOptions};
use crate::catalog::meta_qcom::MetaQcom;
use crate::catalog::{CatalogError, Lookup};
use crate::error::Interrupted;
use crate::host::runner::{RunError, Runner, check_status, signals};
use crate::image::kas::BuildPaths;
use crate::image::kas::command;
use crate::image::kasrun::check_writable;
use crate::plan::{PlanError, Settings};
use crate::release::lock::LockFile;
use crate::text::ui::Ui;

/// Where the plan reads meta-qcom from.
#[derive(Debug, Clone)]
pub(crate) enum MetaQcomSource {
    /// `--meta-qcom DIR`, opened.
    Given(MetaQcom),
    /// The checkout kas makes in the work folder (none in a dry run).
    Checkout,
}

/// meta-qcom, resolved.
#[derive(Debug)]
pub(crate) struct Resolved<'a> {
    /// The catalog's answer for the request's machine, looked up once for the command (the
    /// plan takes it as it is).
    pub known: Result<Lookup<'a>, CatalogError>,
    pub meta_qcom: Option<MetaQcom>,
    /// It is the checkout in the work folder: the plan records where the machine's defaults
    /// came from only when it follows meta-qcom's.
    pub checked_out: bool,
    /// The seconds kas took to check it out.
    pub kas_secs: f64,
    /// The folders checked, and the host's preflight run, before the checkout: the build uses
    /// them as they are (`None`: no checkout ran, the build checks them once the plan is made).
    pub site: Option<Site>,
    /// The meta-qcom kas files composed before the checkout (from what the catalog remembers
    /// of meta-qcom, with the request's settings), for the preflight; the plan takes them when
    /// no checkout is read, instead of composing them again.
    pub composed: Option<(crate::plan::compose::Composition, Vec<String>)>,
}

/// Resolves meta-qcom for the request's machine, as the catalog answered for it (`known`).
/// Before kas is asked to check anything out, every folder it will see is checked and the
/// preflight runs, for the catalog's machine (a machine only meta-qcom knows needs
/// `--meta-qcom DIR`). When the checkout fails, `kas build` reports it and the plan uses the
/// catalog.
pub(crate) fn resolve<'a>(
    known: Result<Lookup<'a>, CatalogError>,
    settings: &Settings,
    options: &ImageOptions,
    runner: &dyn Runner,
    ui: &Ui,
) -> Result<Resolved<'a>, ImageError> {
    let none = |known| Resolved {
        known,
        meta_qcom: None,
        checked_out: false,
        kas_secs: 0.0,
        site: None,
        composed: None,
    };
    match &options.meta_qcom {
        MetaQcomSource::Given(meta) => {
            Ok(Resolved { meta_qcom: Some(meta.clone()), ..none(known) })
        }
        MetaQcomSource::Checkout if options.output.dry_run() => Ok(none(known)),
        MetaQcomSource::Checkout => {
            let found = known.map_err(PlanError::from)?;
            let machine = found.machine;
            let out = options
                .output
                .out
                .clone()
                .unwrap_or_else(|| crate::files::paths::machine_out(&machine.name));
            let site = site(
                &out,
                &options.output,
                settings.dl_dir.as_ref(),
                settings.sstate_dir.as_ref(),
                &options.setup.caches.env,
            )?;
            check_writable(&site.out)?;
            // Before the checkout, the files rtbuild remembers meta-qcom has (the plan composes
            // from the checkout once it is there).
            // Composed once: with the request's own settings, so the plan takes it when no
            // checkout is read. An `--include` the remembered files lack fails here (the plan
            // over the checkout judges it): the preflight then takes rtbuild's own files.
            let remembered = crate::plan::compose::Offer::remembered(machine);
            let compose = |includes| {
                crate::plan::compose::compose(
                    machine,
                    settings.distro,
                    settings.hypervisor,
                    includes,
                    &remembered,
                )
            };
            let composed = compose(&settings.includes).ok();
            let files: Vec<String> = match &composed {
                Some((composition, _)) => composition.files.clone(),
                None => compose(&[])
                    .map(|(c, _)| c.files)
                    .unwrap_or_else(|_| machine.kas_file.iter().cloned().collect()),
            };
            let files: Vec<&str> = files.iter().map(String::as_str).collect();
            let build = crate::image::doctor::Build {
                dl_dir: settings.dl_dir.as_ref().map(|p| p.as_path()),
                sstate_dir: settings.sstate_dir.as_ref().map(|p| p.as_path()),
                kas_files: &files,
                meta_qcom_url: settings.meta_qcom.url.as_str(),
                work_dir: options.output.work_dir.as_deref(),
                env: &options.setup.caches.env,
            };
            let launch = &options.setup.launch;
            launch.preflight_of(
                || crate::image::doctor::target(&build, &site.out, launch.launcher.engine),
                ui,
            )?;
            let lock = match &options.lock {
                Some(lock) => Some(lock.clone()),
                None => Some(site.out.join(crate::layer::render::lock_name(&machine.name)))
                    .filter(|p| p.is_file()),
            };
            // A lock that cannot be read pins nothing here (`--lock` was checked before; the
            // build reports a bad lock beside the kas file).
            let lock = lock.and_then(|lock| crate::release::lock::LockFile::read(&lock).ok());
            if let Some(meta_qcom) = warm(settings, &site.work, lock.as_ref(), ui) {
                return Ok(Resolved {
                    known: Ok(found),
                    meta_qcom: Some(meta_qcom),
                    checked_out: true,
                    kas_secs: 0.0,
                    site: Some(site),
                    composed,
                });
            }
            let (meta_qcom, kas_secs) =
                checkout(settings, &site, lock.as_ref(), options, runner, ui)?;
            Ok(Resolved {
                known: Ok(found),
                meta_qcom,
                checked_out: true,
                kas_secs,
                site: Some(site),
                composed,
            })
        }
    }
}

/// The checkout in the work folder, opened, when `kas checkout` would leave it as it is (a
/// warm run: see [`super::warm_checkout`]); the commit pinned is the lock's meta-qcom pin, else
/// `--meta-qcom-commit`.
fn warm(settings: &Settings, work: &Path, lock: Option<&LockFile>, ui: &Ui) -> Option<MetaQcom> {
    let spec = &settings.meta_qcom;
    let locked = lock.and_then(|lock| lock.repos.get("meta-qcom")).map(|pin| pin.commit.as_str());
    let pinned = locked.or_else(|| spec.commit.as_ref().map(|c| c.as_str()));
    let dir = checkout_dir(work);
    let head = super::warm_checkout::unchanged_head(&dir, spec.branch.as_str(), pinned)?;
    let meta_qcom = MetaQcom::open(&dir).ok()?;
    ui.detail(format!(
        "meta-qcom in {} is already at {head}, where kas checkout would leave it; reading it as it is",
        crate::text::shown_path(&dir)
    ));
    Some(meta_qcom)
}

/// The kas file the checkout runs on: meta-qcom alone, as the plan's settings name it.
#[derive(Serialize)]
struct CheckoutFile<'a> {
    header: Header,
    repos: Repos<'a>,
}

#[derive(Serialize)]
struct Header {
    version: u32,
}

#[derive(Serialize)]
struct Repos<'a> {
    #[serde(rename = "meta-qcom")]
    meta_qcom: Repo<'a>,
}

#[derive(Serialize)]
struct Repo<'a> {
    url: &'a str,
    branch: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    commit: Option<&'a str>,
}

/// `kas checkout` of meta-qcom into the work folder, over the lock the build will use (the
/// `--lock` file or the one beside the kas file), from a private folder that is removed after;
/// the build folder is not touched. `None` when the checkout fails or holds no meta-qcom;
/// with the seconds kas itself ran (only the `kas checkout` process: writing its files and
/// opening the checkout are rtbuild's own time).
fn checkout(
    settings: &Settings,
    site: &Site,
    lock: Option<&LockFile>,
    options: &ImageOptions,
    runner: &dyn Runner,
    ui: &Ui,
) -> Result<(Option<MetaQcom>, f64), ImageError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |cause| crate::image::kasrun::BuildError::Unwritable { path, cause }
    };
    std::fs::create_dir_all(&site.work).map_err(io(&site.work))?;
    let private = tempfile::Builder::new()
        .prefix("rtbuild-checkout")
        .tempdir()
        .map_err(io(&std::env::temp_dir()))?;
    let spec = &settings.meta_qcom;
    let file = CheckoutFile {
        header: Header { version: crate::formats::kas_yaml::KAS_FORMAT_VERSION },
        repos: Repos {
            meta_qcom: Repo {
                url: spec.url.as_str(),
                branch: spec.branch.as_str(),
                commit: spec.commit.as_ref().map(|c| c.as_str()),
            },
        },
    };
    let kas_file = private.path().join("meta-qcom.yml");
    // Plain structs of validated strings: serialising them cannot fail.
    let yaml = serde_yaml::to_string(&file).unwrap_or_default();
    write(&kas_file, yaml.as_bytes())?;
    let pins = private.path().join("lock.yml");
    // In kas's own form, as the build will read it.
    let pinned = lock
        .map(|lock| lock.to_kas_yaml("The lock the build uses, for meta-qcom's checkout."))
        .unwrap_or_else(|| {
            crate::formats::kas_yaml::local_conf_include("No lock.", "rtbuild", &[])
        });
    write(&pins, pinned.as_bytes())?;
    let build_dir = private.path().join("build");
    let paths = BuildPaths {
        work: site.work.clone(),
        out: private.path().to_path_buf(),
        log: build_dir.join("checkout.log"),
        build_dir,
        kas_file,
        caches_file: pins,
    };
    let launch = &options.setup.launch;
    // Only the repositories: meta-qcom alone has no oe-init-build-env to set up, and the
    // build writes its own bblayers.conf and local.conf.
    let checkout = command::kas_checkout(&launch.launcher.program, &paths, &site.dirs).args([
        "--skip",
        "setup_environ",
        "--skip",
        "write_bbconfig",
    ]);
    let cmd = command::in_container(checkout, launch.launcher.engine);
    // What is checked out and where it stays: the command names the private folder, which is
    // gone once this returns.
    ui.status("Checking out", checking_out(settings, lock, &checkout_dir(&site.work)));
    let started = std::time::Instant::now();
    let ran = runner.capture(&cmd).and_then(|output| check_status(&cmd, output));
    let kas_secs = started.elapsed().as_secs_f64();
    if let Err(err) = ran {
        let why = match err {
            RunError::Status { status, .. } => status,
            RunError::Spawn { cause, .. } => format!("kas could not start: {cause}"),
            other => other.to_string(),
        };
        ui.detail(format!("kas checkout of meta-qcom failed ({why}); kas build will report it"));
        return Ok((None, kas_secs));
    }
    if signals::interrupted() {
        return Err(Interrupted.into());
    }
    Ok((MetaQcom::open(&checkout_dir(&site.work)).ok(), kas_secs))
}

/// What `kas checkout` fetches and where it leaves it: `meta-qcom URL (branch B[, commit C[ from
/// the lock]]) into WORK/meta-qcom`, the revision as the lock or `--meta-qcom-commit` pins it.
fn checking_out(settings: &Settings, lock: Option<&LockFile>, dir: &Path) -> String {
    let spec = &settings.meta_qcom;
    let locked = lock.and_then(|lock| lock.repos.get("meta-qcom")).map(|pin| pin.commit.as_str());
    let revision = match (locked, &spec.commit) {
        (Some(commit), _) => format!("branch {}, commit {commit} from the lock", spec.branch),
        (None, Some(commit)) => format!("branch {}, commit {commit}", spec.branch),
        (None, None) => format!("branch {}", spec.branch),
    };
    format!("meta-qcom {} ({revision}) into {}", spec.url, crate::text::shown_path(dir))
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), ImageError> {
    crate::files::write::write_atomic(path, bytes, false)
        .map_err(|e| ImageError::Generate(crate::layer::generate::GenerateError::from(e)))
}

/// Where kas checks meta-qcom out: `meta-qcom` in the work folder.
fn checkout_dir(work: &Path) -> PathBuf {
    work.join("meta-qcom")
}
