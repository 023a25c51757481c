//! What a source showed, each item with where it came from. The source readers fill an
//! [`Evidence`]; [`super::checks`] turns it and the plan's expectations into checks.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use crate::plan::CpuSet;
use crate::verify::kconfig::KernelConfig;
use crate::verify::kconfig::tree::KconfigTree;

/// A value and the place it was read from (a path, `UKI .cmdline`, `uname -v` on a target).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found<T> {
    pub value: T,
    pub from: String,
}

impl<T> Found<T> {
    pub(crate) fn new(value: T, from: impl Into<String>) -> Found<T> {
        Found { value, from: from.into() }
    }
}

/// Everything one source told us. Readers leave out what the source does not carry.
#[derive(Debug, Clone, Default)]
pub(crate) struct Evidence {
    /// What the source was recognised as: `kernel config`, `build folder`, …
    pub kind: String,
    pub config: Option<Found<KernelConfig>>,
    /// The kernel's version string (`uname -v`, or the banner in an image).
    pub version: Option<Found<String>>,
    /// The kernel command line, or the part of it the build adds.
    pub cmdline: Option<Found<String>>,
    /// `/sys/devices/system/cpu/isolated` on a live target.
    pub isolated: Option<Found<CpuSet>>,
    /// `/sys/devices/system/cpu/nohz_full` on a live target.
    pub nohz_full: Option<Found<CpuSet>>,
    /// Every CPU the kernel can use (`/sys/devices/system/cpu/possible`).
    pub possible_cpus: Option<Found<CpuSet>>,
    /// Installed package names (image manifest, or the tools found on a target).
    pub packages: Option<Found<BTreeSet<String>>>,
    /// The machine's architecture as the kernel's `SRCARCH` (`arm64`, `x86`), from `uname -m`
    /// on a live target.
    pub arch: Option<Found<String>>,
    /// The boot-time tuning as the generated layer installs it, looked for on a live target.
    pub tune: Option<Found<TuneInstall>>,
    /// The kernel's source tree, when the source keeps it (a build folder's
    /// `tmp*/work-shared/<machine>/kernel-source`).
    pub kernel_source: Option<PathBuf>,
    /// The build's own kernel config fragments (`*.cfg` the recipe unpacked), to name the one
    /// that set a latency killer.
    pub fragments: Vec<PathBuf>,
    /// Its Kconfig files, read to explain a dropped option (see [`super::deps`]).
    pub kconfig: Option<Arc<KconfigTree>>,
    /// Which artifact the kernel facts were read from, for a build folder: the deployed
    /// qcomflash/UKI/Image, the image SBOM, or the build folder's `.config`.
    pub kernel_from: Option<String>,
    pub notes: Vec<String>,
}

/// What a live target has of the `rtbuild-tune` recipe: the script in `/usr/sbin`, its systemd
/// unit, the unit enabled (the `multi-user.target.wants` link `SYSTEMD_AUTO_ENABLE` makes), and
/// the RT CPUs the installed script tunes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TuneInstall {
    pub script: Option<String>,
    pub unit: Option<String>,
    pub enabled: bool,
    /// The script's `RT_CPUS` (space-separated CPU numbers, as rendered).
    pub rt_cpus: Option<crate::plan::CpuSet>,
}

impl Evidence {
    pub(crate) fn new(kind: impl Into<String>) -> Evidence {
        Evidence { kind: kind.into(), ..Evidence::default() }
    }
}

/// A kernel CPU list as found in sysfs: empty text is the empty set.
pub(super) fn sysfs_cpus(text: &str) -> Option<CpuSet> {
    let text = text.trim();
    if text.is_empty() { Some(CpuSet::default()) } else { CpuSet::parse(text).ok() }
}
