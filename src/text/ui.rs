//! The one output channel. Results and `--json` go to stdout; everything a person reads
//! (status lines, warnings, notes, progress) goes to stderr. Nothing else in rtbuild prints.

use std::fmt::Display;
use std::io::{IsTerminal, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use crate::text::escape_controls;

/// What the user asked of the output (the cli maps `--json`, `--quiet`, `--verbose` and
/// `--plain` onto it; the library knows nothing of flags).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct UiOptions {
    pub json: bool,
    pub quiet: bool,
    pub verbose: bool,
    /// No progress bars or redraws even on a terminal (`--plain`, or `CI` is set).
    pub plain: bool,
}

/// How and where rtbuild talks to the user.
#[derive(Debug, Clone)]
pub(crate) struct Ui {
    quiet: bool,
    verbose: bool,
    json: bool,
    /// Progress bars and colour only on an interactive stderr, never with `--plain`.
    fancy: bool,
}

impl Ui {
    pub(crate) fn new(options: UiOptions) -> Ui {
        let tty = std::io::stderr().is_terminal();
        Ui {
            quiet: options.quiet,
            verbose: options.verbose,
            json: options.json,
            fancy: tty && !options.plain && !options.quiet,
        }
    }

    /// A silent Ui for tests and library callers.
    #[cfg(test)]
    pub(crate) fn silent() -> Ui {
        Ui { quiet: true, verbose: false, json: false, fancy: false }
    }

    /// `--json` was given: print machine-readable results on stdout and nothing else there.
    /// `--quiet`: errors and warnings only.
    pub(crate) fn quiet(&self) -> bool {
        self.quiet
    }

    pub(crate) fn json(&self) -> bool {
        self.json
    }

    /// Progress bars and live redraws are wanted (interactive terminal, no `--plain`).
    pub(crate) fn fancy(&self) -> bool {
        self.fancy
    }

    /// A status line with a right-aligned verb, cargo style: `  Generating rb3gen2-core-kit`.
    pub(crate) fn status(&self, verb: &str, message: impl Display) {
        if !self.quiet {
            self.stderr(&format!("{verb:>12} {message}"));
        }
    }

    pub(crate) fn warn(&self, message: impl Display) {
        self.stderr(&format!("warning: {message}"));
    }

    pub(crate) fn note(&self, message: impl Display) {
        if !self.quiet {
            self.stderr(&format!("note: {message}"));
        }
    }

    /// Extra detail shown with `-v`.
    pub(crate) fn detail(&self, message: impl Display) {
        if self.verbose && !self.quiet {
            self.stderr(&format!("{:>12} {message}", ""));
        }
    }

