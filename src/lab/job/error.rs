//! [`JobError`]: bad `rtbuild lava` input, found while building any part of the job.

use super::MAX_JOB_HOURS;
use super::request::LavaVersion;
use crate::lab::qemu::QemuError;

/// Bad `rtbuild lava` input; every message names the flag and what to pass.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum JobError {
    #[error(
        "bad --bundle-url `{url}`: {why}; pass the http(s) URL of a bundle (*.tar.zst from `rtbuild bundle`, or a *.qcomflash.tar.gz)"
    )]
    BundleUrl { url: String, why: &'static str },
    #[error(
        "bad --device-type `{0}`; use a LAVA device type name (letters, digits, `-`, `_`, `.`)"
    )]
    DeviceType(String),
    #[error("bad --tags entry `{0}`; use LAVA tag names (letters, digits, `-`, `_`, `.`)")]
    Tag(String),
    #[error(
        "{} of --duration {duration} {} a LAVA job of {hours} h, longer than the {MAX_JOB_HOURS} h one job may hold a board; pass a shorter --duration, fewer --tests or fewer --scenario per job",
        crate::text::counted(*scenarios, "scenario"),
        if *scenarios == 1 { "makes" } else { "make" }
    )]
    TooLong { duration: String, scenarios: usize, hours: u64 },
    #[error("--scenario lists no scenario; pass e.g. --scenario idle,stress")]
    NoScenario,
    #[error(
        "--deploy qdl needs the board's qdl stages, and the catalog has no qdl profile for `{0}`; pass --deploy flasher, or add a `lava:` section with `deploy: qdl` to its machine file (--machines-dir)"
    )]
    NoQdlProfile(String),
    #[error("bad --image `{0}`; use an image recipe name (letters, digits, `-`, `_`, `.`)")]
    Image(String),
    #[error(transparent)]
    Qemu(#[from] QemuError),
    #[error("bad --prompt `{0}`; pass printable ASCII, at most 200 characters")]
    Prompt(String),
    #[error(
        "--deploy qemu boots files, not a bundle; pass --kernel-url and --rootfs-url (and --initrd-url) instead of --bundle-url"
    )]
    QemuNeedsFiles,
    #[error(
        "--deploy {0} flashes a bundle on a board; pass --bundle-url URL (--kernel-url, --initrd-url, --rootfs-url, --kernel-args, --arch and --no-login belong to --deploy qemu)"
    )]
    BoardNeedsBundle(&'static str),
    #[error("bad --lava-version `{0}`; pass a LAVA release as YYYY.MM, e.g. 2026.07")]
    LavaVersion(String),
    #[error(
        "LAVA {0} has no qdl deploy (it arrived in 2026.06); pass --lava-version 2026.06 or later, or --deploy flasher"
    )]
    QdlNeedsNewerLava(LavaVersion),
    #[error(
        "bad --qcomflash-header `{0}`; pass NAME=VAR: an HTTP header name and the environment variable (or CI secret) that holds its value, e.g. QLIAuthorization=LAB_TOKEN"
    )]
    HeaderFlag(String),
    #[error(
        "--qcomflash-header {name}: the environment variable {var} {}; set it (from a CI secret) to the header's value, printable ASCII on one line",
        if *.empty { "is empty or not set" } else { "holds a line break, a control or a non-ASCII character" }
    )]
    HeaderValue { name: String, var: String, empty: bool },
    #[error("--qcomflash-header belongs to a board deploy (qdl, flasher), not --deploy qemu")]
    QemuHeaders,
    #[error(
        "--bundle-url names `{0}`, but LAVA's qdl deploy unpacks the archive with gzip; pass the bundle's .tar.gz (`rtbuild bundle --gzip`, `rtbuild image --bundle --gzip`) or meta-qcom's *.qcomflash.tar.gz"
    )]
    QdlNeedsGzip(String),
}
