//! `rtbuild lock`: pin every repo of a generated build, check checkouts against a lock, compare
//! two locks, or move pins forward.

use std::path::{Path, PathBuf};

use clap::Args;

use super::args::BuildDirs;
use crate::cli::error::{Kind, Refusal};
use crate::error::Exit;
use crate::release::lock::{self, KasConfig, LockError, LockFile, PinRequest, UpdateTo};
use crate::text::ui::Ui;

#[derive(Debug, Args)]
pub(crate) struct LockArgs {
    #[command(flatten)]
    pub dirs: BuildDirs,
    /// Check the checkouts against the lock: exit 1 when a repo is missing, on another commit,
    /// dirty, unpinned, or pinned to a commit no longer on its branch.
    #[arg(long, conflicts_with_all = ["diff", "update"])]
    pub check: bool,
    /// Compare two lock files (either form): per repo, old and new commit and the commits between.
    #[arg(long, num_args = 2, value_names = ["OLD", "NEW"], conflicts_with = "update")]
    pub diff: Option<Vec<PathBuf>>,
    /// Move pins forward: the named repos, or every repo when none is named.
    #[arg(long, num_args = 0.., value_name = "REPO")]
    pub update: Option<Vec<String>>,
    /// Install a lock (kas's form or meta-qcom-releases' full `repos:` form) as
    /// `<machine>-rt.lock.yml` beside the generated kas file, so the next build uses it.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["check", "diff", "update"])]
    pub install: Option<PathBuf>,
    /// With --update: pin what is checked out now instead of the branch tip.
    #[arg(long, requires = "update")]
    pub from_checkout: bool,
    /// With --update: use the branch tips already fetched (no `git fetch`).
    #[arg(long, requires = "update")]
    pub no_fetch: bool,
    /// kas program to run (looked up on PATH).
    #[arg(long, value_name = "PROGRAM", env = "RTBUILD_KAS", default_value = "kas")]
    pub kas: PathBuf,
    /// Lock file to check (with --check) [default: <machine>-rt.lock.yml beside the kas file].
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
}

pub(super) fn run(args: LockArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    if let Some(files) = &args.diff {
        return diff(&files[0], &files[1], &args.dirs.work_dir()?, ui);
    }
    if args.check {
        return check(&args, ui);
    }
    if let Some(source) = &args.install {
        return install(source, &args, ui);
    }
    if args.file.is_some() {
        return Err(Refusal::LockFileWithoutCheck.into());
    }
    let kas_file = args.dirs.kas_file()?.ok_or(Refusal::LockNeedsMachine)?;
    let update = args.update.clone().map(|names| {
        let to = if args.from_checkout {
            UpdateTo::Checkout
        } else {
            UpdateTo::BranchTip { fetch: !args.no_fetch }
        };
        (names, to)
    });
    let request = PinRequest {
        kas: KasConfig { kas_file, work_dir: args.dirs.work_dir()?, kas_program: args.kas.clone() },
        update,
    };
    if let Some((names, _)) = &request.update {
        // Fail on bad input before saying anything.
        let current = LockFile::read(&lock::lock_path_for(&request.kas.kas_file))?;
        if let Some(name) = names.iter().find(|n| !current.repos.contains_key(*n)) {
            let known = current.repos.keys().map(|k| format!("`{k}`")).collect::<Vec<_>>();
            let err = LockError::UnknownUpdate { repo: name.clone(), known: known.join(", ") };
            return Err(err.into());
        }
    }
    ui.status("Locking", crate::text::shown_path(&request.kas.kas_file));
    let outcome = lock::pin(&request, &crate::host::runner::System)?;
    for change in &outcome.repos {
        if change.dirty {
            ui.warn(format!(
                "`{}` has uncommitted changes; the pin does not include them",
                change.repo
            ));
        }
        for c in &change.commits {
            ui.detail(format!("{} {} {}", change.repo, &c.commit[..12], c.subject));
        }
    }
    for s in &outcome.shadowed {
        ui.warn(format!(
            "`{}` is also pinned to {} by {} in the kas work folder, which kas applies after this \
             lock, so the build keeps that commit; run `rtbuild generate` again (the kas file it \
             writes includes its lock last, so the lock wins)",
            s.repo,
            &s.commit.as_str()[..12],
            s.lock_file.display()
        ));
    }
    for local in &outcome.local_repos {
        ui.note(format!("`{local}` is the folder holding the kas file; kas does not pin it"));
    }
    if request.update.is_some() && outcome.repos.iter().any(|c| c.action == "updated") {
        ui.note("run `kas checkout` (or `rtbuild image`) to move the checkouts to the new pins");
    }
    if ui.json() {
        ui.out_json(&outcome)?;
    } else {
        for c in &outcome.repos {
            let moved = match &c.old_commit {
                Some(old) => format!(
                    " (was {}, {})",
                    &old.as_str()[..12],
                    crate::text::counted(c.commits.len(), "commit")
                ),
                None => String::new(),
            };
            ui.out(format!("{:<8} {:<22} {}{moved}", c.action, c.repo, c.commit));
        }
        ui.out(crate::text::shown_path(&outcome.lock_file));
    }
    Ok(Exit::Ok)
}

