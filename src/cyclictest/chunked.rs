//! NOT USED by `rtbuild report` yet (built for tests only): measured on the shared 2-core VM
//! under load it took 1.27x the CPU time of the one-pass reader and was slower in wall time,
//! so the one-pass reader stays; this is kept, exact and tested, for a measurement on a quiet
//! machine (issue 27).
//!
//! The reading loop of the text parser, on every CPU rtbuild may use. The input is cut into
//! chunks at line ends; worker threads count the `-v` samples of each chunk (eight bytes at a
//! time for cyclictest's fixed-width line), and the calling thread hands every other line to
//! the text parser in file order with its line number. The result is exactly that of one pass:
//! latency counts add up in any order, and each thread's cycle numbers are joined at chunk
//! borders ([`Cycles::then`]). Memory stays constant: a few chunk buffers, and a line longer
//! than [`MAX_LINE`] is skipped (the parser warns) instead of being collected.

use std::collections::{BTreeMap, VecDeque};
use std::io::Read;
use std::sync::mpsc;

use super::MAX_THREADS;
use super::verbose::{self, Cycles, FIXED, VerboseCounts};

/// Bytes read and handed to a worker at a time.
const CHUNK: usize = 1 << 20;

pub(super) use super::lines::MAX_LINE;

/// Worker threads at most, whatever the machine has (memory: a chunk buffer for each worker
/// plus two stay in flight).
const MAX_WORKERS: usize = 8;

/// What the reading loop tells the text parser, in file order.
pub(super) trait Lines {
    /// A line that is not a countable `-v` sample: 1-based number, bytes without `\n` or a
    /// trailing `\r`, and whether a newline ended it (only the last line may lack one).
    fn line(&mut self, line_no: u64, line: &[u8], complete: bool);
    /// Line `line_no` was longer than [`MAX_LINE`] (`bytes` long) and was skipped.
    fn too_long(&mut self, line_no: u64, bytes: u64);
    /// The `-v` samples, counted; the cycles of each thread arrive in file order through
    /// [`Lines::cycles`], the latency counts at the end through [`Lines::counts`].
    fn cycles(&mut self, thread: u64, cycles: &Cycles);
    fn counts(&mut self, counts: VerboseCounts);
    /// Every line up to `line_no` has been handed over.
    fn read_up_to(&mut self, line_no: u64);
}

/// The CPUs this process may use (its affinity, cgroup limits), capped.
fn workers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_WORKERS)
}

/// Reads `reader` to the end into `sink`.
pub(super) fn read<R: Read, L: Lines>(reader: R, sink: &mut L) -> std::io::Result<()> {
    read_with(reader, sink, workers(), CHUNK, MAX_LINE)
}

/// One chunk's findings besides the counts the scanner keeps.
struct Scanned {
    seq: u64,
    buf: Vec<u8>,
    lines: u64,
    /// Lines that are not countable samples: (index in the chunk, start, end before `\n`).
    others: Vec<(u64, usize, usize)>,
    cycles: Vec<(u64, Cycles)>,
}

/// Counts samples; keeps each chunk's cycle numbers apart.
struct Scanner {
    max_line: usize,
    counts: VerboseCounts,
    spans: Vec<Cycles>,
    touched: Vec<u64>,
}

impl Scanner {
    fn new(max_line: usize) -> Scanner {
        Scanner {
            max_line,
            counts: VerboseCounts::default(),
            spans: Vec::new(),
            touched: Vec::new(),
        }
    }

    #[inline]
    fn sample(&mut self, sample: verbose::Sample) {
        self.counts.count(sample);
        let index = sample.thread as usize;
        if index >= self.spans.len() {
            self.spans.resize(index + 1, Cycles::default());
        }
        if self.spans[index].is_empty() {
            self.touched.push(sample.thread);
        }
        self.spans[index].see(sample.cycle);
    }

