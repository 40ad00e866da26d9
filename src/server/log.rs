//! The servers' logs (issue 14): `tracing` events written as text or JSON lines on stderr,
//! filtered by `RUST_LOG`, by a background thread that can never hold up or fail a request.
//!
//! Every request is one event of target `ACCESS_TARGET` (method, path, query, status,
//! duration, bytes); start-up, reload and shutdown are events of the binaries. [`init`]
//! installs the subscriber once per process. Its writer ([`Gathered`]) only appends a
//! request's line to a shared buffer, and when that is full (a log reader that cannot keep
//! up) the line is dropped instead of making the request wait. A writer thread wakes when
//! the buffer stops being empty, lets lines gather for [`GATHER`], and writes them out in
//! one go: under load one wake-up per few hundred lines, not one per line (issue 24: the
//! wake-ups of `tracing-appender`'s channel cost more than the writing). It ignores write
//! errors (`QuietStderr`): `eprintln!` panics when stderr cannot be written (a full disk
//! under a redirected log, a closed pipe), and a lost log line must never cost an answer.
//!
//! In JSON, an access line is written straight to that queue, in the shape the JSON
//! formatter gives every other event ([`access`]): through `tracing` it was 7 % of the
//! search server's CPU a request at 10,000 services (issue 24).

use std::cell::RefCell;
use std::io::{IsTerminal as _, Write};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::http::{Method, StatusCode};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

use crate::model::timestamp::Timestamp;

/// Target of the access log events: `RUST_LOG=info,svcdir::access=off` turns the access log
/// off (and then an event costs one cached check of a static flag).
pub(crate) const ACCESS_TARGET: &str = "svcdir::access";

/// Filter used when `RUST_LOG` is unset or empty.
pub(crate) const DEFAULT_FILTER: &str = "info";

/// Bytes of lines waiting for the writer thread; past that new lines are dropped.
const QUEUED_BYTES: usize = 8 << 20;

/// How long the writer thread lets lines gather after the first one before writing them:
/// what a line may be late by.
pub const GATHER: Duration = Duration::from_millis(5);

/// Time the lines still queued at exit are given to be written.
const FLUSH_AT_EXIT: Duration = Duration::from_secs(1);

/// The queue the access lines are written to directly: set by [`init`] when the log is
/// JSON; otherwise they are `tracing` events like the others.
static DIRECT: OnceLock<Gathered> = OnceLock::new();

/// How log lines are written (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LogFormat {
    /// Text when stderr is a terminal, JSON lines otherwise (a file, a pipe, journald).
    #[default]
    Auto,
    /// One human-readable line per event: time, level, target, message, fields.
    Text,
    /// One JSON object per line: `timestamp`, `level`, `target`, `message` and the event's
    /// fields at the top level.
    Json,
}

impl LogFormat {
    /// `Auto` made concrete for this process's stderr.
    pub fn resolve(self) -> LogFormat {
        match self {
            LogFormat::Auto if std::io::stderr().is_terminal() => LogFormat::Text,
            LogFormat::Auto => LogFormat::Json,
            other => other,
        }
    }
}

/// Keeps the log writer thread alive; dropping it writes out the lines still queued (for
/// at most a second). Hold it until the process ends.
#[must_use = "dropping the guard stops the log writer"]
pub struct LogGuard {
    gathered: Option<Gathered>,
}

impl Drop for LogGuard {
    fn drop(&mut self) {
        let Some(gathered) = self.gathered.take() else { return };
        let (done, finished) = std::sync::mpsc::channel::<()>();
        {
            let mut queue = gathered.lock();
            queue.closing = Some(done);
        }
        gathered.shared.ready.notify_one();
        let _ = finished.recv_timeout(FLUSH_AT_EXIT);
    }
}

/// The log's writer (a `MakeWriter`): each line appended whole to the queue the writer
/// thread empties.
#[derive(Clone)]
pub struct Gathered {
    shared: Arc<Shared>,
}

