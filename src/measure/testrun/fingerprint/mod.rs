//! The system fingerprint taken before and after each scenario (`uname -a`, `/proc/cmdline`,
//! the kernel's PREEMPT options, RT flag, isolated CPUs, governors, `/proc/interrupts`,
//! `/proc/softirqs`), the system facts the seed guides record (CPU model, each CPU's frequency
//! and governor, thermal zone temperatures, throttling counters), and the interrupts that
//! landed on the RT CPUs in between.
//!
//! This file reads a fingerprint (the helper's sections, the CPU model, os-release, the boot
//! facts, devfreq); [`changes`] compares two of them (temperatures, throttling counters, and
//! the interrupts and softirqs that landed on the RT CPUs).

use std::collections::BTreeMap;

pub(super) use crate::formats::run_json::{
    BootFacts, Counter, CounterChange, CpuFreq, Devfreq, Fingerprint, IrqDelta, Thermal,
    ThermalChange,
};
use crate::plan::CpuSet;

/// The fingerprint's sections, as the helper printed them (`=== name` headers).
#[derive(Debug, Clone, Default)]
pub(super) struct Sections(BTreeMap<String, String>);

impl Sections {
    pub(super) fn parse(text: &str) -> Sections {
        let mut map = BTreeMap::new();
        let mut name: Option<String> = None;
        let mut body = String::new();
        for line in text.lines() {
            if let Some(next) = line.strip_prefix("=== ") {
                if let Some(done) = name.take() {
                    map.insert(done, std::mem::take(&mut body));
                }
                name = Some(next.trim().to_string());
            } else if name.is_some() {
                body.push_str(line);
                body.push('\n');
            }
        }
        if let Some(done) = name {
            map.insert(done, body);
        }
        Sections(map)
    }

    pub(super) fn get(&self, name: &str) -> &str {
        self.0.get(name).map_or("", String::as_str)
    }

    fn line(&self, name: &str) -> String {
        self.get(name).trim().to_string()
    }

    /// The CPUs in `/sys/devices/system/cpu/isolated` (empty when none or unknown).
    pub(super) fn isolated(&self) -> CpuSet {
        CpuSet::parse(&self.line("isolated")).unwrap_or_default()
    }

    pub(super) fn summary(&self) -> Fingerprint {
        Fingerprint {
            uname: Some(self.line("uname")),
            cmdline: Some(self.line("cmdline")),
            preempt: Some(self.get("preempt").lines().map(str::to_string).collect()),
            realtime: Some(self.line("realtime") == "1"),
            online: Some(self.line("online")),
            isolated: Some(self.line("isolated")),
            nohz_full: Some(self.line("nohz_full")),
            governors: Some(self.get("governors").lines().map(str::to_string).collect()),
            cpu_model: Some(cpu_model(self.get("cpu_model"))),
            board: Some(self.line("board")).filter(|b| !b.is_empty()),
            cpufreq: Some(self.get("cpufreq").lines().filter_map(CpuFreq::parse).collect()),
            thermal: Some(self.thermal()),
            throttling: Some(self.throttling()),
            os_release: os_release(self.get("os_release")),
            image_name: None,
            buildinfo: self
                .get("buildinfo")
                .lines()
                .map(|l| l.trim().to_string())
                .filter(|l| !l.is_empty())
                .collect(),
            image_version: Some(self.line("image_version")).filter(|v| !v.is_empty()),
            kernel_release: Some(self.key("kernel", "release")),
            kernel_version: Some(self.key("kernel", "version")),
            kernel_config_sha256: self.config_digest().map(|(sha, _)| sha),
            kernel_config_source: self.config_digest().map(|(_, source)| source),
            devfreq: self.get("devfreq").lines().filter_map(devfreq).collect(),
            urm: Some(self.line("urm")).filter(|u| !u.is_empty()),
            boot: Some(boot_facts(self.get("boot_flow"))),
        }
        .with_image_name()
    }

