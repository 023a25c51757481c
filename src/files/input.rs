//! Opening a file rtbuild was given, or found named in another file, that may be hostile: a
//! FIFO (an open for reading would block until a writer comes, and a read until it writes), a
//! device (`/dev/zero` never ends), a socket, a folder, a dangling symlink, or simply huge.
//!
//! Every reader of input goes through here: the file is opened with `O_NONBLOCK` (so opening a
//! FIFO returns at once), checked on the open descriptor to be a regular file (so a name
//! swapped after a check cannot slip a FIFO in), and read with a size limit. Anything else is
//! one [`InputError`] that says what the path is ("`x` is a FIFO, not a file").

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The limit for text files rtbuild reads whole; every other limit sits beside it in
/// [`crate::files::limits`].
pub(crate) use crate::files::limits::TEXT_LIMIT;

/// Why an input file cannot be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InputError {
    #[error("`{}` does not exist; check the path", .path.display())]
    Missing { path: PathBuf },
    #[error(
        "`{}` is a symlink to `{}`, which does not exist; fix the link or pass the file itself",
        .path.display(), .target.display()
    )]
    DanglingLink { path: PathBuf, target: PathBuf },
    #[error("`{}` is a folder, not a file; pass a file", .path.display())]
    Folder { path: PathBuf },
    #[error("`{}` is {kind}, not a file; pass a regular file", .path.display())]
    Special { path: PathBuf, kind: &'static str },
    #[error(
        "`{}` is over {} MiB, more than rtbuild reads from such a file; pass the right file",
        .path.display(), .limit >> 20
    )]
    TooBig { path: PathBuf, limit: u64 },
    #[error("`{}` is not UTF-8 text; pass a text file", .path.display())]
    NotText { path: PathBuf },
    #[error("cannot read `{}`: {cause}; check that it is readable", .path.display())]
    Unreadable { path: PathBuf, cause: io::Error },
}

/// What a file type is, for a message: `a FIFO`, `a character device`, …; `None` for a regular
/// file.
fn special_kind(kind: std::fs::FileType) -> Option<&'static str> {
    if kind.is_file() {
        None
    } else if kind.is_dir() {
        Some("a folder")
    } else if kind.is_fifo() {
        Some("a FIFO")
    } else if kind.is_char_device() {
        Some("a character device")
    } else if kind.is_block_device() {
        Some("a block device")
    } else if kind.is_socket() {
        Some("a socket")
    } else {
        Some("not a regular file")
    }
}

fn refuse(path: &Path, kind: std::fs::FileType) -> Option<InputError> {
    let path = path.to_path_buf();
    match special_kind(kind)? {
        "a folder" => Some(InputError::Folder { path }),
        kind => Some(InputError::Special { path, kind }),
    }
}

/// The error for a path that could not be opened or is not there.
fn missing_or_unreadable(path: &Path, cause: io::Error) -> InputError {
    if cause.kind() == io::ErrorKind::NotFound {
        if let Ok(target) = std::fs::read_link(path) {
            return InputError::DanglingLink { path: path.to_path_buf(), target };
        }
        return InputError::Missing { path: path.to_path_buf() };
    }
    // A socket cannot be opened (ENXIO): say what it is.
    if let Ok(meta) = std::fs::metadata(path)
        && let Some(refusal) = refuse(path, meta.file_type())
    {
        return refusal;
    }
    InputError::Unreadable { path: path.to_path_buf(), cause }
}

/// The first symlink on the way from `dir` to `dir/relative` (the part of `relative` that is
/// the link, and where it points), if any: a file a result folder names must be in the folder,
/// and a link in it could point anywhere (`/etc/shadow`, `/dev/zero`), or nowhere.
pub(crate) fn link_within(dir: &Path, relative: &Path) -> Option<(PathBuf, PathBuf)> {
    let mut part = PathBuf::new();
    for component in relative.components() {
        part.push(component);
        let meta = dir.join(&part).symlink_metadata().ok()?;
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(dir.join(&part)).unwrap_or_default();
            return Some((part, target));
        }
    }
    None
}

