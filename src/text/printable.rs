//! Text from outside rtbuild (a user's value, a folder or archive member name, a line a
//! target printed, a stored row) made safe to print: the one place such text is escaped.
//!
//! Escaped are the control characters (C0, DEL and C1, ESC and CR among them) and the
//! invisible format characters that can reorder or hide part of a printed line ("Trojan
//! Source": the bidirectional embeddings, overrides and isolates U+202A–U+202E and
//! U+2066–U+2069, the zero-width and direction marks U+200B–U+200F, and U+FEFF), and the
//! Unicode line and paragraph separators U+2028 and U+2029 (a line break to editors, Python's
//! `splitlines` and log tools, so they could split a line as `\n` would). Each is written as
//! its Rust escape (`\n`, `\u{1b}`, `\u{202e}`, `\u{2028}`).

/// `text` with control characters escaped (`\n`, `\u{7}`), so a refusal can neither split nor
/// forge a line.
pub(crate) fn printable(text: &str) -> String {
    text.escape_debug().to_string()
}

/// [`printable`] of the first `n` characters of `text`: a value a refusal quotes, cut to what
/// one line holds.
pub(crate) fn printable_first(text: &str, n: usize) -> String {
    printable(&text.chars().take(n).collect::<String>())
}

/// How many characters of one piece of outside text [`shown`] prints.
pub(crate) const SHOWN_CHARS: usize = 200;

/// An invisible format character that can reorder or hide printed text, or a Unicode line or
/// paragraph separator that can split it.
pub(crate) fn is_hidden_format(c: char) -> bool {
    matches!(
        c,
        '\u{200B}'..='\u{200F}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}'
    )
}

/// Whether [`escape_controls`] escapes `c`.
pub(crate) fn needs_escape(c: char) -> bool {
    c.is_control() || is_hidden_format(c)
}

/// `text` with every control character (newline, tab, escape, C1, …) and every invisible
/// format character ([`is_hidden_format`]) written as its Rust escape (`\n`, `\t`, `\u{1b}`,
/// `\u{202e}`); everything else, quotes and non-ASCII included, as it is.
pub(crate) fn escape_controls(text: &str) -> String {
    escape_where(text, needs_escape)
}

/// Like [`escape_controls`], but newlines and tabs are kept: for whole multi-line messages
/// whose parts were escaped where they were made, as a last guard against escape sequences.
pub(crate) fn escape_controls_but_lines(text: &str) -> String {
    escape_where(text, |c| c != '\n' && c != '\t' && needs_escape(c))
}