struct Shared {
    queue: Mutex<Queue>,
    ready: Condvar,
}

#[derive(Default)]
struct Queue {
    lines: Vec<u8>,
    /// Set by [`LogGuard`]'s drop: write what is left, then say so here and stop.
    closing: Option<std::sync::mpsc::Sender<()>>,
}

impl Gathered {
    /// The queue and its writer thread, which writes to `out`.
    fn start(mut out: impl Write + Send + 'static) -> std::io::Result<Gathered> {
        let shared = Arc::new(Shared { queue: Mutex::default(), ready: Condvar::new() });
        let gathered = Gathered { shared: shared.clone() };
        std::thread::Builder::new().name("svcdir-log".into()).spawn(move || {
            let mut lines = Vec::new();
            loop {
                let closing = {
                    let mut queue = shared.queue.lock().unwrap_or_else(PoisonError::into_inner);
                    while queue.lines.is_empty() && queue.closing.is_none() {
                        queue = shared.ready.wait(queue).unwrap_or_else(PoisonError::into_inner);
                    }
                    if queue.closing.is_none() {
                        // Deliberate: the lines of the next few milliseconds join this write.
                        drop(queue);
                        std::thread::sleep(GATHER);
                        queue = shared.queue.lock().unwrap_or_else(PoisonError::into_inner);
                    }
                    std::mem::swap(&mut lines, &mut queue.lines);
                    queue.closing.take()
                };
                let _ = out.write_all(&lines);
                let _ = out.flush();
                lines.clear();
                if let Some(done) = closing {
                    let _ = done.send(());
                    return;
                }
            }
        })?;
        Ok(gathered)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.shared.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `line` (whole lines) for the writer thread.
    fn push(&self, line: &[u8]) {
        let mut queue = self.lock();
        // Full: the line is lost rather than the request held up.
        if queue.lines.len() + line.len() <= QUEUED_BYTES {
            let was_empty = queue.lines.is_empty();
            queue.lines.extend_from_slice(line);
            drop(queue);
            if was_empty {
                self.shared.ready.notify_one();
            }
        }
    }
}

impl Write for Gathered {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.push(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Gathered {
    type Writer = Gathered;

    fn make_writer(&'a self) -> Gathered {
        self.clone()
    }
}

/// Installs the process's log subscriber: `format` ([`LogFormat::resolve`]d), filtered by
/// `RUST_LOG` (`DEFAULT_FILTER` when unset; an invalid value is reported and the default
/// used). A second call in the same process changes nothing.
pub fn init(format: LogFormat) -> LogGuard {
    let (invalid, filter) = match std::env::var("RUST_LOG") {
        Ok(value) if !value.trim().is_empty() => match parse_filter(&value) {
            Ok(filter) => (None, filter),
            Err(err) => (
                Some(format!("RUST_LOG={value:?} is not a valid filter ({err}); using {DEFAULT_FILTER:?}")),
                default_filter(),
            ),
        },
        _ => (None, default_filter()),
    };
    // The writer thread writes the queued lines in one go: a busy server's lines go out many
    // to a write(2) instead of one each (one system call per request cost 10 to 15 % of the
    // throughput on 2 cores); an idle one's within `GATHER`.
    let Ok(writer) = Gathered::start(QuietStderr) else {
        eprintln!("svcdir: cannot start the log's writer thread; no log");
        return LogGuard { gathered: None };
    };
    let builder = tracing_subscriber::fmt().with_writer(writer.clone());
    let json = format.resolve() == LogFormat::Json;
    let installed = if json {
        builder.json().flatten_event(true).finish().with(filter).try_init()
    } else {
        builder.with_ansi(std::io::stderr().is_terminal()).finish().with(filter).try_init()
    };
    if installed.is_err() {
        // Another subscriber was first: this writer's thread is stopped at once.
        drop(LogGuard { gathered: Some(writer) });
        return LogGuard { gathered: None };
    }
    if json {
        let _ = DIRECT.set(writer.clone());
    }
    if let Some(warning) = invalid {
        tracing::warn!("{warning}");
    }
    LogGuard { gathered: Some(writer) }
}

/// A `RUST_LOG` value as `target=level` directives and a bare default level, comma
/// separated (`info,svcdir::access=off`). tracing-subscriber's `Targets`, not its
/// `EnvFilter`: the servers' events need no span or field filters, and `EnvFilter`'s regex
/// engine was a tenth of the release build's compile time (issue 23).
fn parse_filter(value: &str) -> Result<Targets, tracing_subscriber::filter::ParseError> {
    value.trim().parse()
}

/// [`DEFAULT_FILTER`] parsed.
fn default_filter() -> Targets {
    parse_filter(DEFAULT_FILTER).expect("DEFAULT_FILTER is a valid filter")
}

/// The access log line of one request, once the caller has checked that `RUST_LOG` lets
/// the access target (`svcdir::access`) through: in JSON written directly, else a `tracing`
/// event.
pub fn access(method: &Method, path: &str, query: Option<&str>, status: StatusCode, took: Duration, bytes: u64) {
    let line = AccessLine {
        method: method.as_str(),
        path,
        query: query.unwrap_or(""),
        status: status.as_u16(),
        duration_us: took.as_micros() as u64,
        bytes,
    };
    match DIRECT.get() {
        Some(queue) => LINE.with_borrow_mut(|buffer| {
            buffer.clear();
            line.write_json(SystemTime::now(), buffer);
            queue.push(buffer);
        }),
        None => line.event(),
    }
}

/// The fields of an access line.
struct AccessLine<'a> {
    method: &'a str,
    path: &'a str,
    query: &'a str,
    status: u16,
    duration_us: u64,
    bytes: u64,
}

thread_local! {
    /// The line being written, kept between requests.
    static LINE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The second of the last line written on this thread, and its time to the second as
    /// RFC 3339 (`2026-11-28T06:30:12`): formatted once a second, not once a line.
    static SECOND: RefCell<(u64, String)> = const { RefCell::new((u64::MAX, String::new())) };
}

impl AccessLine<'_> {
    /// The `tracing` event, written as every other event is.
    fn event(&self) {
        tracing::info!(
            target: ACCESS_TARGET,
            method = self.method,
            path = self.path,
            query = self.query,
            status = self.status,
            duration_us = self.duration_us,
            bytes = self.bytes,
        );
    }

