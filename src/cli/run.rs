//! The real entry point: parse the arguments, run the command, print any error once, and map
//! the result to an exit code.

use std::ffi::OsString;
use std::process::ExitCode;

use crate::error::Exit;
use crate::text::ui::Ui;

/// Runs rtbuild with `args` (the first one is the program name) and returns its exit code.
pub fn run(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let args: Vec<OsString> = args.into_iter().collect();
    let cli = match crate::cli::parse(&args) {
        Ok(cli) => cli,
        Err(exit) => return exit,
    };
    let from_env = crate::cli::values_from_environment(&args);
    let ui = Ui::new(cli.global.ui_options());
    // SIGINT, SIGTERM and SIGHUP alike, for every command: a foreground child (an ssh step)
    // gets the signal and is waited for, and rtbuild exits 130 (README, "Exit codes").
    crate::host::runner::signals::install_default();
    let result = cli.command.run(&ui);
    let result = match result {
        // The signal ended the step that was running; say so, whatever that step reported.
        _ if crate::host::runner::signals::interrupted() => match result {
            Err(err) if err.code() == Exit::Interrupted => Err(err),
            _ => Err(crate::error::Interrupted.into()),
        },
        other => other,
    };
    match result {
        Ok(exit) => exit.into(),
        Err(err) => {
            let err = err.naming_environment(&from_env);
            let exit = err.code();
            ui.error(&err, exit);
            exit.into()
        }
    }
}
