//! The target's fingerprint in `run.json`: the kernel and its config, CPU and devfreq
//! frequencies, temperatures, throttling counters, and how the target booted.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The fingerprint's short fields, for `run.json`. Every fact is an `Option`: a field a
/// `run.json` does not hold was not measured, and stays absent (never read as `false` or empty)
/// when the fingerprint is read and written again, as `report` does.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Fingerprint {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uname: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cmdline: Option<String>,
    /// `CONFIG_PREEMPT*` lines of the running kernel's config (empty when it is not readable).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preempt: Option<Vec<String>>,
    /// `/sys/kernel/realtime` reads 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub realtime: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub online: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub isolated: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nohz_full: Option<String>,
    /// `policyN governor` per cpufreq policy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub governors: Option<Vec<String>>,
    /// The CPU model (`/proc/cpuinfo`), or the Arm core types.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    /// The device tree's board model, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub board: Option<String>,
    /// Each CPU's current/min/max frequency and governor (empty without cpufreq).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpufreq: Option<Vec<CpuFreq>>,
    /// Thermal zone temperatures (empty when the kernel exposes none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thermal: Option<Vec<Thermal>>,
    /// Throttling counters (x86 `thermal_throttle`, cooling-device `stats/total_trans`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throttling: Option<Vec<Counter>>,
    /// The target's `/etc/os-release` (else `/usr/lib/os-release`), key by key, unquoted.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub os_release: BTreeMap<String, String>,
    /// The image name: os-release's `IMAGE_NAME`, else `/etc/buildinfo`'s, when present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_name: Option<String>,
    /// `/etc/buildinfo` (Yocto's image-buildinfo), line by line, when present.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub buildinfo: Vec<String>,
    /// The first line of `/etc/version` (the image's build stamp), when present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_version: Option<String>,
    /// `uname -r` and `uname -v`: which kernel build ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_release: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_version: Option<String>,
    /// sha256 of the running kernel's config, uncompressed (as `rtbuild verify` digests it;
    /// `bundle --measurement` compares the two); absent when the target exposes no config,
    /// and in files written before rtbuild recorded it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_config_sha256: Option<String>,
    /// Where that config was read: `/proc/config.gz` or `/boot/config-<release>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_config_source: Option<String>,
    /// Each devfreq device's governor (L3, LLCC, DDR on Qualcomm boards), beside cpufreq.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub devfreq: Vec<Devfreq>,
    /// A running URM (`urm.service`), which re-tunes knobs when cyclictest starts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub urm: Option<String>,
    /// What the target's boot says about its boot flow (the Qualcomm guide's "Boot Flow");
    /// absent in records from before rtbuild read it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boot: Option<BootFacts>,
}

/// Facts about how the target booted, read on the target while the fingerprint is taken.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct BootFacts {
    /// `/dev/kvm` exists. On its own no proof of a KVM host: a guest with nested KVM has it.
    pub kvm: bool,
    /// `/sys/firmware/efi` exists: UEFI firmware started the kernel.
    pub efi: bool,
    /// The device tree's `/hypervisor` node `compatible`: a hypervisor runs below Linux.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hypervisor: Option<String>,
    /// The target was checked for signs of running as a guest (absent in records from before
    /// rtbuild looked: their boot flow is unknown).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub guest_checked: bool,
    /// Each sign found that the kernel runs under a hypervisor: `cpu-flag-hypervisor`,
    /// `sys-hypervisor`, `dmi-vendor`, `dt-dummy-virt`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub guest: Vec<String>,
}

/// The boot flow when nothing proves one.
pub(crate) const UNKNOWN_FLOW: &str = "unknown";

impl BootFacts {
    /// The guide's "Boot Flow", said only from evidence that proves it: `Gunyah (guest)` under
    /// Qualcomm's hypervisor (the device tree's `gunyah-hypervisor…` node), `guest (…)` under
    /// another hypervisor the device tree names, `guest` when another sign shows a hypervisor
    /// below Linux, `KVM` when /dev/kvm exists and the target was checked and shows no sign of
    /// being a guest (so Linux owns EL2 as the KVM host), else [`UNKNOWN_FLOW`].
    pub(crate) fn flow(&self) -> String {
        if let Some(compatible) = self.hypervisor.as_deref() {
            if compatible.contains("gunyah") {
                return "Gunyah (guest)".to_string();
            }
            let first = compatible.split_whitespace().next().unwrap_or(compatible);
            return format!("guest ({first})");
        }
        if !self.guest.is_empty() {
            return "guest".to_string();
        }
        if self.kvm && self.guest_checked {
            return "KVM".to_string();
        }
        UNKNOWN_FLOW.to_string()
    }
}

/// One devfreq device's governor and current frequency (Hz, as devfreq reports it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Devfreq {
    pub device: String,
    pub governor: Option<String>,
    pub cur_hz: Option<u64>,
}

impl Fingerprint {
    /// The Qualcomm guide's "Distro and image": os-release's name and version, then the image.
    pub(crate) fn distro_and_image(&self) -> Option<String> {
        let distro = self.os_release.get("PRETTY_NAME").cloned().or_else(|| {
            let name = self.os_release.get("NAME")?;
            Some(match self.os_release.get("VERSION_ID") {
                Some(v) => format!("{name} {v}"),
                None => name.clone(),
            })
        });
        match (distro, &self.image_name) {
            (Some(d), Some(i)) => Some(format!("{d}, {i}")),
            (Some(d), None) => Some(d),
            (None, Some(i)) => Some(i.clone()),
            (None, None) => None,
        }
    }
}

/// One CPU's frequency (kHz, as cpufreq reports it) and governor.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct CpuFreq {
    pub cpu: u32,
    pub cur_khz: Option<u64>,
    pub min_khz: Option<u64>,
    pub max_khz: Option<u64>,
    pub governor: Option<String>,
}

/// One thermal zone's temperature.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Thermal {
    pub zone: String,
    /// The zone's `type` (`cpu-thermal`, `x86_pkg_temp`, `soc-thermal`, …).
    pub kind: String,
    pub temp_c: Option<f64>,
}

/// A throttling counter the kernel exposes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct Counter {
    pub name: String,
    pub value: u64,
}
