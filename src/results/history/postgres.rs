//! The lab backend: a PostgreSQL server, through tokio-postgres on a private current-thread
//! runtime (no TLS: point it at a Unix socket or a trusted network). rtbuild connects the
//! socket itself and reads the server through [`Guarded`], which refuses a backend message
//! longer than [`MESSAGE_BUDGET`] before the client library allocates it. Concurrent writers
//! are serialised per row by the server (`ON CONFLICT DO NOTHING` waits for the other insert of
//! the same digest), and migrations by an advisory lock.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::config::Host;
use tokio_postgres::types::{ToSql, Type};

use super::backend::{Backend, DbError, Value};

/// How long connecting may take before rtbuild gives up on the server (unless the URL sets
/// `connect_timeout`): the socket connect, the startup and the login together.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// The longest `connect_timeout` a URL may ask for: a URL asking for a day would let a silent
/// server hold `history` that long.
const LONGEST_CONNECT: Duration = Duration::from_secs(60);

/// How long connecting may take: the URL's `connect_timeout`, at most [`LONGEST_CONNECT`],
/// else [`CONNECT_TIMEOUT`].
fn connect_limit(config: &tokio_postgres::Config) -> Duration {
    config.get_connect_timeout().map_or(CONNECT_TIMEOUT, |asked| (*asked).min(LONGEST_CONNECT))
}

/// The longest backend message rtbuild reads (its length header, which counts itself, included):
/// far more than any row rtbuild stores (a few KB) or any error or parameter message a server
/// sends, and far less than the 2 GiB a length header can claim, which the client library
/// would allocate before reading a byte of it.
pub(crate) const MESSAGE_BUDGET: u64 = 8 << 20;

/// The advisory lock key rtbuild's migrations hold ("rtbuild" in a 64-bit number).
const SCHEMA_LOCK: i64 = 0x0072_7462_7569_6c64;

/// A connection: the client, the runtime its connection task runs on (only while a statement
/// is waited for), and the size of a message [`Guarded`] refused (0: none).
struct Session {
    runtime: tokio::runtime::Runtime,
    client: tokio_postgres::Client,
    refused: Arc<AtomicU64>,
}

impl Session {
    /// Runs `work` on the client until it ends; an error after a refused message is that.
    fn block_on<R>(
        &mut self,
        work: impl AsyncFnOnce(&tokio_postgres::Client) -> Result<R, tokio_postgres::Error>,
    ) -> Result<R, DbError> {
        let Session { runtime, client, refused } = self;
        runtime.block_on(work(client)).map_err(|e| fault(refused, e))
    }
}

/// The error for `err`: the refused message when [`Guarded`] refused one, else the library's.
fn fault(refused: &AtomicU64, err: tokio_postgres::Error) -> DbError {
    match refused.load(Ordering::SeqCst) {
        0 => error(err),
        bytes => DbError::oversized(bytes),
    }
}

pub(crate) struct Postgres {
    client: Watchdog<Session>,
    /// How long one statement may take before rtbuild gives up on the server
    /// (`--db-timeout`). The client library has no deadline of its own past the socket
    /// connect, and neither TCP keepalives nor `tcp_user_timeout` fire when a live server's
    /// kernel acknowledges everything but the server never answers: the client runs on a
    /// worker thread and rtbuild stops waiting for it.
    statement_limit: Duration,
}

/// Connects to the first host of `config` that answers, as the client library would (each
/// host in order, each of its addresses, a Unix socket folder as `.s.PGSQL.PORT`), and logs in
/// through [`Guarded`].
fn open(config: tokio_postgres::Config) -> Result<Session, DbError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| DbError::new(format!("cannot start the client: {e}")))?;
    let refused = Arc::new(AtomicU64::new(0));
    let (client, connection) = runtime.block_on(async {
        let stream = connect_socket(&config).await?;
        let guarded =
            Guarded { socket: stream, frames: Frames::default(), refused: refused.clone() };
        config.connect_raw(guarded, tokio_postgres::NoTls).await.map_err(|e| fault(&refused, e))
    })?;
    // The connection task reads and writes the socket whenever a statement is waited for.
    runtime.spawn(async move {
        let _ = connection.await;
    });
    Ok(Session { runtime, client, refused })
}

