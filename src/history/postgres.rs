//! The lab backend: a PostgreSQL server, through the synchronous `postgres` client (no TLS:
//! point it at a Unix socket or a trusted network). Concurrent writers are serialised per row
//! by the server (`ON CONFLICT DO NOTHING` waits for the other insert of the same digest), and
//! migrations by an advisory lock.

use std::time::Duration;

use postgres::types::{ToSql, Type};

use super::backend::{Backend, DbError, Value};

/// How long connecting may take before rtbuild gives up on the server (unless the URL sets
/// `connect_timeout`): the socket connect, the startup and the login together.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// How long one statement may take before rtbuild gives up on the server. The client library
/// has no deadline of its own past the socket connect, and neither TCP keepalives nor
/// `tcp_user_timeout` fire when a live server's kernel acknowledges everything but the server
/// never answers: the client runs on a worker thread and rtbuild stops waiting for it.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(120);

/// The advisory lock key rtbuild's migrations hold ("rtbuild" in a 64-bit number).
const SCHEMA_LOCK: i64 = 0x0072_7462_7569_6c64;

pub(crate) struct Postgres {
    client: Watchdog<postgres::Client>,
}

impl Postgres {
    pub(crate) fn connect(url: &str) -> Result<Postgres, DbError> {
        let mut config: postgres::Config = url.parse().map_err(error)?;
        let limit = *config.get_connect_timeout().unwrap_or(&CONNECT_TIMEOUT);
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let client = Watchdog::start(move || config.connect(postgres::NoTls).map_err(error), limit)
            .map_err(|late| late.or("connecting and logging in"))??;
        Ok(Postgres { client })
    }

    /// Runs `job` on the client within [`STATEMENT_TIMEOUT`]; `what` names it in the error.
    fn call<R: Send + 'static>(
        &mut self,
        what: &str,
        job: impl FnOnce(&mut postgres::Client) -> Result<R, DbError> + Send + 'static,
    ) -> Result<R, DbError> {
        self.client.run(job, STATEMENT_TIMEOUT).map_err(|late| late.or_statement(what))?
    }
}

/// Owns a value on a thread of its own and runs jobs on it, waiting at most a deadline for
/// each. After a job that missed its deadline the value is given up (the thread stays blocked
/// until rtbuild exits) and every later job fails at once.
struct Watchdog<T> {
    jobs: Option<std::sync::mpsc::Sender<Job<T>>>,
}

/// One piece of work the watchdog's thread runs on its value.
type Job<T> = Box<dyn FnOnce(&mut T) + Send>;

/// A job missed its deadline (or the worker is gone).
#[derive(Debug)]
struct Late(Option<Duration>);

impl Late {
    /// The error for the job `what`.
    fn or(self, what: &str) -> DbError {
        match self.0 {
            Some(limit) => DbError(format!(
                "the server did not answer within {} s ({what}); it accepts connections but does not respond",
                limit.as_secs_f64()
            )),
            None => DbError(format!("the connection was given up before ({what})")),
        }
    }

    /// The error for the statement `what`, with the fix: a statement that waits for a lock
    /// another session holds on rtbuild's tables misses its deadline as a silent server does.
    fn or_statement(self, what: &str) -> DbError {
        match self.0 {
            Some(limit) => DbError(format!(
                "the server did not answer within {} s ({what}); check that the server is healthy and that no other session holds a lock on rtbuild's tables (see pg_locks), then run again",
                limit.as_secs_f64()
            )),
            None => self.or(what),
        }
    }
}

