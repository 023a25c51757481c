//! [`BundleError`]: why a bundle could not be made or read.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub(crate) enum BundleError {
    #[error(
        "no qcomflash output at {}; build the image first (`rtbuild image`), or pass --build-dir \
         (the kas build folder holding tmp/deploy/images/) and --image",
        path.display()
    )]
    NoQcomflash { path: PathBuf },
    #[error("{} is empty; the qcomflash build did not finish", path.display())]
    EmptyQcomflash { path: PathBuf },
    #[error(
        "no verify result for this build; pass --verify-report FILE (written by `rtbuild verify \
         --json`), or --allow-unverified to bundle anyway and say so in the manifest"
    )]
    Unverified,
    #[error(
        "verification failed ({failed}); fix the build, or pass --allow-unverified to bundle it \
         anyway and say so in the manifest"
    )]
    VerifyFailed { failed: String },
    #[error("cannot read verify report {}: {}",
        path.display(),
        crate::text::ui::with_fix(&.cause.to_string(), "pass the file `rtbuild verify --json` wrote"))]
    VerifyReport { path: PathBuf, cause: crate::files::document::LoadError },
    #[error("cannot read {}: {cause}; run `rtbuild generate` again to rewrite it", path.display())]
    PlanFile { path: PathBuf, cause: crate::files::document::LoadError },
    #[error("cannot bundle {}: {message}; pass the result folder of an `rtbuild test` run on this image", path.display())]
    Measurement { path: PathBuf, message: String },
    #[error("cannot bundle {}: {cause}; pass the result folder of an `rtbuild test` run on this image", path.display())]
    MeasurementUnreadable { path: PathBuf, cause: crate::files::document::LoadError },
    /// `--measurement` is a run of another kernel than the one that ships (exit 1: the check
    /// that binds the evidence to the image failed).
    #[error("cannot bundle {}: {message}; pass the result folder of an `rtbuild test` run on this image", path.display())]
    NotThisImage { path: PathBuf, message: String },
    #[error("cannot read the provenance statement {}: {cause}; run the build again with --provenance", path.display())]
    Provenance { path: PathBuf, cause: crate::formats::provenance_json::StatementError },
    #[error("{} changed while it was being bundled; bundle again when the build is done", path.display())]
    Changed { path: PathBuf },
    #[error("`{value}` is not a valid SOURCE_DATE_EPOCH; use whole seconds since 1970")]
    SourceDateEpoch { value: String },
    #[error("cannot read {}: {cause}; check that it exists and is readable", path.display())]
    Read { path: PathBuf, cause: std::io::Error },
    #[error("cannot write {}: {cause}; {}", path.display(), crate::files::output::write_fix(.cause))]
    Write { path: PathBuf, cause: std::io::Error },
    #[error("{} is not a bundle rtbuild can read: {}",
        path.display(),
        crate::text::ui::with_fix(.message, "pass a .tar.zst or .tar.gz made by `rtbuild bundle`"))]
    NotABundle { path: PathBuf, message: String },
    #[error("{} is not a bundle rtbuild can read: {}",
        path.display(),
        crate::text::ui::with_fix(&.cause.to_string(), "pass a .tar.zst or .tar.gz made by `rtbuild bundle`"))]
    Unreadable { path: PathBuf, cause: std::io::Error },
    #[error("{}: member `{}` is over {} MiB, more than any rtbuild bundle's metadata (a decompression bomb?); pass a .tar.zst or .tar.gz made by `rtbuild bundle`",
        path.display(), crate::text::shown(member), limit >> 20)]
    MemberTooBig { path: PathBuf, member: String, limit: u64 },
    #[error("{}: {what}, more than any rtbuild bundle holds (a decompression bomb?); pass a .tar.zst made by `rtbuild bundle`",
        path.display())]
    TooBig { path: PathBuf, what: String },
    #[error(
        "{} is a symlink to `{}`, outside the qcomflash folder and the deploy folder; a release holds only what the build produced: remove the link, or pass --follow-external-links",
        link.display(), target.display()
    )]
    ExternalLink { link: PathBuf, target: PathBuf },
    #[error(
        "{} (`{}`) is not readable by the build user (uid {uid}, owner of the qcomflash folder); a release holds only what the build produced: remove it from the qcomflash folder",
        path.display(), target.display()
    )]
    NotBuildReadable { path: PathBuf, target: PathBuf, uid: u32 },
    #[error("--signing-key {}: {message}; make one with `openssl genpkey -algorithm ed25519 -out FILE`", path.display())]
    SigningKey { path: PathBuf, message: String },
    #[error("--key {}: {message}; pass the signer's public key (`openssl pkey -in KEY -pubout`)", path.display())]
    PublicKey { path: PathBuf, message: String },
    /// A FIFO, device, socket, folder, dangling symlink or too big a file given as input.
    #[error(transparent)]
    Input(crate::files::input::InputError),
}

impl BundleError {
    /// The user's input is at fault (exit 2); otherwise the build or the system (exit 1).
    pub(crate) fn is_input(&self) -> bool {
        matches!(
            self,
            BundleError::NoQcomflash { .. }
                | BundleError::Unverified
                | BundleError::VerifyReport { .. }
                | BundleError::PlanFile { .. }
                | BundleError::Measurement { .. }
                | BundleError::MeasurementUnreadable { .. }
                | BundleError::SourceDateEpoch { .. }
                | BundleError::NotABundle { .. }
                | BundleError::Unreadable { .. }
                | BundleError::MemberTooBig { .. }
                | BundleError::TooBig { .. }
                | BundleError::Input(_)
                | BundleError::ExternalLink { .. }
                | BundleError::NotBuildReadable { .. }
                | BundleError::SigningKey { .. }
                | BundleError::PublicKey { .. }
        )
    }
}

impl From<crate::files::write::WriteError> for BundleError {
    fn from(err: crate::files::write::WriteError) -> BundleError {
        let (path, source) = err.into_io();
        BundleError::Write { path, cause: source }
    }
}

impl crate::error::ErrorCode for BundleError {
    fn exit(&self) -> crate::error::Exit {
        use crate::error::Exit;
        if self.is_input() { Exit::Usage } else { Exit::Failed }
    }
}
