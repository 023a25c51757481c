//! The kas release a pip-installed kas declares, read from its files without starting Python.
//!
//! `kas --version` is a full Python start of kas and its imports: about 1.3 s on a loaded
//! 2-core machine, most of `rtbuild image`'s own time on a warm run (issue 27). pip and pipx
//! install kas as a console script (`#!<prefix>/bin/python3` … `from kas.kas import main`)
//! beside the package, whose `kas/__version__.py` holds the `__version__` that `--version`
//! prints. When `program` is such a script, its interpreter exists and exactly one
//! `<prefix>/lib/python3*/site-packages/kas/__version__.py` declares a version, that version is
//! the answer; anything else (a wrapper script, a fake, a system package) returns `None` and the
//! caller runs `--version` as before.

use std::path::{Path, PathBuf};

use super::version::KasVersion;
use crate::files::limits::{SCRIPT_LIMIT, VERSION_FILE_LIMIT};

/// The version kas's package declares, when `program` is pip's console script for it.
pub(crate) fn declared_version(program: &Path) -> Option<KasVersion> {
    let script = crate::files::input::read(program, SCRIPT_LIMIT).ok()?;
    let script = String::from_utf8(script).ok()?;
    let interpreter = console_script_interpreter(&script)?;
    if !is_executable(&interpreter) {
        return None;
    }
    let prefix = interpreter.parent().filter(|bin| bin.ends_with("bin"))?.parent()?;
    let mut found = version_files(&prefix.join("lib"));
    let file = found.pop().filter(|_| found.is_empty())?;
    let text = crate::files::input::read_to_string(&file, VERSION_FILE_LIMIT).ok()?;
    let number = declared(&text)?;
    KasVersion::parse(&format!("kas {number}"))
}

/// The interpreter of pip's console script for kas: an absolute `#!` path (no arguments), and
/// a body that runs `kas.kas.main`.
fn console_script_interpreter(script: &str) -> Option<PathBuf> {
    let first = script.lines().next()?;
    let interpreter = first.strip_prefix("#!")?.trim();
    let runs_kas = script.lines().any(|l| l.trim() == "from kas.kas import main");
    let path = Path::new(interpreter);
    (runs_kas && path.is_absolute() && !interpreter.contains(char::is_whitespace))
        .then(|| path.to_path_buf())
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Every `python3*/site-packages/kas/__version__.py` under `lib`.
fn version_files(lib: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(lib) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
        .map(|e| e.path().join("site-packages/kas/__version__.py"))
        .filter(|p| p.is_file())
        .collect()
}

/// The string of the `__version__ = '…'` line: digits and dots only.
fn declared(text: &str) -> Option<&str> {
    let value = text.lines().find_map(|l| l.strip_prefix("__version__"))?;
    let value = value.trim_start().strip_prefix('=')?.trim();
    let quote = value.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let number = value[1..].strip_suffix(quote)?;
    let plausible = !number.is_empty()
        && number.starts_with(|c: char| c.is_ascii_digit())
        && number.chars().all(|c| c.is_ascii_digit() || c == '.');
    plausible.then_some(number)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = "# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom kas.kas import main\n\
        if __name__ == '__main__':\n    sys.exit(main())\n";

    /// A venv shaped like pip's: `bin/python3`, the console script `bin/kas`, and the package's
    /// `__version__.py` holding `version_line`.
    fn venv(version_line: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        for folder in ["bin", "lib/python3.11/site-packages/kas"] {
            std::fs::create_dir_all(dir.path().join(folder)).unwrap();
        }
        let python = dir.path().join("bin/python3");
        crate::files::write::fixture(&python, "").unwrap();
        set_executable(&python);
        let kas = dir.path().join("bin/kas");
        crate::files::write::fixture(&kas, format!("#!{}\n{SCRIPT}", python.display())).unwrap();
        let package = dir.path().join("lib/python3.11/site-packages/kas/__version__.py");
        crate::files::write::fixture(&package, format!("\"\"\"doc\"\"\"\n{version_line}\n"))
            .unwrap();
        (dir, kas)
    }

    fn set_executable(path: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn a_pip_console_script_declares_its_package_version() {
        let (_dir, kas) = venv("__version__ = '5.5'");
        assert_eq!(declared_version(&kas), Some(KasVersion { major: 5, minor: 5 }));
        let (_dir, kas) = venv("__version__ = \"4.8.1\"");
        assert_eq!(declared_version(&kas), Some(KasVersion { major: 4, minor: 8 }));
    }

    #[test]
    fn a_build_reads_a_pip_kas_without_running_it_and_runs_any_other_recording_fake() {
        use crate::host::runner::Recorder;
        use crate::image::kas::KasError;
        use crate::image::kas::find::find_for_build;
        let runner = Recorder::new("kas 5.5 (configuration format version 23)", 0);
        let (_dir, kas) = venv("__version__ = '5.5'");
        let found = find_for_build(Some(&kas), None, &runner).unwrap();
        assert_eq!(found.version, KasVersion { major: 5, minor: 5 });
        assert!(runner.argvs().is_empty(), "kas was started: {:?}", runner.argvs());
        // The declared release is judged like the answered one.
        let (_dir, old) = venv("__version__ = '4.0'");
        let err = find_for_build(Some(&old), None, &runner).unwrap_err();
        assert!(matches!(err, KasError::TooOld { .. }), "{err}");
        // A kas that is not pip's console script answers `--version`.
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("kas");
        crate::files::write::fixture(&fake, "#!/bin/sh\necho kas 5.5\n").unwrap();
        let found = find_for_build(Some(&fake), None, &runner).unwrap();
        assert_eq!(found.version, KasVersion { major: 5, minor: 5 });
        assert_eq!(runner.argvs().len(), 1, "{:?}", runner.argvs());
    }

    #[test]
    fn anything_else_is_left_to_kas_version() {
        // A version that is not a plain release number.
        for line in ["__version__ = get()", "__version__ = '5.5; rm -rf /'", "__version__ = ''"] {
            let (_dir, kas) = venv(line);
            assert_eq!(declared_version(&kas), None, "{line}");
        }
        // A script that does not run kas (a wrapper, a fake printing a version).
        let (dir, kas) = venv("__version__ = '5.5'");
        let python = dir.path().join("bin/python3");
        crate::files::write::fixture(&kas, format!("#!{}\nprint('kas 5.5')\n", python.display()))
            .unwrap();
        assert_eq!(declared_version(&kas), None);
        crate::files::write::fixture(&kas, "#!/bin/sh\necho kas 5.5\n").unwrap();
        assert_eq!(declared_version(&kas), None);
        // A missing interpreter: only running kas can say what is wrong.
        let (dir, kas) = venv("__version__ = '5.5'");
        std::fs::remove_file(dir.path().join("bin/python3")).unwrap();
        assert_eq!(declared_version(&kas), None);
        // Two Pythons with kas installed: which one the script runs is not guessed.
        let (dir, kas) = venv("__version__ = '5.5'");
        let other = dir.path().join("lib/python3.12/site-packages/kas/__version__.py");
        std::fs::create_dir_all(other.parent().unwrap()).unwrap();
        crate::files::write::fixture(&other, "__version__ = '4.0'\n").unwrap();
        assert_eq!(declared_version(&kas), None);
        // No such file, a folder.
        assert_eq!(declared_version(Path::new("/nonexistent/kas")), None);
        assert_eq!(declared_version(dir.path()), None);
    }
}
