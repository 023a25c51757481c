//! Latency limits shared by the machine catalog (a board's requirement) and the report (the
//! verdict's threshold), and the one wording of a histogram overflow `test` and `report` share.

use std::fmt::Display;

/// The default threshold: SIL 2's 100 µs scheduling latency (seed 004).
pub(crate) const DEFAULT_THRESHOLD_US: f64 = 100.0;

/// The largest threshold accepted: one second. A latency limit above it is a typo (or a
/// fuzzed `run.json`), and a finite but huge one (1.72e308) would overflow the chart's axis.
pub(crate) const MAX_THRESHOLD_US: f64 = 1_000_000.0;

/// The smallest threshold accepted: one nanosecond. cyclictest counts whole microseconds, so a
/// smaller limit (a subnormal such as 1e-320 passes `> 0`) is a typo, not a requirement.
pub(crate) const MIN_THRESHOLD_US: f64 = 0.001;

/// The note for samples above cyclictest's histogram. They are counted (overflows) and the max is
/// cyclictest's own, so they never make a run invalid: the max decides PASS or FAIL, and only the
/// percentiles above the histogram are bounds. `rtbuild test` and `rtbuild report` word it alike.
pub(crate) fn overflow_note(
    who: impl Display,
    overflows: u64,
    limit_us: impl Display,
    max_us: impl Display,
) -> String {
    format!(
        "{who}: {} above the {limit_us} µs histogram: percentiles above {limit_us} µs are bounds (≥{limit_us}); the max ({max_us} µs) is cyclictest's own",
        crate::text::counted(overflows, "sample")
    )
}
