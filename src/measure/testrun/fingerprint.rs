//! The system fingerprint taken before and after each scenario (`uname -a`, `/proc/cmdline`,
//! the kernel's PREEMPT options, RT flag, isolated CPUs, governors, `/proc/interrupts`,
//! `/proc/softirqs`), the system facts the seed guides record (CPU model, each CPU's frequency
//! and governor, thermal zone temperatures, throttling counters), and the interrupts that
//! landed on the RT CPUs in between.

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
            uname: self.line("uname"),
            cmdline: self.line("cmdline"),
            preempt: self.get("preempt").lines().map(str::to_string).collect(),
            realtime: self.line("realtime") == "1",
            online: self.line("online"),
            isolated: self.line("isolated"),
            nohz_full: self.line("nohz_full"),
            governors: self.get("governors").lines().map(str::to_string).collect(),
            cpu_model: cpu_model(self.get("cpu_model")),
            board: Some(self.line("board")).filter(|b| !b.is_empty()),
            cpufreq: self.get("cpufreq").lines().filter_map(CpuFreq::parse).collect(),
            thermal: self.thermal(),
            throttling: self.throttling(),
            os_release: os_release(self.get("os_release")),
            image_name: None,
            buildinfo: self
                .get("buildinfo")
                .lines()
                .map(|l| l.trim().to_string())
                .filter(|l| !l.is_empty())
                .collect(),
            image_version: Some(self.line("image_version")).filter(|v| !v.is_empty()),
            kernel_release: self.key("kernel", "release"),
            kernel_version: self.key("kernel", "version"),
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

/// Temperatures and throttling counters of `after` next to `before`'s.
pub(super) fn changes(
    before: &Sections,
    after: &Sections,
) -> (Vec<ThermalChange>, Vec<CounterChange>) {
    let old = before.thermal();
    let thermal = after
        .thermal()
        .into_iter()
        .map(|z| ThermalChange {
            before_c: old.iter().find(|o| o.zone == z.zone).and_then(|o| o.temp_c),
            after_c: z.temp_c,
            zone: z.zone,
            kind: z.kind,
        })
        .collect();
    let old = before.throttling();
    let counters = after
        .throttling()
        .into_iter()
        .map(|c| CounterChange {
            before: old.iter().find(|o| o.name == c.name).map(|o| o.value),
            after: c.value,
            name: c.name,
        })
        .collect();
    (thermal, counters)
}

/// Rows of a counter table: name → (per-CPU counts, description).
type Rows = BTreeMap<String, (Vec<u64>, String)>;

/// Per-CPU counters of a `/proc/interrupts`- or `/proc/softirqs`-style table.
fn table(text: &str) -> (Vec<u32>, Rows) {
    let mut lines = text.lines();
    let cpus: Vec<u32> = lines
        .next()
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|c| c.strip_prefix("CPU").and_then(|n| n.parse().ok()))
        .collect();
    let mut rows = BTreeMap::new();
    for line in lines {
        let Some((name, rest)) = line.split_once(':') else { continue };
        let mut counts = Vec::new();
        let mut words = rest.split_whitespace().peekable();
        while counts.len() < cpus.len() {
            match words.peek().and_then(|w| w.parse::<u64>().ok()) {
                Some(n) => {
                    counts.push(n);
                    words.next();
                }
                None => break,
            }
        }
        let description = words.collect::<Vec<_>>().join(" ");
        rows.insert(name.trim().to_string(), (counts, description));
    }
    (cpus, rows)
}

/// Each IRQ's description in `/proc/interrupts` (chip, trigger and device names).
pub(super) fn irq_names(text: &str) -> BTreeMap<String, String> {
    table(text).1.into_iter().map(|(irq, (_, description))| (irq, description)).collect()
}

/// Whether a `/proc/interrupts` row is a device interrupt, which IRQ affinity can keep off the
/// RT CPUs, rather than a per-CPU one every CPU takes for itself: the named rows (`LOC`, `RES`,
/// arm64's `IPI0`…), and numbered rows of per-CPU sources: a GIC's SGIs and PPIs (hwirq 0–31,
/// `GICv3 27 Level arch_timer`, `GICv3 23 Level arm-pmu`) and extended PPIs (1056–1119), the
/// RISC-V and LoongArch per-CPU controllers (`RISC-V INTC 5 Edge riscv-timer`, `CPUINTC`), and
/// IPIs numbered by their own chip (`IPI`).
pub(super) fn is_device_irq(irq: &str, description: &str) -> bool {
    if irq.is_empty() || !irq.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let mut words = description.split_whitespace();
    let chip = words.next().unwrap_or("");
    let next = words.next().unwrap_or("");
    if chip.starts_with("GIC") {
        // `GICv3 27 Level`, `GIC-0 29 Edge`: the hardware IRQ number follows the chip.
        if let Ok(hwirq) = next.parse::<u32>() {
            return !(hwirq < 32 || (1056..1120).contains(&hwirq));
        }
        return true;
    }
    !matches!((chip, next), ("RISC-V", "INTC") | ("CPUINTC", _) | ("IPI", _))
}

