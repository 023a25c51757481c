//! The bundle archive: a tar stream compressed with zstd (`.tar.zst`), made deterministic; or
//! the same tar stream gzipped (`.tar.gz`, [`Compression::Gzip`]), the flavour LAVA's qdl
//! deploy unpacks (it runs gzip on whatever it downloads).
//!
//! Entries are sorted by path, every one is owned by uid/gid 0 with no user or group name, has a
//! fixed mode (0755 folders, 0644 files) and one fixed mtime (`SOURCE_DATE_EPOCH`, else 0).
//! zstd runs multithreaded at a low level: on multi-GB ext4 images it is several times faster
//! than gzip at a similar ratio (figures in docs/release.md). The file is written to a temp
//! file in the output folder and renamed into place; a signal removes the temp file ([`Staged`]).

use std::collections::BTreeMap;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::BundleError;
use crate::files::limits::MAX_KEPT_TOTAL;

/// zstd level: fast, and still about the ratio of gzip -6 on filesystem images.
pub(crate) const ZSTD_LEVEL: i32 = 3;

/// How the tar stream is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Compression {
    #[default]
    Zstd,
    Gzip,
}

impl Compression {
    /// The archive's extension.
    pub(crate) fn extension(self) -> &'static str {
        match self {
            Compression::Zstd => "tar.zst",
            Compression::Gzip => "tar.gz",
        }
    }
}

/// gzip level: the default of gzip(1) and of meta-qcom's `qcomflash.tar.gz`.
const GZIP_LEVEL: u32 = 6;

/// The compressing writer of either kind.
enum Encoder<W: Write> {
    Zstd(zstd::stream::write::Encoder<'static, W>),
    Gzip(flate2::write::GzEncoder<W>),
}

impl<W: Write> Write for Encoder<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Encoder::Zstd(e) => e.write(buf),
            Encoder::Gzip(e) => e.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Encoder::Zstd(e) => e.flush(),
            Encoder::Gzip(e) => e.flush(),
        }
    }
}

impl<W: Write> Encoder<W> {
    fn new(out: W, compression: Compression) -> std::io::Result<Encoder<W>> {
        Ok(match compression {
            Compression::Zstd => {
                let mut encoder = zstd::stream::write::Encoder::new(out, ZSTD_LEVEL)?;
                let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
                encoder.multithread(threads.max(1))?;
                encoder.include_checksum(true)?;
                Encoder::Zstd(encoder)
            }
            // No file name and mtime 0 in the gzip header: the same bytes every time.
            Compression::Gzip => Encoder::Gzip(
                flate2::GzBuilder::new().mtime(0).write(out, flate2::Compression::new(GZIP_LEVEL)),
            ),
        })
    }

    fn finish(self) -> std::io::Result<W> {
        match self {
            Encoder::Zstd(e) => e.finish(),
            Encoder::Gzip(e) => e.finish(),
        }
    }
}

/// Where an entry's bytes come from.
#[derive(Debug, Clone)]
pub(super) enum EntryContent {
    File { path: PathBuf, sha256: String },
    Bytes(Vec<u8>),
}

/// A written archive in a temp file beside its final name; removed when dropped, or when a
/// signal ends rtbuild, until [`Staged::persist`].
pub(super) struct Staged {
    tmp: tempfile::NamedTempFile,
    _on_signal: crate::host::runner::signals::RemoveOnSignal,
}

impl Staged {
    /// Renames the archive to `out` (call it inside a [`crate::host::runner::signals::critical`]
    /// section with the writes that belong with it).
    pub(super) fn persist(self, out: &Path) -> Result<(), BundleError> {
        let Staged { tmp, _on_signal } = self;
        tmp.persist(out)
            .map_err(|e| BundleError::Write { path: out.to_path_buf(), cause: e.error })?;
        Ok(())
    }
}