/// The socket to the first host of `config` that accepts a connection.
async fn connect_socket(config: &tokio_postgres::Config) -> Result<Socket, DbError> {
    let (hosts, addrs) = (config.get_hosts(), config.get_hostaddrs());
    let count = hosts.len().max(addrs.len());
    if count == 0 {
        return Err(DbError::new("the URL names no host".to_string()));
    }
    let ports = config.get_ports();
    let limit = connect_limit(config);
    let mut last = None;
    for at in 0..count {
        let port = ports.get(at).or(ports.first()).copied().unwrap_or(5432);
        let attempt = match (addrs.get(at), hosts.get(at)) {
            (Some(ip), _) => tcp(&[std::net::SocketAddr::new(*ip, port)], limit).await,
            (None, Some(Host::Tcp(name))) => {
                match tokio::net::lookup_host((name.as_str(), port)).await {
                    Ok(found) => tcp(&found.collect::<Vec<_>>(), limit).await,
                    // Not named: a host the library read out of a mistyped URL may be a password.
                    Err(e) => Err(format!("cannot resolve host {} of the URL: {e}", at + 1)),
                }
            }
            (None, Some(Host::Unix(folder))) => {
                let path = folder.join(format!(".s.PGSQL.{port}"));
                match tokio::time::timeout(limit, tokio::net::UnixStream::connect(&path)).await {
                    Ok(Ok(stream)) => Ok(Socket::Unix(stream)),
                    Ok(Err(e)) => Err(format!("cannot connect to {}: {e}", path.display())),
                    Err(_) => Err(format!("cannot connect to {}: timed out", path.display())),
                }
            }
            (None, None) => Err("the URL names no host".to_string()),
        };
        match attempt {
            Ok(socket) => return Ok(socket),
            Err(e) => last = Some(e),
        }
    }
    Err(DbError::new(format!("error connecting to server: {}", last.unwrap_or_default())))
}

/// A TCP connection to the first of `addrs` that accepts one within `limit`.
async fn tcp(addrs: &[std::net::SocketAddr], limit: Duration) -> Result<Socket, String> {
    let mut last = "no address to connect to".to_string();
    for addr in addrs {
        match tokio::time::timeout(limit, tokio::net::TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => {
                let _ = stream.set_nodelay(true);
                return Ok(Socket::Tcp(stream));
            }
            Ok(Err(e)) => last = format!("cannot connect to {addr}: {e}"),
            Err(_) => last = format!("cannot connect to {addr}: timed out"),
        }
    }
    Err(last)
}

/// The socket to the server.
enum Socket {
    Tcp(tokio::net::TcpStream),
    Unix(tokio::net::UnixStream),
}

/// The socket as the client library reads it: every backend message's length header is looked
/// at as it arrives, and the read fails on one past [`MESSAGE_BUDGET`] (its size is kept in
/// `refused` for the error rtbuild prints).
struct Guarded {
    socket: Socket,
    frames: Frames,
    refused: Arc<AtomicU64>,
}

/// Where the byte stream from the server stands: inside a message's 5-byte header (type and
/// length) or inside its body.
#[derive(Default)]
struct Frames {
    header: [u8; 5],
    have: usize,
    body_left: u64,
}

impl Frames {
    /// Follows `bytes`; the length of the first message past the budget, if any.
    fn feed(&mut self, mut bytes: &[u8]) -> Result<(), u64> {
        while !bytes.is_empty() {
            if self.body_left > 0 {
                let skip = usize::try_from(self.body_left).unwrap_or(usize::MAX).min(bytes.len());
                self.body_left -= skip as u64;
                bytes = &bytes[skip..];
                continue;
            }
            self.header[self.have] = bytes[0];
            self.have += 1;
            bytes = &bytes[1..];
            if self.have == self.header.len() {
                self.have = 0;
                let [_, a, b, c, d] = self.header;
                let length = u64::from(u32::from_be_bytes([a, b, c, d]));
                if length > MESSAGE_BUDGET {
                    return Err(length);
                }
                self.body_left = length.saturating_sub(4);
            }
        }
        Ok(())
    }
}

impl AsyncRead for Guarded {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let poll = match &mut this.socket {
            Socket::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            Socket::Unix(s) => Pin::new(s).poll_read(cx, buf),
        };
        if let Poll::Ready(Ok(())) = poll
            && let Err(length) = this.frames.feed(&buf.filled()[before..])
        {
            this.refused.store(length, Ordering::SeqCst);
            return Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("the server sent a message of {length} bytes"),
            )));
        }
        poll
    }
}

