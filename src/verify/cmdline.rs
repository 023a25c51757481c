//! Kernel command-line checks: the CPU isolation arguments (`isolcpus`, `nohz_full`,
//! `rcu_nocbs`, `irqaffinity`) against the plan, and against each other.

use crate::plan::CpuSet;

use super::evidence::Found;
use super::report::Check;

/// The arguments whose value is a CPU list.
pub(super) const CPU_KEYS: [&str; 4] = ["isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity"];

/// The value of the last `key=…` on `cmdline` (later arguments win, as in the kernel).
pub(super) fn value<'a>(cmdline: &'a str, key: &str) -> Option<&'a str> {
    cmdline
        .split_whitespace()
        .filter_map(|arg| arg.split_once('=').filter(|(k, _)| *k == key).map(|(_, v)| v))
        .next_back()
}

/// Whether `arg` (`efi=runtime`, `threadirqs`) is on the command line as written.
pub(super) fn has_arg(cmdline: &str, arg: &str) -> bool {
    match arg.split_once('=') {
        Some((key, want)) => value(cmdline, key) == Some(want),
        None => cmdline.split_whitespace().any(|a| a == arg),
    }
}

/// The CPUs of a CPU-list argument. `isolcpus` may start with flags (`managed_irq,domain,2-3`).
pub(super) fn cpus(cmdline: &str, key: &str) -> Option<Result<CpuSet, String>> {
    let raw = value(cmdline, key)?;
    let list: Vec<&str> = raw
        .split(',')
        .skip_while(|part| part.chars().next().is_some_and(|c| c.is_ascii_alphabetic()))
        .collect();
    Some(CpuSet::parse(&list.join(",")).map_err(|_| format!("{key}={raw}")))
}

/// One check per CPU argument of the plan: the command line must carry the same CPU set.
pub(super) fn expected_cpu_checks(cmdline: &Found<String>, expected: &[String]) -> Vec<Check> {
    let mut checks = Vec::new();
    for arg in expected {
        let name = format!("cmdline {}", arg.split_once('=').map_or(arg.as_str(), |(k, _)| k));
        let check = match arg.split_once('=') {
            Some((key, want)) if CPU_KEYS.contains(&key) => {
                let want_set = CpuSet::parse(want).ok();
                let (ok, found) = match cpus(&cmdline.value, key) {
                    None => (false, "absent".to_string()),
                    Some(Err(raw)) => (false, raw),
                    Some(Ok(set)) => (Some(&set) == want_set.as_ref(), format!("{key}={set}")),
                };
                Check::new(name, ok, arg.clone(), found, cmdline.from.clone())
            }
            _ => {
                let ok = has_arg(&cmdline.value, arg);
                let key = arg.split_once('=').map_or(arg.as_str(), |(k, _)| k);
                let found = match value(&cmdline.value, key) {
                    Some(v) => format!("{key}={v}"),
                    None if ok => arg.clone(),
                    None => "absent".to_string(),
                };
                Check::new(name, ok, arg.clone(), found, cmdline.from.clone())
            }
        };
        checks.push(check);
    }
    checks
}

/// The isolation arguments must agree: `isolcpus` = `nohz_full` = `rcu_nocbs`, `irqaffinity`
/// outside them, and together (when `all` is known) covering every CPU.
pub(super) fn consistency_check(cmdline: &Found<String>, all: Option<&CpuSet>) -> Check {
    let name = "cmdline isolation consistent";
    let mut sets = Vec::new();
    let mut problems = Vec::new();
    for key in CPU_KEYS {
        match cpus(&cmdline.value, key) {
            None => {}
            Some(Ok(set)) => sets.push((key, set)),
            Some(Err(raw)) => problems.push(format!("`{raw}` is not a CPU list")),
        }
    }
    if sets.is_empty() && problems.is_empty() {
        return Check::skip(
            name,
            "isolcpus = nohz_full = rcu_nocbs",
            "none of them set",
            &cmdline.from,
        );
    }
    let isolated: Vec<&(&str, CpuSet)> = sets.iter().filter(|(k, _)| *k != "irqaffinity").collect();
    if let Some((first_key, first)) = isolated.first() {
        for (key, set) in &isolated[1..] {
            if set != first {
                problems.push(format!("{key}={set} differs from {first_key}={first}"));
            }
        }
    }
    let irq = sets.iter().find(|(k, _)| *k == "irqaffinity").map(|(_, s)| s);
    if let (Some(irq), Some((key, iso))) = (irq, isolated.first()) {
        let both = irq.intersection(iso);
        if !both.is_empty() {
            problems.push(format!("irqaffinity includes isolated CPUs {both} ({key}={iso})"));
        }
        if let Some(all) = all {
            let missing = all.difference(&irq.union(iso));
            if !missing.is_empty() {
                problems.push(format!("CPUs {missing} are neither isolated nor in irqaffinity"));
            }
        }
    }
    let found: Vec<String> = sets.iter().map(|(k, s)| format!("{k}={s}")).collect();
    let expected = "isolcpus = nohz_full = rcu_nocbs, irqaffinity = the rest";
    let reason = (!problems.is_empty()).then(|| problems.join("; "));
    Check::new(name, problems.is_empty(), expected, found.join(" "), &cmdline.from).because(reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Found<String> {
        Found::new(text.to_string(), "test")
    }

    #[test]
    fn reads_values_and_isolcpus_flags() {
        let line = "console=ttyMSM0 isolcpus=managed_irq,domain,6-7 nohz_full=6,7 quiet";
        assert_eq!(cpus(line, "isolcpus").unwrap().unwrap().to_string(), "6-7");
        assert_eq!(cpus(line, "nohz_full").unwrap().unwrap().to_string(), "6-7");
        assert!(cpus(line, "rcu_nocbs").is_none());
        assert!(has_arg(line, "quiet") && !has_arg(line, "efi=runtime"));
    }

    #[test]
    fn consistent_isolation_passes_and_mismatches_are_named() {
        let all = CpuSet::range(0, 8);
        let good = "isolcpus=6-7 nohz_full=6-7 rcu_nocbs=6-7 irqaffinity=0-5";
        assert!(consistency_check(&found(good), Some(&all)).reason.is_none());
        let bad = "isolcpus=6-7 nohz_full=7 rcu_nocbs=6-7 irqaffinity=0-6";
        let check = consistency_check(&found(bad), Some(&all));
        let reason = check.reason.unwrap();
        assert!(reason.contains("nohz_full=7 differs from isolcpus=6-7"), "{reason}");
        assert!(reason.contains("irqaffinity includes isolated CPUs 6"), "{reason}");
        let gap = consistency_check(&found("isolcpus=7 irqaffinity=0-5"), Some(&all));
        assert!(gap.reason.unwrap().contains("CPUs 6 are neither isolated"));
    }

    #[test]
    fn plan_arguments_are_compared_as_cpu_sets() {
        let line = found("isolcpus=6,7 irqaffinity=0-5 efi=runtime");
        let want =
            ["isolcpus=6-7", "irqaffinity=0-5", "efi=runtime", "nohz_full=6-7"].map(String::from);
        let checks = expected_cpu_checks(&line, &want);
        let failed: Vec<&str> = checks
            .iter()
            .filter(|c| c.status == super::super::report::CheckStatus::Fail)
            .map(|c| c.check.as_str())
            .collect();
        assert_eq!(failed, ["cmdline nohz_full"]);
    }
}
