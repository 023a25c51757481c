//! The live tracefs and the settings `--trace-above-us` changes in it.

use std::fs;
use std::path::{Path, PathBuf};

/// This machine's tracefs, where rtbuild finds it (the tests run as root).
pub(crate) fn tracefs() -> PathBuf {
    for dir in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
        if Path::new(dir).join("trace_marker").exists() {
            return dir.into();
        }
    }
    panic!(
        "no tracefs at /sys/kernel/tracing or /sys/kernel/debug/tracing: run the tests as root on a kernel with CONFIG_FTRACE (mount -t tracefs nodev /sys/kernel/tracing)"
    );
}

/// The settings `--trace-above-us` changes, as the kernel reports them. A buffer that was
/// never used reads `7 (expanded: 1408)`; any trace grows it, so afterwards it reads the size
/// it grew to: that is the value compared, in whole 4 KB steps, as the RT guest's tests do
/// (the kernel rounds to buffer pages: 1408 written back reads 1410, on 6.18 as on 6.1).
pub(crate) fn tracing_settings() -> Vec<(String, String)> {
    let dir = tracefs();
    let read = |f: &str| fs::read_to_string(dir.join(f)).unwrap().trim().to_string();
    let kb = read("buffer_size_kb");
    let kb = match kb.split_once("(expanded: ") {
        Some((_, grown)) => grown.trim_end_matches(')').to_string(),
        None => kb,
    };
    let mut events: Vec<String> = read("set_event").lines().map(str::to_string).collect();
    events.sort();
    vec![
        ("tracing_on".into(), read("tracing_on")),
        ("buffer_size_kb".into(), format!("≈{}", kb.parse::<u64>().unwrap() / 4)),
        ("tracing_cpumask".into(), read("tracing_cpumask")),
        ("current_tracer".into(), read("current_tracer")),
        ("set_event".into(), events.join(",")),
    ]
}
