//! What the history store needs from a database: statements with typed parameters, rows back,
//! and a write transaction. SQLite ([`super::sqlite`]) and PostgreSQL ([`super::postgres`])
//! implement it; the store's SQL ([`super::store`], [`super::migrations`]) is written once, in
//! the dialect both accept (`$1` parameters, `BIGINT`, `DOUBLE PRECISION`, `TEXT`,
//! `ON CONFLICT DO NOTHING`).

/// A parameter or a column value. A NULL keeps its type: PostgreSQL checks parameter types.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<String>),
}

impl Value {
    pub(crate) fn int(&self) -> Option<i64> {
        match self {
            Value::Int(v) => *v,
            Value::Real(v) => v.map(|v| v as i64),
            Value::Text(_) => None,
        }
    }

    pub(crate) fn real(&self) -> Option<f64> {
        match self {
            Value::Real(v) => *v,
            Value::Int(v) => v.map(|v| v as f64),
            Value::Text(_) => None,
        }
    }

    pub(crate) fn text(&self) -> Option<String> {
        match self {
            Value::Text(v) => v.clone(),
            _ => None,
        }
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(Some(v.to_string()))
    }
}

impl From<Option<&str>> for Value {
    fn from(v: Option<&str>) -> Value {
        Value::Text(v.map(str::to_string))
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(Some(v))
    }
}

impl From<Option<i64>> for Value {
    fn from(v: Option<i64>) -> Value {
        Value::Int(v)
    }
}

impl From<Option<f64>> for Value {
    fn from(v: Option<f64>) -> Value {
        Value::Real(v)
    }
}

/// A database error, as the backend's client library words it (a string, not the driver's type:
/// one seam over rusqlite and postgres, and postgres keeps the server's message in its source).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct DbError(pub String, pub Option<u64>);

impl DbError {
    pub(crate) fn new(message: String) -> DbError {
        DbError(message, None)
    }

    /// The server sent a message of `bytes` bytes, past what rtbuild reads from one.
    pub(crate) fn oversized(bytes: u64) -> DbError {
        DbError(format!("the server sent a message of {bytes} bytes"), Some(bytes))
    }
}

/// One open database connection.
pub(crate) trait Backend {
    /// Runs statements without parameters (`;`-separated).
    fn batch(&mut self, sql: &str) -> Result<(), DbError>;
    /// Runs one statement; the number of rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError>;
    /// Runs one query; its rows, each column as a [`Value`].
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, DbError>;
    /// Starts a transaction that writes: other writers wait until it ends (SQLite takes the
    /// write lock at once; PostgreSQL locks per row, and [`Backend::lock_schema`] for
    /// migrations).
    fn begin_write(&mut self) -> Result<(), DbError>;
    /// Inside a transaction: waits until no other connection is migrating the schema.
    fn lock_schema(&mut self) -> Result<(), DbError>;
}