fn escape_where(text: &str, escape: impl Fn(char) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if escape(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Serialized JSON with every character [`escape_controls`] escapes that JSON leaves raw (DEL,
/// C1 and the invisible format characters: JSON escapes only C0) written as a JSON `\uXXXX`
/// escape: a JSON reader gets the same strings back, and the text shown raw (`cat`, a CI log, a
/// web page of the file) can neither reorder nor hide part of a line. Outside strings JSON has
/// only ASCII and its whitespace (kept), so the document's structure is untouched.
pub(crate) fn escape_json_text(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if needs_escape(c) && !matches!(c, '\n' | '\t' | '\r') {
            // Every character needs_escape picks (controls, U+200B–U+FEFF) is in the BMP.
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// One piece of outside text as rtbuild prints it: its first [`SHOWN_CHARS`] characters,
/// escaped ([`escape_controls`]), with `…` when more was cut off.
pub(crate) fn shown(text: &str) -> String {
    shown_at(text, SHOWN_CHARS)
}

/// [`shown`] with its own limit, for text that holds several pieces (a problem's detail).
pub(crate) fn shown_at(text: &str, limit: usize) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(limit).collect();
    let more = chars.next().is_some();
    let mut out = escape_controls(&head);
    if more {
        out.push('…');
    }
    out
}

/// A path as rtbuild prints it in a status line or on stdout: [`escape_controls`] of its
/// display form (not cut: a path is at most PATH_MAX long), so a folder named with a newline or
/// an escape sequence cannot split or forge the line.
pub(crate) fn shown_path(path: &std::path::Path) -> String {
    escape_controls(&path.display().to_string())
}

/// The last `n` lines of what a program (a target's step) printed, on one line: each
/// [`shown`], joined by ` / `, so no line it printed can pass for one of rtbuild's.
pub(crate) fn shown_tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.trim().lines().collect();
    lines[lines.len().saturating_sub(n)..].iter().map(|l| shown(l)).collect::<Vec<_>>().join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `Ui` prints escaped: control characters; quotes, backquotes and non-ASCII stay.
    #[test]
    fn control_characters_are_escaped_and_the_rest_is_kept() {
        assert_eq!(escape_controls("7\nx\ty\u{1b}[2J"), "7\\nx\\ty\\u{1b}[2J");
        assert_eq!(escape_controls("`a'b\"c` µs"), "`a'b\"c` µs");
    }

    #[test]
    fn controls_c1_and_bidirectional_overrides_are_escaped() {
        assert_eq!(escape_controls("7\nx\ty\u{1b}[2J"), "7\\nx\\ty\\u{1b}[2J");
        assert_eq!(escape_controls("a\rb\u{9b}c\u{85}"), "a\\rb\\u{9b}c\\u{85}");
        assert_eq!(
            escape_controls("m\u{202e}fdp.exe\u{2066}\u{200b}\u{feff}\u{200f}"),
            "m\\u{202e}fdp.exe\\u{2066}\\u{200b}\\u{feff}\\u{200f}"
        );
        for c in [
            '\u{202a}', '\u{202d}', '\u{2067}', '\u{2069}', '\u{200c}', '\u{200e}', '\u{2028}',
            '\u{2029}',
        ] {
            assert_eq!(escape_controls(&c.to_string()), format!("\\u{{{:x}}}", c as u32));
        }
        // Quotes, non-ASCII letters and joiners outside the list stay as they are.
        assert_eq!(escape_controls("\"µs\" ä '\u{2060}"), "\"µs\" ä '\u{2060}");
        assert_eq!(escape_controls_but_lines("a\n\tb\u{1b}\r"), "a\n\tb\\u{1b}\\r");
    }

    #[test]
    fn json_text_escapes_what_json_leaves_raw_and_reads_back_the_same() {
        let value = serde_json::json!({"name": "rb3\u{202e}gen2\u{2066}\u{200b}\u{feff}\u{7f}\u{9b}\n\u{1b}ä"});
        let text = escape_json_text(&serde_json::to_string(&value).unwrap());
        assert_eq!(text, r#"{"name":"rb3\u202egen2\u2066\u200b\ufeff\u007f\u009b\n\u001bä"}"#);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), value);
        let pretty = escape_json_text(&serde_json::to_string_pretty(&value).unwrap());
        assert!(pretty.starts_with("{\n  \"name\": \"rb3\\u202egen2"), "{pretty}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&pretty).unwrap(), value);
    }

    #[test]
    fn shown_text_is_cut_and_a_tail_is_one_line() {
        assert_eq!(shown(&"x".repeat(SHOWN_CHARS)), "x".repeat(SHOWN_CHARS));
        assert_eq!(shown(&"x".repeat(100_000)), format!("{}…", "x".repeat(SHOWN_CHARS)));
        assert_eq!(
            shown_tail("one\ntwo\r\nPASS three\u{1b}[0m\n", 2),
            "two / PASS three\\u{1b}[0m"
        );
        assert_eq!(shown_tail("", 3), "");
    }

    /// Issue 35: one escaper. Outside text is escaped here only; the formats with their own
    /// escaping (a page's invisible characters, JUnit XML, OpenMetrics labels) keep theirs.
    #[test]
    fn outside_text_is_escaped_only_here() {
        let own_escaping = ["text/templates.rs", "formats/junit_xml.rs", "formats/openmetrics.rs"];
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut stack = vec![src.clone()];
        let mut elsewhere = Vec::new();
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let name = path.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
                if !name.ends_with(".rs") || name == "text/printable.rs" {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                let escapes = text.contains(".escape_debug()")
                    || (text.contains(".escape_default()")
                        && !own_escaping.contains(&name.as_str()));
                if escapes {
                    elsewhere.push(name);
                }
            }
        }
        assert!(elsewhere.is_empty(), "escape through crate::text::printable: {elsewhere:?}");
    }
}
