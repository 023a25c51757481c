//! The text outputs (everything but `--json`), in one pass: each line is recognised on its own
//! (`-v` sample, `T:` summary or spike, histogram row or `#` line, known chatter), so files that
//! combine formats (`-v -h`, live screen plus histogram) parse too. ANSI cursor movement is
//! stripped; `T:` lines overwrite earlier ones per thread, so only the final live block counts.

use std::io::BufRead;

use super::MAX_THREADS;
use super::error::{ParseError, ParseErrorKind};
use super::hist::HistBlock;
use super::lines::MAX_LINE;
use super::lines::{LineSink, read_lines};
use super::model::{Format, Histogram, ResultFile, Unit};
use super::split::Splitter;
use super::summary::{self, TLine};
use super::verbose::{self, VerboseCounts};

#[derive(Debug, Default)]
struct TextParser {
    run: ResultFile,
    verbose: VerboseCounts,
    /// Counts long runs of `-v` lines on every core.
    split: Splitter,
    hist: Option<(HistBlock, u64)>,
    /// Inside the bucket rows of a histogram block.
    in_rows: bool,
    summaries: u64,
    live: bool,
    unknown: u64,
    error: Option<ParseError>,
    last_line: u64,
}

/// Parses any text cyclictest output in one pass, line by line (lines over
/// [`MAX_LINE`] are skipped, so memory stays bounded).
pub(super) fn parse_text(reader: impl BufRead) -> Result<ResultFile, ParseError> {
    parse_text_with(reader, Splitter::default())
}

/// [`parse_text`] with runs of `-v` lines counted by `split`.
pub(super) fn parse_text_with(
    reader: impl BufRead,
    split: Splitter,
) -> Result<ResultFile, ParseError> {
    let mut parser = TextParser { split, ..TextParser::default() };
    let read = read_lines(reader, &mut parser);
    parser.end(read)
}

impl LineSink<{ verbose::FIXED }> for TextParser {
    /// The `-v` hot path: a run of fixed-width sample lines, counted in one loop.
    #[inline]
    fn fast_run(&mut self, line_no: u64, buf: &[u8]) -> u64 {
        if self.error.is_some() {
            return 0;
        }
        let taken = self.split.count(&mut self.verbose, buf);
        if taken > 0 {
            self.last_line = line_no + taken - 1;
        }
        if let Some(excess) = self.verbose.over() {
            self.error = Some(ParseError { line: self.last_line, kind: too_many(excess) });
        }
        taken
    }

    fn line(&mut self, line_no: u64, line: &[u8], complete: bool) {
        self.last_line = line_no;
        if self.error.is_none() {
            self.parse_line(line_no, line, complete);
        }
    }

    fn too_long(&mut self, line_no: u64, bytes: u64) {
        self.last_line = line_no;
        if self.error.is_none() {
            self.unknown += 1;
            self.run.warn(
                Some(line_no),
                format!(
                    "line ignored: {bytes} bytes long, longer than any cyclictest line (lines over {} KiB are skipped unread)",
                    MAX_LINE >> 10
                ),
            );
        }
    }
}

impl TextParser {
    /// The run, or the first error: a read failure (at the line after the last one read), a
    /// bad line, or nothing recognised.
    fn end(mut self, read: std::io::Result<()>) -> Result<ResultFile, ParseError> {
        if let Err(err) = read {
            return Err(ParseError { line: self.last_line + 1, kind: ParseErrorKind::Io(err) });
        }
        if let Some(err) = self.error.take() {
            return Err(err);
        }
        let last_line = self.last_line;
        self.finish(last_line)
    }

