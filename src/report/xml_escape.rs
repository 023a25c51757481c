//! Escaping for the hand-built markup that remains: the SVG charts' text.

/// Escapes text for XML attributes and content.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_handles_markup_quotes_and_control_characters() {
        assert_eq!(escape("a<b>&\"c'\u{1}\n"), "a&lt;b&gt;&amp;&quot;c&apos;\u{FFFD}\n");
    }
}
