//! [`Refusal`]: input the command layer itself refuses (exit 2): flags that do not go together,
//! a flag a command needs, a value checked against another. Each is one line,
//! `<what>; <how to fix>`; a variant that names a stage's error keeps it as a typed field.
//!
//! A stage error that is input only where a command uses it (a CPU list, a `--out` folder, a
//! `--cyclictest-args` value) is held here too, shown as it is.

use std::path::{Path, PathBuf};

use crate::host::cpus::CpuListError;
use crate::plan::CpuSet;

#[derive(Debug, thiserror::Error)]
pub(crate) enum Refusal {
    // Stage errors that are the user's input where the command layer meets them.
    #[error(transparent)]
    CpuList(#[from] CpuListError),
    #[error(transparent)]
    Output(#[from] crate::files::output::OutputError),
    #[error(transparent)]
    BuildSetting(crate::image::kasrun::BuildError),
    #[error(transparent)]
    Install(#[from] crate::image::ci::BadInstall),
    #[error(transparent)]
    LockFile(crate::release::lock::LockError),
    #[error(transparent)]
    KernelTree(#[from] crate::verify::kconfig::tree::NotKernelSource),
    #[error(transparent)]
    Report(#[from] crate::results::report::ReportError),
    #[error(transparent)]
    Distro(#[from] crate::plan::UnknownDistro),
    #[error(transparent)]
    Job(#[from] crate::lab::job::JobError),
    #[error(transparent)]
    Words(#[from] crate::measure::toolargs::WordsError),
    #[error(transparent)]
    Options(#[from] crate::measure::toolargs::OptionError),
    #[error(transparent)]
    Tests(#[from] crate::measure::rttests::TestsError),
    #[error(transparent)]
    TestArgs(#[from] crate::measure::rttests::options::TestArgsError),
    #[error(transparent)]
    Scenario(#[from] crate::measure::testrun::UnknownScenario),
    #[error(transparent)]
    Duration(#[from] crate::measure::testrun::BadDuration),
    /// `--loops` at the interval runs longer than `--duration` may (30 days).
    #[error(
        "--loops {loops} at {interval_us} µs runs {} days, more than 30; pass fewer loops or use --duration (at most 30d)",
        seconds / 86_400
    )]
    LoopsTooLong { loops: u64, interval_us: u32, seconds: u64 },
    /// `--main-cpu` is not a housekeeping CPU (the measurement says why).
    #[error(transparent)]
    MainCpu(crate::measure::testrun::MainCpuOffHousekeeping),
    /// `--deploy` names no way to flash (the catalog says why).
    #[error(transparent)]
    Deploy(crate::catalog::UnknownDeploy),
    /// `--arch` names no QEMU architecture (the LAVA job says which it knows).
    #[error(transparent)]
    Arch(crate::lab::qemu::UnknownArch),

    // lock
    #[error("a lock FILE is read only with --check; use --machine to write one")]
    LockFileWithoutCheck,
    #[error("--machine is required to write a lock; or pass --check FILE or --diff OLD NEW")]
    LockNeedsMachine,
    #[error(
        "--check needs --machine or a lock FILE; pass --machine NAME or the lock file to check"
    )]
    CheckNeedsLock,
    #[error("--install needs --machine (the build to install the lock for)")]
    InstallNeedsMachine,

    // bundle
    #[error("--machine is required to make a bundle; pass --machine NAME (see `rtbuild machines`)")]
    BundleNeedsMachine,
    #[error(
        "nothing is built for {machine} (no {}); run `rtbuild image --machine {machine}` first, or pass --dir DIR where it generated",
        .dir.display()
    )]
    NothingBuilt { machine: String, dir: PathBuf },
    #[error("no --image and no rtbuild-plan.json to read it from; pass --image NAME")]
    NoImage,

    // ci
    #[error(
        "rtbuild ci builds the boards of --machines; pass --machines {} instead of --machine",
        crate::text::quote::sh(.0)
    )]
    CiMachine(String),
    #[error(
        "rtbuild ci builds the distros of --distros; pass --distros {} instead of --distro",
        crate::text::quote::sh(.0)
    )]
    CiDistro(String),
    #[error(
        "--canary-cron `{0}` is not a cron line; pass five fields of digits and `*/,-`, e.g. --canary-cron '17 5 * * *'"
    )]
    CanaryCron(String),
    #[error(
        "--kas-image `{}` is not pinned by digest; pass REGISTRY/NAME[:TAG]@sha256:<64 hex digits>, e.g. the digest `docker buildx imagetools inspect ghcr.io/siemens/kas/kas:5.5` prints",
        first_80_text(.0)
    )]
    KasImageDigest(String),
    #[error(
        "rtbuild ci sets DL_DIR and SSTATE_DIR for each job; pass --runner-cache DIR (downloads and sstate beneath it) instead of --dl-dir/--sstate-dir"
    )]
    CiCacheDirs,
    #[error(
        "bad {flag} `{}`: the CI jobs read it from their checkout; pass the {what}'s path inside the repository, relative to its top (letters, digits, `-_./+@`)",
        crate::text::printable(&first_80(.path))
    )]
    NotInRepo { flag: &'static str, path: PathBuf, what: &'static str },
    #[error(
        "{flag} {}: no such {what} in this repository; run rtbuild ci at the top of the repository the pipeline checks out, and pass a {what} in it",
        .path.to_string_lossy()
    )]
    MissingInRepo { flag: &'static str, path: PathBuf, what: &'static str },
    #[error(
        "bad --lock `{}`; pass the lock file's path inside the repository, relative to its top (letters, digits, `-_./+@`)",
        first_80(.0)
    )]
    LockNotInRepo(PathBuf),
    #[error(
        "bad --history-db-secret `{}`: not a CI secret name; pass the name of the secret or masked variable that holds the database URL (letters, digits and `_`, not starting with a digit or GITHUB_), e.g. RTBUILD_HISTORY_DB",
        crate::text::printable_first(.0, 80)
    )]
    SecretName(String),
    #[error(
        "bad --signing-key-secret `{}`: not a CI secret name the jobs can use; pass the name of the secret or masked variable that holds the ed25519 signing key (letters, digits and `_`, not starting with a digit or GITHUB_, not one the job sets), e.g. RELEASE_SIGNING_KEY",
        crate::text::printable_first(.0, 80)
    )]
    SigningSecretName(String),
    #[error(
        "bad --qcomflash-header `{}`: {why}; pass NAME=SECRET, an HTTP header name and the CI secret or masked variable holding its value (letters, digits and `_`, not starting with a digit or GITHUB_, not one the job sets), each header once, e.g. QLIAuthorization=QCOM_LAB_TOKEN",
        crate::text::printable_first(.flag, 80)
    )]
    HeaderSecret { flag: String, why: &'static str },
    #[error(
        "bad {flag} `{}`: it holds `${{{{`, which GitHub Actions expands before any shell runs, however the value is quoted; remove it (a secret reaches the jobs only through --history-db-secret or --qcomflash-header)",
        crate::text::printable_first(.value, 80)
    )]
    WorkflowExpression { flag: String, value: String },
    #[error("--lava-scenario: {0}")]
    LavaScenario(crate::measure::testrun::UnknownScenario),
    #[error(
        "--lava-scenario: `custom` needs a --load-cmd, which CI jobs do not take; use idle, stress, stress-isolated or full"
    )]
    LavaCustom,
    #[error("--lava-tests: {0}")]
    LavaTests(crate::measure::rttests::TestsError),
    #[error("--lava-duration: {0}")]
    LavaDuration(crate::measure::testrun::BadDuration),
    #[error("--lava-duration: {0}")]
    LavaJobLength(crate::lab::job::JobError),

    // report
    #[error(
        "two inputs give the OpenMetrics series {}; a report's OpenMetrics file holds one value per series: pass those inputs to separate `rtbuild report --openmetrics` runs, or record them with `rtbuild history add` and write `rtbuild history export --openmetrics`",
        crate::text::escape_controls(&.0.chars().take(300).collect::<String>())
    )]
    SameSeries(String),

    // history
    #[error(
        "--since \"{}\" is not a date; pass YYYY-MM-DD or YYYY-MM-DDThh:mm:ssZ (UTC)",
        crate::text::printable(.0)
    )]
    Since(String),

    // kconfig-check
    #[error(
        "--config `{}` is not a kernel option: {cause}; write it like CONFIG_EXPERT=y",
        crate::text::printable(.text)
    )]
    KconfigOption { text: String, cause: crate::verify::kconfig::LineError },

    // lava
    #[error(
        "rtbuild lava needs --machine NAME, the board the lab flashes; see `rtbuild machines` for the names"
    )]
    LavaNeedsMachine,

    // machines
    #[error("--meta-qcom lists every machine; drop `show NAME`, or drop --meta-qcom")]
    MetaQcomWithShow,

    // matrix
    #[error(
        "--work-dir {} (or KAS_WORK_DIR) puts every cell in one build folder, which holds one distro, but --distro lists {distros}; run one matrix per distro, each with its own --work-dir, or leave --work-dir and KAS_WORK_DIR unset (each distro's cells then build in their own folders)",
        crate::text::quote::sh(&.dir.to_string_lossy())
    )]
    WorkDirDistros { dir: PathBuf, distros: usize },
    #[error(
        "matrix takes --machines A,B,…, not --machine; pass --machines with a comma-separated list"
    )]
    MatrixMachine,

    // setup
    #[error(
        "/etc/os-release names neither a Debian/Ubuntu nor a Fedora family distribution; install the Yocto Project's build-host packages for it by hand, then run `rtbuild doctor`"
    )]
    UnknownHostOs,
    #[error("HOME is not set; pass --venv DIR")]
    NoHome,

    // test
    #[error(
        "--cyclictest-args `{0}` conflicts with --trace-above-us, which sets -b and --tracemark itself; drop it from --cyclictest-args"
    )]
    TraceConflict(String),
    #[error(
        "--trace-above-us traces cyclictest's breach, but --tests has no cyclictest; add cyclictest to --tests or drop --trace-above-us"
    )]
    TraceWithoutCyclictest,
    #[error("--measure-cpus: {0}; or pass `all` for every online CPU")]
    MeasureCpus(CpuListError),
    #[error(
        "--measure-cpus: CPU {off} is not online on {host} (online: {online}); pick CPUs from {online}, or pass `all`"
    )]
    MeasureCpusOffline { off: CpuSet, host: String, online: CpuSet },
    #[error(
        "--threads {threads} --unpinned leaves measured CPUs without a thread: cyclictest places one thread per CPU of {cpus} in turn, so {cpus} need at least {needed}; pass --threads {needed} or more, or --measure-cpus with at most {threads} CPUs"
    )]
    TooFewThreads { threads: u32, cpus: CpuSet, needed: usize },
    #[error("no target given; pass --local or --target ssh://USER@HOST[:PORT]")]
    NoTarget,

    // tune
    #[error("--emit writes the script and runs nothing; drop --apply/--verify/--revert")]
    EmitRunsNothing,
    #[error(
        "nothing to do; pass --emit DIR, or --apply, --verify or --revert with --local or --target"
    )]
    NothingToDo,
    #[error("--{0} needs a place to run; pass --local or --target ssh://USER@HOST[:PORT]")]
    NoPlaceToRun(&'static str),
    #[error(
        "--bootargs cannot tell which CPUs irqaffinity gets: with RT CPUs {rt} and no board, the board's other CPUs are unknown; pass --cpu-count N (the board's CPUs, e.g. --cpu-count 8), --housekeeping LIST, --machine NAME or --local/--target"
    )]
    BootargsBoardUnknown { rt: crate::plan::CpuSet },

    // verify
    #[error(
        "--fragment, --config, --patch, --cmdline, --distro and --image describe an rtbuild build; pass --machine (or --plan FILE) with them, or only --rt-cpus and --housekeeping for another board"
    )]
    BuildFlagsWithoutMachine,
    #[error("{flag}: {cause}")]
    CpuFlag { flag: &'static str, cause: CpuListError },
    #[error(
        "nothing to verify; pass a build folder, kernel config, kernel image, qcomflash folder or tarball, .deb, --target ssh://user@host, or --local for this machine"
    )]
    NothingToVerify,

    // --local / --target
    #[error("--local and --target name two places to run; pass one of them")]
    LocalAndTarget,
    #[error("--ssh-config {0}")]
    SshConfig(crate::files::input::InputError),

    // --load-cmd, --scenario, --test-args
    #[error(
        "--load-cmd is empty; pass the load's program and arguments, e.g. --load-cmd \"stress-ng -c 4\""
    )]
    EmptyLoadCmd,
    #[error(
        "--load-cmd: `{}` is not a program name; start with the program, e.g. --load-cmd \"stress-ng -c 4\"",
        crate::text::printable(.0)
    )]
    NotAProgram(String),
    #[error(
        "scenario `custom` runs the --load-cmd load; pass --load-cmd \"stress-ng …\" (or drop custom)"
    )]
    CustomWithoutLoad,
    #[error("--load-cmd is the load of scenario `custom`; add custom to --scenario")]
    LoadWithoutCustom,
    #[error("--test-args {0}: {0} is not in --tests; add it there or drop these options")]
    TestArgsNotRun(crate::measure::rttests::Program),
    #[error(
        "--test-args hackbench: no hackbench scenario runs; add hackbench to --scenario or drop these options"
    )]
    HackbenchNotRun,
    #[error("--test-args {0} is given twice; put all of {0}'s options in one value")]
    TestArgsTwice(crate::measure::rttests::Program),
}

/// The first 80 characters of `path`, as the refusals quote a path that may be anything.
/// A value as typed, its first 80 characters, escaped (no control character reaches the line).
fn first_80_text(value: &str) -> String {
    crate::text::printable_first(value, 80)
}

fn first_80(path: &Path) -> String {
    path.to_string_lossy().chars().take(80).collect()
}