    /// Scans `buf` (complete lines, each ending with `\n`).
    fn scan(&mut self, seq: u64, buf: Vec<u8>, len: usize) -> Scanned {
        let data = &buf[..len];
        let mut others = Vec::new();
        let mut start = 0;
        let mut index = 0u64;
        while start < len {
            // The common line: `%8d:%8lu:%8ld` and its newline, 27 bytes.
            if start + FIXED < len
                && data[start + FIXED] == b'\n'
                && let Ok(fixed) = <&[u8; FIXED]>::try_from(&data[start..start + FIXED])
                && let Some(sample) = verbose::parse_fixed(fixed)
                && sample.thread < MAX_THREADS
            {
                self.sample(sample);
                start += FIXED + 1;
                index += 1;
                continue;
            }
            let end = memchr::memchr(b'\n', &data[start..]).map_or(len, |at| start + at);
            let raw = &data[start..end];
            let line = raw.strip_suffix(b"\r").unwrap_or(raw);
            match verbose::parse_line(line) {
                Some(sample) if sample.thread < MAX_THREADS && raw.len() <= self.max_line => {
                    self.sample(sample)
                }
                _ => others.push((index, start, end)),
            }
            index += 1;
            start = end + 1;
        }
        let mut cycles = Vec::with_capacity(self.touched.len());
        for thread in self.touched.drain(..) {
            cycles.push((thread, std::mem::take(&mut self.spans[thread as usize])));
        }
        Scanned { seq, buf, lines: index, others, cycles }
    }
}

/// A piece of the input, handled in file order.
enum Piece {
    /// A chunk of complete lines, scanned by a worker (or inline).
    Chunk(u64),
    /// A line longer than [`MAX_LINE`], skipped: its length.
    TooLong(u64),
    /// The last line, without a newline.
    Last(Vec<u8>),
}

/// The reading loop with `workers` threads, `chunk`-byte reads and lines of at most
/// `max_line` bytes (both small in tests).
pub(super) fn read_with<R: Read, L: Lines>(
    mut reader: R,
    sink: &mut L,
    workers: usize,
    chunk: usize,
    max_line: usize,
) -> std::io::Result<()> {
    // A carried line start (at most `max_line` bytes) always leaves room to read.
    let chunk = chunk.max(max_line + 1);
    std::thread::scope(|scope| {
        let (done_tx, done_rx) = mpsc::channel::<Scanned>();
        let mut to_workers: Vec<mpsc::Sender<(u64, Vec<u8>, usize)>> = Vec::new();
        let mut handles = Vec::new();
        let mut inline = Scanner::new(max_line);
        let mut order = Order { max_line, ..Order::default() };
        let mut in_flight = 0usize;
        let mut seq = 0u64;
        // The start of a line the last chunk cut, carried into the next.
        let mut carry: Vec<u8> = Vec::new();
        // Skipping an over-long line: the bytes skipped so far.
        let mut skipping: Option<u64> = None;
        let mut failure: Option<std::io::Error> = None;
        loop {
            let mut buf = order.free.pop().unwrap_or_else(|| vec![0u8; chunk]);
            let mut filled = carry.len();
            buf[..filled].copy_from_slice(&carry);
            carry.clear();
            let mut eof = false;
            while filled < chunk {
                match reader.read(&mut buf[filled..chunk]) {
                    Ok(0) => {
                        eof = true;
                        break;
                    }
                    Ok(n) => filled += n,
                    Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(err) => {
                        failure = Some(err);
                        eof = true;
                        break;
                    }
                }
            }
            let mut from = 0;
            if let Some(skipped) = skipping {
                match memchr::memchr(b'\n', &buf[..filled]) {
                    Some(at) => {
                        order.pending.push_back(Piece::TooLong(skipped + at as u64));
                        skipping = None;
                        from = at + 1;
                    }
                    None => {
                        let skipped = skipped + filled as u64;
                        skipping = Some(skipped);
                        order.free.push(buf);
                        if eof {
                            if failure.is_none() {
                                order.pending.push_back(Piece::TooLong(skipped));
                            }
                            break;
                        }
                        continue;
                    }
                }
            }
            let complete_end =
                memchr::memrchr(b'\n', &buf[from..filled]).map_or(from, |at| from + at + 1);
            let tail = complete_end..filled;
            let last = if tail.len() > max_line {
                let cut = tail.len() as u64;
                if eof {
                    failure.is_none().then_some(Piece::TooLong(cut))
                } else {
                    skipping = Some(cut);
                    None
                }
            } else if eof {
                (!tail.is_empty() && failure.is_none()).then(|| Piece::Last(buf[tail].to_vec()))
            } else {
                carry.extend_from_slice(&buf[tail]);
                None
            };
            if from > 0 {
                buf.copy_within(from..complete_end, 0);
            }
            let len = complete_end - from;
            if len == 0 {
                order.free.push(buf);
            } else {
                let id = seq;
                seq += 1;
                order.pending.push_back(Piece::Chunk(id));
                if workers <= 1 || (eof && handles.is_empty()) {
                    order.ready.insert(id, inline.scan(id, buf, len));
                } else {
                    if to_workers.len() < workers {
                        let (tx, rx) = mpsc::channel::<(u64, Vec<u8>, usize)>();
                        let done_tx = done_tx.clone();
                        handles.push(scope.spawn(move || {
                            let mut scanner = Scanner::new(max_line);
                            while let Ok((id, buf, len)) = rx.recv() {
                                if done_tx.send(scanner.scan(id, buf, len)).is_err() {
                                    break;
                                }
                            }
                            scanner.counts
                        }));
                        to_workers.push(tx);
                    }
                    let worker = (id % to_workers.len() as u64) as usize;
                    // Fails only when the worker is gone; its chunk is then never delivered
                    // and the join below reports it.
                    let _ = to_workers[worker].send((id, buf, len));
                    in_flight += 1;
                }
            }
            if let Some(piece) = last {
                order.pending.push_back(piece);
            }
            while in_flight > 0 && (in_flight >= workers + 2 || eof) {
                let Ok(done) = done_rx.recv() else { break };
                in_flight -= 1;
                order.ready.insert(done.seq, done);
                order.deliver(sink);
            }
            order.deliver(sink);
            if eof {
                break;
            }
        }
        // The loop may end in an over-long last line with chunks still out.
        while in_flight > 0 {
            let Ok(done) = done_rx.recv() else { break };
            in_flight -= 1;
            order.ready.insert(done.seq, done);
        }
        order.deliver(sink);
        drop(to_workers);
        let mut lost = !order.pending.is_empty();
        for handle in handles {
            match handle.join() {
                Ok(counts) => sink.counts(counts),
                Err(_) => lost = true,
            }
        }
        sink.counts(std::mem::take(&mut inline.counts));
        match failure {
            Some(err) => Err(err),
            None if lost => Err(std::io::Error::other("a parsing thread stopped early")),
            None => Ok(()),
        }
    })
}

