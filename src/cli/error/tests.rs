//! Every variant of every error a command can end with, through [`Error`]: the exit code it
//! must end rtbuild with (written here, one by one), and a message that never repeats its
//! cause (each cause in the chain is printed under it).
//!
//! A variant added to a stage error does not compile here until [`variant`] names it; give it
//! a sample in [`samples`] with its code, and the count of its type in
//! [`every_variant_has_a_sample`].

use std::collections::{BTreeMap, BTreeSet};
use std::error::Error as _;
use std::path::PathBuf;

use super::{Error, Kind, Refusal};
use crate::build::doctor::{NotReady, Problem};
use crate::build::image::ImageError;
use crate::build::image::verify_bundle::AfterError;
use crate::build::kas::KasError;
use crate::build::kasrun::BuildError;
use crate::catalog::CatalogError;
use crate::catalog::meta_qcom::MetaQcomError;
use crate::error::{Exit, Interrupted};
use crate::files::input::InputError;
use crate::files::output::OutputError;
use crate::files::write::WriteError;
use crate::formats::provenance_json::StatementError;
use crate::host::cpus::CpuListError;
use crate::host::cpus::{Board, LayoutError};
use crate::host::runner::RunError;
use crate::host::{HostError, TargetError};
use crate::layer::generate::GenerateError;
use crate::layer::render::RenderError;
use crate::measure::testrun::{OutError, PreflightError, TestError, TraceError};
use crate::measure::tune::TuneRunError;
use crate::plan::PlanError;
use crate::plan::values::ValueError;
use crate::release::bundle::BundleError;
use crate::release::lock::LockError;
use crate::results::history::HistoryError;
use crate::verify::kconfig::{ConfigError, LineError};
use crate::verify::kconfig_check::KconfigCheckError;
use crate::verify::{ArchiveError, VerifyError};

const U: Exit = Exit::Usage;
const F: Exit = Exit::Failed;

fn p(path: &str) -> PathBuf {
    PathBuf::from(path)
}

fn io() -> std::io::Error {
    std::io::Error::other("the disk said no")
}

fn cpus(list: &str) -> crate::plan::CpuSet {
    crate::plan::CpuSet::parse(list).unwrap()
}

fn cpu_list() -> CpuListError {
    CpuListError { input: "7-x".into(), reason: "`x` is not a CPU number".into() }
}

fn run() -> RunError {
    RunError::Status {
        cmd: "git fetch".into(),
        status: "exit status 128".into(),
        tail: "fatal: unable to access".into(),
        log: None,
    }
}

fn line() -> LineError {
    LineError::BadValue("maybe".into())
}

fn value() -> ValueError {
    ValueError { what: "--dl-dir", value: "a b".into(), reason: "holds a space".into() }
}

fn input() -> InputError {
    InputError::Missing { path: p("nope.yaml") }
}

fn git() -> git2::Error {
    git2::Error::from_str("object not found")
}

fn minijinja() -> minijinja::Error {
    minijinja::Error::new(minijinja::ErrorKind::UndefinedError, "`plan` is undefined")
}

fn json() -> serde_json::Error {
    serde_json::from_str::<serde_json::Value>("{").unwrap_err()
}

fn yaml() -> serde_yaml::Error {
    serde_yaml::from_str::<serde_yaml::Value>("a: [").unwrap_err()
}

fn lock_io() -> LockError {
    LockError::Write { path: p("a.lock.yml"), cause: io() }
}

fn bundle_io() -> BundleError {
    BundleError::Read { path: p("verify.json"), cause: io() }
}

