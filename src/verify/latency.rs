//! Latency killers: kernel options that ruin RT latency even with `PREEMPT_RT=y` (lock
//! debugging, object tracking, KASAN, slab poisoning, …). `verify` reports each one that is on
//! as a warning, not a failure: a debug build may want them, a release must not ship them.
//! meta-qcom's `DEBUG_BUILD` (`ci/debug.yml`) merges the kernel's own
//! `kernel/configs/debug.config` into every recipe that requires `linux-qcom_6.18.bb`, the RT
//! one included, so every option that fragment turns on is a candidate too: read from the
//! kernel source when it is at hand, else the built-in list below. With the source (or the
//! build's fragments) at hand, each warning names the fragment that sets the option.

use std::path::{Path, PathBuf};

use crate::formats::verify_json::Warning;
use crate::verify::kconfig::{KernelConfig, Line, Value, parse_line};

use super::evidence::Found;
use crate::files::limits::MAX_FRAGMENT;

/// Options that cost latency on every path they touch, named by the RT community and the
/// layers that disable them for RT kernels.
const KILLERS: [&str; 8] = [
    "CONFIG_DEBUG_PREEMPT",
    "CONFIG_PROVE_LOCKING",
    "CONFIG_LOCKDEP",
    "CONFIG_DEBUG_OBJECTS",
    "CONFIG_SLUB_DEBUG_ON",
    "CONFIG_KASAN",
    "CONFIG_DEBUG_ATOMIC_SLEEP",
    "CONFIG_DEBUG_LOCK_ALLOC",
];

/// What `kernel/configs/debug.config` (Linux 6.12) turns on that costs run time, for when no
/// kernel source is at hand.
const DEBUG_CONFIG: [&str; 23] = [
    "CONFIG_DEBUG_IRQFLAGS",
    "CONFIG_UBSAN",
    "CONFIG_NET_DEV_REFCNT_TRACKER",
    "CONFIG_NET_NS_REFCNT_TRACKER",
    "CONFIG_DEBUG_NET",
    "CONFIG_PAGE_OWNER",
    "CONFIG_DEBUG_KMEMLEAK",
    "CONFIG_DEBUG_OBJECTS_FREE",
    "CONFIG_DEBUG_OBJECTS_PERCPU_COUNTER",
    "CONFIG_DEBUG_OBJECTS_RCU_HEAD",
    "CONFIG_DEBUG_OBJECTS_TIMERS",
    "CONFIG_DEBUG_OBJECTS_WORK",
    "CONFIG_DEBUG_PER_CPU_MAPS",
    "CONFIG_DEBUG_STACK_USAGE",
    "CONFIG_DEBUG_VIRTUAL",
    "CONFIG_DEBUG_VM",
    "CONFIG_DEBUG_VM_PGFLAGS",
    "CONFIG_DEBUG_VM_RB",
    "CONFIG_KASAN_INLINE",
    "CONFIG_KASAN_VMALLOC",
    "CONFIG_SCHED_STACK_END_CHECK",
    "CONFIG_PROVE_RCU",
    "CONFIG_PROVE_RCU_LIST",
];

/// What `debug.config` turns on that costs nothing on the RT paths (messages, debug info,
/// debugfs, the tracers rtla itself needs, panic policy, the soft-lockup watchdog that
/// `nowatchdog` turns off at boot): not reported.
const HARMLESS: [&str; 23] = [
    "CONFIG_SOFTLOCKUP_DETECTOR",
    "CONFIG_DEBUG_BUGVERBOSE",
    "CONFIG_DYNAMIC_DEBUG",
    "CONFIG_PRINTK_CALLER",
    "CONFIG_PRINTK_TIME",
    "CONFIG_SYMBOLIC_ERRNAME",
    "CONFIG_DEBUG_INFO",
    "CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT",
    "CONFIG_DEBUG_SECTION_MISMATCH",
    "CONFIG_SECTION_MISMATCH_WARN_ONLY",
    "CONFIG_DEBUG_FS",
    "CONFIG_DEBUG_FS_ALLOW_ALL",
    "CONFIG_PAGE_EXTENSION",
    "CONFIG_GENERIC_PTDUMP",
    "CONFIG_PTDUMP_DEBUGFS",
    "CONFIG_DETECT_HUNG_TASK",
    "CONFIG_PANIC_ON_OOPS",
    "CONFIG_BUG_ON_DATA_CORRUPTION",
    "CONFIG_BRANCH_PROFILE_NONE",
    "CONFIG_DYNAMIC_FTRACE",
    "CONFIG_FTRACE",
    "CONFIG_FUNCTION_TRACER",
    "CONFIG_KASAN_GENERIC",
];

/// The kernel's own debug fragment, inside a kernel source tree.
pub(super) const DEBUG_FRAGMENT: &str = "kernel/configs/debug.config";

/// A fragment: where it is (as shown) and the options it turns on.
#[derive(Debug, Clone)]
struct Fragment {
    name: String,
    enables: Vec<String>,
}

