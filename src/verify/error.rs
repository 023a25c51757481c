//! Why a source could not be verified at all (exit code 2): it is missing, empty, corrupt, or
//! holds no kernel. A source that was read but fails a check is a [`super::VerifyReport`], not this.

use std::io;
use std::path::PathBuf;

use crate::files::input::InputError;
use crate::verify::kconfig::ConfigError;
use crate::verify::kconfig::image::ImageError;

#[derive(Debug, thiserror::Error)]
pub(crate) enum VerifyError {
    #[error("cannot read `{path}`: {cause}; check that it is readable")]
    Unreadable { path: PathBuf, cause: io::Error },
    #[error("`{path}`: {cause}")]
    Config { path: PathBuf, cause: ConfigError },
    #[error("`{path}`: {cause}")]
    Image { path: PathBuf, cause: ImageError },
    #[error(
        "`{path}` does not exist; pass a build folder, kernel config, kernel image, .deb, or \
         qcomflash folder or tarball"
    )]
    Missing { path: PathBuf },
    #[error(
        "`{path}` is a folder, not a file; pass it as a SOURCE without a flag (a build or \
         qcomflash folder is recognised), or name the file inside it"
    )]
    Folder { path: PathBuf },
    #[error("`{path}` is empty; pass a kernel config, kernel image, package or build folder")]
    Empty { path: PathBuf },
    #[error("`{path}` holds no kernel config, kernel image or version string; {hint}")]
    NoKernel { path: PathBuf, hint: String },
    #[error(
        "`{path}` is not a usable {what}: {}",
        crate::text::ui::with_fix(&.cause.to_string(), "pass an intact copy, or the kernel .config")
    )]
    Archive { path: PathBuf, what: &'static str, cause: ArchiveError },
    #[error(
        "`{path}` is not a usable SPDX document: {}",
        crate::text::ui::with_fix(&.cause.to_string(), "pass an intact copy, or the kernel .config")
    )]
    Spdx { path: PathBuf, cause: serde_json::Error },
    #[error("cannot read the plan `{path}`: {cause}; write it with `rtbuild generate`")]
    PlanFile { path: PathBuf, cause: crate::formats::FormatError },
    /// `target` is the place as said in a message: `target ssh://…`, or `this machine`.
    #[error("{target}: {message}")]
    Target { target: String, message: String },
    /// A step on the target could not run, or ran past its limit: the runner's error names
    /// the step and the target.
    #[error(transparent)]
    TargetRun(crate::host::runner::RunError),
    /// A FIFO, device, socket, dangling symlink or too big a file.
    #[error(transparent)]
    Input(InputError),
}

impl VerifyError {
    /// An input file that cannot be read; missing and folder keep `verify`'s own hints.
    pub(crate) fn from_input(error: InputError) -> VerifyError {
        match error {
            InputError::Missing { path } => VerifyError::Missing { path },
            InputError::Folder { path } => VerifyError::Folder { path },
            other => VerifyError::Input(other),
        }
    }
}

/// Always the user's input (exit 2).
impl crate::error::ErrorCode for VerifyError {
    fn exit(&self) -> crate::error::Exit {
        crate::error::Exit::Usage
    }
}

/// Why an input is not a usable `what` of [`VerifyError::Archive`]: a package, tarball or SPDX
/// document holding no usable kernel, or a fragment or source tree `verify --kconfig` cannot use.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ArchiveError {
    #[error("no ar header")]
    NoArHeader,
    #[error("corrupt ar member header")]
    ArHeader,
    #[error("bad size in ar member `{name}`")]
    ArSize { name: String },
    #[error("ar member `{name}` is truncated")]
    ArTruncated { name: String },
    #[error("it has no data.tar member")]
    NoDataTar,
    /// A failure inside the archive member `member`.
    #[error("{member}: {cause}")]
    InMember { member: String, cause: Box<ArchiveError> },
    #[error("it holds no boot/config-* nor boot/vmlinuz-*; is it a linux-image package?")]
    NoDebKernel,
    #[error(
        "it has neither a vmlinux member nor a UKI in efi.bin; rebuild the image with the qcomflash image type"
    )]
    NoTarballKernel,
    /// The decompressor could not start (a zstd frame header it refuses).
    #[error("{cause}")]
    Decoder { cause: std::io::Error },
    #[error("cannot read the {format} tar stream: {cause}")]
    Corrupt { format: &'static str, cause: std::io::Error },
    #[error("member `{member}` is over {} MiB, more than any {kind} is (a decompression bomb?)", limit >> 20)]
    TooBig { member: String, limit: u64, kind: &'static str },
    #[error("its kernel configuration: {cause}")]
    SpdxConfig { cause: crate::verify::kconfig::ConfigError },
    #[error("line {line}: {cause}; fix that line of the fragment")]
    FragmentLine { line: usize, cause: crate::verify::kconfig::LineError },
    #[error(
        "there is no such folder; pass the unpacked kernel source (e.g. /usr/src/linux-source-6.12)"
    )]
    NoSourceTree,
    #[error(
        "it has no scripts/kconfig/merge_config.sh; pass the unpacked kernel source (e.g. /usr/src/linux-source-6.12)"
    )]
    NoMergeConfig,
    #[error("it has no arch/{arch}/Kconfig; check --arch")]
    NoArchKconfig { arch: String },
    #[error("no option requested; pass --fragment or --config")]
    NoRequest,
}
