//! `rtbuild setup`: a Python venv with the pinned kas, for users who have none. Two commands,
//! `python3 -m venv DIR` and `DIR/bin/pip install kas==X`, then a version check.

use std::path::{Path, PathBuf};

use super::BuildError;
use super::kas::{self, Kas, PINNED_KAS};
use crate::runner::{Cmd, Runner};
use crate::ui::Ui;

/// Where `rtbuild setup` puts the venv by default: `$XDG_DATA_HOME/rtbuild/kas-venv`, else
/// `~/.local/share/rtbuild/kas-venv`.
pub(crate) fn default_venv(
    xdg_data_home: Option<PathBuf>,
    home: Option<PathBuf>,
) -> Option<PathBuf> {
    let base = xdg_data_home
        .filter(|p| p.is_absolute())
        .or_else(|| home.map(|h| h.join(".local/share")))?;
    Some(base.join("rtbuild/kas-venv"))
}

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
) -> Result<Kas, BuildError> {
    let kas_path = venv.join("bin/kas");
    if let Ok(found) = kas::find(Some(&kas_path), None, runner)
        && found.version.to_string() == PINNED_KAS
    {
        ui.status("Fresh", format!("kas {} in {}", found.version, venv.display()));
        return Ok(found);
    }
    for cmd in commands(python, venv) {
        ui.status("Running", &cmd);
        let out = runner.capture(&cmd)?;
        if !out.status.success() {
            return Err(BuildError::Run(crate::runner::RunError::Status {
                cmd: cmd.to_string(),
                status: crate::runner::describe_status(&out.status),
                tail: crate::runner::last_lines(&String::from_utf8_lossy(&out.stderr), 20),
                log: None,
            }));
        }
    }
    kas::find(Some(&kas_path), None, runner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_venv_follows_xdg_then_home() {
        assert_eq!(
            default_venv(Some("/x".into()), Some("/h".into())),
            Some("/x/rtbuild/kas-venv".into())
        );
        assert_eq!(
            default_venv(Some("rel".into()), Some("/h".into())),
            Some("/h/.local/share/rtbuild/kas-venv".into())
        );
        assert_eq!(default_venv(None, None), None);
    }

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
