//! Text a user gave, made safe to show in a one-line error message.

/// `text` with control characters escaped (`\n`, `\u{7}`), so a refusal can neither split nor
/// forge a line.
pub(crate) fn printable(text: &str) -> String {
    text.escape_debug().to_string()
}