    /// `KEY value` in section `name`.
    fn key(&self, name: &str, key: &str) -> String {
        self.get(name)
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
            .unwrap_or("")
            .trim()
            .to_string()
    }

    /// The kernel config's digest and where the helper read it, when both are well-formed:
    /// 64 lowercase hex digits, and `/proc/config.gz` or `/boot/config-<release>`.
    fn config_digest(&self) -> Option<(String, String)> {
        let sha = self.key("kernel", "config_sha256");
        let source = self.key("kernel", "config_source");
        let hex = sha.len() == 64
            && sha.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        let release = self.key("kernel", "release");
        let known = source == "/proc/config.gz"
            || (!release.is_empty() && source == format!("/boot/config-{release}"));
        (hex && known).then_some((sha, source))
    }

    /// Thermal zones: `thermal_zoneN MILLIDEGREES TYPE` lines.
    pub(super) fn thermal(&self) -> Vec<Thermal> {
        self.get("thermal")
            .lines()
            .filter_map(|line| {
                let mut words = line.splitn(3, ' ');
                let zone = words.next()?.to_string();
                let temp_c = words.next()?.parse::<i64>().ok().map(|m| m as f64 / 1000.0);
                let kind = words.next().unwrap_or("").trim().to_string();
                Some(Thermal { zone, kind, temp_c })
            })
            .collect()
    }

    /// Throttling counters: `NAME COUNT` lines.
    pub(super) fn throttling(&self) -> Vec<Counter> {
        self.get("throttle")
            .lines()
            .filter_map(|line| {
                let (name, value) = line.rsplit_once(' ')?;
                Some(Counter { name: name.to_string(), value: value.trim().parse().ok()? })
            })
            .collect()
    }
}

/// The CPU model: `model name` (x86) or `Hardware`; on ARM, whose `/proc/cpuinfo` often has
/// neither, the core types from the implementer and part numbers (`Cortex-A76, Cortex-A55`).
fn cpu_model(section: &str) -> String {
    let mut named = None;
    let mut implementer = None;
    let mut parts = Vec::new();
    for line in section.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(v) = line.strip_prefix("implementer ") {
            implementer = Some(v.trim().to_string());
        } else if let Some(v) = line.strip_prefix("part ") {
            parts.push(v.trim().to_string());
        } else if named.is_none() {
            named = Some(line.to_string());
        }
    }
    if let Some(name) = named {
        return name;
    }
    let cores: Vec<String> = parts
        .iter()
        .map(|part| match (implementer.as_deref(), arm_core(part), qcom_core(part)) {
            (Some("0x41"), Some(core), _) | (Some("0x51"), _, Some(core)) => core.to_string(),
            (imp, _, _) => format!("implementer {} part {part}", imp.unwrap_or("?")),
        })
        .collect();
    cores.join(", ")
}

/// Qualcomm (implementer 0x51) core part numbers, as Linux's `cputype.h` names them: the Kryo
/// 2xx–4xx cores of QCS615 (IQ-615: Kryo 4xx Gold and Silver) and older SoCs. Newer Kryo cores
/// report Arm's own implementer and part numbers.
fn qcom_core(part: &str) -> Option<&'static str> {
    Some(match part {
        "0x200" => "Kryo",
        "0x800" => "Kryo 2xx Gold",
        "0x801" => "Kryo 2xx Silver",
        "0x802" => "Kryo 3xx Gold",
        "0x803" => "Kryo 3xx Silver",
        "0x804" => "Kryo 4xx Gold",
        "0x805" => "Kryo 4xx Silver",
        "0xc00" => "Falkor",
        "0x001" => "Oryon",
        _ => return None,
    })
}