/// Checks that `path` is a regular file (through symlinks) without opening it: for a path
/// rtbuild hands to another program or copies (a fragment, a patch).
pub(crate) fn check_file(path: &Path) -> Result<(), InputError> {
    let meta = std::fs::metadata(path).map_err(|cause| missing_or_unreadable(path, cause))?;
    match refuse(path, meta.file_type()) {
        Some(refusal) => Err(refusal),
        None => Ok(()),
    }
}

/// Opens `path` for reading without blocking and checks, on the open file, that it is a
/// regular file. Returns it with its size.
pub(crate) fn open(path: &Path) -> Result<(File, u64), InputError> {
    #[cfg(test)]
    opens::count(path);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(|cause| missing_or_unreadable(path, cause))?;
    let meta = file
        .metadata()
        .map_err(|cause| InputError::Unreadable { path: path.to_path_buf(), cause })?;
    if let Some(refusal) = refuse(path, meta.file_type()) {
        return Err(refusal);
    }
    Ok((file, meta.len()))
}

/// Opens `path` like [`open`] and refuses it when it is bigger than `limit`: for readers that
/// stream the file.
pub(crate) fn open_within(path: &Path, limit: u64) -> Result<File, InputError> {
    let (file, len) = open(path)?;
    if len > limit {
        return Err(InputError::TooBig { path: path.to_path_buf(), limit });
    }
    Ok(file)
}

/// The whole of `path`, at most `limit` bytes (a bigger file, or one that grows past `limit`
/// while it is read, is refused).
pub(crate) fn read(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let file = open_within(path, limit)?;
    let mut data = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut data)
        .map_err(|cause| InputError::Unreadable { path: path.to_path_buf(), cause })?;
    if data.len() as u64 > limit {
        return Err(InputError::TooBig { path: path.to_path_buf(), limit });
    }
    Ok(data)
}

/// [`read`] as UTF-8 text.
pub(crate) fn read_to_string(path: &Path, limit: u64) -> Result<String, InputError> {
    String::from_utf8(read(path, limit)?)
        .map_err(|_| InputError::NotText { path: path.to_path_buf() })
}

/// An input opened once, with its first bytes read so that a reader can tell what it is
/// ([`crate::results::input`]); the rest is read from the same open file, never by opening
/// the path again.
#[derive(Debug)]
pub(crate) struct Opened {
    path: PathBuf,
    file: File,
    len: u64,
    head: Vec<u8>,
    /// The file held more than the head: the head stopped at the bytes asked for.
    cut: bool,
}

impl Opened {
    /// Opens `path` like [`open`] and reads its first `head` bytes (all of a smaller file).
    pub(crate) fn open(path: &Path, head: usize) -> Result<Opened, InputError> {
        let (file, len) = open(path)?;
        let mut first = Vec::with_capacity(head.min(len as usize));
        (&file)
            .take(head as u64)
            .read_to_end(&mut first)
            .map_err(|cause| InputError::Unreadable { path: path.to_path_buf(), cause })?;
        let cut = first.len() == head;
        Ok(Opened { path: path.to_path_buf(), file, len, head: first, cut })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The first bytes, as many as [`Opened::open`] was asked for when the file has them.
    pub(crate) fn head(&self) -> &[u8] {
        &self.head
    }

    /// Whether the head stopped at the bytes asked for (its last line may be cut).
    pub(crate) fn cut(&self) -> bool {
        self.cut
    }

    /// The whole file, at most `limit` bytes, as [`read`] refuses a bigger one.
    pub(crate) fn read_all(self, limit: u64) -> Result<Vec<u8>, InputError> {
        let too_big = || InputError::TooBig { path: self.path.clone(), limit };
        if self.len > limit || self.head.len() as u64 > limit {
            return Err(too_big());
        }
        let mut data = self.head.clone();
        (&self.file)
            .take(limit + 1 - data.len() as u64)
            .read_to_end(&mut data)
            .map_err(|cause| InputError::Unreadable { path: self.path.clone(), cause })?;
        if data.len() as u64 > limit {
            return Err(too_big());
        }
        Ok(data)
    }

    /// Reads on into the head until it holds the whole file or more than `limit` bytes;
    /// whether it holds the whole file. The file is still read from its start afterwards.
    pub(crate) fn fill(&mut self, limit: u64) -> Result<bool, InputError> {
        let want = (limit + 1).saturating_sub(self.head.len() as u64);
        (&self.file)
            .take(want)
            .read_to_end(&mut self.head)
            .map_err(|cause| InputError::Unreadable { path: self.path.clone(), cause })?;
        let whole = self.head.len() as u64 <= limit;
        self.cut = !whole;
        Ok(whole)
    }

    /// [`Opened::read_all`] as UTF-8 text.
    pub(crate) fn read_to_string(self, limit: u64) -> Result<String, InputError> {
        let path = self.path.clone();
        String::from_utf8(self.read_all(limit)?).map_err(|_| InputError::NotText { path })
    }

    /// The whole file as a stream, the head first: for readers that stream it.
    pub(crate) fn into_reader(self) -> io::Chain<io::Cursor<Vec<u8>>, File> {
        io::Cursor::new(self.head).chain(self.file)
    }
}

/// A test's count of the files [`open`] opened on its thread: the proof that a command opens
/// each input once.
#[cfg(test)]
pub(crate) mod opens {
    use std::cell::RefCell;
    use std::path::{Path, PathBuf};

