//! `rtbuild verify [SOURCE…]`: is this really the PREEMPT_RT kernel that was asked for?

use std::path::{Path, PathBuf};

use clap::Args;

use super::args::{BoardArg, PlanArgs};
use crate::cli::error::Refusal;
use crate::error::{ErrorCode, Exit};
use crate::formats::plan_json::PlanFile;
use crate::formats::verify_json::{SourceError, VerifyFile};
use crate::host::SshTarget;
use crate::layer::render::PLAN_FILE;
use crate::plan::Expectations;
use crate::text::ui::Ui;
use crate::verify::{self, KernelSource, VerifyError, VerifyReport};

#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    /// What to verify, recognised by content: a build folder, a kernel config (plain or gzip,
    /// e.g. /proc/config.gz), a kernel image (Image, Image.gz, vmlinux, bzImage, UKI), a
    /// qcomflash folder or tarball, or a Debian kernel package (.deb).
    #[arg(value_name = "SOURCE")]
    pub sources: Vec<PathBuf>,
    /// A BitBake build folder (TOPDIR or TMPDIR).
    #[arg(long, value_name = "DIR")]
    pub build_dir: Vec<PathBuf>,
    /// A kernel config file, plain, gzip, xz or zstd.
    #[arg(long, value_name = "FILE")]
    pub kernel_config: Vec<PathBuf>,
    /// A kernel image: Image, Image.gz, vmlinux, bzImage/vmlinuz or a UKI.
    #[arg(long, value_name = "FILE")]
    pub kernel_image: Vec<PathBuf>,
    /// A qcomflash folder or .qcomflash.tar.gz tarball.
    #[arg(long, value_name = "PATH")]
    pub qcomflash: Vec<PathBuf>,
    /// A Debian kernel package (.deb).
    #[arg(long, value_name = "FILE")]
    pub deb: Vec<PathBuf>,
    /// A running target, reached with the system ssh: ssh://user@host[:port].
    #[arg(long, value_name = "URL")]
    pub target: Vec<String>,
    /// This machine's running kernel, read as a --target's is (uname, /proc/config.gz or
    /// /boot/config-RELEASE, /proc/cmdline, the isolated CPUs, rt-tests on PATH).
    #[arg(long)]
    pub local: bool,
    /// The kernel source tree whose Kconfig files explain a dropped option (file and line of
    /// the unmet `depends on`) [default: the build folder's
    /// tmp*/work-shared/<machine>/kernel-source; else a built-in table of mainline dependencies].
    #[arg(long, value_name = "DIR")]
    pub kernel_src: Option<PathBuf>,
    /// ssh client config passed to ssh as `-F FILE` (keys, jump hosts, known hosts).
    #[arg(long, value_name = "FILE")]
    pub ssh_config: Option<PathBuf>,
    /// Seconds one command on a --target may take before it is stopped (default 120).
    #[arg(long, value_name = "SECONDS", requires = "target", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub target_timeout: Option<u64>,
    /// The plan to verify against: the rtbuild-plan.json that `generate` writes beside the kas
    /// file (instead of --machine and the other plan flags).
    #[arg(long = "plan", value_name = "FILE", conflicts_with = "machine")]
    pub plan_file: Option<PathBuf>,
    #[command(flatten)]
    pub board: BoardArg,
    #[command(flatten)]
    pub plan: PlanArgs,
}

