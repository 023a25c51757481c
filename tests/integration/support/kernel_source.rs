//! Debian's `linux-source-6.12` (installed by `.ci/setup`), for the tests that need a real
//! kernel tree: its Kconfig files, `scripts/`, the arm64 configs and `kernel/configs/`, unpacked once into
//! `target/tmp/linux-source-6.12` (about 25 MB; xz needs about 20 s of CPU to get there). The
//! unpacking goes to a private folder first and is renamed into place, so parallel tests and test
//! processes never see half a tree.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const KERNEL_TARBALL: &str = "/usr/src/linux-source-6.12.tar.xz";

/// The unpacked subset; fails loudly when the package is missing.
pub(crate) fn kernel_tree() -> PathBuf {
    static TREE: OnceLock<PathBuf> = OnceLock::new();
    TREE.get_or_init(unpack).clone()
}

fn complete(tree: &Path) -> bool {
    tree.join(".rtbuild-complete").is_file()
}

fn unpack() -> PathBuf {
    // `-2`: the subset grew (kernel/configs); an older unpacked subset lacks it.
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kernel-source-2");
    let tree = root.join("linux-source-6.12");
    if complete(&tree) {
        return tree;
    }
    assert!(
        Path::new(KERNEL_TARBALL).is_file(),
        "{KERNEL_TARBALL} is missing; run `bash .ci/setup` (it installs linux-source-6.12)"
    );
    std::fs::create_dir_all(&root).unwrap();
    let private = tempfile::Builder::new().prefix("unpack").tempdir_in(&root).unwrap();
    let out = Command::new("tar")
        .args(["-xJf", KERNEL_TARBALL, "--wildcards"])
        .args(["*Kconfig*", "*/Makefile*", "linux-source-6.12/scripts/*"])
        .args(["linux-source-6.12/init/*", "linux-source-6.12/include/*"])
        .args(["linux-source-6.12/kernel/configs/*"])
        .args(["linux-source-6.12/arch/arm64/configs/*", "linux-source-6.12/arch/arm64/tools/*"])
        .current_dir(private.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "tar: {}", String::from_utf8_lossy(&out.stderr));
    let unpacked = private.path().join("linux-source-6.12");
    std::fs::write(unpacked.join(".rtbuild-complete"), "").unwrap();
    // Another process may have won the race; its tree is as good as ours.
    if std::fs::rename(&unpacked, &tree).is_err() {
        assert!(complete(&tree), "could not move the unpacked tree to {}", tree.display());
    }
    tree
}

/// The 1-based line of the first line of `file` (relative to the tree) that, trimmed, is
/// `text`: read from the real file, so tests state what the kernel says, not what rtbuild says.
pub(crate) fn line_of(file: &str, text: &str) -> usize {
    line_after(file, 0, text)
}

/// Like [`line_of`], searching only below line `after` (e.g. the `config X` line of an entry).
pub(crate) fn line_after(file: &str, after: usize, text: &str) -> usize {
    let content = std::fs::read_to_string(kernel_tree().join(file)).unwrap();
    content
        .lines()
        .enumerate()
        .skip(after)
        .find(|(_, l)| l.trim() == text)
        .unwrap_or_else(|| panic!("`{text}` is not a line of {file} below line {after}"))
        .0
        + 1
}
