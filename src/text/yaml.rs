//! YAML from outside rtbuild (a lock, a plan, a kas file, a machine file, a LAVA log) read
//! within a time budget: the one way such text reaches the YAML loader.
//!
//! libyaml's scanner, which the loader uses, keeps a possible simple key per open flow
//! collection and walks all of them at every token, so flow collections nested N deep cost
//! N² steps before the loader's own depth limit (128) refuses them: 360 KB of `[a: ` took
//! 75 s, 3 MB hours (issue 34, probe round 10). Flow nesting deeper than the loader accepts
//! is refused here, in one pass over the text, before the loader sees it.

use serde::de::{DeserializeOwned, Error as _};

/// How deep flow collections (`[…]`, `{…}`) may nest: the loader refuses more anyway.
pub(crate) const MAX_FLOW_DEPTH: usize = 128;

/// `serde_yaml::from_str`, with flow nesting past [`MAX_FLOW_DEPTH`] refused first.
pub(crate) fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, serde_yaml::Error> {
    if let Some((line, column)) = too_deep(text) {
        return Err(serde_yaml::Error::custom(format!(
            "collections nested more than {MAX_FLOW_DEPTH} deep at line {line} column {column}"
        )));
    }
    serde_yaml::from_str(text)
}

/// [`from_str`] of bytes that must be UTF-8.
pub(crate) fn from_slice<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, serde_yaml::Error> {
    let text = std::str::from_utf8(bytes).map_err(serde_yaml::Error::custom)?;
    from_str(text)
}

/// Where (1-based line and column) flow collections first nest past [`MAX_FLOW_DEPTH`]. Quoted
/// scalars and comments are skipped; a bracket inside a plain scalar counts, which can only
/// refuse text holding more than 128 unclosed brackets.
fn too_deep(text: &str) -> Option<(usize, usize)> {
    let (mut line, mut column) = (1, 0);
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut comment = false;
    // The last character outside a scalar's quotes: a quote opens a scalar only after one of
    // these (so the `'` of `don't` opens nothing).
    let mut before = '\n';
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        column += 1;
        if c == '\n' {
            (line, column) = (line + 1, 0);
            comment = false;
        }
        if comment {
            continue;
        }
        match quote {
            Some('"') if c == '\\' => {
                chars.next();
                column += 1;
            }
            Some('\'') if c == '\'' && chars.peek() == Some(&'\'') => {
                chars.next();
                column += 1;
            }
            Some(q) if c == q => {
                quote = None;
                before = c;
            }
            Some(_) => {}
            None => {
                match c {
                    '"' | '\'' if before.is_whitespace() || "[{,:-?".contains(before) => {
                        quote = Some(c);
                    }
                    '#' if before.is_whitespace() => comment = true,
                    '[' | '{' => {
                        depth += 1;
                        if depth > MAX_FLOW_DEPTH {
                            return Some((line, column));
                        }
                    }
                    ']' | '}' => depth = depth.saturating_sub(1),
                    _ => {}
                }
                before = c;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_nesting_past_the_limit_is_refused_where_it_starts() {
        let deep = |n: usize| format!("{}1{}", "[a: ".repeat(n), "]".repeat(n));
        assert_eq!(too_deep(&deep(MAX_FLOW_DEPTH)), None);
        assert_eq!(too_deep(&deep(MAX_FLOW_DEPTH + 1)), Some((1, 4 * MAX_FLOW_DEPTH + 1)));
        let err = from_str::<serde_yaml::Value>(&format!("x: 1\ny: {}", "{".repeat(200)))
            .unwrap_err()
            .to_string();
        assert_eq!(err, "collections nested more than 128 deep at line 2 column 132");
        // The loader's own limit (the same depth) is what a document just under ours meets.
        assert!(from_str::<serde_yaml::Value>(&deep(MAX_FLOW_DEPTH)).is_err());
        assert_eq!(from_str::<serde_yaml::Value>(&deep(3)).unwrap()[0]["a"][0]["a"][0]["a"], 1);
    }

    #[test]
    fn brackets_in_quotes_and_comments_do_not_count() {
        let many = "[".repeat(1_000);
        for text in [
            format!("msg: \"{many}\\\"{many}\"\n"),
            format!("msg: '{many}''{many}'\n"),
            format!("- {{msg: '{many}'}}\n"),
            format!("a: 1 # {many}\nb: 2\n"),
            format!("a: don't\nb: '{many}'\n"),
        ] {
            assert_eq!(too_deep(&text), None, "{}", &text[..20]);
            assert!(from_str::<serde_yaml::Value>(&text).is_ok(), "{}", &text[..20]);
        }
        assert_eq!(from_slice::<serde_yaml::Value>(b"a: [1, {b: 2}]").unwrap()["a"][1]["b"], 2);
        assert!(from_slice::<serde_yaml::Value>(b"a: \xff").is_err());
    }
}