pub(super) fn run(args: VerifyArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    let expected = expectations(&args, ui)?;
    let sources = sources(&args)?;
    if let Some(dir) = &args.kernel_src {
        crate::verify::kconfig::tree::check_root(dir).map_err(Refusal::KernelTree)?;
    }
    if let Some(board) = &args.board.board {
        ui.status("Verifying", format!("board {board}"));
    }
    let mut reports = Vec::new();
    // An unusable source does not hide the verdicts of the others: every report is printed,
    // then every error, and the run exits 2.
    let mut errors: Vec<(String, VerifyError)> = Vec::new();
    for source in &sources {
        ui.detail(format!("verifying {}", source.name()));
        match verify::verify_with(
            source,
            expected.as_ref(),
            args.kernel_src.as_deref(),
            &crate::host::runner::System,
        ) {
            Ok(report) => reports.push(report),
            Err(err) => errors.push((source.name(), err)),
        }
    }
    let passed = errors.is_empty() && reports.iter().all(|r| r.passed);
    if ui.json() {
        let errors = errors
            .iter()
            .map(|(source, err)| SourceError { source: source.clone(), error: err.to_string() })
            .collect();
        let mut file = VerifyFile::new(reports.clone(), errors);
        file.board = args.board.board.clone();
        ui.out_json(&file)?;
    } else if !reports.is_empty() {
        let tables: Vec<String> = reports.iter().map(VerifyReport::to_table).collect();
        ui.out(tables.join("\n\n"));
        for report in &reports {
            for note in &report.notes {
                ui.note(note);
            }
        }
    }
    if expected.is_none() && !reports.is_empty() {
        ui.note("no plan given (--machine or --plan): only PREEMPT_RT, the command line and rt-tests were checked");
    }
    if let Some((_, last)) = errors.pop() {
        for (_, err) in &errors {
            ui.error(err, err.exit());
        }
        return Err(last.into());
    }
    if !passed {
        ui.warn(failed_summary(&reports, ui.json()));
    }
    Ok(Exit::from_pass(passed))
}

/// The one line a failed verify ends with on stderr, as `lock --check` and `bundle --check` do:
/// `2 of 14 checks failed for Image (FAIL rows in the table on stdout)`. `kconfig-check`, whose
/// result is a verify report too, ends with the same line.
pub(super) fn failed_summary(reports: &[VerifyReport], json: bool) -> String {
    let failing: Vec<&VerifyReport> = reports.iter().filter(|r| !r.passed).collect();
    let failed: usize = failing.iter().map(|r| r.failures().count()).sum();
    let checks: usize = failing.iter().map(|r| r.checks.len()).sum();
    let mut names: Vec<String> = failing.iter().map(|r| crate::text::shown(&r.source)).collect();
    let last = names.pop().unwrap_or_default();
    let sources = if names.is_empty() { last } else { format!("{} and {last}", names.join(", ")) };
    let place = if json {
        "status `fail` in the JSON on stdout"
    } else {
        "FAIL rows in the table on stdout"
    };
    checks_failed(failed, checks, &sources, place)
}

/// `2 of 14 checks failed for SUBJECT (PLACE)`: the summary line of every command whose checks
/// can fail (verify, kconfig-check, doctor), `place` saying where the failed ones are listed.
pub(super) fn checks_failed(failed: usize, checks: usize, subject: &str, place: &str) -> String {
    format!("{failed} of {} failed for {subject} ({place})", crate::text::counted(checks, "check"))
}

/// The plan from `--plan FILE`; or, with `--machine` alone, the `rtbuild-plan.json` that
/// `rtbuild generate` wrote under `rtbuild/<machine>/` in the current folder (what the build
/// was asked for, fragments and `--config` flags included); or the plan the flags describe
/// when any other plan flag is given; or none.
fn expectations(args: &VerifyArgs, ui: &Ui) -> crate::cli::error::Result<Option<Expectations>> {
    if let Some(path) = &args.plan_file {
        return Ok(Some(read_plan(path)?));
    }
    if let Some(path) = generated_plan(&args.plan)? {
        let expected = read_plan(&path)?;
        ui.note(format!(
            "checking against {}, written by `rtbuild generate`; pass --plan FILE or plan flags \
             (--rt-cpus, --config, ...) to check against another plan",
            crate::text::shown_path(&path)
        ));
        return Ok(Some(expected));
    }
    if args.plan.machine.name.is_some() || args.plan.project.is_some() {
        let plan = args.plan.plan()?;
        return Ok(Some(plan.expectations()));
    }
    if args.plan.cpus.rt_cpus.is_some() {
        return Ok(Some(cpu_plan(&args.plan)?));
    }
    Ok(None)
}

