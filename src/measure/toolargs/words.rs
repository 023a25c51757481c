//! Splits an option string like `-i 100 --spike='250'` into words the way a POSIX shell
//! would split a simple command, without any expansion: whitespace separates words, single
//! quotes keep everything literal, double quotes keep everything but `\"`, `\\`, `\$` and
//! `` \` ``, and a backslash outside quotes escapes the next character. Nothing is ever run
//! through a shell; a word that would only mean something to a shell is refused, so a user
//! who expected one learns that it is not there.

/// The option string cannot be split into words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum WordsError {
    #[error("{flag} has an unclosed {quote} quote; close it or drop it")]
    Unclosed { flag: &'static str, quote: char },
    #[error(
        "{flag} ends with a lone backslash; remove it or escape the character it was meant for"
    )]
    TrailingBackslash { flag: &'static str },
    #[error(
        "{flag}: `{word}` only means something to a shell, and rtbuild runs the program without one; pass one program and its arguments (wrap a pipeline in a script on the target)"
    )]
    ShellSyntax { flag: &'static str, word: String },
}

/// Words a shell would treat as operators; outside quotes they are refused.
const SHELL_OPERATORS: &[&str] = &[";", "|", "||", "&", "&&", ">", ">>", "<", "<<", "2>", "2>&1"];

/// Splits `text` (the value of `flag`, named in errors) into words.
pub(crate) fn split(flag: &'static str, text: &str) -> Result<Vec<String>, WordsError> {
    let mut words = Vec::new();
    let mut word = String::new();
    // A word has started even when it is empty (`''`).
    let mut in_word = false;
    // Whether any character of the current word was quoted or escaped.
    let mut quoted = false;
    let mut chars = text.chars();
    let finish = |word: &mut String,
                  in_word: &mut bool,
                  quoted: &mut bool,
                  words: &mut Vec<String>| {
        if *in_word {
            let w = std::mem::take(word);
            if !*quoted
                && (SHELL_OPERATORS.contains(&w.as_str()) || w.contains("$(") || w.contains('`'))
            {
                return Err(WordsError::ShellSyntax { flag, word: w });
            }
            words.push(w);
        }
        *in_word = false;
        *quoted = false;
        Ok(())
    };
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => finish(&mut word, &mut in_word, &mut quoted, &mut words)?,
            '\'' => {
                in_word = true;
                quoted = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err(WordsError::Unclosed { flag, quote: '\'' }),
                    }
                }
            }
            '"' => {
                in_word = true;
                quoted = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(e @ ('"' | '\\' | '$' | '`')) => word.push(e),
                            Some(other) => {
                                word.push('\\');
                                word.push(other);
                            }
                            None => return Err(WordsError::Unclosed { flag, quote: '"' }),
                        },
                        Some(c) => word.push(c),
                        None => return Err(WordsError::Unclosed { flag, quote: '"' }),
                    }
                }
            }
            '\\' => {
                in_word = true;
                quoted = true;
                match chars.next() {
                    Some(c) => word.push(c),
                    None => return Err(WordsError::TrailingBackslash { flag }),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    finish(&mut word, &mut in_word, &mut quoted, &mut words)?;
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_a_shell_without_expanding() {
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("  -i 100\t-h  800 ", &["-i", "100", "-h", "800"]),
            ("-Sp90", &["-Sp90"]),
            ("--spike='250'", &["--spike=250"]),
            (r#"a"b c"d"#, &["ab cd"]),
            ("''", &[""]),
            (r"a\ b", &["a b"]),
            (r#""\$HOME \"x\" \n""#, &[r#"$HOME "x" \n"#]),
            ("'$(reboot)'", &["$(reboot)"]),
            ("'a;b' ';'", &["a;b", ";"]),
            ("$HOME", &["$HOME"]),
        ];
        for (text, want) in cases {
            assert_eq!(split("--x", text).unwrap(), *want, "{text}");
        }
    }

    #[test]
    fn refuses_what_only_a_shell_would_understand() {
        assert_eq!(
            split("--load-cmd", "stress-ng -c 1 ; reboot").unwrap_err().to_string(),
            "--load-cmd: `;` only means something to a shell, and rtbuild runs the program without one; pass one program and its arguments (wrap a pipeline in a script on the target)"
        );
        for text in ["a | b", "a && b", "a > f", "$(reboot)", "x`id`", "a &"] {
            assert!(matches!(split("--x", text), Err(WordsError::ShellSyntax { .. })), "{text}");
        }
        assert_eq!(
            split("--cyclictest-args", "-i '100").unwrap_err().to_string(),
            "--cyclictest-args has an unclosed ' quote; close it or drop it"
        );
        assert_eq!(split("--x", "a\"b"), Err(WordsError::Unclosed { flag: "--x", quote: '"' }));
        assert_eq!(split("--x", "a\\"), Err(WordsError::TrailingBackslash { flag: "--x" }));
    }
}
