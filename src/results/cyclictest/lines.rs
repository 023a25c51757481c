//! Streams a reader line by line without allocating per line: lines are handed out as byte
//! slices straight from the reader's buffer; only a line that spans two buffer fills is copied
//! (into one reused carry buffer).

use std::io::BufRead;

/// The longest line kept: far above any cyclictest line (a histogram row of 4096 threads is
/// under 30 KiB), far below what would let a file without newlines fill memory.
pub(super) const MAX_LINE: usize = 256 << 10;

/// Receives the lines of a reader. `N` is the length (without `\n`) of the lines offered to
/// [`LineSink::fast_run`] first: whole runs of them straight from the reader's buffer.
pub(super) trait LineSink<const N: usize> {
    /// Takes the lines at the start of `buf` it can in one go (complete lines of exactly `N`
    /// bytes, each with its `\n` inside `buf`), the first of them numbered `line_no`; returns
    /// how many it took. The `-v` hot path: one call per buffer fill instead of one per line.
    fn fast_run(&mut self, _line_no: u64, _buf: &[u8]) -> u64 {
        0
    }

    /// Every line `fast_run` did not take: 1-based number, bytes without `\n` or a trailing
    /// `\r`, and whether it ended with a newline (only the last line may not).
    fn line(&mut self, line_no: u64, line: &[u8], complete: bool);

    /// Line `line_no` was longer than [`MAX_LINE`] (`bytes` long, without its `\n`) and was
    /// skipped, never held in memory.
    fn too_long(&mut self, _line_no: u64, _bytes: u64) {}
}

struct Each<F>(F);

impl<F: FnMut(u64, &[u8], bool)> LineSink<0> for Each<F> {
    fn line(&mut self, line_no: u64, line: &[u8], complete: bool) {
        (self.0)(line_no, line, complete)
    }
}

/// Calls `each(line_number, line, complete)` for every line of `reader` (see [`LineSink::line`]);
/// a line longer than 256 KiB is skipped (its number is not handed out).
pub fn for_each_line<R, F>(reader: R, each: F) -> std::io::Result<()>
where
    R: BufRead,
    F: FnMut(u64, &[u8], bool),
{
    read_lines(reader, &mut Each(each))
}

/// Streams every line of `reader` into `sink`; lines longer than [`MAX_LINE`] go to
/// [`LineSink::too_long`], so memory stays bounded whatever the input.
pub(super) fn read_lines<const N: usize, R, S>(mut reader: R, sink: &mut S) -> std::io::Result<()>
where
    R: BufRead,
    S: LineSink<N>,
{
    let mut line_no = 0u64;
    let mut carry: Vec<u8> = Vec::new();
    // Inside an over-long line: its bytes so far.
    let mut skipping: Option<u64> = None;
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if buf.is_empty() {
            if let Some(bytes) = skipping {
                line_no += 1;
                sink.too_long(line_no, bytes);
            } else if !carry.is_empty() {
                line_no += 1;
                sink.line(line_no, trim_cr(&carry), false);
            }
            return Ok(());
        }
        let len = buf.len();
        let mut start = 0;
        if skipping.is_some() || !carry.is_empty() {
            let held = skipping.unwrap_or(carry.len() as u64);
            match memchr::memchr(b'\n', buf) {
                Some(end) => {
                    line_no += 1;
                    if skipping.is_some() || carry.len() + end > MAX_LINE {
                        sink.too_long(line_no, held + end as u64);
                    } else {
                        carry.extend_from_slice(&buf[..end]);
                        sink.line(line_no, trim_cr(&carry), true);
                    }
                    carry.clear();
                    skipping = None;
                    start = end + 1;
                }
                None => {
                    if skipping.is_some() || carry.len() + len > MAX_LINE {
                        skipping = Some(held + len as u64);
                        carry.clear();
                    } else {
                        carry.extend_from_slice(buf);
                    }
                    reader.consume(len);
                    continue;
                }
            }
        }
        while start < len {
            if N > 0 {
                let taken = sink.fast_run(line_no + 1, &buf[start..len]);
                line_no += taken;
                start += taken as usize * (N + 1);
                if start >= len {
                    break;
                }
            }
            let Some(end) = memchr::memchr(b'\n', &buf[start..]) else { break };
            line_no += 1;
            if end > MAX_LINE {
                sink.too_long(line_no, end as u64);
            } else {
                sink.line(line_no, trim_cr(&buf[start..start + end]), true);
            }
            start += end + 1;
        }
        if len - start > MAX_LINE {
            skipping = Some((len - start) as u64);
        } else {
            carry.extend_from_slice(&buf[start..]);
        }
        reader.consume(len);
    }
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(input: &[u8], cap: usize) -> Vec<(u64, String, bool)> {
        let reader = std::io::BufReader::with_capacity(cap, input);
        let mut out = Vec::new();
        for_each_line(reader, |n, l, c| out.push((n, String::from_utf8_lossy(l).into(), c)))
            .unwrap();
        out
    }

    #[test]
    fn fast_runs_are_taken_and_the_rest_numbered() {
        let input = b"abc\nabc\nxyz\nab\nabcd\nabc\nxy";
        for cap in [1, 4, 5, 9, 64] {
            /// Takes runs of `abc` lines; records every call and every other line.
            struct Sink(Vec<(u64, String)>, u64);
            impl LineSink<3> for Sink {
                fn fast_run(&mut self, line_no: u64, buf: &[u8]) -> u64 {
                    let taken = buf.chunks_exact(4).take_while(|l| *l == b"abc\n").count() as u64;
                    if taken > 0 {
                        self.0.push((line_no, format!("{taken} fast")));
                    }
                    self.1 += taken;
                    taken
                }
                fn line(&mut self, n: u64, l: &[u8], _: bool) {
                    self.0.push((n, String::from_utf8_lossy(l).into_owned()));
                }
            }
            let mut sink = Sink(Vec::new(), 0);
            read_lines(std::io::BufReader::with_capacity(cap, &input[..]), &mut sink).unwrap();
            // A line split across buffer fills is not offered to `fast_run`; `line` gets it.
            let slow_lines: Vec<(u64, &str)> = sink
                .0
                .iter()
                .map(|(n, l)| (*n, l.as_str()))
                .filter(|(_, l)| *l != "abc" && !l.ends_with(" fast"))
                .collect();
            assert_eq!(
                slow_lines,
                [(3, "xyz"), (4, "ab"), (5, "abcd"), (7, "xy")],
                "capacity {cap}"
            );
            let abc_lines = sink.0.iter().filter(|(_, l)| l == "abc").count() as u64;
            assert_eq!(abc_lines + sink.1, 3, "capacity {cap}");
            if cap == 64 {
                assert_eq!(
                    sink.0.iter().filter(|(_, l)| l.ends_with(" fast")).collect::<Vec<_>>(),
                    [&(1, "2 fast".to_string()), &(6, "1 fast".to_string())],
                    "the fast path took the `abc` runs, numbered"
                );
            }
        }
    }

    #[test]
    fn lines_across_tiny_buffers_match_large_buffers() {
        let input = b"a\r\nbcdef\n\nlast";
        let want = vec![
            (1, "a".to_string(), true),
            (2, "bcdef".to_string(), true),
            (3, String::new(), true),
            (4, "last".to_string(), false),
        ];
        for cap in [1, 2, 3, 5, 64] {
            assert_eq!(collect(input, cap), want, "capacity {cap}");
        }
    }
}
