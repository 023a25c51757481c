//! What else on the target spoils a run, read from the fingerprints before and after each
//! scenario: a device interrupt moved onto an RT CPU (irqbalance puts them back where `tune`
//! took them from), and warnings the kernel logged during the run (Linutronix's gate: an RT
//! kernel that logs `BUG:`, `WARNING:`, `Oops` or `hrtimer: interrupt took` under load fails,
//! and `sched: RT throttling activated` means the measuring threads were stopped, so the
//! measurement is invalid).

use std::collections::{BTreeMap, BTreeSet};

use super::fingerprint::Sections;
use crate::measure::kernel_log::{self, Severity};
use crate::plan::CpuSet;

/// The helper's line when `dmesg` could not be read (`kernel.dmesg_restrict`, no dmesg).
const UNREADABLE: &str = "rtbuild: dmesg failed";

/// What [`scenario`] found.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Spoilers {
    pub invalid: Vec<String>,
    pub fail: Vec<String>,
    pub notes: Vec<String>,
}

/// The `irq_affinity` section: IRQ → (smp_affinity_list, effective_affinity_list).
fn affinities(section: &str) -> BTreeMap<String, (Option<CpuSet>, Option<CpuSet>)> {
    let set = |word: Option<&str>| word.filter(|w| *w != "-").and_then(|w| CpuSet::parse(w).ok());
    section
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let irq = words.next()?.to_string();
            Some((irq, (set(words.next()), set(words.next()))))
        })
        .collect()
}

/// The running irqbalance instances (`PID BANNED` lines).
pub(super) fn irqbalance(sections: &Sections) -> Vec<String> {
    sections
        .get("irqbalance")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

/// The kernel log's warning lines, and whether the log could be read.
pub(super) fn kernel_warnings(sections: &Sections) -> (Vec<String>, bool) {
    let text = sections.get("kernel_warnings");
    let readable = !text.lines().any(|l| l.trim() == UNREADABLE);
    let lines = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty() && l.trim() != UNREADABLE)
        .map(String::from)
        .collect();
    (lines, readable)
}

