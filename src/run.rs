//! The real entry point: parse the arguments, run the command, print any error once, and map
//! the result to an exit code.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

use crate::cli::Cli;
use crate::exit::{Exit, classify};
use crate::ui::Ui;

/// Runs rtbuild with `args` (the first one is the program name) and returns its exit code.
pub fn run(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => {
            // clap prints help/version to stdout and usage errors to stderr itself.
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() { Exit::Usage.code() } else { 0 });
        }
    };
    let ui = Ui::new(cli.global.ui_options());
    match cli.command.run(&ui) {
        Ok(exit) => exit.into(),
        Err(err) => {
            ui.error(&err);
            classify(&err).into()
        }
    }
}