/// One sample of every variant, with the exit code it must end rtbuild with.
fn samples() -> Vec<(Error, Exit)> {
    let mut all: Vec<(Error, Exit)> = Vec::new();
    let mut add = |err: Error, code: Exit| all.push((err, code));

    add(Interrupted.into(), Exit::Interrupted);

    // PlanError: the user's input, except what a catalog or meta-qcom says of itself.
    let plan = [
        (PlanError::NoMachine, U),
        (
            PlanError::Catalog(CatalogError::Unknown {
                name: "x".into(),
                close: vec![],
                known: vec![],
            }),
            U,
        ),
        (PlanError::MetaQcom(MetaQcomError::Read { path: p("conf"), cause: io() }), F),
        (PlanError::CpuList(cpu_list()), U),
        (PlanError::Layout(LayoutError::Overlap { both: cpus("3") }), U),
        (PlanError::Analyzer { given: "perf".into() }, U),
        (PlanError::Distro(crate::plan::UnknownDistro("x".into())), U),
        (PlanError::Hypervisor { given: "xen".into() }, U),
        (PlanError::HypervisorUnavailable { hypervisor: "gunyah", reason: "no file".into() }, U),
        (PlanError::HypervisorConflict, U),
        (
            PlanError::MissingCiFile(Box::new(crate::plan::compose::MissingCiFile {
                file: "ci/qcom-distro-kvm.yml".into(),
                by: "--include".into(),
                revision: "796d87f8".into(),
                dir: p("meta-qcom"),
                instead: "ci/gunyah.yml".into(),
            })),
            U,
        ),
        (PlanError::Value(value()), U),
        (PlanError::Config { text: "CONFIG_A=maybe".into(), cause: line() }, U),
        (PlanError::ConfigConflict { first: "CONFIG_A=y".into(), second: "CONFIG_A=n".into() }, U),
        (PlanError::PreemptRtDisabled { what: "--config".into(), setting: "x".into() }, U),
        (PlanError::FragmentMissing { path: p("a.cfg") }, U),
        (PlanError::FragmentNotCfg { path: p("a.txt") }, U),
        (PlanError::FragmentLine { path: p("a.cfg"), line: 2, cause: line() }, U),
        (PlanError::FragmentEmpty { path: p("a.cfg") }, U),
        (PlanError::PatchMissing { path: p("a.patch") }, U),
        (PlanError::PatchName { path: p("a.txt") }, U),
        (PlanError::NotAPatch { path: p("a.patch") }, U),
        (PlanError::DuplicateName { name: "a".into(), first: p("x/a"), second: p("y/a") }, U),
        (PlanError::NotAFile { what: "fragment", cause: input() }, U),
        (PlanError::ReservedCmdline { arg: "isolcpus=3".into(), key: "isolcpus".into() }, U),
        (PlanError::CmdlineTooLong { bytes: 100_300, limit: 2048 }, U),
        (PlanError::ProjectFile { path: p("rtbuild.yaml"), cause: input() }, U),
        (PlanError::ProjectYaml { path: p("rtbuild.yaml"), cause: yaml() }, U),
        (PlanError::Include("ci/x.yml".into()), U),
        (PlanError::IncludeName { path: "x.txt".into() }, U),
        (
            PlanError::IncludeNotAFile { message: "`x.yml` does not exist; check the path".into() },
            U,
        ),
        (PlanError::IncludeNotKas { path: "x.yml".into(), reason: "no header".into() }, U),
        (PlanError::IncludeUnreadable { cause: input() }, U),
    ];
    for (e, code) in plan {
        add(e.into(), code);
    }

    add(value().into(), U);

    let catalog = [
        CatalogError::Unknown { name: "x".into(), close: vec![], known: vec!["a".into()] },
        CatalogError::Invalid { path: p("a.yaml"), message: "bad".into() },
        CatalogError::Yaml { path: p("a.yaml"), cause: yaml() },
        CatalogError::DuplicateName { name: "a".into(), first: "x".into(), second: "y".into() },
        CatalogError::AliasClash {
            alias: "a".into(),
            machine: "m".into(),
            file: "x".into(),
            clash: "n".into(),
            other_file: "y".into(),
        },
        CatalogError::NotAFile { cause: input() },
        // A build for a board whose file has only what measuring needs.
        CatalogError::MeasuringOnly { name: "rk3588-evb".into(), missing: vec!["kas_file"] },
        // An unreadable --machines-dir is the folder the user named: exit 2.
        CatalogError::Read { path: p("boards"), cause: io() },
    ];
    for e in catalog {
        add(e.into(), U);
    }

    let meta_qcom = [
        (MetaQcomError::NotMetaQcom { dir: p("d"), missing: "conf/layer.conf" }, U),
        (
            MetaQcomError::BadCpuList {
                conf: p("m.conf"),
                line: 3,
                variable: "RT_CPUS".into(),
                value: "x".into(),
                reason: "not a list".into(),
            },
            U,
        ),
        (
            MetaQcomError::BadNumber {
                conf: p("m.conf"),
                line: 3,
                variable: "CPUS".into(),
                value: "x".into(),
            },
            U,
        ),
        (MetaQcomError::Read { path: p("m.conf"), cause: io() }, F),
        (MetaQcomError::Unreadable { path: p("m.conf"), cause: input() }, F),
        (MetaQcomError::UnknownMachine { name: "x".into(), dir: p("d") }, U),
        (MetaQcomError::NoKasFile { name: "x".into(), dir: p("d") }, U),
    ];
    for (e, code) in meta_qcom {
        add(e.into(), code);
    }

    for e in [
        TargetError::NotSsh("x".into()),
        TargetError::BadPart { url: "ssh://a b".into(), part: "host", value: "a b".into() },
        TargetError::BadPort { url: "ssh://a:x".into(), port: "x".into() },
        TargetError::TooLong { part: "user", length: 300, limit: 255 },
    ] {
        add(e.into(), U);
    }

    for e in [
        LayoutError::NoRtCpu,
        LayoutError::RtOutside { cpus: cpus("9"), board: Board::Given, all: cpus("0-3") },
        LayoutError::CpuZero { others: cpus("1-3") },
        LayoutError::HousekeepingOutside {
            cpus: cpus("9"),
            board: Board::Online("here".into()),
            all: cpus("0-3"),
        },
        LayoutError::Overlap { both: cpus("3") },
        LayoutError::NoHousekeeping { rt: cpus("0-3"), board: Board::Machine("m".into()) },
    ] {
        add(e.into(), U);
    }

    // GenerateError: a write that failed is the system's; the rest is said to be the input's.
    let generate = [
        (GenerateError::UnsafeLayerPath { out: p("o"), path: "a\nb".into() }, U),
        (GenerateError::UnsafePath(value()), U),
        (GenerateError::OutIsFile { out: p("o"), file: p("o/x") }, U),
        (GenerateError::IncludeOutside { file: p("/x.yml"), repo: p("/r") }, U),
        (GenerateError::Render(RenderError::Yaml(yaml())), U),
        (GenerateError::Write(WriteError::Io { path: p("o/x"), cause: io() }), F),
        (GenerateError::Lock(LockError::NoLock { path: p("x") }), U),
        (GenerateError::Output(OutputError::IsAFolder { flag: "--out", path: p("o") }), U),
        (
            GenerateError::Busy(crate::files::write::folder_lock::Busy {
                dir: p("o"),
                holder: Some(7),
            }),
            U,
        ),
    ];
    for (e, code) in generate {
        add(e.into(), code);
    }

    for (e, code) in [
        (WriteError::HandEdited { path: p("x") }, U),
        (WriteError::Foreign { path: p("x") }, U),
        (WriteError::GeneratedManifest { path: p("x"), cause: input().into() }, U),
        (WriteError::Io { path: p("x"), cause: io() }, F),
        (WriteError::NotWritable { path: p("/dev/sda"), why: "it is a block device".into() }, U),
    ] {
        add(e.into(), code);
    }

    let lock = [
        (LockError::Input(input()), U),
        (LockError::Yaml { path: p("l"), cause: yaml() }, U),
        (LockError::Shape { path: p("l"), problem: "no repos".into(), fix: "add them" }, U),
        (LockError::BadCommit { path: p("l"), repo: "r".into(), value: "x".into() }, U),
        (LockError::BadName { path: p("l"), repo: "r/../x".into() }, U),
        (LockError::UnknownRepo { path: p("l"), repo: "r".into(), hint: "x".into() }, U),
        (LockError::UnknownUpdate { repo: "r".into(), known: "`a`".into() }, U),
        (LockError::NoLock { path: p("l") }, U),
        (LockError::NoKasFile { path: p("k") }, U),
        (LockError::NotCheckedOut { repo: "r".into(), path: p("w/r") }, F),
        (LockError::Git { repo: "r".into(), path: p("w/r"), cause: git() }, F),
        (LockError::NoBranch { repo: "r".into(), fix: "add a branch" }, F),
        (LockError::Kas(run()), F),
        (LockError::Fetch { repo: "r".into(), source: run() }, F),
        (LockError::KasOutput { message: "x".into() }, F),
        (LockError::KasJson { cause: json() }, F),
        (lock_io(), F),
    ];
    for (e, code) in lock {
        add(e.into(), code);
    }
    add(Kind::CompareLocks(LockError::NoLock { path: p("l") }).into(), U);
    add(Kind::CompareLocks(LockError::Kas(run())).into(), F);

    for e in verify_errors() {
        add(e.into(), U);
    }

    let kconfig_check = [
        (KconfigCheckError::Input(VerifyError::Missing { path: p("k") }), U),
        (KconfigCheckError::Run(run()), F),
    ];
    for (e, code) in kconfig_check {
        add(e.into(), code);
    }

    let bundle = [
        (BundleError::NoQcomflash { path: p("d") }, U),
        (BundleError::EmptyQcomflash { path: p("d") }, F),
        (BundleError::NotThisImage { path: p("run"), message: "another kernel".into() }, F),
        (BundleError::Unverified, U),
        (BundleError::VerifyFailed { failed: "PREEMPT_RT".into() }, F),
        (BundleError::VerifyReport { path: p("v"), cause: input().into() }, U),
        (BundleError::PlanFile { path: p("p"), cause: input().into() }, U),
        (BundleError::Measurement { path: p("m"), message: "bad".into() }, U),
        (BundleError::MeasurementUnreadable { path: p("m"), cause: input().into() }, U),
        (
            BundleError::Provenance {
                path: p("p"),
                cause: StatementError::NotAStatement { kind: "x".into() },
            },
            F,
        ),
        (BundleError::Changed { path: p("p") }, F),
        (BundleError::SourceDateEpoch { value: "x".into() }, U),
        (BundleError::SigningKey { path: p("k"), message: "not a key".into() }, U),
        (BundleError::PublicKey { path: p("k"), message: "not a key".into() }, U),
        (bundle_io(), F),
        (BundleError::Write { path: p("b"), cause: io() }, F),
        (BundleError::NotABundle { path: p("b"), message: "bad".into() }, U),
        (BundleError::Unreadable { path: p("b"), cause: io() }, U),
        (BundleError::MemberTooBig { path: p("b"), member: "x".into(), limit: 1 }, U),
        (
            BundleError::TooBig {
                path: p("b"),
                what: "its members read into memory hold over 96 MiB".into(),
            },
            U,
        ),
        (BundleError::ExternalLink { link: p("l"), target: p("/etc") }, U),
        (BundleError::NotBuildReadable { path: p("x"), target: p("y"), uid: 0 }, U),
        (BundleError::Input(input()), U),
    ];
    for (e, code) in bundle {
        add(e.into(), code);
    }

    let history = [
        (HistoryError::Url { url: "x".into(), message: "bad".into() }, U),
        (HistoryError::Open { db: "x".into(), message: "bad".into() }, U),
        (HistoryError::Oversized { db: "postgres://u@h/db".into(), bytes: 2_147_483_647 }, U),
        (
            HistoryError::OpenFile {
                db: "sqlite:x".into(),
                message: "file is not a database".into(),
            },
            U,
        ),
        (HistoryError::Newer { db: "x".into(), found: 3, latest: 2 }, U),
        (HistoryError::Db { db: "x".into(), message: "bad".into() }, F),
        (HistoryError::Input("bad".into()), U),
        (HistoryError::ConfigUnreadable { path: p("c"), cause: io() }, U),
        (HistoryError::ConfigNotAFile { path: p("c") }, U),
        (HistoryError::Config { path: p("c"), cause: ConfigError::Empty }, U),
        (HistoryError::Report(crate::results::report::ReportError::Input(input())), U),
        (HistoryError::Bundle { path: p("b"), message: "bad".into() }, U),
        (HistoryError::NotFound("x".into()), U),
        (HistoryError::Ambiguous("x".into()), U),
        (HistoryError::NoDefault, U),
    ];
    for (e, code) in history {
        add(e.into(), code);
    }

    for (e, code) in build_errors() {
        add(e.into(), code);
    }
    let kas = [
        (KasError::Missing { looked: "PATH".into() }, U),
        (KasError::Broken { program: p("kas"), detail: "x".into() }, F),
        (
            KasError::TooOld {
                program: p("kas"),
                version: crate::build::kas::version::KasVersion { major: 4, minor: 0 },
            },
            U,
        ),
        (KasError::BadToken { flag: "--out", value: "a:b".into(), expected: "no colon" }, U),
        (KasError::Run(run()), F),
    ];
    for (e, code) in kas {
        add(e.into(), code);
    }

    let problem = Problem { check: "disk", message: "3 GB free".into(), fix: "free 50 GB".into() };
    add(NotReady { problems: vec![problem] }.into(), U);

    let image = [
        (ImageError::BundleNeedsWholeImage, U),
        (ImageError::Engine("unknown engine `x`; use docker or podman".into()), U),
        (ImageError::Path(value()), U),
        (ImageError::NotReady(NotReady { problems: vec![] }), U),
        (ImageError::Plan(PlanError::NoMachine), U),
        (
            ImageError::Plan(PlanError::MetaQcom(MetaQcomError::Read {
                path: p("c"),
                cause: io(),
            })),
            F,
        ),
        (ImageError::Generate(GenerateError::OutIsFile { out: p("o"), file: p("o/x") }), U),
        (ImageError::Lock(LockError::NoLock { path: p("l") }), U),
        (ImageError::Lock(lock_io()), F),
        (ImageError::Build(KasError::Missing { looked: "PATH".into() }.into()), U),
        (
            ImageError::Build(
                KasError::BadToken { flag: "--out", value: "a:b".into(), expected: "no colon" }
                    .into(),
            ),
            U,
        ),
        // After a build ran, anything that stops verification fails the build.
        (ImageError::After(AfterError::Bundle(BundleError::Unverified)), F),
        (ImageError::After(AfterError::Verify(VerifyError::Missing { path: p("k") })), F),
        (ImageError::After(AfterError::Dump(run())), F),
        (ImageError::After(AfterError::Write(WriteError::Foreign { path: p("x") })), F),
        (ImageError::Interrupted(Interrupted), Exit::Interrupted),
    ];
    for (e, code) in image {
        add(e.into(), code);
    }

    let test = [
        (TestError::Out(OutError::NotEmpty(p("o"))), U),
        (TestError::Out(OutError::File(p("o"))), U),
        (TestError::Preflight(PreflightError::Prepare { host: "h".into(), detail: "x".into() }), U),
        (TestError::Preflight(PreflightError::Unreachable { host: "h".into(), cause: run() }), U),
        (TestError::Preflight(PreflightError::Missing { host: "h".into(), tools: "x".into() }), U),
        (
            TestError::Preflight(PreflightError::Privileges {
                host: "h".into(),
                uid: "1000".into(),
                missing: "CAP_SYS_NICE".into(),
            }),
            U,
        ),
        (
            TestError::Preflight(PreflightError::TuneNeedsRoot {
                host: "h".into(),
                uid: "1000".into(),
            }),
            U,
        ),
        (
            TestError::Preflight(PreflightError::IsolationMismatch {
                host: "h".into(),
                why: "--rt-cpus names RT CPUs 7 isolated, but the kernel isolates 3; boot with isolcpus=7".into(),
            }),
            U,
        ),
        (
            TestError::Preflight(PreflightError::UnpinnedLoadNeedsIsolation {
                host: "h".into(),
                why: "scenario stress-isolated needs RT CPUs 1 isolated; boot with isolcpus=1".into(),
            }),
            U,
        ),
        (TestError::Trace(TraceError::Unavailable { host: "h".into(), why: "x".into() }), U),
        (TestError::Trace(TraceError::Setup { host: "h".into(), detail: "x".into() }), U),
        (TestError::CreateDir { path: p("o/raw"), cause: io() }, F),
        (TestError::Save { path: p("o/tune-apply.txt"), cause: io() }, F),
        (TestError::Tune(TuneRunError::Run(run())), F),
    ];
    for (e, code) in test {
        add(e.into(), code);
    }

    for e in [
        RunError::NotFound { program: "kas".into(), hint: "install it".into() },
        RunError::Spawn { cmd: "kas".into(), cause: io() },
        RunError::Log { path: p("build.log"), cause: io() },
        RunError::TimedOut { step: "the step `probe` on ssh://root@board".into(), seconds: 120.0 },
        RunError::Flooded { step: "`uname -v`".into(), bytes: 16 << 20 },
        run(),
    ] {
        add(e.into(), F);
    }
    for e in [
        HostError::Run(run()),
        HostError::Unreachable { host: "h".into(), stderr: "x".into() },
        HostError::Online { host: "h".into(), text: "x".into() },
    ] {
        add(e.into(), F);
    }
    for e in [
        TuneRunError::Run(run()),
        TuneRunError::Connection { host: "h".into(), stderr: "x".into() },
        TuneRunError::Script {
            action: "apply",
            host: "h".into(),
            status: "exit status 1".into(),
            stderr: "x".into(),
        },
    ] {
        add(e.into(), F);
    }
    add(TuneRunError::NotRoot { action: "apply", host: "h".into(), uid: "1000".into() }.into(), U);

    add(Kind::TrendPage(minijinja()).into(), F);
    add(Kind::Emit { path: p("d/rtbuild-tune.sh"), cause: io() }.into(), F);
    add(Kind::ManPages(io()).into(), F);
    add(Kind::Json(json()).into(), F);
    add(Kind::LavaYaml(yaml()).into(), F);
    add(
        Kind::HostSetup { command: "apt-get install x".into(), how: "exit status 100".into() }
            .into(),
        F,
    );
    add(
        Kind::FromEnvironment {
            flag: "--machine".into(),
            var: "KAS_MACHINE".into(),
            value: "rb3gen2-core-kit".into(),
            cause: LayoutError::NoRtCpu.into(),
        }
        .into(),
        U,
    );

    for e in refusals() {
        add(e.into(), U);
    }
    all
}

