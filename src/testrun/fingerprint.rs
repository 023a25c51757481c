//! The system fingerprint taken before and after each scenario (`uname -a`, `/proc/cmdline`,
//! the kernel's PREEMPT options, RT flag, isolated CPUs, governors, `/proc/interrupts`,
//! `/proc/softirqs`), and the interrupts that landed on the RT CPUs in between.

use std::collections::BTreeMap;

pub use crate::formats::run_json::{Fingerprint, IrqDelta};
use crate::plan::CpuSet;

/// The fingerprint's sections, as the helper printed them (`=== name` headers).
#[derive(Debug, Clone, Default)]
pub struct Sections(BTreeMap<String, String>);

impl Sections {
    pub fn parse(text: &str) -> Sections {
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

    pub fn get(&self, name: &str) -> &str {
        self.0.get(name).map_or("", String::as_str)
    }

    fn line(&self, name: &str) -> String {
        self.get(name).trim().to_string()
    }

    /// The CPUs in `/sys/devices/system/cpu/isolated` (empty when none or unknown).
    pub fn isolated(&self) -> CpuSet {
        CpuSet::parse(&self.line("isolated")).unwrap_or_default()
    }

    pub fn summary(&self) -> Fingerprint {
        Fingerprint {
            uname: self.line("uname"),
            cmdline: self.line("cmdline"),
            preempt: self.get("preempt").lines().map(str::to_string).collect(),
            realtime: self.line("realtime") == "1",
            online: self.line("online"),
            isolated: self.line("isolated"),
            nohz_full: self.line("nohz_full"),
            governors: self.get("governors").lines().map(str::to_string).collect(),
        }
    }
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

/// Counters that grew on an RT CPU between `before` and `after`, biggest first.
pub fn landed_on(before: &str, after: &str, rt: &CpuSet) -> Vec<IrqDelta> {
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
                    device: irq.bytes().all(|b| b.is_ascii_digit()),
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
}