    thread_local! {
        static OPENED: RefCell<Option<Vec<PathBuf>>> = const { RefCell::new(None) };
    }

    pub(super) fn count(path: &Path) {
        OPENED.with(|opened| {
            if let Some(list) = opened.borrow_mut().as_mut() {
                list.push(path.to_path_buf());
            }
        });
    }

    /// Runs `f` and returns what it gave with every path opened on this thread meanwhile, in
    /// order, a path opened twice twice.
    pub(crate) fn during<T>(f: impl FnOnce() -> T) -> (T, Vec<PathBuf>) {
        OPENED.with(|opened| *opened.borrow_mut() = Some(Vec::new()));
        let out = f();
        let list = OPENED.with(|opened| opened.borrow_mut().take()).unwrap_or_default();
        (out, list)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_regular_file_within_its_limit_only() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        crate::files::write::fixture(&file, "hello\n").unwrap();
        assert_eq!(read_to_string(&file, 6).unwrap(), "hello\n");
        assert!(matches!(read(&file, 5), Err(InputError::TooBig { limit: 5, .. })));
        crate::files::write::fixture(&file, b"\xff\xfe").unwrap();
        assert!(matches!(read_to_string(&file, 6), Err(InputError::NotText { .. })));
    }

    /// Each special kind is named, and none blocks: a FIFO with no writer, `/dev/zero`, a
    /// symlink to it, a folder, a socket, a dangling symlink, nothing at all.
    #[test]
    fn special_files_are_named_and_never_block() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::from_raw_mode(0o600))
            .unwrap();
        let socket = dir.path().join("sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let zero_link = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero_link).unwrap();
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink("gone", &dangling).unwrap();
        let cases: [(&Path, &str); 7] = [
            (&fifo, "is a FIFO, not a file; pass a regular file"),
            (Path::new("/dev/zero"), "is a character device, not a file; pass a regular file"),
            (&zero_link, "is a character device, not a file; pass a regular file"),
            (dir.path(), "is a folder, not a file; pass a file"),
            (&socket, "is a socket, not a file; pass a regular file"),
            (&dangling, "is a symlink to `gone`, which does not exist"),
            (&dir.path().join("none"), "does not exist; check the path"),
        ];
        for (path, want) in cases {
            let err = read(path, TEXT_LIMIT).unwrap_err().to_string();
            assert!(err.starts_with(&format!("`{}` {want}", path.display())), "{err}");
            let err = check_file(path).unwrap_err().to_string();
            assert!(err.starts_with(&format!("`{}` {want}", path.display())), "{err}");
        }
    }
}
