//! All clap code lives here: one file per subcommand, each turning its arguments into a
//! request and calling one stage. No clap type leaves this module.

mod args;
mod bundle;
mod ci;
#[cfg(test)]
mod ci_tests;
mod completions;
#[cfg(test)]
mod doc_examples_tests;
mod doctor;
pub(crate) mod error;
mod examples;
mod generate;
mod history;
mod image;
mod journeys;
mod kconfig_check;
mod lava;
mod lock;
mod machines;
mod matrix;
mod report;
pub(crate) mod run;
mod setup;
mod shell;
mod test;
mod tune;
mod usage_error;
mod verify;

use clap::{Args, Parser, Subcommand};

use crate::error::Exit;
use crate::text::ui::Ui;

/// Parses `args` (the first one is the program name) into the command to run. On help,
/// `--version` or bad input, clap's text or the one-line usage error is printed here and the
/// exit code to end with is returned instead.
pub(crate) fn parse(args: &[std::ffi::OsString]) -> Result<Cli, std::process::ExitCode> {
    use std::io::Write;
    Cli::try_parse_from(args).map_err(|err| {
        if let Some(line) = usage_error::one_line(&err, args) {
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "error: {line}");
            return std::process::ExitCode::from(Exit::Usage.code());
        }
        // Help and version go to stdout, as clap prints them.
        let _ = err.print();
        std::process::ExitCode::from(if err.use_stderr() { Exit::Usage.code() } else { 0 })
    })
}

/// The flags of the subcommand in `args` whose value came from an environment variable (a
/// visible `env =`), so an error they cause can name the variable.
pub(crate) fn values_from_environment(
    args: &[std::ffi::OsString],
) -> Vec<crate::cli::error::EnvValue> {
    use clap::CommandFactory;
    use clap::parser::ValueSource;
    let command = Cli::command();
    let Ok(matches) = command.clone().try_get_matches_from(args) else { return Vec::new() };
    let Some((name, sub)) = matches.subcommand() else { return Vec::new() };
    let Some(def) = command.find_subcommand(name) else { return Vec::new() };
    let mut found = Vec::new();
    for arg in def.get_arguments().filter(|a| !a.is_hide_set()) {
        let id = arg.get_id().as_str();
        let (Some(var), Some(long)) = (arg.get_env(), arg.get_long()) else { continue };
        if !sub.ids().any(|i| i.as_str() == id)
            || sub.value_source(id) != Some(ValueSource::EnvVariable)
        {
            continue;
        }
        let value = sub
            .get_raw(id)
            .and_then(|mut v| v.next())
            .map(|v| v.to_string_lossy().into_owned())
            .unwrap_or_default();
        found.push(crate::cli::error::EnvValue {
            flag: format!("--{long}"),
            var: var.to_string_lossy().into_owned(),
            value,
        });
    }
    found
}

/// Build, verify, release, tune and test Qualcomm Linux PREEMPT_RT images.
#[derive(Debug, Parser)]
#[command(name = "rtbuild", version, about, propagate_version = true, max_term_width = 100)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every subcommand takes, listed under their own heading in every `--help`.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Global options")]
pub(crate) struct GlobalArgs {
    /// Print machine-readable JSON on stdout instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
    /// Print only errors and warnings.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Print more detail.
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// Plain line output: no progress bars or redraws (the default when stderr is not a terminal).
    #[arg(long, global = true)]
    pub plain: bool,
    /// `CI`: set by CI services; their logs get plain lines. Hidden: a variable, not a flag.
    #[arg(long, global = true, hide = true, value_name = "ANY", env = "CI")]
    pub env_ci: Option<std::ffi::OsString>,
}

impl GlobalArgs {
    /// The output options these flags ask for.
    pub(crate) fn ui_options(&self) -> crate::text::ui::UiOptions {
        crate::text::ui::UiOptions {
            json: self.json,
            quiet: self.quiet,
            verbose: self.verbose,
            plain: self.plain || self.env_ci.is_some(),
        }
    }
}

