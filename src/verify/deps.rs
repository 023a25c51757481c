//! Why an option did not make it into the final config. `olddefconfig` silently drops an option
//! whose Kconfig dependencies are unmet; this table holds the dependencies of the options an RT
//! build asks for (from mainline `kernel/Kconfig.preempt`, `kernel/time/Kconfig`,
//! `kernel/rcu/Kconfig`, `init/Kconfig`), so a dropped one can be explained from the config alone.

use crate::kconfig::{KernelConfig, State};

/// Symbol → alternatives; the option is available when every symbol of one alternative is on.
const KNOWN: &[(&str, &[&[&str]])] = &[
    ("CONFIG_PREEMPT_RT", &[&["CONFIG_EXPERT", "CONFIG_ARCH_SUPPORTS_RT"]]),
    (
        "CONFIG_NO_HZ_FULL",
        &[&[
            "CONFIG_SMP",
            "CONFIG_HAVE_CONTEXT_TRACKING_USER",
            "CONFIG_HAVE_VIRT_CPU_ACCOUNTING_GEN",
        ]],
    ),
    ("CONFIG_RCU_NOCB_CPU", &[&["CONFIG_RCU_EXPERT"], &["CONFIG_NO_HZ_FULL"]]),
    ("CONFIG_CPUSETS", &[&["CONFIG_CGROUPS", "CONFIG_SMP"]]),
    ("CONFIG_CPU_ISOLATION", &[&["CONFIG_SMP"]]),
    ("CONFIG_PREEMPT_LAZY", &[&["CONFIG_ARCH_HAS_PREEMPT_LAZY"]]),
];

/// The unmet dependency that explains why `symbol` is not on in `config`, if the table knows
/// the symbol and the config shows a dependency off.
pub fn explain(symbol: &str, config: &KernelConfig) -> Option<String> {
    let (_, alternatives) = KNOWN.iter().find(|(name, _)| *name == symbol)?;
    let unmet: Vec<Vec<(&str, State<'_>)>> = alternatives
        .iter()
        .map(|all| {
            all.iter()
                .map(|dep| (*dep, config.state(dep)))
                .filter(|(_, state)| !state.is_enabled())
                .collect()
        })
        .collect();
    if unmet.iter().any(Vec::is_empty) {
        // One way to satisfy it is met: something else (a choice, a `select`) dropped it.
        return None;
    }
    let describe = |(dep, state): &(&str, State<'_>)| match state {
        State::Absent => format!("{dep} is absent"),
        other => format!("{dep} is {}", other.describe()),
    };
    let parts: Vec<String> = unmet
        .iter()
        .map(|deps| deps.iter().map(describe).collect::<Vec<_>>().join(" and "))
        .collect();
    let needs: Vec<String> = alternatives.iter().map(|all| all.join(" && ")).collect();
    let mut text = format!("{symbol} depends on {}, but {}", needs.join(" || "), parts.join("; "));
    if unmet.iter().flatten().any(|(dep, _)| *dep == "CONFIG_EXPERT") {
        text.push_str("; add CONFIG_EXPERT=y to the fragment");
    } else if unmet.iter().flatten().any(|(dep, _)| dep.starts_with("CONFIG_ARCH_SUPPORTS")) {
        text.push_str("; this kernel or architecture does not support it");
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> KernelConfig {
        KernelConfig::parse(text.as_bytes()).unwrap()
    }

    #[test]
    fn names_the_missing_expert() {
        let c = config("# CONFIG_EXPERT is not set\nCONFIG_ARCH_SUPPORTS_RT=y\nCONFIG_PREEMPT=y\n");
        let why = explain("CONFIG_PREEMPT_RT", &c).unwrap();
        assert_eq!(
            why,
            "CONFIG_PREEMPT_RT depends on CONFIG_EXPERT && CONFIG_ARCH_SUPPORTS_RT, but \
             CONFIG_EXPERT is not set; add CONFIG_EXPERT=y to the fragment"
        );
    }

    #[test]
    fn either_alternative_is_enough() {
        let c = config("CONFIG_NO_HZ_FULL=y\n# CONFIG_RCU_EXPERT is not set\n");
        assert_eq!(explain("CONFIG_RCU_NOCB_CPU", &c), None);
        let c = config("# CONFIG_NO_HZ_FULL is not set\n# CONFIG_RCU_EXPERT is not set\n");
        let why = explain("CONFIG_RCU_NOCB_CPU", &c).unwrap();
        assert!(why.contains("CONFIG_RCU_EXPERT || CONFIG_NO_HZ_FULL"), "{why}");
        assert!(
            why.contains("CONFIG_RCU_EXPERT is not set; CONFIG_NO_HZ_FULL is not set"),
            "{why}"
        );
        assert_eq!(explain("CONFIG_UNKNOWN_THING", &c), None);
    }
}