    fn parse_line(&mut self, no: u64, line: &[u8], complete: bool) {
        if let Some(sample) = verbose::parse_line(line) {
            if !complete {
                self.run.warn(Some(no), "last `-v` line is cut off (truncated file?); ignored");
            } else if sample.thread >= MAX_THREADS {
                self.error =
                    Some(ParseError { line: no, kind: ParseErrorKind::ThreadIndex(sample.thread) });
            } else {
                self.verbose.add(sample);
                if let Some(excess) = self.verbose.over() {
                    self.error = Some(ParseError { line: no, kind: too_many(excess) });
                }
            }
            return;
        }
        let stripped;
        let line = if memchr::memchr(0x1b, line).is_some() {
            self.live = true;
            stripped = strip_ansi(line);
            &stripped[..]
        } else {
            line
        };
        let Ok(text) = std::str::from_utf8(line) else {
            self.unknown(no, "not text");
            return;
        };
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        if text.starts_with("T:") {
            self.in_rows = false;
            self.t_line(no, text, complete);
        } else if text.starts_with('#') {
            self.hash_line(no, text);
        } else if self.in_rows && text.as_bytes()[0].is_ascii_digit() {
            let (block, _) = self.hist.get_or_insert_with(|| (HistBlock::new(), no));
            if let Err(problem) = block.row(text) {
                if block.full {
                    let kind = ParseErrorKind::TooManyBuckets(super::hist::MAX_ENTRIES);
                    self.error.get_or_insert(ParseError { line: no, kind });
                } else {
                    self.run.warn(Some(no), format!("histogram row ignored: {problem}"));
                }
            }
        } else if text.starts_with("policy:") {
            self.live = true;
        } else if is_chatter(text) {
            if let Some(rest) = text.strip_prefix("Thread ")
                && let Some((index, interval)) = rest.split_once(" Interval:")
                && let (Ok(index), Ok(interval)) =
                    (index.trim().parse::<u32>(), interval.trim().parse())
                && u64::from(index) < MAX_THREADS
            {
                self.run.thread_mut(index).interval_us = Some(interval);
            }
        } else if !complete {
            self.run.warn(Some(no), "last line is cut off (truncated file?); ignored");
        } else {
            self.unknown(no, "not cyclictest output");
        }
    }

    fn t_line(&mut self, no: u64, text: &str, complete: bool) {
        match summary::parse(text) {
            Ok(_) if !complete => {
                self.run.warn(Some(no), "last `T:` line is cut off (truncated file?); ignored")
            }
            Ok(TLine::Summary(s)) if s.thread < MAX_THREADS => {
                self.summaries += 1;
                if let Some(unit) = s.unit {
                    self.run.unit =
                        Some(if self.run.unit == Some(Unit::Ns) { Unit::Ns } else { unit });
                }
                let thread = self.run.thread_mut(s.thread as u32);
                thread.tid = s.tid.or(thread.tid);
                thread.priority = s.priority;
                thread.interval_us = s.interval_us;
                thread.cycles = Some(s.cycles);
                thread.reported_min = s.min;
                thread.reported_avg = s.avg.map(|a| a as f64);
                thread.reported_max = s.max;
                thread.reported_act = s.act;
                // A later block of a live screen replaces the earlier one, bad figures too.
                thread.bad_figures = s.bad;
            }
            Ok(TLine::Spike(s)) if s.thread < MAX_THREADS => {
                self.run.saw(Format::Spike);
                let thread = self.run.thread_mut(s.thread as u32);
                thread.spikes += 1;
                thread.spike_max = Some(thread.spike_max.map_or(s.value, |m| m.max(s.value)));
            }
            Ok(
                TLine::Summary(summary::Summary { thread, .. })
                | TLine::Spike(summary::Spike { thread, .. }),
            ) => {
                self.error =
                    Some(ParseError { line: no, kind: ParseErrorKind::ThreadIndex(thread) });
            }
            Err(problem) if !complete => {
                self.run.warn(Some(no), format!("last `T:` line is cut off ({problem}); ignored"));
            }
            Err(problem) => self.run.warn(Some(no), format!("`T:` line ignored: {problem}")),
        }
    }

