//! Quoting for display and for the one place a string must cross a shell: the remote side of
//! `ssh`. rtbuild never builds a local shell string; argv vectors go straight to `execve`.

/// Quotes `arg` for a POSIX shell so that it reaches the program as exactly one argument.
/// Safe words (letters, digits and `-_./=:,+@%`) are left as they are.
pub(crate) fn sh(arg: &str) -> String {
    let safe = !arg.is_empty()
        && arg.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if safe {
        return arg.to_string();
    }
    let mut quoted = String::with_capacity(arg.len() + 2);
    quoted.push('\'');
    for ch in arg.chars() {
        if ch == '\'' {
            quoted.push_str("'\\''");
        } else {
            quoted.push(ch);
        }
    }
    quoted.push('\'');
    quoted
}

/// Joins `args` into one shell command line, each argument quoted with [`sh`].
pub(crate) fn sh_join<I, S>(args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    args.into_iter().map(|a| sh(a.as_ref())).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_table() {
        let cases = [
            ("plain", "plain"),
            ("0-6", "0-6"),
            ("", "''"),
            ("two words", "'two words'"),
            ("it's", "'it'\\''s'"),
            ("$(reboot)", "'$(reboot)'"),
            ("a;b", "'a;b'"),
            ("`x`", "'`x`'"),
            ("new\nline", "'new\nline'"),
        ];
        for (input, want) in cases {
            assert_eq!(sh(input), want, "input {input:?}");
        }
    }

    #[test]
    fn join_quotes_each_argument() {
        assert_eq!(sh_join(["cat", "/proc/cmdline", "a b"]), "cat /proc/cmdline 'a b'");
    }
}
