//! The lab backend: a PostgreSQL server, through the synchronous `postgres` client (no TLS:
//! point it at a Unix socket or a trusted network). Concurrent writers are serialised per row
//! by the server (`ON CONFLICT DO NOTHING` waits for the other insert of the same digest), and
//! migrations by an advisory lock.

use std::time::Duration;

use postgres::types::{ToSql, Type};

use super::backend::{Backend, DbError, Value};

/// How long connecting may take before rtbuild gives up on the server.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// The advisory lock key rtbuild's migrations hold ("rtbuild" in a 64-bit number).
const SCHEMA_LOCK: i64 = 0x0072_7462_7569_6c64;

pub(crate) struct Postgres {
    client: postgres::Client,
}

impl Postgres {
    pub(crate) fn connect(url: &str) -> Result<Postgres, DbError> {
        let mut config: postgres::Config = url.parse().map_err(error)?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let client = config.connect(postgres::NoTls).map_err(error)?;
        Ok(Postgres { client })
    }
}

fn error(err: postgres::Error) -> DbError {
    // The server's own message (`relation … does not exist`) is in the source, not Display.
    if let Some(db) = err.as_db_error() {
        return DbError(db.message().to_string());
    }
    match std::error::Error::source(&err) {
        Some(cause) => DbError(format!("{err}: {cause}")),
        None => DbError(err.to_string()),
    }
}

fn to_sql(value: &Value) -> Box<dyn ToSql + Sync> {
    match value {
        Value::Int(v) => Box::new(*v),
        Value::Real(v) => Box::new(*v),
        Value::Text(v) => Box::new(v.clone()),
    }
}

fn column(row: &postgres::Row, at: usize) -> Result<Value, DbError> {
    let kind = row.columns()[at].type_();
    let get = |e: postgres::Error| error(e);
    Ok(if *kind == Type::INT8 {
        Value::Int(row.try_get(at).map_err(get)?)
    } else if *kind == Type::INT4 {
        Value::Int(row.try_get::<_, Option<i32>>(at).map_err(get)?.map(i64::from))
    } else if *kind == Type::FLOAT8 {
        Value::Real(row.try_get(at).map_err(get)?)
    } else if *kind == Type::TEXT || *kind == Type::VARCHAR {
        Value::Text(row.try_get(at).map_err(get)?)
    } else {
        return Err(DbError(format!("unexpected column type {kind}")));
    })
}

impl Backend for Postgres {
    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.client.batch_execute(sql).map_err(error)
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let boxed: Vec<Box<dyn ToSql + Sync>> = params.iter().map(to_sql).collect();
        let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
        self.client.execute(sql, &refs).map_err(error)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, DbError> {
        let boxed: Vec<Box<dyn ToSql + Sync>> = params.iter().map(to_sql).collect();
        let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
        let rows = self.client.query(sql, &refs).map_err(error)?;
        rows.iter().map(|row| (0..row.len()).map(|at| column(row, at)).collect()).collect()
    }

    fn begin_write(&mut self) -> Result<(), DbError> {
        self.batch("BEGIN")
    }

    fn lock_schema(&mut self) -> Result<(), DbError> {
        self.batch(&format!("SELECT pg_advisory_xact_lock({SCHEMA_LOCK})"))
    }
}
