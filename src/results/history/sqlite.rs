//! The embedded backend: one SQLite file (rusqlite, SQLite compiled in). Writers take the
//! database's write lock at `BEGIN IMMEDIATE` and wait for each other up to the wait given
//! (`--db-timeout`, [`super::DEFAULT_WAIT`] unless set).

use std::path::Path;
use std::time::Duration;

use rusqlite::types::{Value as SqlValue, ValueRef};

use super::backend::{Backend, DbError, Value};

pub(crate) struct Sqlite {
    connection: rusqlite::Connection,
    /// How long a statement waits for another connection's lock before giving up.
    wait: Duration,
}

impl Sqlite {
    /// Opens (or creates) the file. Its folder must exist.
    pub(crate) fn open(path: &Path, wait: Duration) -> Result<Sqlite, DbError> {
        let connection = rusqlite::Connection::open(path).map_err(|e| error(e, wait))?;
        connection.busy_timeout(wait).map_err(|e| error(e, wait))?;
        Ok(Sqlite { connection, wait })
    }

    /// Opens an existing file for reading only: no lock is taken until a statement reads, and
    /// a reader never waits for a writer's transaction (only for its commit).
    pub(crate) fn open_read_only(path: &Path, wait: Duration) -> Result<Sqlite, DbError> {
        use rusqlite::OpenFlags;
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let connection =
            rusqlite::Connection::open_with_flags(path, flags).map_err(|e| error(e, wait))?;
        connection.busy_timeout(wait).map_err(|e| error(e, wait))?;
        Ok(Sqlite { connection, wait })
    }
}

/// SQLite's message, with the fix for the failures a file has (a server's do not apply); a
/// lock held past `wait` says how long rtbuild waited.
fn error(err: rusqlite::Error, wait: Duration) -> DbError {
    use rusqlite::ErrorCode;
    let fix = match err.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
            "the file is damaged or is no SQLite database; restore it from a backup, or move it away to start a new history"
        }
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            return DbError::new(format!(
                "{err}; another process held the file's write lock for over {} s; wait for it to finish (`fuser FILE` names it) and run again, or wait longer with --db-timeout SECONDS",
                wait.as_secs_f64()
            ));
        }
        Some(ErrorCode::ReadOnly) => {
            "you may only read it; recording a run needs write access to the file and its folder (or pass --db with a copy you may write)"
        }
        Some(ErrorCode::CannotOpen | ErrorCode::PermissionDenied) => {
            "check that the path names a file in an existing folder and that you may read it (and write it to record runs)"
        }
        Some(ErrorCode::DiskFull) => "the disk is full; free some space and run again",
        _ => return DbError::new(err.to_string()),
    };
    DbError::new(format!("{err}; {fix}"))
}

fn to_sql(value: &Value) -> SqlValue {
    match value {
        Value::Int(Some(v)) => SqlValue::Integer(*v),
        Value::Real(Some(v)) => SqlValue::Real(*v),
        Value::Text(Some(v)) => SqlValue::Text(v.clone()),
        Value::Int(None) | Value::Real(None) | Value::Text(None) => SqlValue::Null,
    }
}

fn from_sql(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Int(None),
        ValueRef::Integer(v) => Value::Int(Some(v)),
        ValueRef::Real(v) => Value::Real(Some(v)),
        ValueRef::Text(v) | ValueRef::Blob(v) => {
            Value::Text(Some(String::from_utf8_lossy(v).into_owned()))
        }
    }
}

impl Backend for Sqlite {
    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        let wait = self.wait;
        self.connection.execute_batch(sql).map_err(|e| error(e, wait))
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let params: Vec<SqlValue> = params.iter().map(to_sql).collect();
        let wait = self.wait;
        let error = |e: rusqlite::Error| error(e, wait);
        let changed = self
            .connection
            .prepare_cached(sql)
            .map_err(error)?
            .execute(rusqlite::params_from_iter(params.iter()))
            .map_err(error)?;
        Ok(changed as u64)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, DbError> {
        let params: Vec<SqlValue> = params.iter().map(to_sql).collect();
        let wait = self.wait;
        let error = |e: rusqlite::Error| error(e, wait);
        let mut statement = self.connection.prepare_cached(sql).map_err(error)?;
        let columns = statement.column_count();
        let mut rows = statement.query(rusqlite::params_from_iter(params.iter())).map_err(error)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(error)? {
            let mut values = Vec::with_capacity(columns);
            for column in 0..columns {
                values.push(from_sql(row.get_ref(column).map_err(error)?));
            }
            out.push(values);
        }
        Ok(out)
    }

    fn begin_write(&mut self) -> Result<(), DbError> {
        self.batch("BEGIN IMMEDIATE")
    }

    fn lock_schema(&mut self) -> Result<(), DbError> {
        // BEGIN IMMEDIATE already holds the only write lock.
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 34 item 14: a locked or damaged file got "check that the server is running".
    #[test]
    fn a_locked_or_damaged_file_says_so_with_its_own_fix() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        let holder = rusqlite::Connection::open(&path).unwrap();
        holder
            .execute_batch("CREATE TABLE t (x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1)")
            .unwrap();
        let mut writer = Sqlite::open(&path, Duration::from_millis(100)).unwrap();
        let locked = writer.begin_write().unwrap_err().0;
        assert!(locked.ends_with("another process held the file's write lock for over 0.1 s; wait for it to finish (`fuser FILE` names it) and run again, or wait longer with --db-timeout SECONDS"), "{locked}");
        holder.execute_batch("ROLLBACK").unwrap();
        drop((holder, writer));
        crate::files::write::fixture(&path, vec![0x5a; 4096]).unwrap();
        let mut reader = Sqlite::open_read_only(&path, Duration::from_secs(1)).unwrap();
        let damaged = reader.query("SELECT 1 FROM t", &[]).unwrap_err().0;
        assert!(damaged.starts_with("file is not a database; the file is damaged"), "{damaged}");
    }
}
