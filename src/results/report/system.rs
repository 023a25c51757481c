//! The system a result folder was measured on, as label/value lines for the text and HTML
//! reports: CPU model and board, kernel and PREEMPT options, each CPU's frequency and governor,
//! and per scenario the thermal zones before → after and the throttling counters. Read from
//! the `run.json` fields `rtbuild test` writes; a field that is absent is left out.

use serde_json::Value;

use super::InputReport;

/// The fingerprint fields [`facts`] shows (the HTML report lists the others after them).
pub(super) const SHOWN: &[&str] = &[
    "cpu_model",
    "board",
    "uname",
    "preempt",
    "realtime",
    "isolated",
    "nohz_full",
    "cpufreq",
    "thermal",
    "throttling",
];

/// `(label, value)` lines for one input; empty when it has no fingerprint.
pub(super) fn facts(input: &InputReport) -> Vec<(String, String)> {
    let mut lines = Vec::new();
    let Some(fp) = &input.fingerprint else { return lines };
    let text = |key: &str| fp.get(key).and_then(Value::as_str).map(str::trim).unwrap_or("");
    for (label, key) in [("CPU model", "cpu_model"), ("board", "board"), ("kernel", "uname")] {
        if !text(key).is_empty() {
            lines.push((label.to_string(), text(key).to_string()));
        }
    }
    let distro = fp.get("os_release").and_then(|o| o.get("PRETTY_NAME")).and_then(Value::as_str);
    for (label, value) in [
        ("distro", distro.unwrap_or("")),
        ("image", text("image_name")),
        ("image version", text("image_version")),
        ("uname -r", text("kernel_release")),
        ("uname -v", text("kernel_version")),
        ("URM", text("urm")),
    ] {
        if !value.is_empty() {
            lines.push((label.to_string(), value.to_string()));
        }
    }
    if let Some(devices) = fp.get("devfreq").and_then(Value::as_array) {
        let value: Vec<String> = devices
            .iter()
            .map(|d| {
                let name = d.get("device").and_then(Value::as_str).unwrap_or("?");
                let governor = d.get("governor").and_then(Value::as_str).unwrap_or("?");
                format!("{name} {governor}")
            })
            .collect();
        if !value.is_empty() {
            lines.push(("devfreq".into(), value.join(", ")));
        }
    }
    if let Some(preempt) = fp.get("preempt").and_then(Value::as_array) {
        let set: Vec<&str> =
            preempt.iter().filter_map(Value::as_str).filter(|l| !l.starts_with('#')).collect();
        let realtime = match fp.get("realtime").and_then(Value::as_bool) {
            Some(true) => "; /sys/kernel/realtime = 1",
            Some(false) => "; /sys/kernel/realtime is not 1",
            None => "",
        };
        let options = if set.is_empty() { "unknown".to_string() } else { set.join(" ") };
        lines.push(("PREEMPT".into(), format!("{options}{realtime}")));
    }
    for (label, key) in [("isolated CPUs", "isolated"), ("nohz_full", "nohz_full")] {
        if fp.get(key).is_some() {
            let value = if text(key).is_empty() { "none" } else { text(key) };
            lines.push((label.to_string(), value.to_string()));
        }
    }
    if let Some(cpus) = fp.get("cpufreq").and_then(Value::as_array) {
        let value = if cpus.is_empty() {
            "not exposed (no cpufreq)".to_string()
        } else {
            cpus.iter().map(cpu_freq).collect::<Vec<_>>().join("; ")
        };
        lines.push(("CPU frequency".into(), value));
    }
    let scenarios = &input.scenarios;
    let thermal: Vec<String> = scenarios
        .iter()
        .filter_map(|s| Some((&s.name, s.thermal.as_ref()?.as_array()?)))
        .filter(|(_, zones)| !zones.is_empty())
        .map(|(name, zones)| {
            format!("{name}: {}", zones.iter().map(zone).collect::<Vec<_>>().join(", "))
        })
        .collect();
    if !thermal.is_empty() {
        lines.push(("temperature".into(), thermal.join("; ")));
    } else if fp.get("thermal").and_then(Value::as_array).is_some_and(Vec::is_empty) {
        lines.push(("temperature".into(), "not exposed (no thermal zone)".into()));
    }
    let throttling: Vec<String> = scenarios
        .iter()
        .filter_map(|s| Some((&s.name, s.throttling.as_ref()?.as_array()?)))
        .filter(|(_, counters)| !counters.is_empty())
        .map(|(name, counters)| {
            format!("{name}: {}", counters.iter().map(counter).collect::<Vec<_>>().join(", "))
        })
        .collect();
    if !throttling.is_empty() {
        lines.push(("throttling".into(), throttling.join("; ")));
    } else if fp.get("throttling").and_then(Value::as_array).is_some_and(Vec::is_empty) {
        lines.push(("throttling".into(), "no counters exposed".into()));
    }
    lines
}

/// `cpu0 1200/408-1800 MHz performance`.
fn cpu_freq(cpu: &Value) -> String {
    let mhz = |key: &str| {
        cpu.get(key)
            .and_then(Value::as_u64)
            .map_or_else(|| "?".to_string(), |k| (k / 1000).to_string())
    };
    format!(
        "cpu{} {}/{}-{} MHz {}",
        cpu.get("cpu").and_then(Value::as_u64).map_or_else(|| "?".to_string(), |c| c.to_string()),
        mhz("cur_khz"),
        mhz("min_khz"),
        mhz("max_khz"),
        cpu.get("governor").and_then(Value::as_str).unwrap_or("?")
    )
}

/// `soc-thermal 45.2 → 51.0 °C`.
fn zone(z: &Value) -> String {
    let temp = |key: &str| {
        z.get(key).and_then(Value::as_f64).map_or_else(|| "?".to_string(), |t| format!("{t:.1}"))
    };
    let kind = z.get("kind").and_then(Value::as_str).filter(|k| !k.is_empty());
    let name = kind.or_else(|| z.get("zone").and_then(Value::as_str)).unwrap_or("?");
    format!("{name} {} → {} °C", temp("before_c"), temp("after_c"))
}

/// `cpu0/core_throttle_count +3 (12)`.
fn counter(c: &Value) -> String {
    let name = c.get("name").and_then(Value::as_str).unwrap_or("?");
    let after = c.get("after").and_then(Value::as_u64);
    match (c.get("before").and_then(Value::as_u64), after) {
        (Some(before), Some(after)) => {
            format!("{name} +{} ({after})", after.saturating_sub(before))
        }
        (None, Some(after)) => format!("{name} {after}"),
        _ => format!("{name} ?"),
    }
}
