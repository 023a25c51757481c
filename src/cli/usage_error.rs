//! clap's own usage errors, said the rtbuild way: one line, `error: <what>; <how to fix>`, any
//! control character in an echoed value escaped so it cannot split or forge lines.

use std::ffi::OsString;

use clap::CommandFactory;
use clap::error::{ContextKind, ContextValue, ErrorKind};

use super::Cli;

use crate::text::ui::refusal_line;

/// The one-line message for a usage error, without the `error: ` prefix; `None` for what clap
/// prints as help or version (those are not errors, and stay as clap renders them). `args` are
/// the words clap parsed (program name first); they name the subcommand for the help hint.
pub(crate) fn one_line(err: &clap::Error, args: &[OsString]) -> Option<String> {
    let kind = err.kind();
    if matches!(
        kind,
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        return None;
    }
    let command = command_path(args);
    let help = format!("see `{command} --help`");
    let arg = string(err, ContextKind::InvalidArg);
    let value = string(err, ContextKind::InvalidValue);
    let suggestion = string(err, ContextKind::SuggestedArg)
        .or_else(|| strings(err, ContextKind::SuggestedSubcommand).map(|s| s.join("', '")))
        .or_else(|| string(err, ContextKind::SuggestedValue));
    let (what, fix) = match kind {
        ErrorKind::InvalidValue => {
            let what =
                format!("invalid value '{}' for '{}'", value.unwrap_or_default(), arg_or(arg));
            let fix = match strings(err, ContextKind::ValidValue) {
                Some(valid) if !valid.is_empty() => format!("use one of: {}", valid.join(", ")),
                _ => help.clone(),
            };
            (what, fix)
        }
        ErrorKind::ValueValidation => {
            let why = std::error::Error::source(err).map_or(String::new(), |s| format!(": {s}"));
            let what =
                format!("invalid value '{}' for '{}'{why}", value.unwrap_or_default(), arg_or(arg));
            (what, format!("{help} for the values it takes"))
        }
        ErrorKind::UnknownArgument => {
            (format!("unexpected argument '{}'", arg_or(arg)), format!("{help} for its flags"))
        }
        ErrorKind::InvalidSubcommand => (
            format!(
                "unrecognized subcommand '{}'",
                string(err, ContextKind::InvalidSubcommand).unwrap_or_default()
            ),
            format!("{help} for the commands"),
        ),
        ErrorKind::MissingRequiredArgument => {
            let missing = strings(err, ContextKind::InvalidArg).unwrap_or_default();
            let them = if missing.len() == 1 { "it" } else { "them" };
            (format!("missing {}", missing.join(", ")), format!("pass {them}; {help}"))
        }
        ErrorKind::ArgumentConflict => {
            let prior = match err.get(ContextKind::PriorArg) {
                Some(ContextValue::String(s)) => s.clone(),
                Some(ContextValue::Strings(s)) => s.join("', '"),
                _ => "another argument".to_string(),
            };
            (
                format!("'{}' cannot be used with '{prior}'", arg_or(arg)),
                "drop one of them".to_string(),
            )
        }
        ErrorKind::MissingSubcommand => {
            (format!("'{command}' needs a subcommand"), format!("{help} for the commands"))
        }
        _ => (first_line(err), help.clone()),
    };
    let fix = match suggestion {
        Some(s) => format!("did you mean '{s}'? {help}"),
        None => fix,
    };
    // `rtbuild machines NAME`: a board's name where the subcommand goes.
    let word = string(err, ContextKind::InvalidSubcommand);
    let fix = match (command.as_str(), word) {
        ("rtbuild machines", Some(name)) if kind == ErrorKind::InvalidSubcommand => {
            format!("to show one machine, run `rtbuild machines show {name}`")
        }
        _ => fix,
    };
    Some(refusal_line(&format!("{what}; {fix}")))
}

/// `rtbuild test`: the program and the first word that names one of its subcommands.
fn command_path(args: &[OsString]) -> String {
    let cli = Cli::command();
    let sub = args.iter().skip(1).filter_map(|a| a.to_str()).find_map(|word| {
        cli.get_subcommands()
            .find(|c| c.get_name() == word || c.get_all_aliases().any(|a| a == word))
            .map(|c| c.get_name().to_string())
    });
    match sub {
        Some(sub) => format!("rtbuild {sub}"),
        None => "rtbuild".to_string(),
    }
}

fn arg_or(arg: Option<String>) -> String {
    arg.unwrap_or_else(|| "an argument".to_string())
}

fn string(err: &clap::Error, kind: ContextKind) -> Option<String> {
    match err.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(s)) => s.first().cloned(),
        _ => None,
    }
}

fn strings(err: &clap::Error, kind: ContextKind) -> Option<Vec<String>> {
    match err.get(kind) {
        Some(ContextValue::Strings(s)) => Some(s.clone()),
        Some(ContextValue::String(s)) => Some(vec![s.clone()]),
        _ => None,
    }
}

/// clap's own first line, without its `error: ` prefix.
fn first_line(err: &clap::Error) -> String {
    let rendered = err.render().to_string();
    let line = rendered.lines().next().unwrap_or_default();
    line.strip_prefix("error: ").unwrap_or(line).trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::one_line;
    use crate::cli::Cli;

    fn words(args: &[&str]) -> Vec<std::ffi::OsString> {
        std::iter::once("rtbuild").chain(args.iter().copied()).map(Into::into).collect()
    }

    fn said(args: &[&str]) -> String {
        let err = Cli::try_parse_from(words(args)).expect_err("a usage error");
        one_line(&err, &words(args)).expect("an error line")
    }

    #[test]
    fn every_usage_error_is_one_line_with_a_fix() {
        let cases: &[(&[&str], &str)] = &[
            (
                &["test", "--bogus"],
                "unexpected argument '--bogus'; see `rtbuild test --help` for its flags",
            ),
            (
                &["test", "--scenari", "idle"],
                "unexpected argument '--scenari'; did you mean '--scenario'? see `rtbuild test --help`",
            ),
            (
                &["ci", "--format", "gitlab", "--rtbuild-from", "crates"],
                "missing --machines <A,B,…>; pass it; see `rtbuild ci --help`",
            ),
            (
                &["ci", "--format", "gitlab"],
                "missing --rtbuild-from <SOURCE>, --machines <A,B,…>; pass them; see `rtbuild ci --help`",
            ),
            (
                &["report", "--threshold-us", "abc", "x"],
                "invalid value 'abc' for '--threshold-us <US>': invalid float literal; see `rtbuild report --help` for the values it takes",
            ),
            (
                &["ci", "--format", "jenkins", "--machines", "x"],
                "invalid value 'jenkins' for '--format <FORMAT>'; use one of: gitlab, github",
            ),
            (
                &["imag"],
                "unrecognized subcommand 'imag'; did you mean 'image'? see `rtbuild --help`",
            ),
            (
                &["machines", "rb3gen2-core-kit"],
                "unrecognized subcommand 'rb3gen2-core-kit'; to show one machine, run `rtbuild machines show rb3gen2-core-kit`",
            ),
            (
                &["report", "--threshold-us", "7\nx", "f"],
                "invalid value '7\\nx' for '--threshold-us <US>': invalid float literal; see `rtbuild report --help` for the values it takes",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(said(args), *want, "{args:?}");
        }
    }

    #[test]
    fn help_and_version_are_not_errors() {
        for args in [&["--help"][..], &["--version"], &["test", "--help"]] {
            let err = Cli::try_parse_from(words(args)).expect_err("clap stops for help");
            assert_eq!(one_line(&err, &words(args)), None, "{args:?}");
        }
    }
}