    fn hash_line(&mut self, no: u64, text: &str) {
        if text == "# Histogram" {
            if let Some((block, start)) = self.hist.take() {
                self.run
                    .warn(Some(no), "a second histogram starts here; only the last one is used");
                block.finish(&mut ResultFile::default(), start);
            }
            self.hist = Some((HistBlock::new(), no));
            self.in_rows = true;
            return;
        }
        self.in_rows = false;
        let Some((block, _)) = self.hist.as_mut() else {
            if text.contains("Break thread:") || text.contains("Break value:") {
                let (block, _) = self.hist.get_or_insert_with(|| (HistBlock::new(), no));
                let _ = block.hash_line(text);
            }
            return;
        };
        if let Err(problem) = block.hash_line(text) {
            self.run.warn(Some(no), format!("histogram line ignored: {problem}"));
        }
    }

    fn unknown(&mut self, no: u64, what: &str) {
        self.unknown += 1;
        self.run.warn(Some(no), format!("line ignored: {what}"));
    }

    fn finish(mut self, last_line: u64) -> Result<ResultFile, ParseError> {
        let mut run = std::mem::take(&mut self.run);
        if let Some((block, start)) = self.hist.take() {
            let has_rows = block.has_data();
            if has_rows {
                block.finish(&mut run, start);
            } else {
                run.breaktrace = block.breaktrace;
            }
        }
        if !self.verbose.is_empty() {
            if let Some(excess) = self.verbose.excess() {
                return Err(ParseError { line: last_line, kind: too_many(excess) });
            }
            run.saw(Format::Verbose);
            run.negative_samples = self.verbose.negative;
            if self.verbose.negative > 0 {
                run.warn(
                    None,
                    format!(
                        "{} `-v` samples had a negative latency and were not counted",
                        self.verbose.negative
                    ),
                );
            }
            for counted in std::mem::take(&mut self.verbose).into_threads() {
                let thread = run.thread_mut(counted.index);
                thread.missing_cycles = counted.missing_cycles;
                // `-v -h`: the samples are exact where the printed histogram overflows; use
                // them unless cyclictest dropped some of them.
                let printed = thread.histogram.as_ref().map_or(0, Histogram::samples);
                let counted_samples = counted.histogram.as_ref().map_or(0, Histogram::samples);
                if counted_samples >= printed {
                    thread.histogram = counted.histogram;
                    thread.block_maxima = counted.block_maxima;
                    thread.histogram_from_samples = true;
                }
            }
        }
        if self.summaries > 0 {
            run.saw(if self.live { Format::Live } else { Format::Summary });
        }
        let recognised = !run.formats.is_empty() || run.breaktrace.is_some();
        if !recognised || run.threads.is_empty() {
            return Err(ParseError { line: last_line.max(1), kind: ParseErrorKind::Empty });
        }
        Ok(run)
    }
}

/// Known lines that carry nothing for the report.
fn is_chatter(text: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "WARN:",
        "Max CPUs",
        "Online CPUs",
        "Thread ",
        "spikes =",
        "cyclictest V",
        "Warning:",
        "not setting cpu_dma_latency",
        "Unable to change",
        "INFO:",
    ];
    PREFIXES.iter().any(|p| text.starts_with(p))
}

/// Removes ANSI CSI sequences (`ESC [ params letter`) and lone escapes.
fn strip_ansi(line: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len());
    let mut i = 0;
    while i < line.len() {
        if line[i] == 0x1b {
            i += 1;
            if line.get(i) == Some(&b'[') {
                i += 1;
                while i < line.len() && !line[i].is_ascii_alphabetic() {
                    i += 1;
                }
                i += 1;
            }
        } else {
            out.push(line[i]);
            i += 1;
        }
    }
    out
}

/// The refusal of `-v` samples past a budget of [`verbose`].
fn too_many(excess: verbose::Excess) -> ParseErrorKind {
    match excess {
        verbose::Excess::Thread(thread) => {
            ParseErrorKind::TooManyValues { thread, limit: verbose::MAX_THREAD_VALUES }
        }
        verbose::Excess::Total => ParseErrorKind::TooManyBuckets(verbose::MAX_VALUES),
    }
}
