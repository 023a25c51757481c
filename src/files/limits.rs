//! How much rtbuild reads of each kind of file it is given, in one place: every reader passes
//! its limit to the one bounded opener (`crate::files::input`), which refuses a bigger file in
//! one line. A limit is generous for the real file and small enough that a hostile one cannot
//! exhaust memory or time.

/// Text files rtbuild reads whole (plans, `run.json`, locks, manifests, configs, logs), when no
/// limit below is closer to the file.
pub(crate) const TEXT_LIMIT: u64 = 64 << 20;

// Release

/// A lock file is at most this big (one of 20 repositories is 2 KB).
pub(crate) const MAX_LOCK: u64 = 4 << 20;

/// The most a metadata member (`manifest.json`, `SHA256SUMS`) read into memory may hold: a
/// manifest of a few hundred files is a few tens of KB.
pub(crate) const MAX_KEPT: u64 = 8 << 20;

/// The most a release document (SBOM, VEX, provenance, resolved config) read into memory may
/// hold: an image SBOM with every file listed is tens of MB.
pub(crate) const MAX_KEPT_RELEASE: u64 = 256 << 20;

/// The most all members read into memory may hold together.
pub(crate) const MAX_KEPT_TOTAL: u64 = 96 << 20;

/// A release file is at most this big (the qcomflash tarball of a provenance subject is the
/// largest, a few GB).
pub(crate) const MAX_RELEASE_FILE: u64 = 64 << 30;

/// A key file is a few hundred bytes.
pub(crate) const KEY_LIMIT: u64 = 64 << 10;

// Build

/// The most rtbuild reads of one kas file (meta-qcom's are a few KB).
pub(crate) const KAS_FILE_LIMIT: u64 = 1 << 20;

/// The most of the console script read: pip's scripts are a few hundred bytes.
pub(crate) const SCRIPT_LIMIT: u64 = 64 * 1024;

/// The most of `__version__.py` read (kas's is about 1.3 KB).
pub(crate) const VERSION_FILE_LIMIT: u64 = 64 * 1024;

/// The end of a failed BitBake task's log that is read for its last lines (a task log can be
/// hundreds of MB; its last lines are what the failure shows).
pub(crate) const TASK_LOG_TAIL: u64 = 1 << 20;

// Verify

/// A kernel image or `efi.bin` member is at most this big once decompressed.
pub(crate) const MAX_IMAGE_MEMBER: u64 = 512 << 20;

/// A fragment file is at most this big (the largest in Linux is a few KiB).
pub(crate) const MAX_FRAGMENT: u64 = 1 << 20;

/// A source file is at most this big (a vmlinux with debug info, a qcomflash tarball).
pub(crate) const MAX_SOURCE: u64 = 1 << 30;

/// An SBOM is at most this big (an image SBOM with every file is tens of MB).
pub(crate) const MAX_SBOM: u64 = 512 << 20;

/// Decompressed kernels are at most this big (a 6.x arm64 `Image` is about 40 MB).
pub(crate) const MAX_KERNEL: u64 = 256 << 20;

/// What one kernel image may cost in total, over every layer of compression and archive: bytes
/// decompressed (its time budget is `BUDGET_TIME` in `verify::kconfig::image`).
pub(crate) const MAX_KERNEL_INPUT: u64 = 512 << 20;

/// A kernel config is at most this big once decompressed (a full one is about 300 KB): a
/// `.config.gz/.xz/.zst` that inflates to more is refused, as a config inside an image is.
pub(crate) const MAX_CONFIG: u64 = 16 << 20;

/// A Kconfig file (in a kernel source tree) larger than this is skipped (the largest in
/// Linux 6.12 is 120 KB).
pub(crate) const MAX_KCONFIG_FILE: u64 = 8 << 20;

// Plan

/// The largest local kas file `--include` names that is read (kas files are a few KiB).
pub(crate) const LOCAL_LIMIT: u64 = 1 << 20;

// Results

/// A bundle's manifest (`history add --bundle`, `history compare`) is a few kB; anything larger
/// is not one.
pub(crate) const MAX_MANIFEST_BYTES: u64 = 16 << 20;

/// A kernel config given to `history` (`--config`, plain or compressed) is a few MB; anything
/// larger is not one.
pub(crate) const MAX_CONFIG_BYTES: u64 = 64 << 20;

/// A LAVA job log is at most this big (a day of histograms is a few MB).
pub(crate) const MAX_LOG: u64 = 256 << 20;

/// Larger JSON than this is not a cyclictest file (a 1 ns histogram of 1 s is ~20 MB).
pub(crate) const MAX_JSON: u64 = 512 << 20;

/// The largest stderr file read for snapshots (a day at one snapshot per 5 s of 8 threads is
/// about 11 MiB).
pub(crate) const STATUS_LIMIT: u64 = 64 << 20;
