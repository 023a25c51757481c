//! The lines that frame raw outputs in a LAVA job log. The job's shell prints them; the log
//! reader looks for them at the very start of a target line (a shell trace such as
//! `+ echo '<<<RTBUILD-…'` never matches).
//!
//! ```text
//! <<<RTBUILD-RUN machine=rb3gen2-core-kit threshold_us=100 noise_us=20 rt_cpus=7 tests=oslat,cyclictest scenarios=idle,stress duration=5m>>>
//! <<<RTBUILD-RAW-BEGIN scenario=idle test=oslat run=oslat format=json>>>
//! { …oslat --json output, line by line… }
//! <<<RTBUILD-RAW-END scenario=idle test=oslat run=oslat exit=0>>>
//! <<<RTBUILD-RAW-BEGIN scenario=idle test=cyclictest run=cyclictest format=json>>>
//! …
//! <<<RTBUILD-RAW-END scenario=idle test=cyclictest run=cyclictest exit=0>>>
//! <<<RTBUILD-STATUS-BEGIN scenario=idle>>>
//! # cyclictest current status:
//! T: 0 ( 4411) P:99 I:1000 C:    990 Min:      5 Act:   12 Avg:   21 Max:     180
//! #---------------------------
//! <<<RTBUILD-STATUS-END scenario=idle>>>
//! <<<RTBUILD-SKIPPED scenario=idle test=hwlatdetect reason=no-hwlat-tracer>>>
//! <<<RTBUILD-STATE-BEGIN scenario=idle when=after>>>
//! === interrupts / === irq_affinity / === irqbalance / === kernel_warnings sections
//! <<<RTBUILD-STATE-END scenario=idle when=after>>>
//! ```
//!
//! The board's state is printed before each scenario's load starts (`when=before`) and after
//! it stops (`when=after`): each IRQ's affinity, the running irqbalance instances and the
//! kernel log's warning lines (`interrupts` only after: it names the IRQs). The `RUN` marker
//! of a job that prints them says `checks=irq-affinity,kernel-log`.
//!
//! The `STATUS` frame holds cyclictest's status blocks (its answers to the SIGUSR1 the job sends
//! at each doubling of the elapsed time), only the block lines of its stderr (`# cyclictest
//! current status:`, `#-…` and `T:` lines), so no line inside it can be a marker. It is
//! information for `report`'s convergence, never a verdict; the job prints one per scenario.
//!
//! `run` names one invocation (`pmqtest-cpu3` when a program runs once per RT CPU); `format` is
//! `json`, `text` (standard output) or `stderr` (printed when the program failed). Logs of
//! jobs from before `--tests` have no `test`/`run`: cyclictest.

/// What the job measured and against which limit, printed once before the scenarios.
pub(crate) const RUN: &str = "<<<RTBUILD-RUN";
/// Starts one raw output of one program in one scenario.
pub(crate) const BEGIN: &str = "<<<RTBUILD-RAW-BEGIN";
/// Ends it, with the program's exit status.
pub(crate) const END: &str = "<<<RTBUILD-RAW-END";
/// A test that could not run on the board, with why (`reason=no-hwlat-tracer`).
pub(crate) const SKIPPED: &str = "<<<RTBUILD-SKIPPED";
/// Starts the board's state before or after one scenario (`when=before|after`).
pub(crate) const STATE_BEGIN: &str = "<<<RTBUILD-STATE-BEGIN";
/// Ends it.
pub(crate) const STATE_END: &str = "<<<RTBUILD-STATE-END";
/// Starts cyclictest's status blocks of one scenario.
pub(crate) const STATUS_BEGIN: &str = "<<<RTBUILD-STATUS-BEGIN";
/// Ends them.
pub(crate) const STATUS_END: &str = "<<<RTBUILD-STATUS-END";
/// The `checks=` of a `RUN` marker whose job prints the board's state around each scenario.
pub(crate) const STATE_CHECKS: &str = "irq-affinity,kernel-log";
/// What every marker line starts with.
pub(crate) const PREFIX: &str = "<<<RTBUILD-";
/// Closes every marker line.
pub(crate) const CLOSE: &str = ">>>";

/// `key=value` fields of a marker line that starts with `marker`, or `None` when the line is
/// not that marker.
pub(crate) fn fields<'a>(line: &'a str, marker: &str) -> Option<Vec<(&'a str, &'a str)>> {
    let rest = line.strip_prefix(marker)?;
    let rest = rest.trim_end().strip_suffix(CLOSE)?;
    if !rest.is_empty() && !rest.starts_with(' ') {
        return None;
    }
    Some(rest.split_whitespace().filter_map(|f| f.split_once('=')).collect())
}

/// The value of `key` among `fields`.
pub(crate) fn get<'a>(fields: &[(&'a str, &'a str)], key: &str) -> Option<&'a str> {
    fields.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_lines_are_read_only_from_the_start_of_a_line() {
        let f = fields("<<<RTBUILD-RAW-END scenario=idle exit=0>>>\r", END).unwrap();
        assert_eq!(get(&f, "scenario"), Some("idle"));
        assert_eq!(get(&f, "exit"), Some("0"));
        assert!(fields("+ echo '<<<RTBUILD-RAW-END scenario=idle exit=0>>>'", END).is_none());
        assert!(fields("<<<RTBUILD-RAW-ENDX scenario=idle>>>", END).is_none());
        assert!(fields("<<<RTBUILD-RAW-END scenario=idle", END).is_none());
    }
}