/// Counters that grew on an RT CPU between `before` and `after`, biggest first.
pub(super) fn landed_on(before: &str, after: &str, rt: &CpuSet) -> Vec<IrqDelta> {
    let (cpus, old) = table(before);
    let (_, new) = table(after);
    let mut deltas = Vec::new();
    for (irq, (counts, description)) in &new {
        for (column, &cpu) in cpus.iter().enumerate() {
            if !rt.contains(cpu) {
                continue;
            }
            let now = counts.get(column).copied().unwrap_or(0);
            let was = old.get(irq).and_then(|(c, _)| c.get(column).copied()).unwrap_or(0);
            if now > was {
                deltas.push(IrqDelta {
                    irq: irq.clone(),
                    device: is_device_irq(irq, description),
                    cpu,
                    count: now - was,
                    description: description.clone(),
                });
            }
        }
    }
    deltas.sort_by(|a, b| b.count.cmp(&a.count).then(a.irq.cmp(&b.irq)));
    deltas
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
mod tests {
    use super::*;

    const BEFORE: &str = "           CPU0       CPU1       CPU2\n\
  1:         10          0          5   IO-APIC   1-edge      i8042\n\
 24:        100          7          0   PCI-MSI 1-edge      virtio0\n\
LOC:       5000       6000       7000   Local timer interrupts\n\
ERR:          0\n";
    const AFTER: &str = "           CPU0       CPU1       CPU2\n\
  1:         11          0          9   IO-APIC   1-edge      i8042\n\
 24:        150          7          0   PCI-MSI 1-edge      virtio0\n\
LOC:       5100       6100       7300   Local timer interrupts\n\
ERR:          0\n";

    #[test]
    fn interrupts_that_landed_on_rt_cpus() {
        let rt = CpuSet::parse("1-2").unwrap();
        let deltas = landed_on(BEFORE, AFTER, &rt);
        let short: Vec<(&str, u32, u64)> =
            deltas.iter().map(|d| (d.irq.as_str(), d.cpu, d.count)).collect();
        assert_eq!(short, [("LOC", 2, 300), ("LOC", 1, 100), ("1", 2, 4)]);
        assert_eq!(deltas[2].description, "IO-APIC 1-edge i8042");
        assert!(deltas[2].device && !deltas[0].device);
    }

    /// An 8-CPU arm64 guest's `/proc/interrupts` (QEMU virt, GICv3, Debian 12's 6.1 rt-arm64
    /// kernel) with RT CPU 7: the architected timer (PPI 27), the PMU (PPI 23) and the IPIs fire
    /// on every CPU and are not device interrupts; the virtio-blk queue pinned to CPU 7 and the
    /// UART are.
    #[test]
    fn per_cpu_interrupts_of_an_arm64_gic_are_not_device_interrupts() {
        let header = "           CPU0       CPU1       CPU2       CPU3       CPU4       CPU5       CPU6       CPU7       \n";
        let table = |timer: u64, blk: u64, ipi: u64| {
            format!(
                "{header}\
 11:      51023      50311      49876      50120      50007      49931      50412 {timer:>10}     GICv3  27 Level     arch_timer\n\
 13:        402          0          0          0          0          0          0          0     GICv3  33 Level     uart-pl011\n\
 14:          0          0          0          0          0          0          0          0     GICv3  23 Level     arm-pmu\n\
 25:          0          0          0          0          0          0          0 {blk:>10}   ITS-MSI 16391 Edge      virtio1-req.7\n\
 26:       1834          0          0          0          0          0          0          0   ITS-MSI 16384 Edge      virtio1-req.0\n\
IPI0:       812        734        690        701        655        702        744 {ipi:>10}       Rescheduling interrupts\n\
IPI1:      4412       5120       4987       5012       4877       4901       4533          3       Function call interrupts\n\
IPI5:         0          0          0          0          0          0          0          0       IRQ work interrupts\n\
Err:          0\n"
            )
        };
        let rt = CpuSet::parse("7").unwrap();
        let deltas = landed_on(&table(1000, 4, 2), &table(61000, 9, 5), &rt);
        let short: Vec<(&str, bool, u64)> =
            deltas.iter().map(|d| (d.irq.as_str(), d.device, d.count)).collect();
        assert_eq!(short, [("11", false, 60000), ("25", true, 5), ("IPI0", false, 3)]);
        assert_eq!(deltas[0].description, "GICv3 27 Level arch_timer");
        for (irq, description, device) in [
            ("14", "GICv3 23 Level arm-pmu", false),
            ("13", "GICv3 33 Level uart-pl011", true),
            ("3", "GIC-0 29 Edge twd", false),
            ("40", "GICv3 1056 Level arm-pmu", false),
            ("5", "RISC-V INTC 5 Edge riscv-timer", false),
            ("10", "CPUINTC 11 Edge timer", false),
            ("0", "IO-APIC 2-edge timer", true),
            ("120", "ITS-PCI-MSI 524289 Edge nvme0q1", true),
            ("LOC", "Local timer interrupts", false),
        ] {
            assert_eq!(is_device_irq(irq, description), device, "{irq}: {description}");
        }
    }

    /// IQ-615 (QCS615, Kryo 460): `/proc/cpuinfo` says `CPU implementer : 0x51` with parts 0x805
    /// (six Kryo 4xx Silver) and 0x804 (two Kryo 4xx Gold): names, not raw part numbers.
    #[test]
    fn kryo_4xx_cores_have_names() {
        // The helper's lines, `sort -u`ed as it prints them.
        assert_eq!(
            cpu_model("implementer 0x51\npart 0x804\npart 0x805\n"),
            "Kryo 4xx Gold, Kryo 4xx Silver"
        );
        assert_eq!(cpu_model("implementer 0x41\npart 0xd4b\n"), "Cortex-A78C");
        // An unknown part stays raw, with its implementer.
        assert_eq!(cpu_model("implementer 0x51\npart 0x999\n"), "implementer 0x51 part 0x999");
    }

    /// The helper's system sections, as it prints them from an RK3588-like sysfs.
    #[test]
    fn system_facts_from_an_arm_board() {
        let text = "=== cpu_model\nimplementer 0x41\npart 0xd05\npart 0xd0b\n=== board\nRockchip RK3588 EVB1 V10 Board\n\
=== cpufreq\n0 408000 408000 1800000 schedutil\n4 - 408000 2400000 performance\n7 x - - -\n\
=== thermal\nthermal_zone0 45230 soc-thermal\nthermal_zone1 -1000 bigcore0-thermal\nthermal_zone2 - gpu-thermal\n\
=== throttle\ncooling_device0(cpufreq-cpu0)/total_trans 12\nbroken\n";
        let fp = Sections::parse(text).summary();
        assert_eq!(fp.cpu_model, "Cortex-A55, Cortex-A76");
        assert_eq!(fp.board.as_deref(), Some("Rockchip RK3588 EVB1 V10 Board"));
        assert_eq!(
            fp.cpufreq,
            [
                CpuFreq {
                    cpu: 0,
                    cur_khz: Some(408_000),
                    min_khz: Some(408_000),
                    max_khz: Some(1_800_000),
                    governor: Some("schedutil".into())
                },
                CpuFreq {
                    cpu: 4,
                    cur_khz: None,
                    min_khz: Some(408_000),
                    max_khz: Some(2_400_000),
                    governor: Some("performance".into())
                },
                CpuFreq { cpu: 7, cur_khz: None, min_khz: None, max_khz: None, governor: None },
            ]
        );
        let temps: Vec<(&str, &str, Option<f64>)> =
            fp.thermal.iter().map(|t| (t.zone.as_str(), t.kind.as_str(), t.temp_c)).collect();
        assert_eq!(
            temps,
            [
                ("thermal_zone0", "soc-thermal", Some(45.23)),
                ("thermal_zone1", "bigcore0-thermal", Some(-1.0)),
                ("thermal_zone2", "gpu-thermal", None)
            ]
        );
        assert_eq!(
            fp.throttling,
            [Counter { name: "cooling_device0(cpufreq-cpu0)/total_trans".into(), value: 12 }]
        );
        assert_eq!(cpu_model("Intel(R) Xeon(R) Processor\n"), "Intel(R) Xeon(R) Processor");
        assert_eq!(cpu_model("implementer 0x70\npart 0x662\n"), "implementer 0x70 part 0x662");

        let after = Sections::parse(
            "=== thermal\nthermal_zone0 51000 soc-thermal\nthermal_zone9 30000 new\n=== throttle\ncpu0/core_throttle_count 3\n",
        );
        let (thermal, counters) = changes(&Sections::parse(text), &after);
        assert_eq!(
            thermal[0],
            ThermalChange {
                zone: "thermal_zone0".into(),
                kind: "soc-thermal".into(),
                before_c: Some(45.23),
                after_c: Some(51.0)
            }
        );
        assert_eq!(thermal[1].before_c, None);
        assert_eq!(
            counters,
            [CounterChange { name: "cpu0/core_throttle_count".into(), before: None, after: 3 }]
        );
    }

    #[test]
    fn sections_and_summary() {
        let text = "=== uname\nLinux vm 6.18\n=== preempt\nCONFIG_PREEMPT_RT=y\n=== realtime\n1\n=== isolated\n2-3\n=== interrupts\nCPU0\n";
        let sections = Sections::parse(text);
        let fp = sections.summary();
        assert_eq!(fp.uname, "Linux vm 6.18");
        assert!(fp.realtime);
        assert_eq!(fp.preempt, ["CONFIG_PREEMPT_RT=y"]);
        assert_eq!(sections.isolated().to_string(), "2-3");
        assert_eq!(sections.get("interrupts"), "CPU0\n");
    }

    #[test]
    fn the_kernel_config_digest_is_taken_only_when_well_formed() {
        let sha = "a".repeat(64);
        let kernel = |digest: &str, source: &str| {
            Sections::parse(&format!(
                "=== kernel\nrelease 6.1.0-rt\nversion #1 SMP PREEMPT_RT\nconfig_sha256 {digest}\nconfig_source {source}\n"
            ))
            .summary()
        };
        let fp = kernel(&sha, "/boot/config-6.1.0-rt");
        assert_eq!(fp.kernel_config_sha256.as_deref(), Some(sha.as_str()));
        assert_eq!(fp.kernel_config_source.as_deref(), Some("/boot/config-6.1.0-rt"));
        assert_eq!(kernel(&sha, "/proc/config.gz").kernel_config_sha256.as_deref(), Some(&*sha));
        for (digest, source) in [
            (&*sha, "/boot/config-6.6.0"),
            (&*sha, "/etc/passwd"),
            (&sha[1..], "/proc/config.gz"),
            (&"A".repeat(64), "/proc/config.gz"),
            (&"g".repeat(64), "/proc/config.gz"),
        ] {
            let fp = kernel(digest, source);
            assert_eq!(fp.kernel_config_sha256, None, "{digest} {source}");
            assert_eq!(fp.kernel_config_source, None, "{digest} {source}");
        }
        // A target that exposes no config: no digest, and none in run.json.
        let none = Sections::parse("=== kernel\nrelease 6.1.0-rt\n").summary();
        assert_eq!(none.kernel_config_sha256, None);
        let json = serde_json::to_string(&none).unwrap();
        assert!(!json.contains("kernel_config_sha256"), "{json}");
    }
}

#[cfg(test)]
mod boot_flow_tests {
    use super::*;

    /// The helper's `boot_flow` section as a Qualcomm KVM image, a Gunyah board and a PC write
    /// it (the Gunyah `compatible` as the device tree binding names it), and the Boot Flow word
    /// the results table shows for each.
    #[test]
    fn boot_facts_give_the_guides_boot_flow_word() {
        let kvm = boot_facts("kvm\nefi\nguest_checked\n");
        assert_eq!(
            kvm,
            BootFacts { kvm: true, efi: true, guest_checked: true, ..BootFacts::default() }
        );
        assert_eq!(kvm.flow(), "KVM");
        let gunyah = boot_facts("efi\nhypervisor gunyah-hypervisor-1.0 gunyah-hypervisor \n");
        assert_eq!(gunyah.hypervisor.as_deref(), Some("gunyah-hypervisor-1.0 gunyah-hypervisor"));
        assert_eq!(gunyah.flow(), "Gunyah (guest)");
        let other = boot_facts("hypervisor xen,xen-4.17 xen,xen\n");
        assert_eq!(other.flow(), "guest (xen,xen-4.17)");
        let plain = boot_facts("efi\nguest_checked\n");
        assert_eq!((plain.efi, plain.flow().as_str()), (true, "unknown"));
        assert_eq!(boot_facts(""), BootFacts::default());
        assert_eq!(boot_facts("hypervisor   \n").hypervisor, None);
    }

    /// /dev/kvm in a virtual machine (nested KVM, as on this lab's x86 guests) is no KVM host:
    /// the `hypervisor` CPU flag makes it a guest. A record from before rtbuild looked for a
    /// guest says only `kvm`: its boot flow is unknown, never KVM.
    #[test]
    fn dev_kvm_is_no_proof_of_a_kvm_host() {
        let nested =
            boot_facts("kvm\nguest_checked\nguest cpu-flag-hypervisor\nguest dmi-vendor\n");
        assert_eq!(nested.guest, ["cpu-flag-hypervisor", "dmi-vendor"]);
        assert_eq!(nested.flow(), "guest");
        assert_eq!(boot_facts("kvm\nefi\n").flow(), "unknown");
    }
}