impl<T: 'static> Watchdog<T> {
    /// Makes the value with `make` on a new thread, waiting at most `limit`.
    fn start<E: Send + 'static>(
        make: impl FnOnce() -> Result<T, E> + Send + 'static,
        limit: Duration,
    ) -> Result<Result<Watchdog<T>, E>, Late> {
        let (jobs, inbox) = std::sync::mpsc::channel::<Job<T>>();
        let (made, outcome) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new().name("rtbuild-db".into()).spawn(move || {
            let mut value = match make() {
                Ok(value) => {
                    let _ = made.send(Ok(()));
                    value
                }
                Err(err) => {
                    let _ = made.send(Err(err));
                    return;
                }
            };
            for job in inbox {
                job(&mut value);
            }
        });
        if spawned.is_err() {
            return Err(Late(None));
        }
        match outcome.recv_timeout(limit) {
            Ok(Ok(())) => Ok(Ok(Watchdog { jobs: Some(jobs) })),
            Ok(Err(err)) => Ok(Err(err)),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(Late(Some(limit))),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(Late(None)),
        }
    }

    /// Runs `job` on the value, waiting at most `limit` for its result.
    fn run<R: Send + 'static>(
        &mut self,
        job: impl FnOnce(&mut T) -> R + Send + 'static,
        limit: Duration,
    ) -> Result<R, Late> {
        let jobs = self.jobs.as_ref().ok_or(Late(None))?;
        let (done, result) = std::sync::mpsc::channel();
        jobs.send(Box::new(move |value: &mut T| {
            let _ = done.send(job(value));
        }))
        .map_err(|_| Late(None))?;
        match result.recv_timeout(limit) {
            Ok(value) => Ok(value),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                self.jobs = None;
                Err(Late(Some(limit)))
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                self.jobs = None;
                Err(Late(None))
            }
        }
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
        let owned = sql.to_string();
        self.call(&statement(sql), move |client| client.batch_execute(&owned).map_err(error))
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let (owned, params) = (sql.to_string(), params.to_vec());
        self.call(&statement(sql), move |client| {
            let boxed: Vec<Box<dyn ToSql + Sync>> = params.iter().map(to_sql).collect();
            let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
            client.execute(&owned, &refs).map_err(error)
        })
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, DbError> {
        let (owned, params) = (sql.to_string(), params.to_vec());
        self.call(&statement(sql), move |client| {
            let boxed: Vec<Box<dyn ToSql + Sync>> = params.iter().map(to_sql).collect();
            let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
            let rows = client.query(&owned, &refs).map_err(error)?;
            rows.iter().map(|row| (0..row.len()).map(|at| column(row, at)).collect()).collect()
        })
    }

    fn begin_write(&mut self) -> Result<(), DbError> {
        self.batch("BEGIN")
    }

    fn lock_schema(&mut self) -> Result<(), DbError> {
        self.batch(&format!("SELECT pg_advisory_xact_lock({SCHEMA_LOCK})"))
    }
}

/// A statement as an error names it: its first words.
fn statement(sql: &str) -> String {
    let words: Vec<&str> = sql.split_whitespace().take(4).collect();
    format!("`{}…`", words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_past_its_deadline_is_given_up_and_later_jobs_fail_at_once() {
        let mut dog =
            Watchdog::start(|| Ok::<u32, ()>(7), Duration::from_secs(20)).unwrap().unwrap();
        assert_eq!(dog.run(|v| *v + 1, Duration::from_secs(20)).unwrap(), 8);
        let started = std::time::Instant::now();
        let late = dog
            .run(|_| std::thread::sleep(Duration::from_secs(30)), Duration::from_millis(200))
            .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(20));
        assert_eq!(
            late.or("`SELECT 1…`").0,
            "the server did not answer within 0.2 s (`SELECT 1…`); it accepts connections but does not respond"
        );
        assert!(dog.run(|v| *v, Duration::from_secs(20)).unwrap_err().0.is_none());
    }

    #[test]
    fn making_the_value_past_its_deadline_is_late() {
        let late = Watchdog::<u32>::start(
            || {
                std::thread::sleep(Duration::from_secs(30));
                Ok::<u32, ()>(1)
            },
            Duration::from_millis(200),
        )
        .map(|_| ())
        .unwrap_err();
        assert_eq!(late.0, Some(Duration::from_millis(200)));
    }

    #[test]
    fn statements_are_named_by_their_first_words() {
        assert_eq!(statement("SELECT  a, b\n FROM runs WHERE x"), "`SELECT a, b FROM…`");
    }
}
