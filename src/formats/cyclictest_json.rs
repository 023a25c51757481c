//! cyclictest's `--json=FILE` output, read by `rtbuild report` (statistics) and `rtbuild test`
//! (is the run valid). cyclictest writes it with `printf`, so it is not always valid JSON:
//! `avg` can be `nan`/`inf` (a thread with 0 cycles) and strings are not escaped; [`parse`]
//! repairs those first. Keys `"cmdline:"` and `"rt_test_version:"` really end in a colon.
//! `file_version` is cyclictest's own schema number (1 in rt-tests 2.4 to 2.8).

use std::collections::BTreeMap;

use serde::Deserialize;

/// The `file_version` this reader knows.
pub(crate) const FILE_VERSION: u64 = 1;

/// The whole file. Every field is optional: each reader decides what it needs.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct CyclictestJson {
    pub file_version: Option<u64>,
    #[serde(rename = "cmdline:", alias = "cmdline")]
    pub cmdline: Option<String>,
    #[serde(rename = "rt_test_version:", alias = "rt_test_version")]
    pub rt_test_version: Option<String>,
    pub return_code: Option<i64>,
    pub num_threads: Option<usize>,
    /// 1 when the latencies are in nanoseconds (`-N`).
    pub resolution_in_ns: Option<u64>,
    /// Per thread number (as a string key): its figures.
    pub thread: Option<BTreeMap<String, ThreadJson>>,
}

/// One measuring thread.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ThreadJson {
    /// Bucket (µs or ns, as a string key) → samples; overflows are not written. A bad entry
    /// is named by the reader instead of refusing the file.
    pub histogram: Option<HistogramJson>,
    pub cycles: Option<u64>,
    pub min: Option<i64>,
    pub max: Option<i64>,
    /// `null` when cyclictest wrote `nan` (no cycles).
    pub avg: Option<f64>,
    pub cpu: Option<i64>,
    pub node: Option<i64>,
}

/// Histogram entries one file may hold, over all its threads (4,096 threads of 2,000 µs
/// buckets each are 8.2 million): each is kept in memory, so a file past this is refused.
pub(crate) const MAX_HISTOGRAM_ENTRIES: u64 = 10 << 20;

/// Bad entries named one by one; the others are only counted.
const NAMED_BAD: usize = 8;

/// One thread's histogram as read, compactly (a JSON map of strings to values needed about
/// 100 bytes an entry): the well-formed entries in file order, and the bad ones (a key that is
/// not a bucket number, a count that is not a non-negative integer).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HistogramJson {
    pub entries: Vec<(u64, u64)>,
    /// The keys of the first bad entries.
    pub bad: Vec<String>,
    /// Every bad entry.
    pub bad_count: u64,
}

thread_local! {
    /// Histogram entries the file being parsed may still hold (see [`MAX_HISTOGRAM_ENTRIES`]).
    static ENTRIES_LEFT: std::cell::Cell<u64> = const { std::cell::Cell::new(MAX_HISTOGRAM_ENTRIES) };
}

impl<'de> Deserialize<'de> for HistogramJson {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> serde::de::Visitor<'de> for Entries {
            type Value = HistogramJson;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map of latency buckets to sample counts")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<HistogramJson, A::Error> {
                let mut histogram = HistogramJson::default();
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    let value: serde_json::Value = map.next_value()?;
                    let left = ENTRIES_LEFT.with(std::cell::Cell::get);
                    if left == 0 {
                        return Err(serde::de::Error::custom(format!(
                            "more than {MAX_HISTOGRAM_ENTRIES} histogram entries"
                        )));
                    }
                    ENTRIES_LEFT.with(|cell| cell.set(left - 1));
                    match (key.parse::<u64>(), value.as_u64()) {
                        (Ok(bucket), Some(count)) => histogram.entries.push((bucket, count)),
                        _ => {
                            histogram.bad_count += 1;
                            if histogram.bad.len() < NAMED_BAD {
                                histogram.bad.push(key.chars().take(40).collect());
                            }
                        }
                    }
                }
                Ok(histogram)
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

/// Parses cyclictest's JSON after [`repair`].
pub(crate) fn parse(bytes: &[u8]) -> Result<CyclictestJson, serde_json::Error> {
    parse_repaired(repair(bytes))
}

/// [`parse`] for bytes rtbuild owns: they are dropped once repaired (a file of hundreds of MB
/// is not held twice).
pub(crate) fn parse_owned(bytes: Vec<u8>) -> Result<CyclictestJson, serde_json::Error> {
    let repaired = repair(&bytes);
    drop(bytes);
    parse_repaired(repaired)
}

fn parse_repaired(repaired: Vec<u8>) -> Result<CyclictestJson, serde_json::Error> {
    ENTRIES_LEFT.with(|cell| cell.set(MAX_HISTOGRAM_ENTRIES));
    serde_json::from_slice(&repaired)
}

/// Makes cyclictest's JSON parseable: bare `nan`/`inf` become `null`; control characters and
/// stray backslashes inside strings are escaped.
pub(crate) fn repair(input: &[u8]) -> Vec<u8> {
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
    fn repair_turns_nan_into_null_and_escapes_strings() {
        let input = b"{\"cmdline:\": \"a\\q\tb\", \"avg\": -nan, \"x\": inf, \"nanny\": \"nan\"}";
        let fixed = String::from_utf8(repair(input)).unwrap();
        assert_eq!(
            fixed,
            "{\"cmdline:\": \"a\\\\q\\u0009b\", \"avg\": null, \"x\": null, \"nanny\": \"nan\"}"
        );
        serde_json::from_str::<serde_json::Value>(&fixed).unwrap();
    }

    #[test]
    fn both_spellings_of_the_colon_keys_are_read() {
        let with = parse(br#"{"cmdline:": "cyclictest -q", "rt_test_version:": "2.4"}"#).unwrap();
        assert_eq!(with.cmdline.as_deref(), Some("cyclictest -q"));
        assert_eq!(with.rt_test_version.as_deref(), Some("2.4"));
        let without =
            parse(br#"{"cmdline": "cyclictest -q", "thread": {"0": {"avg": nan}}}"#).unwrap();
        assert_eq!(without.cmdline.as_deref(), Some("cyclictest -q"));
        assert_eq!(without.thread.unwrap()["0"].avg, None);
    }
}
