//! Why an option did not make it into the final config. `olddefconfig` silently drops an option
//! whose Kconfig dependencies are unmet, a `choice` keeps only one member, and a `select` turns an
//! option on whatever the fragment says.
//!
//! With the kernel's source at hand ([`KconfigTree`]) the answer comes from its own Kconfig
//! files, naming the file and line. Without it, a built-in table of the dependencies of the
//! options an RT build asks for (from mainline `kernel/Kconfig.preempt`, `kernel/time/Kconfig`,
//! `kernel/rcu/Kconfig`, `init/Kconfig`) explains a dropped option from the config alone, and
//! says that it did.

use crate::verify::kconfig::expr::Expr;
use crate::verify::kconfig::tree::{Dep, DepFrom, Entry, KconfigTree};
use crate::verify::kconfig::{KernelConfig, State};

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

/// Said after a reason from the table, so nobody mistakes it for this kernel's Kconfig.
const FROM_TABLE: &str = "(rtbuild's built-in table of mainline dependencies: no kernel source \
                          was found; pass --kernel-src DIR to read this kernel's own Kconfig)";

/// Why `symbol` does not have `want` in `config`: from `kconfig` when given, else from the
/// table (saying so). `None` when nothing explains it.
pub(super) fn why(
    symbol: &str,
    want: &str,
    config: &KernelConfig,
    kconfig: Option<&KconfigTree>,
) -> Option<String> {
    if let Some(tree) = kconfig {
        return from_kconfig(symbol, want, config, tree);
    }
    let state = config.state(symbol);
    match explain(symbol, config) {
        Some(reason) => Some(format!("{reason} {FROM_TABLE}")),
        None if state == State::Absent => Some(format!(
            "{symbol} is absent: its dependencies are unmet or this kernel has no such option \
             {FROM_TABLE}"
        )),
        None => None,
    }
}

/// Kconfig's value of a dependency in `config` (0 n, 1 m, 2 y).
fn met(expr: &Expr, config: &KernelConfig) -> bool {
    expr.eval(config) > 0
}

fn state_of(name: &str, config: &KernelConfig) -> String {
    let symbol = format!("CONFIG_{name}");
    match config.state(&symbol) {
        State::Absent => format!("{symbol} is absent"),
        State::NotSet => format!("{symbol} is not set"),
        State::Set(value) => format!("{symbol} is {value}"),
    }
}

/// The reason read from the kernel's Kconfig files.
fn from_kconfig(
    symbol: &str,
    want: &str,
    config: &KernelConfig,
    tree: &KconfigTree,
) -> Option<String> {
    let name = symbol.strip_prefix("CONFIG_").unwrap_or(symbol);
    let definitions = tree.definitions(name);
    if definitions.is_empty() {
        let arch = tree.arch.as_deref().unwrap_or("no architecture");
        return Some(format!(
            "{symbol} is defined nowhere in the Kconfig of {} ({} read for {arch}); check \
             the name against this kernel version",
            tree.root.display(),
            crate::text::counted(tree.files, "file")
        ));
    }
    let state = config.state(symbol);
    let on = state.is_enabled();
    if want == "n" {
        return on.then(|| selected_by(symbol, name, config, tree)).flatten();
    }
    if on || matches!(state, State::Set(_)) {
        // On, or set to another value: the dependencies did not drop it.
        return None;
    }
    // The definition with the fewest unmet dependencies (a prompt one first) tells the story.
    let unmet = |entry: &Entry| -> Vec<Dep> {
        entry
            .inherited
            .iter()
            .chain(&entry.depends)
            .filter(|d| !met(&d.expr, config))
            .cloned()
            .collect()
    };
    let best = definitions
        .iter()
        .map(|entry| (unmet(entry), *entry))
        .min_by_key(|(deps, entry)| (deps.len(), !entry.prompt))?;
    let (unmet_deps, entry) = best;
    if unmet_deps.is_empty() {
        return met_but_off(symbol, name, config, tree, entry);
    }
    Some(unmet_reason(symbol, entry, &unmet_deps, config, tree))
}

