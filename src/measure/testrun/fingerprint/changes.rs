//! What changed on the target between two fingerprints: each thermal zone's temperature and
//! each throttling counter before and after, and the interrupts and softirqs that landed on
//! the RT CPUs (device interrupts told apart from the per-CPU ones).

use std::collections::BTreeMap;

use super::{CounterChange, IrqDelta, Sections, ThermalChange};
use crate::plan::CpuSet;

/// Temperatures and throttling counters of `after` next to `before`'s.
pub(in crate::measure::testrun) fn changes(
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
pub(in crate::measure::testrun) fn irq_names(text: &str) -> BTreeMap<String, String> {
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
pub(in crate::measure::testrun) fn landed_on(
    before: &str,
    after: &str,
    rt: &CpuSet,
) -> Vec<IrqDelta> {
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