    /// The line the JSON formatter writes for [`AccessLine::event`] at `now` (the fields in
    /// its order, the strings escaped by serde_json as it does), with its newline.
    fn write_json(&self, now: SystemTime, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"timestamp\":\"");
        write_timestamp(now, out);
        out.extend_from_slice(b"\",\"level\":\"INFO\",\"method\":");
        for (name, value) in [("", self.method), (",\"path\":", self.path), (",\"query\":", self.query)] {
            out.extend_from_slice(name.as_bytes());
            // Writing a str into a Vec cannot fail.
            let _ = serde_json::to_writer(&mut *out, value);
        }
        let _ = writeln!(
            out,
            ",\"status\":{},\"duration_us\":{},\"bytes\":{},\"target\":\"{ACCESS_TARGET}\"}}",
            self.status, self.duration_us, self.bytes
        );
    }
}

/// `now` in UTC as tracing-subscriber's timer writes it: RFC 3339 with microseconds and `Z`.
fn write_timestamp(now: SystemTime, out: &mut Vec<u8>) {
    let since = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = since.as_secs();
    SECOND.with_borrow_mut(|(second, text)| {
        if *second != seconds {
            // The API's own RFC 3339 form, cut at the second: the microseconds are this line's.
            let full = Timestamp(seconds as i64 * 1_000_000).single_form();
            *text = full.split_once('.').map_or(full.as_str(), |(to_second, _)| to_second).to_owned();
            *second = seconds;
        }
        out.extend_from_slice(text.as_bytes());
    });
    let _ = write!(out, ".{:06}Z", since.subsec_micros());
}

