//! One sample of every variant of every error, with the exit code it must end rtbuild with.

use super::refusals::refusals;
use super::*;

/// One sample of every variant, with the exit code it must end rtbuild with.
pub(super) fn samples() -> Vec<(Error, Exit)> {
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
                version: crate::image::kas::version::KasVersion { major: 4, minor: 0 },
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

pub(super) fn verify_errors() -> Vec<VerifyError> {
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

pub(super) fn build_errors() -> Vec<(BuildError, Exit)> {
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
