//! Compression formats found around kernel configs and images (gzip, xz, zstd), recognised by
//! their magic bytes, and streaming decoders for them. Used by the config reader, the image
//! scanner and the package readers in `verify`.

use std::io::{self, Read};

/// A compression format, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compression {
    None,
    Gzip,
    Xz,
    Zstd,
}

pub(crate) const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b, 0x08];
pub(crate) const XZ_MAGIC: &[u8] = &[0xfd, b'7', b'z', b'X', b'Z', 0x00];
pub(crate) const ZSTD_MAGIC: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];

impl Compression {
    /// The format whose magic `head` starts with.
    pub(crate) fn detect(head: &[u8]) -> Compression {
        if head.starts_with(GZIP_MAGIC) {
            Compression::Gzip
        } else if head.starts_with(XZ_MAGIC) {
            Compression::Xz
        } else if head.starts_with(ZSTD_MAGIC) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Compression::None => "plain",
            Compression::Gzip => "gzip",
            Compression::Xz => "xz",
            Compression::Zstd => "zstd",
        }
    }

    /// A reader that decompresses `input` (one stream; trailing bytes after it are ignored).
    pub(crate) fn decoder<'a, R: Read + 'a>(self, input: R) -> io::Result<Box<dyn Read + 'a>> {
        Ok(match self {
            Compression::None => Box::new(input),
            Compression::Gzip => Box::new(flate2::read::GzDecoder::new(input)),
            Compression::Xz => Box::new(liblzma::read::XzDecoder::new(input)),
            // One frame; libzstd refuses a frame whose window is over 128 MiB (its default
            // limit), so a hostile header cannot make it allocate more.
            Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(input)?.single_frame()),
        })
    }
}

/// The work one input may cost, shared by every nesting level of it: bytes decompressed in
/// total, and a deadline. A hostile file (64 concatenated zstd frames of 512 MiB of zeros, each
/// holding more of them) spends it and is refused, instead of running for an hour.
#[derive(Debug)]
pub(crate) struct Budget {
    bytes_left: u64,
    deadline: std::time::Instant,
    total: u64,
    time: std::time::Duration,
}

/// Why a budgeted decompression stopped.
#[derive(Debug)]
pub(crate) enum BudgetError {
    /// The stream is cut short or corrupt.
    Corrupt(io::Error),
    /// The input's budget is spent (`total` bytes or `time`).
    Spent { total: u64, time: std::time::Duration },
}

impl Budget {
    pub(crate) fn new(bytes: u64, time: std::time::Duration) -> Budget {
        Budget { bytes_left: bytes, deadline: std::time::Instant::now() + time, total: bytes, time }
    }

    fn spent(&self) -> BudgetError {
        BudgetError::Spent { total: self.total, time: self.time }
    }

    /// Decompresses one stream, at most `limit` bytes of it and never more than the budget
    /// has left. A stream longer than `limit` is cut at `limit`; one
    /// that would overrun the budget or the deadline is [`BudgetError::Spent`]; a stream cut short or
    /// corrupt is [`BudgetError::Corrupt`].
    pub(crate) fn decompress(
        &mut self,
        format: Compression,
        data: &[u8],
        limit: u64,
    ) -> Result<Vec<u8>, BudgetError> {
        if std::time::Instant::now() >= self.deadline {
            return Err(self.spent());
        }
        let decoder = format.decoder(data).map_err(BudgetError::Corrupt)?;
        let allowed = limit.min(self.bytes_left);
        let mut out = Vec::new();
        let mut reader = decoder.take(allowed);
        let mut chunk = vec![0u8; 256 * 1024];
        loop {
            let n = match reader.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(BudgetError::Corrupt(e)),
            };
            out.extend_from_slice(&chunk[..n]);
            // A corrupt stream costs what it produced before it failed, too.
            self.bytes_left -= n as u64;
            if std::time::Instant::now() >= self.deadline {
                return Err(self.spent());
            }
        }
        // Cut by the budget rather than by `limit`: is there more?
        if out.len() as u64 == allowed && allowed < limit {
            let mut rest = reader.into_inner();
            let mut probe = [0u8; 1];
            if matches!(rest.read(&mut probe), Ok(1..)) {
                return Err(self.spent());
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn detects_and_round_trips_gzip() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"CONFIG_X=y\n").unwrap();
        let bytes = gz.finish().unwrap();
        assert_eq!(Compression::detect(&bytes), Compression::Gzip);
        let mut budget = Budget::new(1 << 20, std::time::Duration::from_secs(60));
        assert_eq!(budget.decompress(Compression::Gzip, &bytes, 1 << 20).unwrap(), b"CONFIG_X=y\n");
        assert!(budget.decompress(Compression::Gzip, &bytes[..bytes.len() / 2], 1 << 20).is_err());
    }

    #[test]
    fn zstd_reads_one_frame_and_refuses_a_corrupt_one() {
        let frame = zstd::bulk::compress(b"CONFIG_X=y\n", 1).unwrap();
        let mut two = frame.clone();
        two.extend(zstd::bulk::compress(b"CONFIG_Y=y\n", 1).unwrap());
        assert_eq!(Compression::detect(&two), Compression::Zstd);
        let mut budget = Budget::new(1 << 20, std::time::Duration::from_secs(60));
        assert_eq!(budget.decompress(Compression::Zstd, &two, 1 << 20).unwrap(), b"CONFIG_X=y\n");
        let cut = &frame[..frame.len() - 3];
        assert!(matches!(
            budget.decompress(Compression::Zstd, cut, 1 << 20),
            Err(BudgetError::Corrupt(_))
        ));
    }

    #[test]
    fn detects_xz_and_zstd_magic() {
        assert_eq!(Compression::detect(b"\xfd7zXZ\0rest"), Compression::Xz);
        assert_eq!(Compression::detect(b"\x28\xb5\x2f\xfd.."), Compression::Zstd);
        assert_eq!(Compression::detect(b"CONFIG_"), Compression::None);
    }

    #[test]
    fn a_budget_is_shared_by_every_stream_and_refuses_the_one_that_overruns_it() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&[0u8; 3000]).unwrap();
        let bytes = gz.finish().unwrap();
        let mut budget = Budget::new(7000, std::time::Duration::from_secs(60));
        assert_eq!(budget.decompress(Compression::Gzip, &bytes, 1 << 20).unwrap().len(), 3000);
        // Cut at its own limit: not an overrun.
        assert_eq!(budget.decompress(Compression::Gzip, &bytes, 100).unwrap().len(), 100);
        assert_eq!(budget.decompress(Compression::Gzip, &bytes, 1 << 20).unwrap().len(), 3000);
        // 900 bytes left, the stream holds 3000.
        assert!(matches!(
            budget.decompress(Compression::Gzip, &bytes, 1 << 20),
            Err(BudgetError::Spent { total: 7000, .. })
        ));
        let mut late = Budget::new(1 << 30, std::time::Duration::ZERO);
        assert!(matches!(
            late.decompress(Compression::Gzip, &bytes, 1 << 20),
            Err(BudgetError::Spent { .. })
        ));
        let cut = &bytes[..bytes.len() / 2];
        let mut fresh = Budget::new(1 << 30, std::time::Duration::from_secs(60));
        assert!(matches!(
            fresh.decompress(Compression::Gzip, cut, 1 << 20),
            Err(BudgetError::Corrupt(_))
        ));
    }
}