/// stderr whose failures are swallowed: a line that cannot be written is lost, and the
/// writer thread goes on (and never reports the failure on the stderr that just failed).
struct QuietStderr;

impl Write for QuietStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // One write_all per batch of whole lines, so lines never interleave with other
        // writers of stderr.
        let _ = std::io::stderr().lock().write_all(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = std::io::stderr().flush();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use tracing::Level;
    use tracing_subscriber::filter::LevelFilter;

    use super::*;

    #[test]
    fn rust_log_directives_read_as_documented() {
        let filter = parse_filter("info,svcdir::access=off").unwrap();
        assert!(filter.would_enable("svcdir::server", &Level::INFO));
        assert!(!filter.would_enable("svcdir::server", &Level::DEBUG));
        assert!(!filter.would_enable(ACCESS_TARGET, &Level::INFO));
        let filter = parse_filter(" warn ").unwrap();
        assert!(!filter.would_enable(ACCESS_TARGET, &Level::INFO));
        assert!(filter.would_enable("svcdir", &Level::WARN));
        assert_eq!(default_filter().default_level(), Some(LevelFilter::INFO));
        assert!(parse_filter("svcdir=loud").is_err());
    }

    /// Collects what a subscriber writes.
    #[derive(Clone, Default)]
    struct Capture(Arc<Mutex<Vec<u8>>>);

    impl Write for Capture {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl tracing_subscriber::fmt::MakeWriter<'_> for Capture {
        type Writer = Capture;

        fn make_writer(&self) -> Capture {
            self.clone()
        }
    }

    #[test]
    fn a_direct_access_line_is_the_line_the_json_formatter_writes() {
        let lines = [
            AccessLine {
                method: "GET",
                path: "/api/v4/services/",
                query: "postcode=G1+1AA",
                status: 200,
                duration_us: 87,
                bytes: 23_456,
            },
            // What a client may send: quotes, backslashes, controls and non-ASCII, escaped alike.
            AccessLine {
                method: "OPTIONS",
                path: "/api/v3/search/\"x\\",
                query: "q=caf\u{e9}\u{1}%22\t",
                status: 400,
                duration_us: 0,
                bytes: 0,
            },
        ];
        for line in lines {
            let captured = Capture::default();
            let subscriber =
                tracing_subscriber::fmt().with_writer(captured.clone()).json().flatten_event(true).finish();
            tracing::subscriber::with_default(subscriber, || line.event());
            let from_tracing = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
            let mut direct = Vec::new();
            line.write_json(SystemTime::now(), &mut direct);
            let direct = String::from_utf8(direct).unwrap();
            // All but the time, which differs by the moment each was written.
            let after_time = |text: &str| text.split_once("\",\"level\"").map(|(_, rest)| rest.to_owned());
            assert_eq!(after_time(&direct), after_time(&from_tracing), "{direct}\n{from_tracing}");
            assert!(after_time(&direct).is_some());
        }
    }

    #[test]
    fn timestamps_are_rfc_3339_utc_with_microseconds() {
        for (seconds, nanos) in
            [(0, 0), (1_795_000_000, 123_456_789), (1_795_000_000, 999_999_999), (1_795_000_001, 5_000)]
        {
            let now = UNIX_EPOCH + Duration::new(seconds, nanos);
            let mut out = Vec::new();
            write_timestamp(now, &mut out);
            let expected = chrono::DateTime::from_timestamp(seconds as i64, nanos)
                .unwrap()
                .to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
            assert_eq!(String::from_utf8(out).unwrap(), expected);
        }
    }
}
