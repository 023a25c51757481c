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

/// `scheme://user:secret@host/db?password=secret` → `scheme://user:***@host/db?password=***`.
///
/// A host never holds `@`, so the user part ends at the last `@` of the URL: a password may
/// hold `/`, `?`, `#` or `@` and is still hidden whole (a `@` in the query makes more of the
/// URL hidden, never less).
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return redact_query(url);
    };
    match rest.rsplit_once('@') {
        Some((userinfo, after)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{}", redact_query(after)),
            None => format!("{scheme}://{userinfo}@{}", redact_query(after)),
        },
        None => format!("{scheme}://{}", redact_query(rest)),
    }
}

/// `host/db?password=secret&user=u` → `host/db?password=***&user=u`.
fn redact_query(text: &str) -> String {
    let Some((head, query)) = text.split_once('?') else {
        return text.to_string();
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
            _ => pair.to_string(),
        })
        .collect();
    format!("{head}?{}", pairs.join("&"))
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