/// Writes `files` (path inside `top` → source) deterministically into a temp file beside
/// `out`, to be renamed to `out` with [`Staged::persist`].
pub(super) fn write(
    out: &Path,
    top: &str,
    files: &BTreeMap<String, EntryContent>,
    mtime: u64,
    compression: Compression,
) -> Result<Staged, BundleError> {
    let write_err = |source| BundleError::Write { path: out.to_path_buf(), cause: source };
    let dir = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    // Created and registered for removal with no signal in between.
    let (tmp, on_signal) = {
        let _section = crate::host::runner::signals::critical();
        // Created through std: tempfile's own creation adds ` at path "/x/.rtbuild-AbC12"` to
        // its errors, naming rtbuild's temp file where the message names `out`.
        let tmp = tempfile::Builder::new()
            .prefix(".rtbuild-")
            .make_in(dir, |path| {
                use std::os::unix::fs::OpenOptionsExt;
                std::fs::OpenOptions::new().write(true).create_new(true).mode(0o644).open(path)
            })
            .map_err(write_err)?;
        let on_signal = crate::host::runner::signals::remove_on_signal(tmp.path());
        (tmp, on_signal)
    };
    let file = tmp.as_file().try_clone().map_err(write_err)?;
    let encoder = Encoder::new(BufWriter::new(file), compression).map_err(write_err)?;
    let mut tar = tar::Builder::new(encoder);
    tar.mode(tar::HeaderMode::Deterministic);

    for (path, kind) in entries(top, files) {
        let mut header = tar::Header::new_gnu();
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(mtime);
        match kind {
            None => {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_mode(0o755);
                header.set_size(0);
                tar.append_data(&mut header, &path, std::io::empty()).map_err(write_err)?;
            }
            Some(EntryContent::Bytes(bytes)) => {
                header.set_entry_type(tar::EntryType::Regular);
                header.set_mode(0o644);
                header.set_size(bytes.len() as u64);
                tar.append_data(&mut header, &path, bytes.as_slice()).map_err(write_err)?;
            }
            Some(EntryContent::File { path: source, sha256 }) => {
                let read_err = |e| BundleError::Read { path: source.clone(), cause: e };
                let file = std::fs::File::open(source).map_err(read_err)?;
                let size = file.metadata().map_err(read_err)?.len();
                header.set_entry_type(tar::EntryType::Regular);
                header.set_mode(0o644);
                header.set_size(size);
                let mut reader = HashingReader::new(file.take(size));
                tar.append_data(&mut header, &path, &mut reader).map_err(write_err)?;
                if reader.finish() != *sha256 {
                    return Err(BundleError::Changed { path: source.clone() });
                }
            }
        }
    }
    let encoder = tar.into_inner().map_err(write_err)?;
    let mut buffered = encoder.finish().map_err(write_err)?;
    buffered.flush().map_err(write_err)?;
    drop(buffered);
    tmp.as_file().sync_all().map_err(write_err)?;
    Ok(Staged { tmp, _on_signal: on_signal })
}

/// Every archive path in order: the top folder, sub-folders and files, sorted. `None` marks a
/// folder.
fn entries<'a>(
    top: &str,
    files: &'a BTreeMap<String, EntryContent>,
) -> BTreeMap<String, Option<&'a EntryContent>> {
    let mut all = BTreeMap::new();
    all.insert(format!("{top}/"), None);
    for (path, source) in files {
        let mut parent = Path::new(path.as_str()).parent();
        while let Some(dir) = parent.filter(|d| !d.as_os_str().is_empty()) {
            all.insert(format!("{top}/{}/", dir.display()), None);
            parent = dir.parent();
        }
        all.insert(format!("{top}/{path}"), Some(source));
    }
    all
}

/// A reader that hashes what passes through it.
pub(super) struct HashingReader<R> {
    inner: R,
    hasher: Sha256,
    pub bytes: u64,
}

impl<R: Read> HashingReader<R> {
    pub(super) fn new(inner: R) -> HashingReader<R> {
        HashingReader { inner, hasher: Sha256::new(), bytes: 0 }
    }

