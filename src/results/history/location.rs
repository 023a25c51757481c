//! Where the history lives: `--db URL` (or `RTBUILD_DB`) as one of the two backends, and the
//! URL as it may be shown (without its password).

use std::path::PathBuf;

use super::HistoryError;

/// A history database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Location {
    /// An embedded SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL server: the URL exactly as given, for the client library.
    Postgres(String),
}

impl Location {
    /// Reads `--db`: `sqlite:PATH`, `postgres://…` or `postgresql://…`.
    pub(crate) fn parse(url: &str) -> Result<Location, HistoryError> {
        if let Some(path) = url.strip_prefix("sqlite:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            if path.is_empty() {
                return Err(HistoryError::Url {
                    url: url.to_string(),
                    message: "`sqlite:` names no file".to_string(),
                });
            }
            return Ok(Location::Sqlite(PathBuf::from(path)));
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            // rtbuild connects without TLS (docs/history.md): a URL that requires it would
            // fail at the handshake with a hint about the server instead of this.
            let requires_tls = url.parse::<tokio_postgres::Config>().is_ok_and(|c| {
                matches!(c.get_ssl_mode(), tokio_postgres::config::SslMode::Require)
            });
            if requires_tls {
                return Err(HistoryError::Url {
                    url: redact(url),
                    message: "it requires TLS (`sslmode=require`), which rtbuild does not speak \
                              to PostgreSQL: drop `sslmode=require` and reach the server over a \
                              Unix socket or a trusted network"
                        .to_string(),
                });
            }
            return Ok(Location::Postgres(url.to_string()));
        }
        Err(HistoryError::Url {
            url: redact(url),
            message: "it is neither `sqlite:PATH` nor `postgres://…`".to_string(),
        })
    }

    /// The default: `$XDG_DATA_HOME/rtbuild/history.sqlite`, else
    /// `~/.local/share/rtbuild/history.sqlite`.
    pub(crate) fn default_file(
        xdg_data_home: Option<PathBuf>,
        home: Option<PathBuf>,
    ) -> Option<Location> {
        let base = xdg_data_home
            .filter(|p| p.is_absolute())
            .or_else(|| home.map(|h| h.join(".local/share")))?;
        Some(Location::Sqlite(base.join("rtbuild/history.sqlite")))
    }

    /// The database as it may be shown: a file's path, or the URL without its password.
    pub(crate) fn shown(&self) -> String {
        match self {
            Location::Sqlite(path) => format!("sqlite:{}", path.display()),
            Location::Postgres(url) => redact(url),
        }
    }
}

/// `scheme://user:secret@host/db?password=secret` → `scheme://user:***@host/db?password=***`,
/// and `host=db password='a b'` → `host=db password=***`.
///
/// It hides at least what the client library would take as a password, and more where a URL is
/// ambiguous: the credentials end at the first `@` for the library, but a password holding `/`,
/// `?`, `#` or `@` is hidden up to the last `@`; a `host:port` whose port is not a number (a
/// password whose `@host` was forgotten) hides the rest of the URL; every `password=` pair is
/// hidden wherever it stands (after `?` or `&`, its key written in any case or percent-encoded).
/// Text that is not a URL is read as libpq's `key=value` form.
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return redact_keywords(url);
    };
    let shown = match (rest.find('@'), rest.rfind('@')) {
        (Some(first), Some(last)) => {
            let creds = &rest[..first];
            match creds.split_once(':') {
                Some((user, _)) => format!("{user}:***@{}", redact_params(&rest[last + 1..])),
                None => format!("{creds}@{}", redact_params(&rest[first + 1..])),
            }
        }
        _ => {
            let end = rest.find(['/', '?']).unwrap_or(rest.len());
            match hidden_port(&rest[..end]) {
                Some(at) => format!("{}:***", &rest[..at]),
                None => redact_params(rest),
            }
        }
    };
    format!("{scheme}://{shown}")
}