fn verify_errors() -> Vec<VerifyError> {
    vec![
        VerifyError::Unreadable { path: p("k"), cause: io() },
        VerifyError::Config { path: p("k"), cause: ConfigError::Empty },
        VerifyError::Image {
            path: p("Image"),
            cause: crate::verify::kconfig::image::ImageError::Corrupt {
                format: "gzip",
                cause: io(),
            },
        },
        VerifyError::Missing { path: p("k") },
        VerifyError::Folder { path: p("k") },
        VerifyError::Empty { path: p("k") },
        VerifyError::NoKernel { path: p("k"), hint: "x".into() },
        VerifyError::Archive { path: p("k"), what: "deb", cause: ArchiveError::NoDataTar },
        VerifyError::PlanFile {
            path: p("k"),
            cause: crate::formats::FormatError::NoBoolean { field: "x" },
        },
        VerifyError::Target { target: "target ssh://h".into(), message: "bad".into() },
        VerifyError::TargetRun(run()),
        VerifyError::Spdx { path: p("k"), cause: json() },
        VerifyError::Input(input()),
    ]
}

fn build_errors() -> Vec<(BuildError, Exit)> {
    vec![
        (BuildError::Kas(KasError::Missing { looked: "PATH".into() }), U),
        (
            BuildError::Kas(KasError::BadToken {
                flag: "--out",
                value: "a:b".into(),
                expected: "x",
            }),
            U,
        ),
        (BuildError::BadSetting { flag: "--task", value: "x".into(), expected: "a task" }, U),
        (BuildError::Unwritable { path: p("o"), cause: io() }, F),
        (BuildError::Run(run()), F),
    ]
}

