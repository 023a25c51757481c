//! Latency limits shared by the machine catalog (a board's requirement) and the report (the
//! verdict's threshold).

/// The default threshold: SIL 2's 100 µs scheduling latency (seed 004).
pub(crate) const DEFAULT_THRESHOLD_US: f64 = 100.0;

/// The largest threshold accepted: one second. A latency limit above it is a typo (or a
/// fuzzed `run.json`), and a finite but huge one (1.72e308) would overflow the chart's axis.
pub(crate) const MAX_THRESHOLD_US: f64 = 1_000_000.0;
