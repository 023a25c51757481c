//! `--json=FILE` output, read through its one type ([`cyclictest_json::CyclictestJson`], which
//! also repairs cyclictest's `nan` and unescaped strings) into a [`ResultFile`].

use std::io::{BufRead, Read};

use super::MAX_THREADS;
use super::error::{ParseError, ParseErrorKind};
use super::model::{Format, Histogram, ResultFile, Unit};
use crate::files::limits::MAX_JSON;
use crate::formats::cyclictest_json;

pub(super) fn parse_json(reader: impl BufRead) -> Result<ResultFile, ParseError> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_JSON + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| ParseError { line: 1, kind: ParseErrorKind::Io(err) })?;
    if bytes.len() as u64 > MAX_JSON {
        return Err(json_error(1, "file is larger than 512 MB".into()));
    }
    let json = cyclictest_json::parse_owned(bytes)
        .map_err(|err| json_error(err.line() as u64, err.to_string()))?;
    let mut run = ResultFile::default();
    run.saw(Format::Json);
    run.cmdline = json.cmdline;
    run.version = json.rt_test_version;
    run.return_code = json.return_code;
    run.unit = Some(if json.resolution_in_ns == Some(1) { Unit::Ns } else { Unit::Us });
    if let Some(version) = json.file_version.filter(|v| *v > cyclictest_json::FILE_VERSION) {
        run.warn(
            None,
            format!(
                "file_version {version} is newer than this rtbuild knows ({}); read as version {}",
                cyclictest_json::FILE_VERSION,
                cyclictest_json::FILE_VERSION
            ),
        );
    }
    let limit = run.cmdline.as_deref().and_then(histogram_size);
    let Some(threads) = json.thread else {
        return Err(ParseError { line: 1, kind: ParseErrorKind::JsonNoThreads });
    };
    for (key, body) in threads {
        let Some(index) = key.parse::<u32>().ok().filter(|i| u64::from(*i) < MAX_THREADS) else {
            run.warn(None, format!("thread key `{key}` is not a thread number; ignored"));
            continue;
        };
        let cycles = body.cycles;
        let mut histogram = Histogram { limit, ..Histogram::default() };
        if let Some(buckets) = body.histogram {
            for (bucket, count) in buckets.entries {
                histogram.add(bucket, count);
            }
            for bucket in &buckets.bad {
                run.warn(None, format!("thread {index}: histogram entry `{bucket}` ignored"));
            }
            let unnamed = buckets.bad_count.saturating_sub(buckets.bad.len() as u64);
            if unnamed > 0 {
                run.warn(None, format!("thread {index}: {unnamed} more histogram entries ignored"));
            }
        }
        // Overflows are not written; they are the cycles missing from the buckets. An empty
        // object without `-h` on the command line means "no histogram" (rt-tests 2.4 writes one).
        let has_histogram = limit.is_some() || !histogram.buckets.is_empty();
        if let Some(cycles) = cycles.filter(|_| has_histogram) {
            let bucketed = histogram.bucketed();
            if cycles < bucketed {
                let samples = crate::text::counted(bucketed, "sample");
                run.warn(
                    None,
                    format!("thread {index}: histogram holds {samples} but `cycles` is {cycles}"),
                );
            }
            histogram.overflows = cycles.saturating_sub(bucketed);
        }
        let unsigned = |n: Option<i64>| n.and_then(|n| u64::try_from(n).ok());
        // A negative figure is no latency: unknown, and named (`nan` arrives as `null`, which
        // cyclictest writes for the average of a thread without cycles).
        for (name, value) in [("min", body.min), ("max", body.max)] {
            if let Some(value) = value.filter(|v| *v < 0) {
                run.bad_figure(index, format!("{name} `{value}`"));
            }
        }
        if let Some(avg) = body.avg.filter(|a| !crate::formats::report_json::is_latency(*a)) {
            run.bad_figure(index, format!("avg `{avg}`"));
        }
        let thread = run.thread_mut(index);
        thread.cycles = cycles;
        thread.reported_min = unsigned(body.min);
        thread.reported_max = unsigned(body.max);
        thread.reported_avg = body.avg.filter(|a| crate::formats::report_json::is_latency(*a));
        thread.cpu = body.cpu.and_then(|c| u32::try_from(c).ok());
        thread.histogram = has_histogram.then_some(histogram);
    }
    if run.threads.is_empty() {
        return Err(ParseError { line: 1, kind: ParseErrorKind::JsonNoThreads });
    }
    Ok(run)
}

fn json_error(line: u64, message: String) -> ParseError {
    ParseError { line: line.max(1), kind: ParseErrorKind::Json(message) }
}

/// The `-h N`/`-H N`/`--histogram=N`/`--histofall=N` value on a cyclictest command line.
pub fn histogram_size(cmdline: &str) -> Option<u64> {
    let mut words = cmdline.split_whitespace();
    while let Some(word) = words.next() {
        if let Some(long) = word.strip_prefix("--") {
            for name in ["histogram", "histofall"] {
                if let Some(rest) = long.strip_prefix(name) {
                    return match rest.strip_prefix('=') {
                        Some(value) => value.parse().ok(),
                        None if rest.is_empty() => words.next().and_then(|v| v.parse().ok()),
                        None => continue,
                    };
                }
            }
        } else if let Some(flags) = word.strip_prefix('-') {
            // Short flags may be grouped (`-qh50`); stop at the first one that takes a value.
            for (at, flag) in flags.char_indices() {
                match flag {
                    'h' | 'H' => {
                        let rest = &flags[at + 1..];
                        let value = if rest.is_empty() { words.next() } else { Some(rest) };
                        return value.and_then(|v| v.parse().ok());
                    }
                    'm' | 'q' | 'M' | 'N' | 'r' | 'R' | 's' | 'S' | 'u' | 'v' | 'x' => {}
                    _ => break,
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_size_from_command_lines() {
        let cases: &[(&str, Option<u64>)] = &[
            ("cyclictest -m -p 99 -t 2 -i 1000 -D 2 -q -h 50 -d 0", Some(50)),
            ("cyclictest -mqh400", Some(400)),
            ("cyclictest -H 30 -q", Some(30)),
            ("cyclictest --histogram=800", Some(800)),
            ("cyclictest --histofall 12", Some(12)),
            ("cyclictest -m -p 99 -t 2", None),
            ("cyclictest -p99 -i100", None),
            ("cyclictest --histfile=/tmp/h -q", None),
        ];
        for (cmdline, want) in cases {
            assert_eq!(histogram_size(cmdline), *want, "{cmdline}");
        }
    }
}