fn refusals() -> Vec<Refusal> {
    use crate::measure::rttests::Program;
    vec![
        Refusal::CpuList(cpu_list()),
        Refusal::Output(OutputError::IsAFolder { flag: "--out", path: p("o") }),
        Refusal::BuildSetting(BuildError::BadSetting {
            flag: "--task",
            value: "x".into(),
            expected: "a task",
        }),
        Refusal::Install(crate::build::ci::BadInstall::BadChecksum("x".into())),
        Refusal::LockFile(lock_io()),
        Refusal::KernelTree(crate::verify::kconfig::tree::NotKernelSource(p("src"))),
        Refusal::Report(crate::results::report::ReportError::Input(input())),
        Refusal::Report(crate::results::report::ReportError::LinkInFolder {
            dir: p("r"),
            file: p("raw/x.txt"),
            target: p("/etc/shadow"),
        }),
        Refusal::Report(crate::results::report::ReportError::FolderTooBig {
            path: p("r/run.json"),
            what: "more than 4096 files to read".into(),
        }),
        Refusal::Distro(crate::plan::UnknownDistro("x".into())),
        Refusal::Job(crate::lab::job::JobError::Image("a b".into())),
        Refusal::Words(crate::measure::toolargs::split("--load-cmd", "a 'b").unwrap_err()),
        Refusal::Options(crate::measure::toolargs::CYCLICTEST.check_text("-p 90").unwrap_err()),
        Refusal::Tests(crate::measure::rttests::parse_list("nope").unwrap_err()),
        Refusal::TestArgs(crate::measure::rttests::options::parse("nope").unwrap_err()),
        Refusal::Scenario(crate::measure::testrun::UnknownScenario("x".into())),
        Refusal::Duration(crate::measure::testrun::BadDuration("x".into())),
        Refusal::LoopsTooLong { loops: 2_000_000_000, interval_us: 1000, seconds: 2_000_000 },
        Refusal::MainCpu(crate::measure::testrun::MainCpuOffHousekeeping {
            cpu: 3,
            housekeeping: cpus("0-2"),
        }),
        Refusal::Deploy("x".parse::<crate::catalog::Deploy>().unwrap_err()),
        Refusal::Arch("x".parse::<crate::lab::qemu::Arch>().unwrap_err()),
        Refusal::LockFileWithoutCheck,
        Refusal::LockNeedsMachine,
        Refusal::CheckNeedsLock,
        Refusal::InstallNeedsMachine,
        Refusal::BundleNeedsMachine,
        Refusal::NothingBuilt { machine: "m".into(), dir: p("rtbuild/m") },
        Refusal::NoImage,
        Refusal::CiMachine("m".into()),
        Refusal::CiDistro("d".into()),
        Refusal::CanaryCron("x".into()),
        Refusal::KasImageDigest("ghcr.io/siemens/kas/kas:5.5".into()),
        Refusal::CiCacheDirs,
        Refusal::NotInRepo { flag: "--fragment", path: p("/abs.cfg"), what: "file" },
        Refusal::MissingInRepo { flag: "--fragment", path: p("a.cfg"), what: "file" },
        Refusal::LockNotInRepo(p("/a.lock")),
        Refusal::LavaScenario(crate::measure::testrun::UnknownScenario("x".into())),
        Refusal::LavaCustom,
        Refusal::SecretName("1DB".into()),
        Refusal::SigningSecretName("KEY }}${{ github.token".into()),
        Refusal::WorkflowExpression {
            flag: "--config".into(),
            value: "CONFIG_X=\"${{ github.token }}\"".into(),
        },
        Refusal::HeaderSecret {
            flag: "A=LAVA_TOKEN".into(),
            why: "the LAVA job sets that variable itself",
        },
        Refusal::WorkDirDistros { dir: p("w"), distros: 2 },
        Refusal::LavaTests(crate::measure::rttests::parse_list("nope").unwrap_err()),
        Refusal::LavaDuration(crate::measure::testrun::BadDuration("x".into())),
        Refusal::LavaJobLength(crate::lab::job::JobError::Image("a b".into())),
        Refusal::SameSeries("{machine=\"m\"}".into()),
        Refusal::Since("x".into()),
        Refusal::KconfigOption { text: "CONFIG_A=maybe".into(), cause: line() },
        Refusal::LavaNeedsMachine,
        Refusal::MetaQcomWithShow,
        Refusal::MatrixMachine,
        Refusal::UnknownHostOs,
        Refusal::NoHome,
        Refusal::TraceConflict("-b".into()),
        Refusal::TraceWithoutCyclictest,
        Refusal::MeasureCpus(cpu_list()),
        Refusal::MeasureCpusOffline { off: cpus("9"), host: "h".into(), online: cpus("0-3") },
        Refusal::TooFewThreads { threads: 2, cpus: cpus("0-3"), needed: 4 },
        Refusal::NoTarget,
        Refusal::EmitRunsNothing,
        Refusal::NothingToDo,
        Refusal::NoPlaceToRun("apply"),
        Refusal::BootargsBoardUnknown { rt: cpus("3") },
        Refusal::BuildFlagsWithoutMachine,
        Refusal::CpuFlag { flag: "--rt-cpus", cause: cpu_list() },
        Refusal::NothingToVerify,
        Refusal::LocalAndTarget,
        Refusal::SshConfig(input()),
        Refusal::EmptyLoadCmd,
        Refusal::NotAProgram("-x".into()),
        Refusal::CustomWithoutLoad,
        Refusal::LoadWithoutCustom,
        Refusal::TestArgsNotRun(Program::Oslat),
        Refusal::HackbenchNotRun,
        Refusal::TestArgsTwice(Program::Oslat),
    ]
}