impl AsyncWrite for Guarded {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match &mut self.get_mut().socket {
            Socket::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            Socket::Unix(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match &mut self.get_mut().socket {
            Socket::Tcp(s) => Pin::new(s).poll_flush(cx),
            Socket::Unix(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match &mut self.get_mut().socket {
            Socket::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            Socket::Unix(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

impl Postgres {
    /// Connects to the server of `url`; each statement may then take `statement_limit`.
    pub(crate) fn connect(url: &str, statement_limit: Duration) -> Result<Postgres, DbError> {
        let config: tokio_postgres::Config = url.parse().map_err(error)?;
        let limit = connect_limit(&config);
        let client = Watchdog::start(move || open(config), limit)
            .map_err(|late| late.or("connecting and logging in"))??;
        Ok(Postgres { client, statement_limit })
    }

    /// Runs `job` on the client within the statement limit; `what` names it in the error.
    fn call<R: Send + 'static>(
        &mut self,
        what: &str,
        job: impl FnOnce(&mut Session) -> Result<R, DbError> + Send + 'static,
    ) -> Result<R, DbError> {
        self.client.run(job, self.statement_limit).map_err(|late| late.or_statement(what))?
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
            Some(limit) => DbError::new(format!(
                "the server did not answer within {} s ({what}); it accepts connections but does not respond",
                limit.as_secs_f64()
            )),
            None => DbError::new(format!("the connection was given up before ({what})")),
        }
    }

    /// The error for the statement `what`, with the fix: a statement that waits for a lock
    /// another session holds on rtbuild's tables misses its deadline as a silent server does.
    fn or_statement(self, what: &str) -> DbError {
        match self.0 {
            Some(limit) => DbError::new(format!(
                "the server did not answer within {} s ({what}); check that the server is healthy and that no other session holds a lock on rtbuild's tables (see pg_locks), then run again, or wait longer with --db-timeout SECONDS",
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

fn error(err: tokio_postgres::Error) -> DbError {
    // The server's own message (`relation … does not exist`) is in the source, not Display.
    if let Some(db) = err.as_db_error() {
        return DbError::new(db.message().to_string());
    }
    match std::error::Error::source(&err) {
        Some(cause) => DbError::new(format!("{err}: {cause}")),
        None => DbError::new(err.to_string()),
    }
}

fn to_sql(value: &Value) -> Box<dyn ToSql + Sync> {
    match value {
        Value::Int(v) => Box::new(*v),
        Value::Real(v) => Box::new(*v),
        Value::Text(v) => Box::new(v.clone()),
    }
}

fn column(row: &tokio_postgres::Row, at: usize) -> Result<Value, DbError> {
    let kind = row.columns()[at].type_();
    let get = |e: tokio_postgres::Error| error(e);
    Ok(if *kind == Type::INT8 {
        Value::Int(row.try_get(at).map_err(get)?)
    } else if *kind == Type::INT4 {
        Value::Int(row.try_get::<_, Option<i32>>(at).map_err(get)?.map(i64::from))
    } else if *kind == Type::FLOAT8 {
        Value::Real(row.try_get(at).map_err(get)?)
    } else if *kind == Type::TEXT || *kind == Type::VARCHAR {
        Value::Text(row.try_get(at).map_err(get)?)
    } else {
        return Err(DbError::new(format!("unexpected column type {kind}")));
    })
}

impl Backend for Postgres {
    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        let owned = sql.to_string();
        self.call(&statement(sql), move |session| {
            session.block_on(async |client| client.batch_execute(&owned).await)
        })
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let (owned, params) = (sql.to_string(), params.to_vec());
        self.call(&statement(sql), move |session| {
            let boxed: Vec<Box<dyn ToSql + Sync>> = params.iter().map(to_sql).collect();
            session.block_on(async |client| {
                let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
                client.execute(&owned, &refs).await
            })
        })
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, DbError> {
        let (owned, params) = (sql.to_string(), params.to_vec());
        self.call(&statement(sql), move |session| {
            let boxed: Vec<Box<dyn ToSql + Sync>> = params.iter().map(to_sql).collect();
            let rows = session.block_on(async |client| {
                let refs: Vec<&(dyn ToSql + Sync)> = boxed.iter().map(|b| b.as_ref()).collect();
                client.query(&owned, &refs).await
            })?;
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

    /// The URL's connect_timeout is honoured up to a minute: 99999 s against a silent server
    /// would hold `history` for a day.
    #[test]
    fn a_urls_connect_timeout_is_capped_at_a_minute() {
        let limit = |url: &str| connect_limit(&url.parse().unwrap());
        assert_eq!(limit("postgres://u@h/db"), Duration::from_secs(15));
        assert_eq!(limit("postgres://u@h/db?connect_timeout=5"), Duration::from_secs(5));
        assert_eq!(limit("postgres://u@h/db?connect_timeout=99999"), Duration::from_secs(60));
    }

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

    /// A message's length header is read across reads of any size; one past the budget is
    /// refused as soon as its header is whole, before its body arrives.
    #[test]
    fn a_message_past_the_budget_is_refused_at_its_header() {
        let mut ok = Vec::new();
        for (tag, body) in [(b'R', vec![0u8; 4]), (b'D', vec![7u8; 1000]), (b'Z', vec![b'I'])] {
            ok.push(tag);
            ok.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
            ok.extend_from_slice(&body);
        }
        for chunk in [1, 3, 5, 7, 4096] {
            let mut frames = Frames::default();
            for piece in ok.chunks(chunk) {
                assert_eq!(frames.feed(piece), Ok(()), "chunk {chunk}");
            }
            let mut huge = vec![b'T'];
            huge.extend_from_slice(&0x7fff_ffffu32.to_be_bytes());
            let refused = huge.chunks(chunk).map(|piece| frames.feed(piece)).find(|r| r.is_err());
            assert_eq!(refused, Some(Err(0x7fff_ffff)), "chunk {chunk}");
        }
        let mut at_budget = Frames::default();
        let mut header = vec![b'D'];
        header.extend_from_slice(&(MESSAGE_BUDGET as u32).to_be_bytes());
        assert_eq!(at_budget.feed(&header), Ok(()));
        let mut past = Frames::default();
        header[1..].copy_from_slice(&(MESSAGE_BUDGET as u32 + 1).to_be_bytes());
        assert_eq!(past.feed(&header), Err(MESSAGE_BUDGET + 1));
    }

    #[test]
    fn statements_are_named_by_their_first_words() {
        assert_eq!(statement("SELECT  a, b\n FROM runs WHERE x"), "`SELECT a, b FROM…`");
    }
}
