//! `rtbuild setup`: install the pinned kas into a venv of its own, for users who have no kas.
//! `rtbuild image` finds it there when kas is not on PATH.

use std::path::PathBuf;

use clap::Args;

use crate::build::setup;
use crate::exit::{Exit, InputError};
use crate::runner::System;
use crate::ui::Ui;

#[derive(Debug, Args)]
pub struct SetupArgs {
    /// Where to create the venv [default: ~/.local/share/rtbuild/kas-venv].
    #[arg(long, value_name = "DIR")]
    pub venv: Option<PathBuf>,
    /// The Python 3 interpreter to create it with.
    #[arg(long, value_name = "PATH", default_value = "python3")]
    pub python: PathBuf,
    /// Print the commands, run nothing.
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(args: SetupArgs, ui: &Ui) -> anyhow::Result<Exit> {
    let venv = match args.venv {
        Some(dir) => std::path::absolute(&dir).unwrap_or(dir),
        None => setup::default_venv(
            std::env::var_os("XDG_DATA_HOME").map(PathBuf::from),
            std::env::var_os("HOME").map(PathBuf::from),
        )
        .ok_or_else(|| InputError::msg("HOME is not set; pass --venv DIR"))?,
    };
    if args.dry_run {
        for cmd in setup::commands(&args.python, &venv) {
            ui.out(cmd);
        }
        return Ok(Exit::Ok);
    }
    let kas = setup::setup(&args.python, &venv, &System, ui)?;
    ui.status("Ready", format!("kas {} at {}", kas.version, kas.program.display()));
    ui.note(format!(
        "`rtbuild image` uses it when kas is not on PATH; or add {} to PATH",
        venv.join("bin").display()
    ));
    if ui.json() {
        ui.out_json(
            &serde_json::json!({ "kas": kas.program, "version": kas.version.to_string() }),
        )?;
    } else {
        ui.out(kas.program.display());
    }
    Ok(Exit::Ok)
}