    /// Prints the error that ended the command: `error: <message>`, then each cause it names
    /// as its source, indented (a message never quotes its own source, so nothing is said
    /// twice). A refusal of input (exit 2) stays on its line: control characters the input
    /// carried (a newline in a flag value, a path, a project-file key) are shown escaped, so
    /// they cannot forge or split lines. Tool failures keep their multi-line log tails.
    /// `exit` is the code the error ends rtbuild with.
    pub(crate) fn error(&self, err: &(dyn std::error::Error + 'static), exit: crate::error::Exit) {
        let input = exit == crate::error::Exit::Usage;
        let part = |text: String| if input { refusal_line(&text) } else { text };
        let mut text = format!("error: {}", part(err.to_string()));
        let mut cause = err.source();
        while let Some(next) = cause {
            text.push_str(&format!("\n  caused by: {}", part(next.to_string())));
            cause = next.source();
        }
        self.stderr(&text);
    }

    /// A line of human-readable result text on stdout (tables, paths).
    pub(crate) fn out(&self, text: impl Display) {
        let text = crate::text::escape_controls_but_lines(&text.to_string());
        let mut stdout = std::io::stdout().lock();
        #[allow(clippy::print_stdout)]
        let _ = writeln!(stdout, "{text}");
    }

    /// Serialises `value` as pretty JSON on stdout.
    pub(crate) fn out_json(&self, value: &impl Serialize) -> Result<(), serde_json::Error> {
        // JSON escapes C0 itself; DEL, C1 and the invisible format characters are written as
        // `\uXXXX` escapes too (a JSON reader gets the same name back).
        let text = crate::text::escape_json_text(&serde_json::to_string_pretty(value)?);
        let mut stdout = std::io::stdout().lock();
        #[allow(clippy::print_stdout)]
        let _ = writeln!(stdout, "{text}");
        Ok(())
    }

    /// A progress bar on stderr, hidden unless the terminal is interactive. Its message gets
    /// the columns `PROGRESS_FIXED_COLUMNS` leaves (`wide_msg` cuts the rest off).
    pub(crate) fn progress(&self, len: u64, prefix: &str) -> ProgressBar {
        if !self.fancy {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr_with_hz(8));
        bar.set_style(
            ProgressStyle::with_template(PROGRESS_TEMPLATE)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_prefix(prefix.to_string());
        bar.enable_steady_tick(Duration::from_millis(250));
        bar
    }

    fn stderr(&self, text: &str) {
        // The last guard: whatever outside text a message carries, no escape sequence, carriage
        // return or bidirectional override reaches the terminal (lines are split where the
        // parts were made, and escaped there).
        let text = crate::text::escape_controls_but_lines(text);
        let mut stderr = std::io::stderr().lock();
        #[allow(clippy::print_stderr)]
        let _ = writeln!(stderr, "{text}");
    }
}

/// The progress line: the name, a bar and the elapsed time, then the message. Kept narrow so
/// that on an 80-column terminal the message keeps `PROGRESS_MESSAGE_COLUMNS` columns (what
/// `rtbuild test` shows there: the current max first, then the time left).
pub(crate) const PROGRESS_TEMPLATE: &str =
    "{prefix:>12.cyan.bold} [{bar:20}] {elapsed_precise} {wide_msg}";
/// The columns of [`PROGRESS_TEMPLATE`] before its message: prefix 12, space, `[` bar 20 `]`,
/// space, elapsed `00:00:00`, space (checked against the template by a test).
#[cfg(test)]
pub(crate) const PROGRESS_FIXED_COLUMNS: usize = 12 + 1 + 22 + 1 + 8 + 1;
/// What an 80-column terminal leaves the message.
#[cfg(test)]
pub(crate) const PROGRESS_MESSAGE_COLUMNS: usize = 80 - PROGRESS_FIXED_COLUMNS;

/// `message; fix`, unless `message` already ends in a fix of its own (holds `; `).
pub(crate) fn with_fix(message: &str, fix: &str) -> String {
    if message.contains("; ") { message.to_string() } else { format!("{message}; {fix}") }
}

/// A word (a run without whitespace) longer than this is shortened in a refusal.
const LONG_WORD: usize = 200;
/// A refusal longer than this keeps its head and its tail (the fix).
const LONG_LINE: usize = 2000;

/// A refusal of input as it is printed, the one place its echoed values are bounded: control
/// characters escaped ([`escape_controls`]), each word over 200 characters (a 100 KB
/// `--machine`, a path, a URL) cut to its first 120 and last 20 with the count left out, and
/// a line still over 2,000 characters to its first and last 1,000, so the fix stays.
pub(crate) fn refusal_line(text: &str) -> String {
    let escaped = escape_controls(text);
    let mut out = String::with_capacity(escaped.len().min(4 * LONG_LINE));
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let count = word.chars().count();
        if count > LONG_WORD {
            let head: String = word.chars().take(120).collect();
            let tail: String = word.chars().skip(count - 20).collect();
            let left_out = super::counted(count - 140, "character");
            out.push_str(&format!("{head}…[{left_out} left out]…{tail}"));
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in escaped.chars() {
        if c.is_whitespace() {
            flush(&mut word, &mut out);
            out.push(c);
        } else {
            word.push(c);
        }
    }
    flush(&mut word, &mut out);
    let count = out.chars().count();
    if count <= LONG_LINE {
        return out;
    }
    let head: String = out.chars().take(LONG_LINE / 2).collect();
    let tail: String = out.chars().skip(count - LONG_LINE / 2).collect();
    format!("{head} …[{} left out]… {tail}", super::counted(count - LONG_LINE, "character"))
}

#[cfg(test)]
mod escape_tests {
    use super::refusal_line;

    /// Issue 34 item 15: a 100 KB value gave a 100 KB error line.
    #[test]
    fn a_refusal_echoes_at_most_a_bounded_part_of_each_value() {
        let long = format!("unknown machine `{}`; use one of a, b", "m".repeat(100_000));
        let line = refusal_line(&long);
        assert!(line.chars().count() < 300, "{}", line.len());
        assert!(line.starts_with(&format!("unknown machine `{}", "m".repeat(119))), "{line}");
        assert!(line.contains("…[99863 characters left out]…"), "{line}");
        assert!(line.ends_with(&format!("{}`; use one of a, b", "m".repeat(18))), "{line}");
        let spaced = format!("bad value `{}`; fix it", "ab ".repeat(50_000));
        let line = refusal_line(&spaced);
        assert!(line.chars().count() < 2100 && line.ends_with("`; fix it"), "{}", line.len());
        assert_eq!(refusal_line("short `x\ny`; fix"), "short `x\\ny`; fix");
        assert_eq!(refusal_line("a\nb"), "a\\nb");
    }
}