/// Where the first `:PORT` of a host list (`h1:5432,[::1]:5433`) that is not a port number
/// starts: a password whose `@host` was left out.
fn hidden_port(hosts: &str) -> Option<usize> {
    let mut start = 0;
    for host in hosts.split(',') {
        let bare = match host.strip_prefix('[') {
            Some(v6) => v6.find(']').map_or(host.len(), |end| end + 2),
            None => host.find(':').unwrap_or(host.len()),
        };
        if let Some(port) = host.get(bare..).and_then(|tail| tail.strip_prefix(':'))
            && port.parse::<u16>().is_err()
        {
            return Some(start + bare);
        }
        start += host.len() + 1;
    }
    None
}

/// `host/db?password=secret&user=u` → `host/db?password=***&user=u`: every pair between `?`
/// and `&` separators whose key is `password` (in any case, percent-encoded or not), also where
/// no `?` came first (after a `@` in the query).
fn redact_params(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let end = rest.find(['?', '&']).unwrap_or(rest.len());
        let segment = &rest[..end];
        match segment.split_once('=') {
            Some((key, _)) if is_password(key) => {
                out.push_str(key);
                out.push_str("=***");
            }
            _ => out.push_str(segment),
        }
        // The separator, if any.
        match rest[end..].chars().next() {
            Some(sep) => {
                out.push(sep);
                rest = &rest[end + sep.len_utf8()..];
            }
            None => rest = "",
        }
    }
    out
}

/// Whether `key` is `password` once percent-decoded, in any case.
fn is_password(key: &str) -> bool {
    let bytes = key.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = bytes.get(at + 1..at + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[at], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                decoded.push(byte);
                at += 3;
            }
            (byte, _) => {
                decoded.push(byte);
                at += 1;
            }
        }
    }
    decoded.trim_ascii().eq_ignore_ascii_case(b"password")
}

/// libpq's keyword form, `host=db user=u password='a b'` → `host=db user=u password=***`: a
/// value is quoted with `'` (a `\` escapes the next character) or runs to the next space. Text
/// that does not read as `key=value` pairs shows up to the first `password` and hides the rest.
fn redact_keywords(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let trimmed = rest.trim_start();
        out.push_str(&rest[..rest.len() - trimmed.len()]);
        rest = trimmed;
        if rest.is_empty() {
            return out;
        }
        let key_end = rest.find(|c: char| c == '=' || c.is_whitespace()).unwrap_or(rest.len());
        let key = &rest[..key_end];
        let after_key = &rest[key_end..];
        let Some(value) = after_key.trim_start().strip_prefix('=') else {
            return hide_from_password(&out, rest);
        };
        let value = value.trim_start();
        let length = value_length(value);
        out.push_str(key);
        out.push('=');
        if is_password(key) {
            out.push_str("***");
        } else {
            out.push_str(&value[..length]);
        }
        rest = &value[length..];
    }
}

/// The length of the keyword value at the start of `text`: a quoted one up to its closing
/// quote (all of `text` when there is none), else up to the next unescaped space.
fn value_length(text: &str) -> usize {
    let quoted = text.starts_with('\'');
    let mut chars = text.char_indices().skip(usize::from(quoted));
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '\'' if quoted => return at + 1,
            c if !quoted && c.is_whitespace() => return at,
            _ => {}
        }
    }
    text.len()
}

