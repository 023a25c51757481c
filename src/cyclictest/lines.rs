//! Streams a reader line by line without allocating per line: lines are handed out as byte
//! slices straight from the reader's buffer; only a line that spans two buffer fills is copied
//! (into one reused carry buffer).

use std::io::BufRead;

/// Calls `each(line_number, line)` for every line of `reader` (1-based, `\n` and a trailing
/// `\r` removed). The last line is passed even without a final newline; `complete` tells
/// whether it ended with one.
pub fn for_each_line<R, F>(mut reader: R, mut each: F) -> std::io::Result<()>
where
    R: BufRead,
    F: FnMut(u64, &[u8], bool),
{
    let mut line_no = 0u64;
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if buf.is_empty() {
            if !carry.is_empty() {
                line_no += 1;
                each(line_no, trim_cr(&carry), false);
            }
            return Ok(());
        }
        let len = buf.len();
        let mut start = 0;
        if !carry.is_empty() {
            match memchr::memchr(b'\n', buf) {
                Some(end) => {
                    carry.extend_from_slice(&buf[..end]);
                    line_no += 1;
                    each(line_no, trim_cr(&carry), true);
                    carry.clear();
                    start = end + 1;
                }
                None => {
                    carry.extend_from_slice(buf);
                    reader.consume(len);
                    continue;
                }
            }
        }
        let base = start;
        for end in memchr::memchr_iter(b'\n', &buf[base..]) {
            line_no += 1;
            each(line_no, trim_cr(&buf[start..base + end]), true);
            start = base + end + 1;
        }
        carry.extend_from_slice(&buf[start..]);
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