/// Subcommands hold their argument structs by value; the enum is built once per run, so the
/// size difference between variants does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List the machine catalog, or show one machine.
    #[command(after_long_help = examples::MACHINES)]
    Machines(machines::MachinesArgs),
    /// Generate the kas file and BitBake layer for an RT build, and nothing else.
    #[command(after_long_help = examples::GENERATE)]
    Generate(generate::GenerateArgs),
    /// Check that this host can build: user, locale, HOSTTOOLS, python3, git, kas, disk, limits,
    /// repositories; each problem with its fix. Exit 0 ready, 2 not ready. With --meta-qcom DIR,
    /// compare what rtbuild relies on in meta-qcom with that checkout instead (exit 1: missing).
    #[command(after_long_help = examples::DOCTOR)]
    Doctor(doctor::DoctorArgs),
    /// Generate, then build the image with kas and BitBake: progress, full log, summary.
    #[command(after_long_help = examples::IMAGE)]
    Image(image::ImageArgs),
    /// Open `kas shell` on the configuration `rtbuild image` builds (or run one command in it).
    #[command(after_long_help = examples::SHELL)]
    Shell(shell::ShellArgs),
    /// Build several machines (and distros) in one work folder, sharing downloads and sstate.
    #[command(after_long_help = examples::MATRIX)]
    Matrix(matrix::MatrixArgs),
    /// Print a GitLab CI or GitHub Actions pipeline that runs the build matrix.
    #[command(after_long_help = examples::CI)]
    Ci(ci::CiArgs),
    /// Create a Python venv with the pinned kas, for users who have none.
    #[command(after_long_help = examples::SETUP)]
    Setup(setup::SetupArgs),
    /// Print a LAVA job that flashes a bundle on a farm board and measures it like `rtbuild test`.
    #[command(after_long_help = examples::LAVA)]
    Lava(lava::LavaArgs),
    /// Tune the RT CPUs at run time: write rtbuild-tune.sh, or apply, verify or revert it.
    #[command(after_long_help = examples::TUNE)]
    Tune(tune::TuneArgs),
    /// Measure latency with cyclictest under load scenarios and check that each run is valid.
    #[command(after_long_help = examples::TEST)]
    Test(test::TestArgs),
    /// Prove a kernel is the PREEMPT_RT kernel the plan asked for (config, cmdline, rt-tests).
    #[command(after_long_help = examples::VERIFY)]
    Verify(verify::VerifyArgs),
    /// Merge fragments into a kernel tree's defconfig and report options olddefconfig drops.
    #[command(after_long_help = examples::KCONFIG_CHECK)]
    KconfigCheck(kconfig_check::KconfigCheckArgs),
    /// Statistics, PASS/FAIL verdict and HTML/JUnit/JSON reports for cyclictest results.
    #[command(after_long_help = examples::REPORT)]
    Report(report::ReportArgs),
    /// Pin every repo of a build to a full commit, check checkouts, compare or update locks.
    #[command(after_long_help = examples::LOCK)]
    Lock(lock::LockArgs),
    /// Pack a build's qcomflash output into one flashable archive with a manifest, or check one.
    #[command(after_long_help = examples::BUNDLE)]
    Bundle(bundle::BundleArgs),
    /// Latency history keyed by build identity: record runs, list, compare, check, trend page.
    #[command(after_long_help = examples::HISTORY)]
    History(history::HistoryArgs),
    /// Print the common journeys (build, verify, measure a board, report, release) as commands
    /// to copy.
    #[command(after_long_help = examples::EXAMPLES)]
    Examples(journeys::ExamplesArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_long_help = examples::COMPLETIONS)]
    Completions(completions::CompletionsArgs),
    /// Write man pages: rtbuild.1 and one page per subcommand (rtbuild-image.1, …).
    #[command(after_long_help = examples::MAN)]
    ManPages(completions::ManArgs),
}

impl Command {
    pub(crate) fn run(self, ui: &Ui) -> crate::cli::error::Result<Exit> {
        match self {
            Command::Machines(args) => machines::run(args, ui),
            Command::Generate(args) => generate::run(args, ui),
            Command::Doctor(args) => doctor::run(args, ui),
            Command::Image(args) => image::run(args, ui),
            Command::Shell(args) => shell::run(args, ui),
            Command::Matrix(args) => matrix::run(args, ui),
            Command::Ci(args) => ci::run(args, ui),
            Command::Setup(args) => setup::run(args, ui),
            Command::Lava(args) => lava::run(args, ui),
            Command::Tune(args) => tune::run(args, ui),
            Command::Test(args) => test::run(args, ui),
            Command::Verify(args) => verify::run(args, ui),
            Command::KconfigCheck(args) => kconfig_check::run(args, ui),
            Command::Report(args) => report::run(args, ui),
            Command::Lock(args) => lock::run(args, ui),
            Command::Bundle(args) => bundle::run(args, ui),
            Command::History(args) => history::run(args, ui),
            Command::Examples(args) => journeys::run(args, ui),
            Command::Completions(args) => completions::completions(args, ui),
            Command::ManPages(args) => completions::man(args, ui),
        }
    }
}
