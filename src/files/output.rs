//! Checking a path the user names as an output (`--out`, `--emit`) before anything is written,
//! so a bad one is refused as input (exit 2) in one line saying what it is: a dangling
//! symlink, a file or device where a folder is needed, a folder where a file is needed, or a
//! kernel file system (`/proc`, `/sys`) where no file can be created.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// Why a path cannot take rtbuild's output.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OutputError {
    #[error(
        "{flag} `{}` is a symlink to `{}`, which does not exist; fix the link or pass another path",
        .path.display(), .target.display()
    )]
    Dangling { flag: &'static str, path: PathBuf, target: PathBuf },
    #[error(
        "{flag} `{}`: `{}` is {kind}, not a folder; pass a folder (it is created when missing)",
        .path.display(), .at.display()
    )]
    NotAFolder { flag: &'static str, path: PathBuf, at: PathBuf, kind: &'static str },
    #[error("{flag} `{}` is a folder; pass the name of a file to write", .path.display())]
    IsAFolder { flag: &'static str, path: PathBuf },
    #[error(
        "{flag} `{}` is on {fs}, a kernel file system where rtbuild cannot write files; pass a folder on disk",
        .path.display()
    )]
    KernelFs { flag: &'static str, path: PathBuf, fs: &'static str },
}

/// The fix for a failed write, by its cause: a full disk (or quota) and a read-only file
/// system say so; anything else is most likely the folder's permissions.
pub(crate) fn write_fix(cause: &std::io::Error) -> &'static str {
    use rustix::io::Errno;
    match cause.raw_os_error() {
        Some(e) if e == Errno::NOSPC.raw_os_error() || e == Errno::DQUOT.raw_os_error() => {
            "the disk is full (or over quota); free some space and run again"
        }
        Some(e) if e == Errno::ROFS.raw_os_error() => {
            "the file system is read-only; pass a path on a writable one"
        }
        _ => "make sure you may write to that folder",
    }
}

/// What kind of non-folder a file type is.
fn kind(file_type: std::fs::FileType) -> &'static str {
    if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "a file"
    }
}

/// The kernel file system `path` is on, when it is one no file can be created on.
fn kernel_fs(path: &Path) -> Option<&'static str> {
    let stat = rustix::fs::statfs(path).ok()?;
    // From linux/magic.h.
    Some(match stat.f_type as u64 {
        0x9fa0 => "procfs (/proc)",
        0x6265_6572 => "sysfs (/sys)",
        0x6462_6720 => "debugfs",
        0x7472_6163 => "tracefs",
        0x6367_7270 | 0x0027_e0eb => "cgroupfs",
        0x7363_6673 => "securityfs",
        _ => return None,
    })
}

/// Checks that `path` can be an output folder (it need not exist yet).
pub(crate) fn check_folder(flag: &'static str, path: &Path) -> Result<(), OutputError> {
    if let Ok(meta) = path.symlink_metadata()
        && meta.file_type().is_symlink()
        && std::fs::metadata(path).is_err()
    {
        let target = std::fs::read_link(path).unwrap_or_default();
        return Err(OutputError::Dangling { flag, path: path.to_path_buf(), target });
    }
    let Some(existing) = path.ancestors().find(|p| p.exists()) else { return Ok(()) };
    let meta = std::fs::metadata(existing).ok();
    if let Some(meta) = meta.filter(|m| !m.is_dir()) {
        return Err(OutputError::NotAFolder {
            flag,
            path: path.to_path_buf(),
            at: existing.to_path_buf(),
            kind: kind(meta.file_type()),
        });
    }
    if let Some(fs) = kernel_fs(existing) {
        return Err(OutputError::KernelFs { flag, path: path.to_path_buf(), fs });
    }
    Ok(())
}

/// Checks that `path` can be an output file: not a folder, in a folder that can be one.
pub(crate) fn check_file(flag: &'static str, path: &Path) -> Result<(), OutputError> {
    if path.is_dir() {
        return Err(OutputError::IsAFolder { flag, path: path.to_path_buf() });
    }
    match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(dir) => check_folder(flag, dir),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_outputs_are_named_by_what_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let dangling = dir.path().join("d");
        std::os::unix::fs::symlink("nowhere", &dangling).unwrap();
        let err = check_folder("--out", &dangling).unwrap_err().to_string();
        assert!(
            err.ends_with(
                "is a symlink to `nowhere`, which does not exist; fix the link or pass another path"
            ),
            "{err}"
        );
        let err = check_folder("--emit", Path::new("/dev/null")).unwrap_err().to_string();
        assert!(err.contains("`/dev/null` is a character device, not a folder"), "{err}");
        let err = check_folder("--out", Path::new("/proc/sys/kernel")).unwrap_err().to_string();
        assert!(err.contains("is on procfs (/proc)"), "{err}");
        let err = check_file("--out", dir.path()).unwrap_err().to_string();
        assert!(err.ends_with("is a folder; pass the name of a file to write"), "{err}");
        check_folder("--out", &dir.path().join("new/sub")).unwrap();
        check_file("--out", &dir.path().join("job.yaml")).unwrap();
    }
}