/// The pieces read so far, handed to the sink strictly in file order.
#[derive(Default)]
struct Order {
    pending: VecDeque<Piece>,
    ready: BTreeMap<u64, Scanned>,
    /// Chunk buffers to reuse.
    free: Vec<Vec<u8>>,
    line_no: u64,
    max_line: usize,
}

impl Order {
    /// Hands over every piece at the front of the queue that is ready.
    fn deliver<L: Lines>(&mut self, sink: &mut L) {
        while let Some(piece) = self.pending.front_mut() {
            match piece {
                Piece::Chunk(want) => {
                    let Some(done) = self.ready.remove(want) else { break };
                    for &(index, start, end) in &done.others {
                        let no = self.line_no + index + 1;
                        let raw = &done.buf[start..end];
                        if raw.len() > self.max_line {
                            sink.too_long(no, raw.len() as u64);
                        } else {
                            sink.line(no, raw.strip_suffix(b"\r").unwrap_or(raw), true);
                        }
                    }
                    for (thread, cycles) in &done.cycles {
                        sink.cycles(*thread, cycles);
                    }
                    self.line_no += done.lines;
                    self.free.push(done.buf);
                }
                Piece::TooLong(bytes) => {
                    self.line_no += 1;
                    sink.too_long(self.line_no, *bytes);
                }
                Piece::Last(bytes) => {
                    self.line_no += 1;
                    let bytes = std::mem::take(bytes);
                    let line = bytes.strip_suffix(b"\r").unwrap_or(&bytes);
                    sink.line(self.line_no, line, false);
                }
            }
            self.pending.pop_front();
            sink.read_up_to(self.line_no);
        }
    }
}

#[cfg(test)]
mod tests;
