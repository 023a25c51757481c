//! `rtbuild setup`: install the pinned kas into a venv of its own, for users who have no kas.
//! `rtbuild image` finds it there when kas is not on PATH.

use std::path::PathBuf;

use clap::Args;

use super::args::DataHomeArgs;
use crate::cli::error::{Error, Kind, Refusal};
use crate::error::Exit;
use crate::host::runner::{Runner, System};
use crate::image::kas::{find::default_venv, setup};
use crate::text::ui::Ui;

#[derive(Debug, Args)]
pub(crate) struct SetupArgs {
    /// Where to create the venv [default: ~/.local/share/rtbuild/kas-venv].
    #[arg(long, value_name = "DIR")]
    pub venv: Option<PathBuf>,
    /// The Python 3 interpreter to create it with.
    #[arg(long, value_name = "PATH", default_value = "python3")]
    pub python: PathBuf,
    /// Install the Yocto build-host packages (HOSTTOOLS, en_US.UTF-8) with apt-get or dnf
    /// instead of the kas venv; as an ordinary user, print the commands to run as root.
    #[arg(long, conflicts_with_all = ["venv"])]
    pub host: bool,
    /// Print the commands, run nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub data_home: DataHomeArgs,
}

/// `rtbuild setup --host`: run the install as root; otherwise print it for the user to run
/// with sudo (rtbuild never calls sudo itself).
fn host(dry_run: bool, ui: &Ui) -> crate::cli::error::Result<Exit> {
    use crate::image::doctor::host_packages::{Os, setup_commands};
    let os = Os::detect(&std::fs::read_to_string("/etc/os-release").unwrap_or_default());
    let cmds = setup_commands(os);
    if cmds.is_empty() {
        return Err(Refusal::UnknownHostOs.into());
    }
    let root = rustix::process::getuid().is_root();
    if dry_run || !root {
        if !root && !dry_run {
            ui.note("not root: run these commands as root (e.g. with sudo), then `rtbuild doctor`");
        }
        for cmd in &cmds {
            let env: Vec<String> = cmd
                .get_env()
                .iter()
                .filter_map(|(k, v)| {
                    Some(format!("{}={}", k.to_string_lossy(), v.as_ref()?.to_string_lossy()))
                })
                .collect();
            let prefix = if root { String::new() } else { "sudo ".to_string() };
            let env =
                if env.is_empty() { String::new() } else { format!("env {} ", env.join(" ")) };
            ui.out(format!("{prefix}{env}{cmd}"));
        }
        return Ok(Exit::Ok);
    }
    for cmd in &cmds {
        ui.status("Running", cmd);
        let finished = System.interactive(cmd)?;
        if !finished.success() {
            let failed: Error =
                Kind::HostSetup { command: cmd.to_string(), how: finished.describe() }.into();
            ui.error(&failed, failed.code());
            return Ok(Exit::Failed);
        }
    }
    ui.status("Ready", "Yocto build-host packages installed; check with `rtbuild doctor`");
    Ok(Exit::Ok)
}

pub(super) fn run(args: SetupArgs, ui: &Ui) -> crate::cli::error::Result<Exit> {
    if args.host {
        return host(args.dry_run, ui);
    }
    let venv = match args.venv {
        Some(dir) => std::path::absolute(&dir).unwrap_or(dir),
        None => {
            default_venv(args.data_home.env_xdg_data_home.clone(), args.data_home.env_home.clone())
                .ok_or(Refusal::NoHome)?
        }
    };
    if args.dry_run {
        for cmd in setup::commands(&args.python, &venv) {
            ui.out(cmd);
        }
        return Ok(Exit::Ok);
    }
    let kas = setup::setup(&args.python, &venv, &System, ui)?;
    ui.status("Ready", format!("kas {} at {}", kas.version, crate::text::shown_path(&kas.program)));
    ui.note(format!(
        "`rtbuild image` uses it when kas is not on PATH; or add {} to PATH",
        venv.join("bin").display()
    ));
    if ui.json() {
        ui.out_json(
            &serde_json::json!({ "kas": kas.program, "version": kas.version.to_string() }),
        )?;
    } else {
        ui.out(crate::text::shown_path(&kas.program));
    }
    Ok(Exit::Ok)
}
