//! `--json=FILE` output. cyclictest writes it with `printf`, so it is not always valid JSON:
//! `avg` can be `nan`/`inf` (a thread with 0 cycles) and strings are not escaped. Those are
//! repaired before parsing. Keys `"cmdline:"` and `"rt_test_version:"` really end in a colon.

use std::io::{BufRead, Read};

use serde_json::Value;

use super::MAX_THREADS;
use super::error::{ParseError, ParseErrorKind};
use super::model::{Format, Histogram, Run, Unit};

/// Larger JSON than this is not a cyclictest file (a 1 ns histogram of 1 s is ~20 MB).
const MAX_JSON: u64 = 512 << 20;

pub fn parse_json(reader: impl BufRead) -> Result<Run, ParseError> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_JSON + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| ParseError { line: 1, kind: ParseErrorKind::Io(err) })?;
    if bytes.len() as u64 > MAX_JSON {
        return Err(json_error(1, "file is larger than 512 MB".into()));
    }
    let repaired = repair(&bytes);
    let value: Value = serde_json::from_slice(&repaired)
        .map_err(|err| json_error(err.line() as u64, err.to_string()))?;
    let mut run = Run::default();
    run.saw(Format::Json);
    run.cmdline = text(&value, &["cmdline:", "cmdline"]);
    run.version = text(&value, &["rt_test_version:", "rt_test_version"]);
    run.return_code = value.get("return_code").and_then(Value::as_i64);
    run.unit = Some(if value.get("resolution_in_ns").and_then(Value::as_u64) == Some(1) {
        Unit::Ns
    } else {
        Unit::Us
    });
    let limit = run.cmdline.as_deref().and_then(histogram_size);
    let Some(threads) = value.get("thread").and_then(Value::as_object) else {
        return Err(ParseError { line: 1, kind: ParseErrorKind::JsonNoThreads });
    };
    for (key, body) in threads {
        let Some(index) = key.parse::<u32>().ok().filter(|i| u64::from(*i) < MAX_THREADS) else {
            run.warn(None, format!("thread key `{key}` is not a thread number; ignored"));
            continue;
        };
        let number = |name: &str| body.get(name).and_then(Value::as_u64);
        let cycles = number("cycles");
        let mut histogram = Histogram { limit, ..Histogram::default() };
        if let Some(buckets) = body.get("histogram").and_then(Value::as_object) {
            for (bucket, count) in buckets {
                match (bucket.parse::<u64>(), count.as_u64()) {
                    (Ok(bucket), Some(count)) => histogram.add(bucket, count),
                    _ => run
                        .warn(None, format!("thread {index}: histogram entry `{bucket}` ignored")),
                }
            }
        }
        // Overflows are not written; they are the cycles missing from the buckets. An empty
        // object without `-h` on the command line means "no histogram" (rt-tests 2.4 writes one).
        let has_histogram = limit.is_some() || !histogram.buckets.is_empty();
        if let Some(cycles) = cycles.filter(|_| has_histogram) {
            let bucketed = histogram.bucketed();
            if cycles < bucketed {
                run.warn(None, format!("thread {index}: histogram holds {bucketed} samples but `cycles` is {cycles}"));
            }
            histogram.overflows = cycles.saturating_sub(bucketed);
        }
        let thread = run.thread_mut(index);
        thread.cycles = cycles;
        thread.reported_min = number("min");
        thread.reported_max = number("max");
        thread.reported_avg = body.get("avg").and_then(Value::as_f64);
        thread.cpu = number("cpu").and_then(|c| u32::try_from(c).ok());
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

fn text(value: &Value, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| value.get(*k).and_then(Value::as_str)).map(str::to_string)
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

/// Makes cyclictest's JSON parseable: bare `nan`/`inf` become `null`; control characters and
/// stray backslashes inside strings are escaped.
fn repair(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len());
    let mut in_string = false;
    let mut i = 0;
    while i < input.len() {
        let b = input[i];
        if in_string {
            match b {
                b'"' => in_string = false,
                b'\\' => {
                    let next = input.get(i + 1).copied().unwrap_or(b' ');
                    if b"\"\\/bfnrtu".contains(&next) {
                        out.extend_from_slice(&[b'\\', next]);
                        i += 2;
                        continue;
                    }
                    out.push(b'\\');
                }
                b'\n' => {
                    // Keep line numbers: an unescaped newline ends the string's line here.
                    out.extend_from_slice(b"\\n");
                    i += 1;
                    continue;
                }
                0..=0x1f => {
                    out.extend_from_slice(format!("\\u{b:04x}").as_bytes());
                    i += 1;
                    continue;
                }
                _ => {}
            }
            out.push(b);
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
        } else if let Some(len) = non_finite(&input[i..]) {
            out.extend_from_slice(b"null");
            i += len;
            continue;
        }
        out.push(b);
        i += 1;
    }
    out
}

/// Length of a bare `nan`, `-nan`, `inf`, `-inf` (any case) at the start of `rest`.
fn non_finite(rest: &[u8]) -> Option<usize> {
    let sign = usize::from(rest.first() == Some(&b'-'));
    let word = rest.get(sign..sign + 3)?;
    let matches = word.eq_ignore_ascii_case(b"nan") || word.eq_ignore_ascii_case(b"inf");
    let ends = rest.get(sign + 3).is_none_or(|c| !c.is_ascii_alphanumeric());
    (matches && ends).then_some(sign + 3)
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

    #[test]
    fn repair_turns_nan_into_null_and_escapes_strings() {
        let input = b"{\"cmdline:\": \"a\\q\tb\", \"avg\": -nan, \"x\": inf, \"nanny\": \"nan\"}";
        let fixed = String::from_utf8(repair(input)).unwrap();
        assert_eq!(
            fixed,
            "{\"cmdline:\": \"a\\\\q\\u0009b\", \"avg\": null, \"x\": null, \"nanny\": \"nan\"}"
        );
        serde_json::from_str::<Value>(&fixed).unwrap();
    }
}