/// `Type::Variant` of `err` and of the stage error it holds. The matches name every variant
/// (no `_`), so a new one does not compile until it is named here.
fn variant(err: &Error) -> String {
    let (ty, name): (&str, &str) = match err.kind() {
        Kind::Refusal(e) => ("Refusal", refusal(e)),
        Kind::Interrupted(_) => ("Interrupted", "Interrupted"),
        Kind::Plan(e) => ("PlanError", plan(e)),
        Kind::Value(_) => ("ValueError", "ValueError"),
        Kind::Catalog(e) => ("CatalogError", catalog(e)),
        Kind::MetaQcom(e) => ("MetaQcomError", meta_qcom(e)),
        Kind::Target(e) => ("TargetError", target(e)),
        Kind::Layout(e) => ("LayoutError", layout(e)),
        Kind::Generate(e) => ("GenerateError", generate(e)),
        Kind::Write(e) => ("WriteError", write(e)),
        Kind::Lock(e) => ("LockError", lock(e)),
        Kind::CompareLocks(_) => ("Kind", "CompareLocks"),
        Kind::Verify(e) => ("VerifyError", verify(e)),
        Kind::KconfigCheck(e) => match e {
            KconfigCheckError::Input(_) => ("KconfigCheckError", "Input"),
            KconfigCheckError::Run(_) => ("KconfigCheckError", "Run"),
        },
        Kind::Bundle(e) => ("BundleError", bundle(e)),
        Kind::History(e) => ("HistoryError", history(e)),
        Kind::Build(e) => ("BuildError", build(e)),
        Kind::Kas(e) => ("KasError", kas(e)),
        Kind::NotReady(_) => ("NotReady", "NotReady"),
        Kind::Image(e) => ("ImageError", image(e)),
        Kind::Test(e) => ("TestError", test(e)),
        Kind::Run(e) => ("RunError", run_error(e)),
        Kind::Host(e) => match e {
            HostError::Run(_) => ("HostError", "Run"),
            HostError::Unreachable { .. } => ("HostError", "Unreachable"),
            HostError::Online { .. } => ("HostError", "Online"),
        },
        Kind::Tune(e) => match e {
            TuneRunError::Run(_) => ("TuneRunError", "Run"),
            TuneRunError::Connection { .. } => ("TuneRunError", "Connection"),
            TuneRunError::Script { .. } => ("TuneRunError", "Script"),
            TuneRunError::NotRoot { .. } => ("TuneRunError", "NotRoot"),
        },
        Kind::TrendPage(_) => ("Kind", "TrendPage"),
        Kind::Emit { .. } => ("Kind", "Emit"),
        Kind::ManPages(_) => ("Kind", "ManPages"),
        Kind::Json(_) => ("Kind", "Json"),
        Kind::LavaYaml(_) => ("Kind", "LavaYaml"),
        Kind::HostSetup { .. } => ("Kind", "HostSetup"),
        Kind::FromEnvironment { .. } => ("Kind", "FromEnvironment"),
    };
    format!("{ty}::{name}")
}

