//! cyclictest's status snapshots: on SIGUSR1 it appends, to its stderr, a block
//!
//! ```text
//! #---------------------------
//! # cyclictest current status:
//! T: 0 ( 6330) P:99 I:1000 C:   3003 Min:      6 Act:   12 Avg:   25 Max:      52
//! #---------------------------
//! ```
//!
//! with one `T:` line per thread. `rtbuild test` asks for one at every progress tick and at
//! each doubling of the elapsed time, and keeps the stderr as `raw/<scenario>.stderr.txt`: the
//! sequence of (cycles, running maximum) pairs per thread says how the maximum grew during a
//! histogram run, which keeps no sample order itself.

use std::collections::BTreeMap;
use std::path::Path;

use super::summary::{self, TLine};
use crate::files::limits::STATUS_LIMIT;

/// The status blocks of one stderr file, per thread.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct StatusSnapshots {
    /// How many `# cyclictest current status:` blocks the file holds.
    pub blocks: u64,
    /// Per thread index (`T: n`): (cycles `C:`, running maximum `Max:`) in file order, each
    /// pair at least the one before in both (a pair that goes back is skipped and counted).
    pub threads: BTreeMap<u32, Vec<(u64, u64)>>,
    /// `T:` lines inside a block that were unreadable, or went back in cycles or maximum.
    pub skipped: u64,
}

/// Reads every status block of `path`, a file that may be hostile: a symlink is refused (rtbuild
/// writes the file itself), a FIFO or device is refused without blocking, the size is bounded
/// by [`STATUS_LIMIT`], and lines are streamed (an over-long one is skipped, never held).
pub(crate) fn read_status_snapshots(path: &Path) -> Result<StatusSnapshots, String> {
    if path.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(format!("`{}` is a symlink, not the file rtbuild wrote", path.display()));
    }
    let file = crate::files::input::open_within(path, STATUS_LIMIT).map_err(|e| e.to_string())?;
    let reader = std::io::BufReader::new(std::io::Read::take(file, STATUS_LIMIT));
    parse_status(reader).map_err(|cause| format!("cannot read `{}`: {cause}", path.display()))
}

/// Every status block of `reader` (a stderr file, or the lines a LAVA job printed between its
/// status markers), per thread; other lines are passed over.
pub(crate) fn parse_status(reader: impl std::io::BufRead) -> std::io::Result<StatusSnapshots> {
    let mut out = StatusSnapshots::default();
    let mut inside = false;
    let status = |out: &mut StatusSnapshots, line: &[u8]| {
        let line = String::from_utf8_lossy(line);
        let Ok(TLine::Summary(s)) = summary::parse(&line) else {
            out.skipped += 1;
            return;
        };
        let (Ok(thread), Some(max)) = (u32::try_from(s.thread), s.max) else {
            out.skipped += 1;
            return;
        };
        if u64::from(thread) >= super::MAX_THREADS {
            out.skipped += 1;
            return;
        }
        let points = out.threads.entry(thread).or_default();
        match points.last() {
            Some(&(cycles, was)) if s.cycles < cycles || max < was => out.skipped += 1,
            // The same figures twice (two signals before one print) are one snapshot.
            Some(&last) if last == (s.cycles, max) => {}
            _ => points.push((s.cycles, max)),
        }
    };
    super::lines::for_each_line(reader, |_, line, _| {
        if line.starts_with(b"# cyclictest current status:") {
            inside = true;
            out.blocks += 1;
        } else if line.starts_with(b"#") || line.trim_ascii().is_empty() {
            inside = false;
        } else if inside && line.starts_with(b"T:") {
            status(&mut out, line);
        }
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Status blocks as cyclictest 2.x prints them on SIGUSR1 (two threads), with other stderr
    /// lines around them and a `T:` line outside any block, which is not a snapshot.
    #[test]
    fn every_status_block_is_read_per_thread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("idle.stderr.txt");
        let text = "WARN: stat /dev/cpu_dma_latency failed\n\
T: 0 ( 9999) P:99 I:1000 C:      1 Min:      1 Act:    1 Avg:    1 Max:     999\n\
#---------------------------\n# cyclictest current status:\n\
T: 0 (20857) P:99 I:1000 C:    989 Min:     21 Act:  191 Avg:   94 Max:      39\n\
T: 1 (20858) P:99 I:1500 C:    660 Min:     58 Act:   13 Avg:   67 Max:      41\n\
#---------------------------\n#---------------------------\n# cyclictest current status:\n\
T: 0 (20857) P:99 I:1000 C:   1972 Min:     21 Act:   62 Avg:  130 Max:      52\n\
T: 1 (20858) P:99 I:1500 C:    600 Min:     31 Act:   72 Avg:   80 Max:      41\n\
T: 7 (20858) P:99 I:1500 C:    garbage\n\
#---------------------------\n";
        crate::files::write::fixture(&path, text).unwrap();
        let s = read_status_snapshots(&path).unwrap();
        assert_eq!(s.blocks, 2);
        assert_eq!(s.threads[&0], vec![(989, 39), (1972, 52)]);
        // Thread 1 went back in cycles: skipped, as is the unreadable line.
        assert_eq!(s.threads[&1], vec![(660, 41)]);
        assert_eq!((s.threads.len(), s.skipped), (2, 2));
    }

    /// A FIFO, a symlink and a file with no block: refused without blocking, or empty.
    #[test]
    fn hostile_or_empty_stderr_files() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::from_raw_mode(0o600))
            .unwrap();
        assert!(read_status_snapshots(&fifo).unwrap_err().contains("is a FIFO"));
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("/etc/hostname", &link).unwrap();
        assert!(read_status_snapshots(&link).unwrap_err().contains("is a symlink"));
        let plain = dir.path().join("plain");
        crate::files::write::fixture(&plain, "# /dev/cpu_dma_latency set to 0us\n").unwrap();
        assert_eq!(read_status_snapshots(&plain).unwrap(), StatusSnapshots::default());
    }
}
