//! [`PlanError`]: everything that can be wrong with what the user asked for.

use std::path::PathBuf;

use super::distro::UnknownDistro;
use super::values::ValueError;
use crate::catalog::CatalogError;
use crate::catalog::meta_qcom::MetaQcomError;
use crate::formats::kconfig_lines::LineError;
use crate::host::cpus::{CpuListError, LayoutError};

#[derive(Debug, thiserror::Error)]
pub(crate) enum PlanError {
    #[error(transparent)]
    CpuList(#[from] CpuListError),
    #[error(transparent)]
    Layout(#[from] LayoutError),
    #[error(
        "--analyzer `{given}` is not a trace analyzer; pass --analyzer ftrace or --analyzer rtla"
    )]
    Analyzer { given: String },
    #[error(transparent)]
    Distro(#[from] UnknownDistro),
    #[error(
        "--hypervisor `{given}` is not a hypervisor; pass --hypervisor kvm or --hypervisor gunyah"
    )]
    Hypervisor { given: String },
    #[error("--hypervisor {hypervisor} cannot be built: {reason}")]
    HypervisorUnavailable { hypervisor: &'static str, reason: String },
    #[error(
        "--distro qcom-distro-kvm is qcom-distro with KVM, and --hypervisor gunyah asks for Gunyah; pass --distro qcom-distro --hypervisor gunyah"
    )]
    HypervisorConflict,
    /// Boxed: it is the largest variant, and every `Result` carries it.
    #[error(transparent)]
    MissingCiFile(Box<super::compose::MissingCiFile>),
    #[error(transparent)]
    Value(#[from] ValueError),
    #[error("--config `{text}` is not a kernel option: {cause}; write it like CONFIG_NO_HZ_FULL=y")]
    Config { text: String, cause: LineError },
    #[error("--config asks for both {first} and {second}; keep one")]
    ConfigConflict { first: String, second: String },
    #[error("{what} asks for {setting}, but an RT build needs CONFIG_PREEMPT_RT=y; remove it")]
    PreemptRtDisabled { what: String, setting: String },
    #[error("fragment {path} does not exist; check the path given to --fragment")]
    FragmentMissing { path: PathBuf },
    #[error(
        "fragment {path} must end in .cfg: meta-qcom merges only *.cfg files from SRC_URI; rename it"
    )]
    FragmentNotCfg { path: PathBuf },
    #[error("fragment {path}:{line}: {cause}; fix that line of the fragment")]
    FragmentLine { path: PathBuf, line: usize, cause: LineError },
    #[error("fragment {path} sets no kernel option; add CONFIG_<NAME>=<value> lines or drop it")]
    FragmentEmpty { path: PathBuf },
    #[error("patch {path} does not exist; check the path given to --patch")]
    PatchMissing { path: PathBuf },
    #[error("patch {path} must end in .patch or .diff; rename it")]
    PatchName { path: PathBuf },
    #[error(
        "{path} is not a patch (no `---`/`+++` file headers); pass a `git format-patch` or `diff -u` file"
    )]
    NotAPatch { path: PathBuf },
    #[error(
        "two inputs are both named {name} ({first} and {second}); rename one, the layer keeps files by name"
    )]
    DuplicateName { name: String, first: PathBuf, second: PathBuf },
    /// A fragment or patch that is a FIFO, a device, a folder, a dangling symlink or too big.
    #[error("{what} {cause}")]
    NotAFile { what: &'static str, cause: crate::files::input::InputError },
    #[error(
        "--cmdline {arg}: rtbuild derives `{key}=` from --rt-cpus so the boot arguments stay consistent; use --rt-cpus"
    )]
    ReservedCmdline { arg: String, key: String },
    #[error(
        "the kernel command line rtbuild writes would be {bytes} bytes, more than the kernel's limit of {limit} (COMMAND_LINE_SIZE); pass fewer or shorter --cmdline arguments"
    )]
    CmdlineTooLong { bytes: usize, limit: usize },
    #[error("project file {path}: {cause}")]
    ProjectFile { path: PathBuf, cause: crate::files::input::InputError },
    #[error("project file {path}: {cause}; see README.md, \"Project file\"")]
    ProjectYaml { path: PathBuf, cause: serde_yaml::Error },
    #[error(
        "--include `{}`: not a meta-qcom kas file; name one of meta-qcom's ci/*.yml files, e.g. --include ci/performance.yml",
        crate::text::printable(.0)
    )]
    Include(String),
    #[error(
        "--include `{path}`: a local kas file must end in .yml or .yaml; rename it, or name one of meta-qcom's ci/*.yml files"
    )]
    IncludeName { path: String },
    /// A local `--include` that is missing, a FIFO, a device, a folder or too big.
    #[error("--include {message}")]
    IncludeNotAFile { message: String },
    /// A local `--include` that cannot be read as text (missing, a FIFO, a folder, too big).
    #[error("--include {}", super::include::one_line(&.cause.to_string()))]
    IncludeUnreadable { cause: crate::files::input::InputError },
    #[error(
        "--include `{path}`: not a kas file: {reason}; pass a kas file with a `header:` that sets `version:`"
    )]
    IncludeNotKas { path: String, reason: String },
    #[error("no machine given; pass --machine NAME (see `rtbuild machines`)")]
    NoMachine,
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// The meta-qcom checkout the plan consults: a bad machine conf is the user's input, an
    /// unreadable file is not.
    #[error(transparent)]
    MetaQcom(#[from] MetaQcomError),
}

/// The user's input (exit 2), except a meta-qcom file that cannot be read (exit 1).
impl crate::error::ErrorCode for PlanError {
    fn exit(&self) -> crate::error::Exit {
        match self {
            PlanError::MetaQcom(e) => e.exit(),
            _ => crate::error::Exit::Usage,
        }
    }
}
