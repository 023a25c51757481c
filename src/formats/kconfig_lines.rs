//! Kernel configuration lines, as found in `.config` files and `.cfg` fragments:
//! `CONFIG_X=y`, `CONFIG_X=m`, `CONFIG_X="text"`, `CONFIG_X=42`, `CONFIG_X=0x1f` and
//! `# CONFIG_X is not set`. The plan checks `--config` options and fragments with them; `verify`
//! reads whole configs line by line (`crate::verify::kconfig`).

use std::fmt;

use serde::Serialize;

/// A kernel config symbol, with its `CONFIG_` prefix (`CONFIG_PREEMPT_RT`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub(crate) struct Symbol(String);

impl Symbol {
    pub(crate) fn new(name: &str) -> Result<Symbol, LineError> {
        let rest = name.strip_prefix("CONFIG_").ok_or(LineError::NoPrefix)?;
        if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(LineError::BadSymbol(name.to_string()));
        }
        Ok(Symbol(name.to_string()))
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The value a symbol has or is asked to have.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Value {
    Yes,
    Module,
    /// `# CONFIG_X is not set` (or `=n` in a request).
    No,
    /// A quoted string, kept with its escapes as written between the quotes.
    Str(String),
    /// A decimal or hex number, as written.
    Number(String),
}

impl fmt::Display for Value {
    /// The value as it appears after `=` (`y`, `m`, `n`, `"text"`, `42`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Yes => f.write_str("y"),
            Value::Module => f.write_str("m"),
            Value::No => f.write_str("n"),
            Value::Str(s) => write!(f, "\"{s}\""),
            Value::Number(n) => f.write_str(n),
        }
    }
}

impl Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// One `symbol = value` line.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub(crate) struct Setting {
    pub symbol: Symbol,
    pub value: Value,
}

impl Setting {
    pub(crate) fn new(symbol: &str, value: Value) -> Setting {
        Setting { symbol: Symbol::new(symbol).expect("bug in rtbuild: built-in symbol"), value }
    }

    /// Parses a `CONFIG_X=…` request as typed on the command line (`=n` means "not set").
    pub(crate) fn parse_request(text: &str) -> Result<Setting, LineError> {
        match parse_line(text)? {
            Line::Setting(setting) => Ok(setting),
            Line::Blank | Line::Comment => Err(LineError::NotASetting),
        }
    }
}

impl fmt::Display for Setting {
    /// The line as written in a `.config` or fragment.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.value {
            Value::No => write!(f, "# {} is not set", self.symbol),
            _ => write!(f, "{}={}", self.symbol, self.value),
        }
    }
}

/// What one line of a config file or fragment holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Line {
    Blank,
    Comment,
    Setting(Setting),
}

/// Why a line is not a valid config line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum LineError {
    #[error("expected CONFIG_<NAME>=<value> or `# CONFIG_<NAME> is not set`")]
    NoPrefix,
    #[error("`{0}` is not a valid symbol name (CONFIG_ followed by letters, digits and `_`)")]
    BadSymbol(String),
    #[error("value `{0}` is not y, m, n, a number or a double-quoted string")]
    BadValue(String),
    #[error("expected a setting, not a comment or blank line")]
    NotASetting,
}

/// Parses one line of a `.config` file or `.cfg` fragment.
pub(crate) fn parse_line(raw: &str) -> Result<Line, LineError> {
    let line = raw.trim_end_matches(['\r', '\n']).trim();
    if line.is_empty() {
        return Ok(Line::Blank);
    }
    if let Some(comment) = line.strip_prefix('#') {
        let comment = comment.trim();
        if let Some(name) = comment.strip_suffix(" is not set")
            && name.starts_with("CONFIG_")
        {
            return Ok(Line::Setting(Setting {
                symbol: Symbol::new(name.trim())?,
                value: Value::No,
            }));
        }
        return Ok(Line::Comment);
    }
    let (name, value) = line.split_once('=').ok_or(LineError::NoPrefix)?;
    let symbol = Symbol::new(name.trim())?;
    Ok(Line::Setting(Setting { symbol, value: parse_value(value.trim())? }))
}

fn parse_value(text: &str) -> Result<Value, LineError> {
    let bad = || LineError::BadValue(crate::text::printable(text));
    match text {
        "y" => return Ok(Value::Yes),
        "m" => return Ok(Value::Module),
        "n" => return Ok(Value::No),
        _ => {}
    }
    if let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        // Inside the quotes, `"` and `\` must be escaped and nothing may be a control character.
        let mut escaped = false;
        for ch in inner.chars() {
            if ch.is_control() {
                return Err(bad());
            }
            match (escaped, ch) {
                (false, '\\') => escaped = true,
                (false, '"') => return Err(bad()),
                _ => escaped = false,
            }
        }
        if escaped {
            return Err(bad());
        }
        return Ok(Value::Str(inner.to_string()));
    }
    let digits = text.strip_prefix('-').unwrap_or(text);
    let is_dec = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    let is_hex = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()));
    if is_dec || is_hex { Ok(Value::Number(text.to_string())) } else { Err(bad()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(text: &str) -> Setting {
        match parse_line(text).unwrap() {
            Line::Setting(s) => s,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn parses_every_line_form() {
        assert_eq!(setting("CONFIG_PREEMPT_RT=y").value, Value::Yes);
        assert_eq!(setting("CONFIG_USB=m").value, Value::Module);
        assert_eq!(setting("# CONFIG_PREEMPT is not set").value, Value::No);
        assert_eq!(setting("CONFIG_HZ=1000").value, Value::Number("1000".into()));
        assert_eq!(setting("CONFIG_X=0x1f").value, Value::Number("0x1f".into()));
        assert_eq!(
            setting("CONFIG_CMDLINE=\"a \\\"b\\\"\"").value,
            Value::Str("a \\\"b\\\"".into())
        );
        assert_eq!(parse_line("").unwrap(), Line::Blank);
        assert_eq!(parse_line("# a comment").unwrap(), Line::Comment);
        assert_eq!(
            setting("# CONFIG_PREEMPT is not set").to_string(),
            "# CONFIG_PREEMPT is not set"
        );
        assert_eq!(
            setting("CONFIG_LOCALVERSION=\"-rt\"").to_string(),
            "CONFIG_LOCALVERSION=\"-rt\""
        );
    }

    #[test]
    fn rejects_malformed_lines() {
        let cases = [
            ("PREEMPT_RT=y", LineError::NoPrefix),
            ("CONFIG_=y", LineError::BadSymbol("CONFIG_".into())),
            ("CONFIG_A-B=y", LineError::BadSymbol("CONFIG_A-B".into())),
            ("CONFIG_X=yes", LineError::BadValue("yes".into())),
            ("CONFIG_X=\"open", LineError::BadValue("\\\"open".into())),
            ("CONFIG_X=\"a\"b\"", LineError::BadValue("\\\"a\\\"b\\\"".into())),
            ("CONFIG_X=${@os.system('x')}", LineError::BadValue("${@os.system(\\'x\\')}".into())),
            ("CONFIG_X", LineError::NoPrefix),
        ];
        for (line, want) in cases {
            assert_eq!(parse_line(line).unwrap_err(), want, "line {line:?}");
        }
    }
}