/// Arm Ltd (implementer 0x41) core part numbers.
fn arm_core(part: &str) -> Option<&'static str> {
    Some(match part {
        "0xd03" => "Cortex-A53",
        "0xd04" => "Cortex-A35",
        "0xd05" => "Cortex-A55",
        "0xd07" => "Cortex-A57",
        "0xd08" => "Cortex-A72",
        "0xd09" => "Cortex-A73",
        "0xd0a" => "Cortex-A75",
        "0xd0b" => "Cortex-A76",
        "0xd0d" => "Cortex-A77",
        "0xd0e" => "Cortex-A76AE",
        "0xd41" => "Cortex-A78",
        "0xd42" => "Cortex-A78AE",
        "0xd44" => "Cortex-X1",
        "0xd4b" => "Cortex-A78C",
        "0xd4c" => "Cortex-X1C",
        "0xd46" => "Cortex-A510",
        "0xd47" => "Cortex-A710",
        "0xd48" => "Cortex-X2",
        "0xd4d" => "Cortex-A715",
        "0xd4e" => "Cortex-X3",
        "0xd80" => "Cortex-A520",
        "0xd81" => "Cortex-A720",
        _ => return None,
    })
}

impl CpuFreq {
    fn parse(line: &str) -> Option<CpuFreq> {
        let words: Vec<&str> = line.split_whitespace().collect();
        let [cpu, cur, min, max, governor] = words[..] else { return None };
        let khz = |w: &str| w.parse().ok();
        Some(CpuFreq {
            cpu: cpu.parse().ok()?,
            cur_khz: khz(cur),
            min_khz: khz(min),
            max_khz: khz(max),
            governor: (governor != "-").then(|| governor.to_string()),
        })
    }
}

/// `KEY=value` / `KEY="value"` lines of os-release; comments and junk skipped.
fn os_release(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|line| {
            let (key, value) = line.trim().split_once('=')?;
            if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return None;
            }
            let value = value.trim();
            let value = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(value);
            Some((key.to_string(), value.chars().filter(|c| !c.is_control()).take(200).collect()))
        })
        .collect()
}

/// The `boot_flow` section: `kvm`, `efi`, `hypervisor COMPATIBLE` lines.
fn boot_facts(text: &str) -> BootFacts {
    let mut facts = BootFacts::default();
    for line in text.lines().map(str::trim) {
        match line {
            "kvm" => facts.kvm = true,
            "efi" => facts.efi = true,
            "guest_checked" => facts.guest_checked = true,
            _ => {
                if let Some(sign) = line.strip_prefix("guest ").map(str::trim)
                    && !sign.is_empty()
                    && !facts.guest.iter().any(|g| g == sign)
                {
                    facts.guest.push(sign.chars().take(40).collect());
                }
                if let Some(compatible) = line.strip_prefix("hypervisor ") {
                    facts.hypervisor =
                        Some(compatible.split_whitespace().collect::<Vec<_>>().join(" "))
                            .filter(|c| !c.is_empty());
                }
            }
        }
    }
    facts
}

/// `DEVICE GOVERNOR CUR_HZ` (`-` when unknown).
fn devfreq(line: &str) -> Option<Devfreq> {
    let mut words = line.split_whitespace();
    let device = words.next()?.to_string();
    let known = |w: Option<&str>| w.filter(|w| *w != "-").map(str::to_string);
    let governor = known(words.next());
    let cur_hz = known(words.next()).and_then(|w| w.parse().ok());
    Some(Devfreq { device, governor, cur_hz })
}

impl Fingerprint {
    /// The image name: os-release's `IMAGE_NAME`, else the `IMAGE_NAME = …` line of buildinfo.
    fn with_image_name(mut self) -> Fingerprint {
        self.image_name = self.os_release.get("IMAGE_NAME").cloned().or_else(|| {
            self.buildinfo.iter().find_map(|l| {
                let (k, v) = l.split_once('=')?;
                (k.trim() == "IMAGE_NAME").then(|| v.trim().to_string())
            })
        });
        self
    }
}

#[cfg(test)]
mod boot_flow_tests;
mod changes;
#[cfg(test)]
mod tests;

pub(super) use changes::{changes, irq_names, landed_on};