/// "CONFIG_X depends on A && B (file:line), but CONFIG_A is not set; add CONFIG_A=y …".
fn unmet_reason(
    symbol: &str,
    entry: &Entry,
    unmet: &[Dep],
    config: &KernelConfig,
    tree: &KconfigTree,
) -> String {
    let mut needs: Vec<String> = Vec::new();
    if let Some(first) = entry.depends.first() {
        // Several `depends on` lines are one conjunction; `to_text` brackets an `||` in it.
        let own = entry
            .depends
            .iter()
            .map(|d| d.expr.clone())
            .reduce(|all, next| Expr::And(Box::new(all), Box::new(next)));
        needs.push(format!("{} ({})", own.map(|e| e.to_text()).unwrap_or_default(), first.at));
    }
    for dep in unmet.iter().filter(|d| d.from != DepFrom::DependsOn) {
        let block = match dep.from {
            DepFrom::If => "enclosing `if`",
            DepFrom::Menu => "enclosing menu",
            _ => "enclosing choice",
        };
        needs.push(format!("{} ({block}, {})", dep.expr.to_text(), dep.at));
    }
    let mut states: Vec<String> = Vec::new();
    let mut settable: Vec<String> = Vec::new();
    let mut unsettable: Vec<String> = Vec::new();
    let mut to_disable: Vec<String> = Vec::new();
    let push = |list: &mut Vec<String>, item: String| {
        if !list.contains(&item) {
            list.push(item);
        }
    };
    for dep in unmet {
        for part in dep.expr.conjuncts().into_iter().filter(|c| !met(c, config)) {
            for name in part.symbols() {
                push(&mut states, state_of(name, config));
            }
            match (part.as_symbol(), part) {
                (Some(name), _) if tree.has_prompt(name) => {
                    push(&mut settable, format!("CONFIG_{name}=y"))
                }
                (Some(name), _) => push(&mut unsettable, format!("CONFIG_{name}")),
                (None, Expr::Not(inner)) => {
                    if let Some(name) = inner.as_symbol() {
                        push(&mut to_disable, format!("CONFIG_{name}"));
                    }
                }
                _ => {}
            }
        }
    }
    // Without its own `depends on`, the entry's own line is where to look.
    let subject = match entry.depends.is_empty() {
        true => format!("{symbol} ({})", entry.at),
        false => symbol.to_string(),
    };
    let found =
        if states.is_empty() { "that is not met".to_string() } else { states.join(" and ") };
    let mut text = format!("{subject} depends on {}, but {found}", needs.join(" and on "));
    if !settable.is_empty() {
        text.push_str(&format!("; add {} to the fragment", settable.join(" and ")));
    }
    if !to_disable.is_empty() {
        let lines: Vec<String> = to_disable.iter().map(|s| format!("`# {s} is not set`")).collect();
        text.push_str(&format!("; turn {} off ({})", to_disable.join(" and "), lines.join(", ")));
    }
    if !unsettable.is_empty() {
        let (have, them) = if unsettable.len() == 1 { ("has", "it") } else { ("have", "them") };
        text.push_str(&format!(
            "; {} {have} no prompt, so a fragment cannot set {them} (only a default or a `select` \
             of this kernel and architecture does)",
            unsettable.join(" and ")
        ));
    }
    text
}

/// Dependencies met, yet off: another member of its choice won, or it has no prompt and
/// nothing selects it.
fn met_but_off(
    symbol: &str,
    name: &str,
    config: &KernelConfig,
    tree: &KconfigTree,
    entry: &Entry,
) -> Option<String> {
    if let Some(choice) = entry.choice.and_then(|i| tree.choices.get(i)) {
        let chosen: Vec<String> = choice
            .members
            .iter()
            .filter(|m| m.as_str() != name && config.state(&format!("CONFIG_{m}")).is_enabled())
            .map(|m| format!("CONFIG_{m}"))
            .collect();
        let title = choice.prompt.as_deref().map(|p| format!(" \"{p}\"")).unwrap_or_default();
        let members: Vec<String> = choice.members.iter().map(|m| format!("CONFIG_{m}")).collect();
        let chosen = match chosen.as_slice() {
            [] => "none of them is set".to_string(),
            some => format!("{} is set instead", some.join(" and ")),
        };
        return Some(format!(
            "{symbol} is one member of the choice{title} ({}: {}), and {chosen}; a choice keeps \
             one member: set {symbol}=y in the fragment and leave the others unset",
            choice.at,
            members.join(", ")
        ));
    }
    if !tree.has_prompt(name) {
        let by: Vec<String> = tree
            .selectors(name)
            .iter()
            .map(|s| format!("CONFIG_{} ({})", s.by, s.at))
            .take(5)
            .collect();
        let by = if by.is_empty() { "nothing".to_string() } else { by.join(", ") };
        return Some(format!(
            "{symbol} has no prompt ({}): a fragment cannot set it, only a `select` can, and none \
             of its selectors is on (selected by {by})",
            entry.at
        ));
    }
    None
}