fn plan(e: &PlanError) -> &'static str {
    match e {
        PlanError::NoMachine => "NoMachine",
        PlanError::Catalog(_) => "Catalog",
        PlanError::MetaQcom(_) => "MetaQcom",
        PlanError::CpuList(_) => "CpuList",
        PlanError::Layout(_) => "Layout",
        PlanError::Analyzer { .. } => "Analyzer",
        PlanError::Distro(_) => "Distro",
        PlanError::Hypervisor { .. } => "Hypervisor",
        PlanError::HypervisorUnavailable { .. } => "HypervisorUnavailable",
        PlanError::HypervisorConflict => "HypervisorConflict",
        PlanError::MissingCiFile(_) => "MissingCiFile",
        PlanError::Value(_) => "Value",
        PlanError::Config { .. } => "Config",
        PlanError::ConfigConflict { .. } => "ConfigConflict",
        PlanError::PreemptRtDisabled { .. } => "PreemptRtDisabled",
        PlanError::FragmentMissing { .. } => "FragmentMissing",
        PlanError::FragmentNotCfg { .. } => "FragmentNotCfg",
        PlanError::FragmentLine { .. } => "FragmentLine",
        PlanError::FragmentEmpty { .. } => "FragmentEmpty",
        PlanError::PatchMissing { .. } => "PatchMissing",
        PlanError::PatchName { .. } => "PatchName",
        PlanError::NotAPatch { .. } => "NotAPatch",
        PlanError::DuplicateName { .. } => "DuplicateName",
        PlanError::NotAFile { .. } => "NotAFile",
        PlanError::ReservedCmdline { .. } => "ReservedCmdline",
        PlanError::CmdlineTooLong { .. } => "CmdlineTooLong",
        PlanError::ProjectFile { .. } => "ProjectFile",
        PlanError::ProjectYaml { .. } => "ProjectYaml",
        PlanError::Include(_) => "Include",
        PlanError::IncludeName { .. } => "IncludeName",
        PlanError::IncludeNotAFile { .. } => "IncludeNotAFile",
        PlanError::IncludeUnreadable { .. } => "IncludeUnreadable",
        PlanError::IncludeNotKas { .. } => "IncludeNotKas",
    }
}

fn catalog(e: &CatalogError) -> &'static str {
    match e {
        CatalogError::Unknown { .. } => "Unknown",
        CatalogError::Invalid { .. } => "Invalid",
        CatalogError::Yaml { .. } => "Yaml",
        CatalogError::DuplicateName { .. } => "DuplicateName",
        CatalogError::AliasClash { .. } => "AliasClash",
        CatalogError::NotAFile { .. } => "NotAFile",
        CatalogError::Read { .. } => "Read",
        CatalogError::MeasuringOnly { .. } => "MeasuringOnly",
    }
}

fn meta_qcom(e: &MetaQcomError) -> &'static str {
    match e {
        MetaQcomError::NotMetaQcom { .. } => "NotMetaQcom",
        MetaQcomError::BadCpuList { .. } => "BadCpuList",
        MetaQcomError::BadNumber { .. } => "BadNumber",
        MetaQcomError::Read { .. } => "Read",
        MetaQcomError::Unreadable { .. } => "Unreadable",
        MetaQcomError::UnknownMachine { .. } => "UnknownMachine",
        MetaQcomError::NoKasFile { .. } => "NoKasFile",
    }
}

fn target(e: &TargetError) -> &'static str {
    match e {
        TargetError::NotSsh(_) => "NotSsh",
        TargetError::BadPart { .. } => "BadPart",
        TargetError::BadPort { .. } => "BadPort",
        TargetError::TooLong { .. } => "TooLong",
    }
}

fn layout(e: &LayoutError) -> &'static str {
    match e {
        LayoutError::NoRtCpu => "NoRtCpu",
        LayoutError::RtOutside { .. } => "RtOutside",
        LayoutError::CpuZero { .. } => "CpuZero",
        LayoutError::HousekeepingOutside { .. } => "HousekeepingOutside",
        LayoutError::Overlap { .. } => "Overlap",
        LayoutError::NoHousekeeping { .. } => "NoHousekeeping",
    }
}

fn generate(e: &GenerateError) -> &'static str {
    match e {
        GenerateError::UnsafeLayerPath { .. } => "UnsafeLayerPath",
        GenerateError::UnsafePath(_) => "UnsafePath",
        GenerateError::OutIsFile { .. } => "OutIsFile",
        GenerateError::IncludeOutside { .. } => "IncludeOutside",
        GenerateError::Render(_) => "Render",
        GenerateError::Write(_) => "Write",
        GenerateError::Lock(_) => "Lock",
        GenerateError::Output(_) => "Output",
        GenerateError::Busy(_) => "Busy",
    }
}

fn write(e: &WriteError) -> &'static str {
    match e {
        WriteError::HandEdited { .. } => "HandEdited",
        WriteError::Foreign { .. } => "Foreign",
        WriteError::GeneratedManifest { .. } => "GeneratedManifest",
        WriteError::Io { .. } => "Io",
        WriteError::NotWritable { .. } => "NotWritable",
    }
}

fn lock(e: &LockError) -> &'static str {
    match e {
        LockError::Input(_) => "Input",
        LockError::Yaml { .. } => "Yaml",
        LockError::Shape { .. } => "Shape",
        LockError::BadCommit { .. } => "BadCommit",
        LockError::BadName { .. } => "BadName",
        LockError::UnknownRepo { .. } => "UnknownRepo",
        LockError::UnknownUpdate { .. } => "UnknownUpdate",
        LockError::NoLock { .. } => "NoLock",
        LockError::NoKasFile { .. } => "NoKasFile",
        LockError::NotCheckedOut { .. } => "NotCheckedOut",
        LockError::Git { .. } => "Git",
        LockError::NoBranch { .. } => "NoBranch",
        LockError::Kas(_) => "Kas",
        LockError::Fetch { .. } => "Fetch",
        LockError::KasOutput { .. } => "KasOutput",
        LockError::KasJson { .. } => "KasJson",
        LockError::Write { .. } => "Write",
    }
}

