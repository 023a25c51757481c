//! `Type::Variant` of an error: matches that name every variant (no `_`), so a new one does
//! not compile until it is named here.

use super::refusals::refusal;
use super::*;

/// `Type::Variant` of `err` and of the stage error it holds. The matches name every variant
/// (no `_`), so a new one does not compile until it is named here.
pub(super) fn variant(err: &Error) -> String {
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

pub(super) fn plan(e: &PlanError) -> &'static str {
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

pub(super) fn catalog(e: &CatalogError) -> &'static str {
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

pub(super) fn meta_qcom(e: &MetaQcomError) -> &'static str {
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

pub(super) fn target(e: &TargetError) -> &'static str {
    match e {
        TargetError::NotSsh(_) => "NotSsh",
        TargetError::BadPart { .. } => "BadPart",
        TargetError::BadPort { .. } => "BadPort",
        TargetError::TooLong { .. } => "TooLong",
    }
}

pub(super) fn layout(e: &LayoutError) -> &'static str {
    match e {
        LayoutError::NoRtCpu => "NoRtCpu",
        LayoutError::RtOutside { .. } => "RtOutside",
        LayoutError::CpuZero { .. } => "CpuZero",
        LayoutError::HousekeepingOutside { .. } => "HousekeepingOutside",
        LayoutError::Overlap { .. } => "Overlap",
        LayoutError::NoHousekeeping { .. } => "NoHousekeeping",
    }
}

pub(super) fn generate(e: &GenerateError) -> &'static str {
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

pub(super) fn write(e: &WriteError) -> &'static str {
    match e {
        WriteError::HandEdited { .. } => "HandEdited",
        WriteError::Foreign { .. } => "Foreign",
        WriteError::GeneratedManifest { .. } => "GeneratedManifest",
        WriteError::Io { .. } => "Io",
        WriteError::NotWritable { .. } => "NotWritable",
    }
}

pub(super) fn lock(e: &LockError) -> &'static str {
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

pub(super) fn verify(e: &VerifyError) -> &'static str {
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

pub(super) fn bundle(e: &BundleError) -> &'static str {
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

pub(super) fn history(e: &HistoryError) -> &'static str {
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

pub(super) fn build(e: &BuildError) -> &'static str {
    match e {
        BuildError::Kas(_) => "Kas",
        BuildError::BadSetting { .. } => "BadSetting",
        BuildError::Unwritable { .. } => "Unwritable",
        BuildError::Run(_) => "Run",
    }
}

pub(super) fn kas(e: &KasError) -> &'static str {
    match e {
        KasError::Missing { .. } => "Missing",
        KasError::Broken { .. } => "Broken",
        KasError::TooOld { .. } => "TooOld",
        KasError::BadToken { .. } => "BadToken",
        KasError::Run(_) => "Run",
    }
}

pub(super) fn image(e: &ImageError) -> &'static str {
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

pub(super) fn test(e: &TestError) -> &'static str {
    match e {
        TestError::Out(_) => "Out",
        TestError::Preflight(_) => "Preflight",
        TestError::Trace(_) => "Trace",
        TestError::CreateDir { .. } => "CreateDir",
        TestError::Save { .. } => "Save",
        TestError::Tune(_) => "Tune",
    }
}

pub(super) fn run_error(e: &RunError) -> &'static str {
    match e {
        RunError::NotFound { .. } => "NotFound",
        RunError::Spawn { .. } => "Spawn",
        RunError::Log { .. } => "Log",
        RunError::Status { .. } => "Status",
        RunError::TimedOut { .. } => "TimedOut",
        RunError::Flooded { .. } => "Flooded",
    }
}