/// `--rt-cpus` (and `--housekeeping`) without a machine: a board rtbuild's catalog does not
/// know. The other plan flags describe an rtbuild build and need its machine.
fn cpu_plan(plan: &PlanArgs) -> crate::cli::error::Result<Expectations> {
    let build_flags = !plan.fragments.is_empty()
        || !plan.configs.is_empty()
        || !plan.patches.is_empty()
        || !plan.cmdline.is_empty()
        || plan.distro.is_some()
        || plan.image.is_some();
    if build_flags {
        return Err(Refusal::BuildFlagsWithoutMachine.into());
    }
    // The board's CPUs are not known: the layout is checked against the lists alone, and
    // without --housekeeping none is expected.
    let (layout, guessed) = plan.cpus.layout_offline()?;
    let housekeeping = (!guessed).then_some(layout.housekeeping);
    Ok(crate::plan::cpu_plan_expectations(layout.rt, housekeeping, !plan.no_nohz_full))
}

fn read_plan(path: &Path) -> Result<Expectations, VerifyError> {
    let text = crate::files::input::read_to_string(path, crate::files::input::TEXT_LIMIT)
        .map_err(VerifyError::Input)?;
    PlanFile::parse(&text)
        .map_err(|cause| VerifyError::PlanFile { path: path.to_path_buf(), cause })
}

/// `rtbuild/<machine>/rtbuild-plan.json` when `--machine` is the only flag that shapes the
/// plan and the file exists; any other plan flag means the user describes the plan.
fn generated_plan(plan: &PlanArgs) -> crate::cli::error::Result<Option<PathBuf>> {
    if plan.machine.name.is_none() {
        return Ok(None);
    }
    let shaped = plan.cpus.rt_cpus.is_some()
        || plan.cpus.housekeeping.is_some()
        || !plan.fragments.is_empty()
        || !plan.configs.is_empty()
        || !plan.patches.is_empty()
        || !plan.cmdline.is_empty()
        || plan.no_nohz_full
        || plan.distro.is_some()
        || plan.image.is_some()
        || plan.project.is_some();
    if shaped {
        return Ok(None);
    }
    let Some(machine) = plan.machine.lookup()? else { return Ok(None) };
    let path = crate::files::paths::machine_out(&machine.name).join(PLAN_FILE);
    Ok(path.is_file().then_some(path))
}

fn sources(args: &VerifyArgs) -> crate::cli::error::Result<Vec<KernelSource>> {
    let mut sources: Vec<KernelSource> =
        args.sources.iter().cloned().map(KernelSource::Auto).collect();
    sources.extend(args.build_dir.iter().cloned().map(KernelSource::BuildDir));
    sources.extend(args.kernel_config.iter().cloned().map(KernelSource::Config));
    sources.extend(args.kernel_image.iter().cloned().map(KernelSource::Image));
    sources.extend(args.qcomflash.iter().cloned().map(KernelSource::Qcomflash));
    sources.extend(args.deb.iter().cloned().map(KernelSource::Deb));
    if let Some(config) = &args.ssh_config {
        // ssh reads it whole: a FIFO would hang it, `/dev/zero` grow it without end.
        crate::files::input::check_file(config).map_err(Refusal::SshConfig)?;
    }
    for url in &args.target {
        let target = SshTarget::parse(url)?
            .with_ssh_config(args.ssh_config.clone())
            .with_step_limit(args.target_timeout);
        sources.push(KernelSource::Target(target));
    }
    if args.local {
        sources.push(KernelSource::Local);
    }
    if sources.is_empty() {
        return Err(Refusal::NothingToVerify.into());
    }
    Ok(sources)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::verify_json::agreed;

    fn report(version: Option<&str>) -> VerifyReport {
        VerifyReport {
            kernel_version: version.map(str::to_string),
            ..VerifyReport::new("s".into(), "kernel image".into(), Vec::new(), Vec::new())
        }
    }

    #[test]
    fn top_level_kernel_facts_only_when_the_reports_agree() {
        fn v(r: &VerifyReport) -> Option<&str> {
            r.kernel_version.as_deref()
        }
        assert_eq!(agreed(&[], v), None);
        assert_eq!(agreed(&[report(None), report(Some("a"))], v).as_deref(), Some("a"));
        assert_eq!(agreed(&[report(Some("a")), report(Some("a"))], v).as_deref(), Some("a"));
        assert_eq!(agreed(&[report(Some("a")), report(Some("b"))], v), None);
    }
}
