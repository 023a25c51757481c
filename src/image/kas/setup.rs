//! `rtbuild setup`: a Python venv with the pinned kas, for users who have none. Two commands,
//! `python3 -m venv DIR` and `DIR/bin/pip install kas==X`, then a version check. The venv's
//! default place is [`find::default_venv`], where kas is looked for last.

use std::path::Path;

use super::error::KasError;
use super::find::{self, Kas};
use super::version::PINNED_KAS;
use crate::host::runner::{Cmd, Runner};
use crate::text::ui::Ui;

/// The commands that create the venv.
pub(crate) fn commands(python: &Path, venv: &Path) -> Vec<Cmd> {
    vec![
        Cmd::new(python).args(["-m", "venv"]).arg(venv),
        Cmd::new(venv.join("bin/pip"))
            .args(["install", "--disable-pip-version-check", "--quiet"])
            .arg(format!("kas=={PINNED_KAS}")),
    ]
}

/// Creates the venv (unless its kas is already the pinned one) and returns its kas.
pub(crate) fn setup(
    python: &Path,
    venv: &Path,
    runner: &dyn Runner,
    ui: &Ui,
) -> Result<Kas, KasError> {
    let kas_path = venv.join("bin/kas");
    if let Ok(found) = find::find(Some(&kas_path), None, runner)
        && found.version.to_string() == PINNED_KAS
    {
        ui.status("Fresh", format!("kas {} in {}", found.version, crate::text::shown_path(venv)));
        return Ok(found);
    }
    for cmd in commands(python, venv) {
        ui.status("Running", &cmd);
        let out = runner.capture(&cmd)?;
        if !out.status.success() {
            return Err(KasError::Run(crate::host::runner::RunError::Status {
                cmd: cmd.to_string(),
                status: crate::host::runner::describe_status(&out.status),
                tail: crate::host::runner::last_lines(&String::from_utf8_lossy(&out.stderr), 20),
                log: None,
            }));
        }
    }
    find::find(Some(&kas_path), None, runner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_pin_kas_and_use_no_shell() {
        let argvs: Vec<Vec<String>> =
            commands(Path::new("python3"), Path::new("/v")).iter().map(Cmd::argv).collect();
        assert_eq!(argvs[0], ["python3", "-m", "venv", "/v"]);
        assert_eq!(
            argvs[1],
            ["/v/bin/pip", "install", "--disable-pip-version-check", "--quiet", "kas==5.5"]
        );
    }
}