/// Every IRQ whose interrupts could not reach an RT CPU before the scenario and can after it.
fn moved_irqs(before: &Sections, after: &Sections, rt: &CpuSet) -> Vec<String> {
    let old = affinities(before.get("irq_affinity"));
    let new = affinities(after.get("irq_affinity"));
    let names = super::fingerprint::irq_names(after.get("interrupts"));
    let balancers = irqbalance(after);
    let mut reasons = Vec::new();
    for (irq, now) in &new {
        let Some(was) = old.get(irq) else { continue };
        // Compare like with like: effective affinity on both sides, else the allowed CPUs.
        let (was_on, now_on) = match (was.1.as_ref(), now.1.as_ref()) {
            (Some(w), Some(n)) => (w, n),
            _ => match (was.0.as_ref(), now.0.as_ref()) {
                (Some(w), Some(n)) => (w, n),
                _ => continue,
            },
        };
        let gained = now_on.intersection(rt);
        if gained.is_empty() || !was_on.intersection(rt).is_empty() {
            continue;
        }
        let name =
            names.get(irq).filter(|n| !n.is_empty()).map_or(String::new(), |n| format!(" ({n})"));
        let why = if balancers.is_empty() {
            "something re-set its affinity (a daemon or script on the target)".to_string()
        } else {
            format!(
                "irqbalance runs (pid {}) and moves IRQs onto the RT CPUs; `rtbuild tune --apply` (or `rtbuild test --tune`) bans them in it",
                balancers
                    .iter()
                    .map(|b| b.split_whitespace().next().unwrap_or("?"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        reasons.push(format!(
            "IRQ {irq}{name} moved onto RT CPU {gained} during the run (affinity {was_on} → {now_on}): {why}"
        ));
    }
    reasons
}

/// Each device interrupt that fired on an RT CPU during the run although its affinity lies
/// within the RT CPUs after tuning: the kernel fixed it there (a managed queue interrupt of
/// virtio-blk, UFS or NVMe, whose affinity cannot be written), named and counted.
fn pinned_irqs(before: &Sections, after: &Sections, rt: &CpuSet) -> Vec<String> {
    let affinity = affinities(after.get("irq_affinity"));
    let mut fired: BTreeMap<String, (String, u64, CpuSet)> = BTreeMap::new();
    let deltas =
        super::fingerprint::landed_on(before.get("interrupts"), after.get("interrupts"), rt);
    for d in deltas.into_iter().filter(|d| d.device) {
        let entry = fired.entry(d.irq).or_insert((d.description, 0, CpuSet::default()));
        entry.1 += d.count;
        entry.2 = entry.2.union(&CpuSet::from_cpus([d.cpu]));
    }
    let mut notes = Vec::new();
    for (irq, (description, count, cpus)) in fired {
        let Some(allowed) = affinity.get(&irq).and_then(|(allowed, _)| allowed.as_ref()) else {
            continue;
        };
        if allowed.is_empty() || !allowed.is_subset(rt) {
            continue;
        }
        notes.push(format!(
            "IRQ {irq} ({description}) is fixed to RT CPU {allowed} by the kernel (a managed interrupt: its affinity cannot be written) and fired {} on CPU {cpus} during the run; boot with isolcpus=managed_irq,{rt} to keep managed interrupts off the RT CPUs",
            crate::text::counted(count, "time")
        ));
    }
    notes
}

/// What spoiled one scenario, from its fingerprints before and after.
pub(super) fn scenario(before: &Sections, after: &Sections, rt: &CpuSet) -> Spoilers {
    let mut found = Spoilers { invalid: moved_irqs(before, after, rt), ..Spoilers::default() };
    found.notes = pinned_irqs(before, after, rt);
    let (old, _) = kernel_warnings(before);
    let (new, readable) = kernel_warnings(after);
    if !readable {
        found.notes.push(
            "the kernel log could not be read (dmesg failed: kernel.dmesg_restrict or no dmesg), so kernel warnings during the run were not checked; run as root".into(),
        );
        return found;
    }
    let old: BTreeSet<&str> = old.iter().map(String::as_str).collect();
    for line in new.iter().filter(|l| !old.contains(l.as_str())) {
        match kernel_log::classify(line) {
            Some(Severity::Invalid) => found.invalid.push(format!(
                "the kernel logged `{line}` during the run: RT throttling stopped the RT tasks, so the measurement is not the kernel's latency; set kernel.sched_rt_runtime_us=-1 (`rtbuild tune --apply`)"
            )),
            Some(Severity::Fail) => {
                found.fail.push(format!("the kernel logged `{line}` during the run"));
            }
            None => {}
        }
    }
    found
}

/// The same checks on the state a LAVA job's script printed on the board before and after a
/// scenario (the helper's `=== section` form): `report` judges a LAVA log by the rules
/// `rtbuild test` judges its own run by.
pub(crate) fn board_state(before: &str, after: &str, rt: &CpuSet) -> Spoilers {
    scenario(&Sections::parse(before), &Sections::parse(after), rt)
}

/// The kernel log's warning lines a state printed (the ones the log held at that moment).
pub(crate) fn board_warnings(state: &str) -> Vec<String> {
    kernel_warnings(&Sections::parse(state)).0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sections(irqs: &str, balancers: &str, log: &str) -> Sections {
        Sections::parse(&format!(
            "=== interrupts\n           CPU0       CPU1\n  9:          5          0   IO-APIC   9-fasteoi   acpi\n 24:          1          0   PCI-MSI   ahci[0000:00:1f.2]\n=== irq_affinity\n{irqs}=== irqbalance\n{balancers}=== kernel_warnings\n{log}"
        ))
    }

    #[test]
    fn an_irq_moved_onto_an_rt_cpu_is_named_with_its_device_and_irqbalance() {
        let rt = CpuSet::parse("1").unwrap();
        let before = sections("9 0 0\n24 0 -\n11 - -\n", "", "");
        let after = sections("9 0-1 1\n24 0-1 -\n11 - -\n", "4242 -\n", "");
        let found = scenario(&before, &after, &rt);
        assert_eq!(
            found.invalid,
            [
                "IRQ 24 (PCI-MSI ahci[0000:00:1f.2]) moved onto RT CPU 1 during the run (affinity 0 → 0-1): irqbalance runs (pid 4242) and moves IRQs onto the RT CPUs; `rtbuild tune --apply` (or `rtbuild test --tune`) bans them in it",
                "IRQ 9 (IO-APIC 9-fasteoi acpi) moved onto RT CPU 1 during the run (affinity 0 → 1): irqbalance runs (pid 4242) and moves IRQs onto the RT CPUs; `rtbuild tune --apply` (or `rtbuild test --tune`) bans them in it",
            ]
        );
        // Already on the RT CPU before, or still off it: not a move during the run.
        let before = sections("9 0-1 1\n24 0 -\n", "", "");
        let after = sections("9 1 1\n24 0 -\n", "", "");
        assert_eq!(scenario(&before, &after, &rt), Spoilers::default());
        // Effective affinity decides when both sides have it: allowed on CPU 1 but firing on 0.
        let before = sections("9 0 0\n", "", "");
        let after = sections("9 0-1 0\n", "", "");
        assert_eq!(scenario(&before, &after, &rt), Spoilers::default());
    }

    /// IQ-8275's layout on the arm64 lab guest: the kernel pins virtio-blk's queue 3 interrupt
    /// to CPU 3 (`smp_affinity_list` 3) and it fires there; the timer PPI is not a device IRQ.
    #[test]
    fn a_managed_irq_fixed_to_the_rt_cpu_is_named_and_counted() {
        let rt = CpuSet::parse("3").unwrap();
        let fp = |blk: u64, timer: u64| {
            Sections::parse(&format!(
                "=== interrupts\n           CPU0       CPU1       CPU2       CPU3\n 11:        900        800        700 {timer:>10}     GICv3  27 Level     arch_timer\n 25:          0          0          0 {blk:>10}   ITS-MSI 16387 Edge      virtio1-req.3\n 26:         40          0          0          0   ITS-MSI 16384 Edge      virtio1-req.0\n=== irq_affinity\n11 - -\n25 3 3\n26 0 0\n=== irqbalance\n=== kernel_warnings\n"
            ))
        };
        let found = scenario(&fp(2, 100), &fp(9, 5000), &rt);
        assert_eq!(
            found.notes,
            [
                "IRQ 25 (ITS-MSI 16387 Edge virtio1-req.3) is fixed to RT CPU 3 by the kernel (a managed interrupt: its affinity cannot be written) and fired 7 times on CPU 3 during the run; boot with isolcpus=managed_irq,3 to keep managed interrupts off the RT CPUs"
            ]
        );
        assert!(found.invalid.is_empty() && found.fail.is_empty());
        // Silent: it did not fire during the run.
        assert!(scenario(&fp(9, 100), &fp(9, 5000), &rt).notes.is_empty());
    }

    #[test]
    fn kernel_warnings_logged_during_the_run_fail_it_and_rt_throttling_invalidates_it() {
        let rt = CpuSet::parse("1").unwrap();
        let boot = "[    2.000000] WARNING: CPU: 0 PID: 1 at drivers/x.c:10 probe+0x1/0x2\n";
        let before = sections("", "", boot);
        let after = sections(
            "",
            "",
            &format!(
                "{boot}[  100.000001] sched: RT throttling activated\n[  100.500000] BUG: scheduling while atomic: cyclictest/77/0x00000002\n[  101.000000] hrtimer: interrupt took 123456 ns\n"
            ),
        );
        let found = scenario(&before, &after, &rt);
        assert_eq!(
            found.invalid,
            [
                "the kernel logged `[  100.000001] sched: RT throttling activated` during the run: RT throttling stopped the RT tasks, so the measurement is not the kernel's latency; set kernel.sched_rt_runtime_us=-1 (`rtbuild tune --apply`)"
            ]
        );
        assert_eq!(
            found.fail,
            [
                "the kernel logged `[  100.500000] BUG: scheduling while atomic: cyclictest/77/0x00000002` during the run",
                "the kernel logged `[  101.000000] hrtimer: interrupt took 123456 ns` during the run",
            ]
        );
        // The warning from boot alone is no reason.
        assert_eq!(scenario(&before, &before, &rt), Spoilers::default());
        let unreadable = sections("", "", "rtbuild: dmesg failed\n");
        let found = scenario(&unreadable, &unreadable, &rt);
        assert!(found.fail.is_empty() && found.invalid.is_empty());
        assert!(found.notes[0].contains("kernel log could not be read"), "{found:?}");
    }

    /// The helper keeps exactly the lines the gate knows (and its own unreadable marker).
    #[test]
    fn the_helper_keeps_every_line_the_gate_classifies() {
        let grep = format!("grep -E '{}|^{UNREADABLE}'", kernel_log::PATTERN);
        assert!(super::super::HELPER.contains(&grep), "{grep}");
    }
}