/// `shown` then `rest` up to its first `password` (in any case), the rest hidden.
fn hide_from_password(shown: &str, rest: &str) -> String {
    match rest.to_ascii_lowercase().find("password") {
        Some(at) => format!("{shown}{}***", &rest[..at]),
        None => format!("{shown}{rest}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_never_shown() {
        assert_eq!(
            redact("postgres://lab:s3cr@t@db.lab:5432/rt"),
            "postgres://lab:***@db.lab:5432/rt"
        );
        assert_eq!(redact("postgres://lab@db/rt"), "postgres://lab@db/rt");
        assert_eq!(
            redact("postgresql:///rt?host=/run/pg&password=x&user=u"),
            "postgresql:///rt?host=/run/pg&password=***&user=u"
        );
        // Issue 34 item 2: a password holding `/` or `?` was shown whole.
        for (url, secret) in [
            ("postgres://lab:se/cr?et@db.lab:5432/rt", "se/cr?et"),
            ("postgres://lab:a?b@db/rt?sslmode=disable", "a?b"),
            ("postgresql://lab:x/y#z@db/rt", "x/y#z"),
            ("postgres://lab:p@ss/w?rd@db/rt?password=q/r?s", "p@ss/w?rd"),
        ] {
            let shown = redact(url);
            assert!(!shown.contains(secret), "{shown}");
            assert!(shown.starts_with("postgres") && shown.contains(":***@db"), "{shown}");
        }
        assert_eq!(
            redact("postgres://u:a/b@db/rt?password=c"),
            "postgres://u:***@db/rt?password=***"
        );
        let bad = Location::parse("mysql://u:pw@h/db").unwrap_err().to_string();
        assert!(!bad.contains("pw"), "{bad}");
    }

    /// Issue 34, the second probe: a password whose `@host` was left out, a `@` in the query
    /// before a `password=` pair, a percent-encoded key, and libpq's keyword form.
    #[test]
    fn a_password_is_hidden_in_odd_urls_and_in_the_keyword_form() {
        for (text, secret) in [
            ("postgres://lab:hunter2", "hunter2"),
            ("postgres://lab:hun/ter?2", "hun"),
            ("postgres://db:5432,lab:hunter2/rt", "hunter2"),
            ("postgres://lab:pw9@db/rt?application_name=a@b&password=hunter2", "hunter2"),
            ("postgres://db/rt?application_name=a@b&password=hunter2", "hunter2"),
            ("postgres://db/rt?sslmode=x?password=hunter2", "hunter2"),
            ("postgres://db/rt?p%61ssword=hunter2", "hunter2"),
            ("postgres://db/rt?PASSWORD=hunter2", "hunter2"),
            ("host=db user=u password=hunter2", "hunter2"),
            ("host=db password='hun ter2' user=u", "ter2"),
            ("host=db password = 'hun\\' ter2' user=u", "ter2"),
            ("host=db PassWord=hunter2", "hunter2"),
            ("host=db password='hunter2", "hunter2"),
            ("host=db oops password hunter2", "hunter2"),
        ] {
            let shown = redact(text);
            assert!(!shown.contains(secret), "{text} -> {shown}");
            assert!(shown.contains("***"), "{text} -> {shown}");
        }
        assert_eq!(redact("postgres://lab:hunter2"), "postgres://lab:***");
        assert_eq!(redact("postgres://db:5432,[::1]:5433/rt"), "postgres://db:5432,[::1]:5433/rt");
        assert_eq!(redact("host=db password='a b' user=u"), "host=db password=*** user=u");
        assert_eq!(redact("host=db user=u"), "host=db user=u");
        let bad = Location::parse("host=db password='a b'").unwrap_err().to_string();
        assert!(!bad.contains("a b"), "{bad}");
    }

    #[test]
    fn urls_name_their_backend() {
        assert_eq!(Location::parse("sqlite:/a/h.db").unwrap(), Location::Sqlite("/a/h.db".into()));
        assert_eq!(Location::parse("sqlite:rel.db").unwrap(), Location::Sqlite("rel.db".into()));
        assert!(matches!(Location::parse("postgres://h/db").unwrap(), Location::Postgres(_)));
        assert!(Location::parse("sqlite:").is_err());
        assert!(Location::parse("/plain/path").is_err());
    }

    #[test]
    fn the_default_file_follows_xdg() {
        let file = |xdg: Option<&str>, home: Option<&str>| {
            Location::default_file(xdg.map(PathBuf::from), home.map(PathBuf::from))
        };
        assert_eq!(
            file(Some("/x"), Some("/h")),
            Some(Location::Sqlite("/x/rtbuild/history.sqlite".into()))
        );
        assert_eq!(
            file(Some("rel"), Some("/h")),
            Some(Location::Sqlite("/h/.local/share/rtbuild/history.sqlite".into()))
        );
        assert_eq!(file(None, None), None);
    }
}
