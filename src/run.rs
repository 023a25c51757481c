//! The real entry point: parse the arguments, run the command, print any error once, and map
//! the result to an exit code.

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

use crate::cli::Cli;
use crate::exit::Exit;
use crate::stage_errors::classify;
use crate::ui::Ui;

/// Runs rtbuild with `args` (the first one is the program name) and returns its exit code.
pub fn run(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => {
            if let Some(line) = escaped_value_error(&err) {
                let mut stderr = std::io::stderr().lock();
                let _ = writeln!(stderr, "error: {line}");
                return ExitCode::from(Exit::Usage.code());
            }
            // clap prints help/version to stdout and usage errors to stderr itself.
            let _ = err.print();
            return ExitCode::from(if err.use_stderr() { Exit::Usage.code() } else { 0 });
        }
    };
    let ui = Ui::new(cli.global.ui_options());
    match cli.command.run(&ui) {
        Ok(exit) => exit.into(),
        Err(err) => {
            let exit = classify(&err);
            ui.error(&err, exit);
            exit.into()
        }
    }
}

/// A bad flag value that holds a control character (a newline, an escape sequence) would be
/// echoed raw by clap, splitting or forging lines: say it on one line, the value escaped.
fn escaped_value_error(err: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue};
    let Some(ContextValue::String(value)) = err.get(ContextKind::InvalidValue) else {
        return None;
    };
    if !value.chars().any(char::is_control) {
        return None;
    }
    let arg = match err.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(arg)) => arg.clone(),
        _ => "an argument".to_string(),
    };
    let why = std::error::Error::source(err).map_or(String::new(), |s| format!(": {s}"));
    Some(format!(
        "invalid value '{}' for '{arg}'{why}; see `rtbuild help` for the values it takes",
        crate::ui::escape_controls(value)
    ))
}