fn verify(e: &VerifyError) -> &'static str {
    match e {
        VerifyError::Unreadable { .. } => "Unreadable",
        VerifyError::Config { .. } => "Config",
        VerifyError::Image { .. } => "Image",
        VerifyError::Missing { .. } => "Missing",
        VerifyError::Folder { .. } => "Folder",
        VerifyError::Empty { .. } => "Empty",
        VerifyError::NoKernel { .. } => "NoKernel",
        VerifyError::Archive { .. } => "Archive",
        VerifyError::PlanFile { .. } => "PlanFile",
        VerifyError::Target { .. } => "Target",
        VerifyError::TargetRun(_) => "TargetRun",
        VerifyError::Spdx { .. } => "Spdx",
        VerifyError::Input(_) => "Input",
    }
}

fn bundle(e: &BundleError) -> &'static str {
    match e {
        BundleError::NoQcomflash { .. } => "NoQcomflash",
        BundleError::EmptyQcomflash { .. } => "EmptyQcomflash",
        BundleError::NotThisImage { .. } => "NotThisImage",
        BundleError::Unverified => "Unverified",
        BundleError::VerifyFailed { .. } => "VerifyFailed",
        BundleError::VerifyReport { .. } => "VerifyReport",
        BundleError::PlanFile { .. } => "PlanFile",
        BundleError::Measurement { .. } => "Measurement",
        BundleError::MeasurementUnreadable { .. } => "MeasurementUnreadable",
        BundleError::Provenance { .. } => "Provenance",
        BundleError::Changed { .. } => "Changed",
        BundleError::SourceDateEpoch { .. } => "SourceDateEpoch",
        BundleError::SigningKey { .. } => "SigningKey",
        BundleError::PublicKey { .. } => "PublicKey",
        BundleError::Read { .. } => "Read",
        BundleError::Write { .. } => "Write",
        BundleError::NotABundle { .. } => "NotABundle",
        BundleError::Unreadable { .. } => "Unreadable",
        BundleError::MemberTooBig { .. } => "MemberTooBig",
        BundleError::TooBig { .. } => "TooBig",
        BundleError::ExternalLink { .. } => "ExternalLink",
        BundleError::NotBuildReadable { .. } => "NotBuildReadable",
        BundleError::Input(_) => "Input",
    }
}

fn history(e: &HistoryError) -> &'static str {
    match e {
        HistoryError::Url { .. } => "Url",
        HistoryError::Open { .. } => "Open",
        HistoryError::Oversized { .. } => "Oversized",
        HistoryError::OpenFile { .. } => "OpenFile",
        HistoryError::Newer { .. } => "Newer",
        HistoryError::Db { .. } => "Db",
        HistoryError::Input(_) => "Input",
        HistoryError::ConfigUnreadable { .. } => "ConfigUnreadable",
        HistoryError::ConfigNotAFile { .. } => "ConfigNotAFile",
        HistoryError::Config { .. } => "Config",
        HistoryError::Report(_) => "Report",
        HistoryError::Bundle { .. } => "Bundle",
        HistoryError::NotFound(_) => "NotFound",
        HistoryError::Ambiguous(_) => "Ambiguous",
        HistoryError::NoDefault => "NoDefault",
    }
}

fn build(e: &BuildError) -> &'static str {
    match e {
        BuildError::Kas(_) => "Kas",
        BuildError::BadSetting { .. } => "BadSetting",
        BuildError::Unwritable { .. } => "Unwritable",
        BuildError::Run(_) => "Run",
    }
}

fn kas(e: &KasError) -> &'static str {
    match e {
        KasError::Missing { .. } => "Missing",
        KasError::Broken { .. } => "Broken",
        KasError::TooOld { .. } => "TooOld",
        KasError::BadToken { .. } => "BadToken",
        KasError::Run(_) => "Run",
    }
}

fn image(e: &ImageError) -> &'static str {
    match e {
        ImageError::BundleNeedsWholeImage => "BundleNeedsWholeImage",
        ImageError::Engine(_) => "Engine",
        ImageError::Path(_) => "Path",
        ImageError::NotReady(_) => "NotReady",
        ImageError::Plan(_) => "Plan",
        ImageError::Generate(_) => "Generate",
        ImageError::Lock(_) => "Lock",
        ImageError::Build(_) => "Build",
        ImageError::After(_) => "After",
        ImageError::Interrupted(_) => "Interrupted",
    }
}

fn test(e: &TestError) -> &'static str {
    match e {
        TestError::Out(_) => "Out",
        TestError::Preflight(_) => "Preflight",
        TestError::Trace(_) => "Trace",
        TestError::CreateDir { .. } => "CreateDir",
        TestError::Save { .. } => "Save",
        TestError::Tune(_) => "Tune",
    }
}

fn run_error(e: &RunError) -> &'static str {
    match e {
        RunError::NotFound { .. } => "NotFound",
        RunError::Spawn { .. } => "Spawn",
        RunError::Log { .. } => "Log",
        RunError::Status { .. } => "Status",
        RunError::TimedOut { .. } => "TimedOut",
        RunError::Flooded { .. } => "Flooded",
    }
}

