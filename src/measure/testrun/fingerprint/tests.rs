use super::changes::is_device_irq;
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
    assert_eq!(fp.cpu_model.as_deref(), Some("Cortex-A55, Cortex-A76"));
    assert_eq!(fp.board.as_deref(), Some("Rockchip RK3588 EVB1 V10 Board"));
    assert_eq!(
        fp.cpufreq.unwrap_or_default(),
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
        fp.thermal.iter().flatten().map(|t| (t.zone.as_str(), t.kind.as_str(), t.temp_c)).collect();
    assert_eq!(
        temps,
        [
            ("thermal_zone0", "soc-thermal", Some(45.23)),
            ("thermal_zone1", "bigcore0-thermal", Some(-1.0)),
            ("thermal_zone2", "gpu-thermal", None)
        ]
    );
    assert_eq!(
        fp.throttling.unwrap_or_default(),
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
    assert_eq!(fp.uname.as_deref(), Some("Linux vm 6.18"));
    assert_eq!(fp.realtime, Some(true));
    assert_eq!(fp.preempt.unwrap_or_default(), ["CONFIG_PREEMPT_RT=y"]);
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