/// Wanted off but on: the `select` lines of options that are on.
fn selected_by(
    symbol: &str,
    name: &str,
    config: &KernelConfig,
    tree: &KconfigTree,
) -> Option<String> {
    let active: Vec<String> = tree
        .selectors(name)
        .into_iter()
        .filter(|s| config.state(&format!("CONFIG_{}", s.by)).is_enabled())
        .filter(|s| s.cond.as_ref().is_none_or(|c| met(c, config)))
        .map(|s| format!("CONFIG_{} ({})", s.by, s.at))
        .collect();
    if active.is_empty() {
        return None;
    }
    Some(format!(
        "{symbol} is selected by {}, which {} on; a `select` wins over the fragment: turn {} off \
         to drop it",
        active.join(" and "),
        if active.len() == 1 { "is" } else { "are" },
        if active.len() == 1 { "it" } else { "them" },
    ))
}

/// The unmet dependency that explains why `symbol` is not on in `config`, if the table knows
/// the symbol and the config shows a dependency off.
pub(super) fn explain(symbol: &str, config: &KernelConfig) -> Option<String> {
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

    fn tree(kconfig: &str) -> (tempfile::TempDir, KconfigTree) {
        let dir = tempfile::tempdir().unwrap();
        crate::files::write::fixture(dir.path().join("Kconfig"), kconfig).unwrap();
        let tree = KconfigTree::read(dir.path(), None).unwrap();
        (dir, tree)
    }

    #[test]
    fn kconfig_reasons_name_lines_fixes_and_unsettable_symbols() {
        let (_dir, t) = tree(
            "config A\n\tbool \"A\"\n\tdepends on B\n\tdepends on C || !D\n\
             config B\n\tbool \"B\"\nconfig C\n\tbool\nconfig D\n\tbool \"D\"\n\
             config E\n\tbool \"E\"\n\tdepends on !D\n\
             config F\n\tbool\nconfig G\n\tbool \"G\"\n\tselect F if B\n",
        );
        let c = KernelConfig::parse(b"# CONFIG_B is not set\nCONFIG_D=y\n").unwrap();
        assert_eq!(
            why("CONFIG_A", "y", &c, Some(&t)).unwrap(),
            "CONFIG_A depends on B && (C || !D) (Kconfig:3), but CONFIG_B is not set and CONFIG_C \
             is absent and CONFIG_D is y; add CONFIG_B=y to the fragment"
        );
        assert_eq!(
            why("CONFIG_E", "y", &c, Some(&t)).unwrap(),
            "CONFIG_E depends on !D (Kconfig:13), but CONFIG_D is y; turn CONFIG_D off \
             (`# CONFIG_D is not set`)"
        );
        assert_eq!(
            why("CONFIG_F", "y", &c, Some(&t)).unwrap(),
            "CONFIG_F has no prompt (Kconfig:14): a fragment cannot set it, only a `select` can, \
             and none of its selectors is on (selected by CONFIG_G (Kconfig:18))"
        );
        // Off is what was asked, and nothing selects it on: nothing to explain.
        assert_eq!(why("CONFIG_E", "n", &c, Some(&t)), None);
        let on = KernelConfig::parse(b"CONFIG_B=y\nCONFIG_G=y\nCONFIG_F=y\n").unwrap();
        assert!(
            why("CONFIG_F", "n", &on, Some(&t))
                .unwrap()
                .starts_with("CONFIG_F is selected by CONFIG_G (Kconfig:18), which is on")
        );
    }

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