fn refusal(e: &Refusal) -> &'static str {
    match e {
        Refusal::CpuList(_) => "CpuList",
        Refusal::Output(_) => "Output",
        Refusal::BuildSetting(_) => "BuildSetting",
        Refusal::Install(_) => "Install",
        Refusal::LockFile(_) => "LockFile",
        Refusal::KernelTree(_) => "KernelTree",
        Refusal::Report(_) => "Report",
        Refusal::Distro(_) => "Distro",
        Refusal::Job(_) => "Job",
        Refusal::Words(_) => "Words",
        Refusal::Options(_) => "Options",
        Refusal::Tests(_) => "Tests",
        Refusal::TestArgs(_) => "TestArgs",
        Refusal::Scenario(_) => "Scenario",
        Refusal::Duration(_) => "Duration",
        Refusal::LoopsTooLong { .. } => "LoopsTooLong",
        Refusal::MainCpu(_) => "MainCpu",
        Refusal::Deploy(_) => "Deploy",
        Refusal::Arch(_) => "Arch",
        Refusal::LockFileWithoutCheck => "LockFileWithoutCheck",
        Refusal::LockNeedsMachine => "LockNeedsMachine",
        Refusal::CheckNeedsLock => "CheckNeedsLock",
        Refusal::InstallNeedsMachine => "InstallNeedsMachine",
        Refusal::BundleNeedsMachine => "BundleNeedsMachine",
        Refusal::NothingBuilt { .. } => "NothingBuilt",
        Refusal::NoImage => "NoImage",
        Refusal::CiMachine(_) => "CiMachine",
        Refusal::CiDistro(_) => "CiDistro",
        Refusal::CanaryCron(_) => "CanaryCron",
        Refusal::KasImageDigest(_) => "KasImageDigest",
        Refusal::CiCacheDirs => "CiCacheDirs",
        Refusal::NotInRepo { .. } => "NotInRepo",
        Refusal::MissingInRepo { .. } => "MissingInRepo",
        Refusal::LockNotInRepo(_) => "LockNotInRepo",
        Refusal::LavaScenario(_) => "LavaScenario",
        Refusal::LavaCustom => "LavaCustom",
        Refusal::SecretName(_) => "SecretName",
        Refusal::SigningSecretName(_) => "SigningSecretName",
        Refusal::HeaderSecret { .. } => "HeaderSecret",
        Refusal::WorkflowExpression { .. } => "WorkflowExpression",
        Refusal::WorkDirDistros { .. } => "WorkDirDistros",
        Refusal::LavaTests(_) => "LavaTests",
        Refusal::LavaDuration(_) => "LavaDuration",
        Refusal::LavaJobLength(_) => "LavaJobLength",
        Refusal::SameSeries(_) => "SameSeries",
        Refusal::Since(_) => "Since",
        Refusal::KconfigOption { .. } => "KconfigOption",
        Refusal::LavaNeedsMachine => "LavaNeedsMachine",
        Refusal::MetaQcomWithShow => "MetaQcomWithShow",
        Refusal::MatrixMachine => "MatrixMachine",
        Refusal::UnknownHostOs => "UnknownHostOs",
        Refusal::NoHome => "NoHome",
        Refusal::TraceConflict(_) => "TraceConflict",
        Refusal::TraceWithoutCyclictest => "TraceWithoutCyclictest",
        Refusal::MeasureCpus(_) => "MeasureCpus",
        Refusal::MeasureCpusOffline { .. } => "MeasureCpusOffline",
        Refusal::TooFewThreads { .. } => "TooFewThreads",
        Refusal::NoTarget => "NoTarget",
        Refusal::EmitRunsNothing => "EmitRunsNothing",
        Refusal::NothingToDo => "NothingToDo",
        Refusal::NoPlaceToRun(_) => "NoPlaceToRun",
        Refusal::BootargsBoardUnknown { .. } => "BootargsBoardUnknown",
        Refusal::BuildFlagsWithoutMachine => "BuildFlagsWithoutMachine",
        Refusal::CpuFlag { .. } => "CpuFlag",
        Refusal::NothingToVerify => "NothingToVerify",
        Refusal::LocalAndTarget => "LocalAndTarget",
        Refusal::SshConfig(_) => "SshConfig",
        Refusal::EmptyLoadCmd => "EmptyLoadCmd",
        Refusal::NotAProgram(_) => "NotAProgram",
        Refusal::CustomWithoutLoad => "CustomWithoutLoad",
        Refusal::LoadWithoutCustom => "LoadWithoutCustom",
        Refusal::TestArgsNotRun(_) => "TestArgsNotRun",
        Refusal::HackbenchNotRun => "HackbenchNotRun",
        Refusal::TestArgsTwice(_) => "TestArgsTwice",
    }
}

#[test]
fn every_error_ends_rtbuild_with_the_code_written_for_it() {
    for (err, code) in samples() {
        assert_eq!(err.code(), code, "{}: {err}", variant(&err));
    }
}

/// The number of variants of each type, as the matches above name them.
#[test]
fn every_variant_has_a_sample() {
    let want: BTreeMap<&str, usize> = [
        ("Refusal", 74),
        ("Interrupted", 1),
        ("PlanError", 33),
        ("ValueError", 1),
        ("CatalogError", 8),
        ("MetaQcomError", 7),
        ("TargetError", 4),
        ("LayoutError", 6),
        ("GenerateError", 9),
        ("WriteError", 5),
        ("LockError", 17),
        ("VerifyError", 13),
        ("KconfigCheckError", 2),
        ("BundleError", 23),
        ("HistoryError", 15),
        ("BuildError", 4),
        ("KasError", 5),
        ("NotReady", 1),
        ("ImageError", 10),
        ("TestError", 6),
        ("RunError", 6),
        ("HostError", 3),
        ("TuneRunError", 4),
        ("Kind", 8),
    ]
    .into_iter()
    .collect();
    let mut seen: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (err, _) in samples() {
        let name = variant(&err);
        let (ty, v) = name.split_once("::").unwrap();
        seen.entry(ty.to_string()).or_default().insert(v.to_string());
    }
    let got: BTreeMap<&str, usize> = seen.iter().map(|(t, v)| (t.as_str(), v.len())).collect();
    assert_eq!(got, want);
}

/// A message never holds the text of its own source: [`crate::text::ui::Ui::error`] prints each
/// source on a line of its own.
#[test]
fn no_message_repeats_its_cause() {
    for (err, _) in samples() {
        let mut outer: &dyn std::error::Error = &err;
        while let Some(cause) = outer.source() {
            let (message, said) = (outer.to_string(), cause.to_string());
            assert!(
                !message.contains(&said),
                "{}: `{message}` repeats its cause `{said}`",
                variant(&err)
            );
            outer = cause;
        }
    }
}

/// A refusal of input is one line, `<what>; <how to fix>`, with no cause under it.
#[test]
fn every_refusal_is_one_line_with_a_fix_and_no_cause_below() {
    for err in refusals() {
        let text = err.to_string();
        assert!(!text.contains('\n'), "{text}");
        // Worded before this test; kept as users see it (issue 22 changes no message).
        let known_without_fix = matches!(err, Refusal::InstallNeedsMachine);
        assert!(text.contains("; ") || known_without_fix, "no `; fix`: {text}");
        assert!(err.source().is_none(), "{text}");
    }
}