    /// The hex sha256 of everything read.
    pub(super) fn finish(self) -> String {
        hex(&self.hasher.finalize())
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
}

/// sha256 and size of a file, streamed.
pub(super) fn hash_file(path: &Path) -> Result<(u64, String), BundleError> {
    let read_err = |source| BundleError::Read { path: path.to_path_buf(), cause: source };
    let (file, _) = crate::files::input::open(path).map_err(BundleError::Input)?;
    let mut reader = HashingReader::new(file);
    std::io::copy(&mut reader, &mut std::io::sink()).map_err(read_err)?;
    let size = reader.bytes;
    Ok((size, reader.finish()))
}

use crate::files::digest::hex;
pub(super) use crate::files::digest::sha256_hex;

/// One regular file read back from an archive.
#[derive(Debug, Clone)]
pub(super) struct ReadEntry {
    pub size: u64,
    pub sha256: String,
    /// The bytes, kept only for small metadata files.
    pub bytes: Option<Vec<u8>>,
}

/// Everything in an archive: regular files (full path → entry) and other entry paths.
#[derive(Debug, Default)]
pub(super) struct ReadArchive {
    pub files: BTreeMap<String, ReadEntry>,
    pub dirs: Vec<String>,
    pub others: Vec<String>,
}

/// The most entries an archive may have (a bundle holds tens of files; each entry read is
/// remembered).
pub(super) const MAX_ENTRIES: usize = 100_000;

/// Reads `path` (a `.tar.zst`, or a `.tar.gz`: told apart by their first bytes), hashing every file and keeping in memory the files for which
/// `keep` gives a size limit (each at most that, else [`BundleError::MemberTooBig`]).
pub(super) fn read(
    path: &Path,
    keep: &dyn Fn(&str) -> Option<u64>,
) -> Result<ReadArchive, BundleError> {
    let bad = |cause: std::io::Error| BundleError::Unreadable { path: path.to_path_buf(), cause };
    let (file, _) = crate::files::input::open(path).map_err(BundleError::Input)?;
    let mut file = std::io::BufReader::new(file);
    let gzip = std::io::BufRead::fill_buf(&mut file).map_err(bad)?.starts_with(&[0x1f, 0x8b]);
    let decoder: Box<dyn Read> = if gzip {
        Box::new(flate2::bufread::GzDecoder::new(file))
    } else {
        Box::new(zstd::stream::read::Decoder::with_buffer(file).map_err(bad)?)
    };
    let mut archive = tar::Archive::new(decoder);
    let mut out = ReadArchive::default();
    let too_big = |what: String| BundleError::TooBig { path: path.to_path_buf(), what };
    // What may still be kept in memory, over all members.
    let mut budget = MAX_KEPT_TOTAL;
    for (count, entry) in archive.entries().map_err(bad)?.enumerate() {
        if count >= MAX_ENTRIES {
            return Err(too_big(format!("it has over {MAX_ENTRIES} entries")));
        }
        let mut entry = entry.map_err(bad)?;
        let name = entry.path().map_err(bad)?.to_string_lossy().into_owned();
        match entry.header().entry_type() {
            tar::EntryType::Directory => out.dirs.push(name),
            tar::EntryType::Regular => {
                let wanted = keep(&name);
                let mut reader = HashingReader::new(&mut entry);
                let bytes = if let Some(limit) = wanted {
                    let mut buf = Vec::new();
                    let within = limit.min(budget);
                    (&mut reader).take(within + 1).read_to_end(&mut buf).map_err(bad)?;
                    if buf.len() as u64 > limit {
                        return Err(BundleError::MemberTooBig {
                            path: path.to_path_buf(),
                            member: name,
                            limit,
                        });
                    }
                    if buf.len() as u64 > budget {
                        return Err(too_big(format!(
                            "its members read into memory hold over {} MiB",
                            MAX_KEPT_TOTAL >> 20
                        )));
                    }
                    budget -= buf.len() as u64;
                    Some(buf)
                } else {
                    std::io::copy(&mut reader, &mut std::io::sink()).map_err(bad)?;
                    None
                };
                let size = reader.bytes;
                out.files.insert(name, ReadEntry { size, sha256: reader.finish(), bytes });
            }
            _ => out.others.push(name),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bundle whose folder cannot take a new file (`/proc/1` refuses one even to root) is
    /// refused naming the archive the user asked for with the system's own error, never the
    /// temp file rtbuild would have written first.
    #[test]
    fn an_archive_that_cannot_be_created_names_the_archive_not_a_temp_file() {
        let out = Path::new("/proc/1/release.tar.zst");
        let system = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open("/proc/1/.rtbuild-probe")
            .unwrap_err();
        let Err(err) = write(out, "release", &BTreeMap::new(), 0, Compression::Zstd) else {
            panic!("an archive was created in /proc/1");
        };
        let message = err.to_string();
        assert!(
            message.starts_with(&format!("cannot write /proc/1/release.tar.zst: {system}; ")),
            "{message}"
        );
        assert!(!message.contains(".rtbuild-"), "{message}");
    }
}