/// One warning per latency killer that `config` has on. `kernel_source` gives the real
/// `debug.config` and the kernel's fragments; `fragments` are the build's own `.cfg` files.
pub(super) fn warnings(
    config: &Found<KernelConfig>,
    kernel_source: Option<&Path>,
    fragments: &[PathBuf],
) -> Vec<Warning> {
    let mut known: Vec<Fragment> =
        fragments.iter().filter_map(|p| read_fragment(p, None)).collect();
    if let Some(src) = kernel_source {
        known.extend(source_fragments(src));
    }
    let debug = known.iter().find(|f| f.name.ends_with(DEBUG_FRAGMENT));
    let mut candidates: Vec<String> = KILLERS.iter().map(ToString::to_string).collect();
    match debug {
        Some(debug) => candidates.extend(debug.enables.iter().cloned()),
        None => candidates.extend(DEBUG_CONFIG.iter().map(ToString::to_string)),
    }
    let mut seen = std::collections::BTreeSet::new();
    candidates.retain(|c| !HARMLESS.contains(&c.as_str()) && seen.insert(c.clone()));
    candidates
        .into_iter()
        .filter(|symbol| config.value.state(symbol).is_enabled())
        .map(|symbol| {
            let setter = known.iter().find(|f| f.enables.contains(&symbol));
            Warning {
                found: config.value.state(&symbol).describe(),
                reason: Some(match setter {
                    Some(f) => format!("costs RT latency even with PREEMPT_RT; set by {}", f.name),
                    None => "costs RT latency even with PREEMPT_RT".to_string(),
                }),
                check: symbol,
                from: config.from.clone(),
            }
        })
        .collect()
}

/// The kernel's config fragments: `kernel/configs/*.config` and `arch/*/configs/*.config`,
/// shown relative to the source.
fn source_fragments(src: &Path) -> Vec<Fragment> {
    let mut folders = vec![src.join("kernel/configs")];
    folders.extend(sorted_dirs(&src.join("arch")).into_iter().map(|a| a.join("configs")));
    let mut found = Vec::new();
    for folder in folders {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "config"))
            .collect();
        paths.sort();
        let shown = |p: &Path| p.strip_prefix(src).unwrap_or(p).display().to_string();
        found.extend(paths.iter().filter_map(|p| read_fragment(p, Some(shown(p)))));
    }
    found
}

fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut dirs: Vec<PathBuf> =
        entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    dirs
}

/// The options a fragment turns on (`CONFIG_X=y` or `=m`); `None` for anything that is not a
/// small regular file of config lines.
fn read_fragment(path: &Path, name: Option<String>) -> Option<Fragment> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_FRAGMENT {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let enables = text
        .lines()
        .filter_map(|line| match parse_line(line) {
            Ok(Line::Setting(s)) if matches!(s.value, Value::Yes | Value::Module) => {
                Some(s.symbol.to_string())
            }
            _ => None,
        })
        .collect();
    Some(Fragment { name: name.unwrap_or_else(|| path.display().to_string()), enables })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Found<KernelConfig> {
        Found::new(KernelConfig::parse(text.as_bytes()).unwrap(), "Image (IKCONFIG)")
    }

    #[test]
    fn every_killer_that_is_on_is_a_warning_and_off_or_absent_ones_are_not() {
        let found = config(
            "CONFIG_PREEMPT_RT=y\nCONFIG_DEBUG_PREEMPT=y\nCONFIG_PROVE_LOCKING=y\nCONFIG_LOCKDEP=y\n\
             CONFIG_KASAN=y\n# CONFIG_SLUB_DEBUG_ON is not set\nCONFIG_DEBUG_ATOMIC_SLEEP=y\n\
             CONFIG_DEBUG_KMEMLEAK=y\nCONFIG_PRINTK_TIME=y\nCONFIG_FTRACE=y\n",
        );
        let got: Vec<String> = warnings(&found, None, &[]).into_iter().map(|w| w.check).collect();
        assert_eq!(
            got,
            [
                "CONFIG_DEBUG_PREEMPT",
                "CONFIG_PROVE_LOCKING",
                "CONFIG_LOCKDEP",
                "CONFIG_KASAN",
                "CONFIG_DEBUG_ATOMIC_SLEEP",
                "CONFIG_DEBUG_KMEMLEAK"
            ]
        );
        let clean = config("CONFIG_PREEMPT_RT=y\nCONFIG_FTRACE=y\n");
        assert!(warnings(&clean, None, &[]).is_empty());
    }

    #[test]
    fn a_build_fragment_that_sets_an_option_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let frag = dir.path().join("lab-debug.cfg");
        crate::files::write::fixture(&frag, "# lab\nCONFIG_DEBUG_OBJECTS=y\n").unwrap();
        let found = config("CONFIG_PREEMPT_RT=y\nCONFIG_DEBUG_OBJECTS=y\nCONFIG_KASAN=y\n");
        let got = warnings(&found, None, std::slice::from_ref(&frag));
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].check, "CONFIG_DEBUG_OBJECTS");
        assert_eq!(
            got[0].reason.as_deref().unwrap(),
            format!("costs RT latency even with PREEMPT_RT; set by {}", frag.display())
        );
        assert_eq!(got[1].reason.as_deref(), Some("costs RT latency even with PREEMPT_RT"));
        assert_eq!(got[1].from, "Image (IKCONFIG)");
        // A FIFO in place of a fragment is skipped, not read (it would block).
        let fifo = dir.path().join("fifo.cfg");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::from_raw_mode(0o644))
            .unwrap();
        let got = warnings(&found, None, &[fifo]);
        assert!(got.iter().all(|w| !w.reason.as_deref().unwrap().contains("set by")));
    }
}
