//! `--baseline PREV`: compares each scenario's combined max and tail percentiles with an
//! earlier run (a previous `rtbuild report --json` file, a result folder or a raw file). A
//! figure regresses when it grows by more than 10 % and more than 1 µs; each regression fails
//! the scenario.

use super::judge::fmt;
use crate::formats::report_json::{LatencyReport, Regression, ScenarioReport};

/// Relative and absolute tolerance before a change counts as a regression.
const RELATIVE: f64 = 0.10;
const ABSOLUTE_US: f64 = 1.0;

/// Marks regressions in `current` against `baseline` (scenarios matched by name; a single
/// scenario on both sides is matched whatever its name).
pub(super) fn compare(current: &mut LatencyReport, baseline: &LatencyReport) {
    let old: Vec<&ScenarioReport> = baseline.inputs.iter().flat_map(|i| &i.scenarios).collect();
    let count: usize = current.inputs.iter().map(|i| i.scenarios.len()).sum();
    for scenario in current.inputs.iter_mut().flat_map(|i| &mut i.scenarios) {
        let matched = old
            .iter()
            .find(|o| o.name == scenario.name)
            .or_else(|| (old.len() == 1 && count == 1).then(|| &old[0]));
        let Some(before) = matched else {
            scenario.notes.push("no scenario of this name in the baseline".to_string());
            continue;
        };
        let metrics = [
            ("max", before.all.max_us, scenario.all.max_us),
            ("p99", before.all.p99_us, scenario.all.p99_us),
            ("p99.9", before.all.p999_us, scenario.all.p999_us),
            ("p99.99", before.all.p9999_us, scenario.all.p9999_us),
        ];
        for (metric, old, new) in metrics {
            let (Some(old), Some(new)) = (old, new) else { continue };
            if new > old * (1.0 + RELATIVE) && new - old > ABSOLUTE_US {
                let reason = format!(
                    "regression against the baseline: {metric} {} µs (was {} µs)",
                    fmt(new),
                    fmt(old)
                );
                scenario.cyclictest_reasons.push(reason.clone());
                scenario.reasons.push(reason);
                scenario.regressions.push(Regression {
                    metric: metric.to_string(),
                    baseline_us: old,
                    current_us: new,
                });
            }
        }
        scenario.verdict = crate::formats::judge::against_baseline(
            scenario.verdict,
            !scenario.regressions.is_empty(),
        );
    }
}
