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
            Compression::Zstd => Box::new(
                ruzstd::decoding::StreamingDecoder::new(input)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?,
            ),
        })
    }
}

/// Decompresses `data` (a stream in `format`) into memory, reading at most `limit` bytes of
/// output. A stream cut short or corrupt is an error.
pub(crate) fn decompress(format: Compression, data: &[u8], limit: u64) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    format.decoder(data)?.take(limit).read_to_end(&mut out)?;
    Ok(out)
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
        assert_eq!(decompress(Compression::Gzip, &bytes, 1 << 20).unwrap(), b"CONFIG_X=y\n");
        assert!(decompress(Compression::Gzip, &bytes[..bytes.len() / 2], 1 << 20).is_err());
    }

    #[test]
    fn detects_xz_and_zstd_magic() {
        assert_eq!(Compression::detect(b"\xfd7zXZ\0rest"), Compression::Xz);
        assert_eq!(Compression::detect(b"\x28\xb5\x2f\xfd.."), Compression::Zstd);
        assert_eq!(Compression::detect(b"CONFIG_"), Compression::None);
    }
}
