//! This machine's online CPUs (tests never assume a count) and CPU lists.

use std::fs;

/// This machine's online CPUs, as the kernel lists them (tests never assume a count).
pub(crate) fn online_cpus() -> Vec<u64> {
    let text = fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let mut cpus = Vec::new();
    for part in text.trim().split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        cpus.extend(a.parse::<u64>().unwrap()..=b.parse::<u64>().unwrap());
    }
    cpus
}

/// The housekeeping CPUs rtbuild picks when `rt` is the only RT CPU: every other online one.
pub(crate) fn housekeeping_without(rt: u64) -> String {
    let others: Vec<u64> = online_cpus().into_iter().filter(|c| *c != rt).collect();
    cpu_list(&others)
}

/// `cpus` (sorted) as a CPU list: `0,2-3`.
pub(crate) fn cpu_list(cpus: &[u64]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        while i + 1 < cpus.len() && cpus[i + 1] == cpus[i] + 1 {
            i += 1;
        }
        parts.push(if cpus[i] == start {
            start.to_string()
        } else {
            format!("{start}-{}", cpus[i])
        });
        i += 1;
    }
    parts.join(",")
}