fn check(args: &LockArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    let path = match (&args.file, args.dirs.kas_file()?) {
        (Some(file), _) => file.clone(),
        (None, Some(kas_file)) => lock::lock_path_for(&kas_file),
        (None, None) => {
            return Err(Refusal::CheckNeedsLock.into());
        }
    };
    let lock = LockFile::read(&path)?;
    let mut known: Vec<String> = checked_out(&args.dirs.work_dir()?);
    if let Some(kas_file) = args.dirs.kas_file()? {
        known.extend(lock::declared_repos(&kas_file));
    }
    lock::validate_names(&lock, &lock::known_with(known), &path)?;
    let report = lock::check(&lock, &path, &args.dirs.work_dir()?)?;
    if ui.json() {
        ui.out_json(&report)?;
    } else {
        for repo in &report.repos {
            let pinned =
                repo.pinned.as_ref().map_or("-".to_string(), |c| c.as_str()[..12].to_string());
            if repo.ok() {
                ui.out(format!("ok       {:<22} {pinned}", repo.repo));
            } else {
                for problem in &repo.problems {
                    ui.out(format!("FAIL     {:<22} {pinned} {problem}", repo.repo));
                }
            }
        }
    }
    if report.passed {
        ui.status(
            "Checked",
            format!(
                "{} {} {}",
                crate::text::counted(report.repos.len(), "repo"),
                if report.repos.len() == 1 { "matches" } else { "match" },
                crate::text::shown_path(&path)
            ),
        );
    } else {
        let bad = report.repos.iter().filter(|r| !r.ok()).count();
        ui.warn(format!(
            "{bad} of {} {} not match {}",
            crate::text::counted(report.repos.len(), "repo"),
            if bad == 1 { "does" } else { "do" },
            crate::text::shown_path(&path)
        ));
    }
    Ok(Exit::from_pass(report.passed))
}

fn diff(old: &Path, new: &Path, work_dir: &Path, ui: &Ui) -> crate::cli::error::Result<Exit> {
    let old_lock = LockFile::read(old)?;
    let new_lock = LockFile::read(new)?;
    let diff =
        lock::diff((&old_lock, old), (&new_lock, new), work_dir).map_err(Kind::CompareLocks)?;
    if ui.json() {
        ui.out_json(&diff)?;
        return Ok(Exit::Ok);
    }
    let short = |c: &Option<crate::plan::values::CommitId>| {
        c.as_ref().map_or("-".to_string(), |c| c.as_str()[..12].to_string())
    };
    for repo in &diff.repos {
        let count = match (&repo.commits, repo.dropped) {
            (Some(c), Some(d)) if d > 0 => format!(" ({} new, {d} dropped)", c.len()),
            (Some(c), _) => format!(" ({})", crate::text::counted(c.len(), "commit")),
            _ => String::new(),
        };
        ui.out(format!(
            "{:<8} {:<22} {} -> {}{count}",
            repo.change,
            repo.repo,
            short(&repo.old),
            short(&repo.new)
        ));
        for c in repo.commits.iter().flatten() {
            ui.out(format!("           {} {}", &c.commit[..12], c.subject));
        }
        if let Some(note) = &repo.note {
            ui.out(format!("           ({note})"));
        }
    }
    let repos = crate::text::counted(diff.repos.len(), "repo");
    ui.status("Compared", format!("{} of {repos} changed", diff.changed()));
    Ok(Exit::Ok)
}

/// Names of the git checkouts directly under `work_dir`.
fn checked_out(work_dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(work_dir) else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.path().join(".git").exists())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect()
}

fn install(source: &Path, args: &LockArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    let kas_file = args.dirs.kas_file()?.ok_or(Refusal::InstallNeedsMachine)?;
    let outcome = lock::install(source, &kas_file)?;
    ui.status(
        if outcome.written { "Installed" } else { "Unchanged" },
        format!(
            "{} pinned in {}",
            crate::text::counted(outcome.repos, "repo"),
            crate::text::shown_path(&outcome.lock_file)
        ),
    );
    if ui.json() {
        ui.out_json(&outcome)?;
    } else {
        ui.out(crate::text::shown_path(&outcome.lock_file));
    }
    Ok(Exit::Ok)
}
