//! The servers' logs (issue 14): `tracing` events written as text or JSON lines on stderr,
//! filtered by `RUST_LOG`, by a background thread that can never hold up or fail a request.
//!
//! Every request is one event of target `ACCESS_TARGET` (method, path, query, status,
//! duration, bytes); start-up, reload and shutdown are events of the binaries. [`init`]
//! installs the subscriber once per process. Its writer is `tracing-appender`'s non-blocking
//! one in lossy mode: a request only queues its line, and when the queue is full (a log
//! reader that cannot keep up) the line is dropped instead of making the request wait. The
//! writer thread ignores write errors (`QuietStderr`): `eprintln!` panics when stderr
//! cannot be written (a full disk under a redirected log, a closed pipe), and a lost log
//! line must never cost an answer.

use std::io::{IsTerminal as _, Write};
use std::time::Duration;

use axum::http::{Method, StatusCode};
use tracing_appender::non_blocking::{NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// Target of the access log events: `RUST_LOG=info,svcdir::access=off` turns the access log
/// off (and then an event costs one cached check of a static flag).
pub(crate) const ACCESS_TARGET: &str = "svcdir::access";

/// Filter used when `RUST_LOG` is unset or empty.
pub(crate) const DEFAULT_FILTER: &str = "info";

/// Lines waiting for the writer thread; past that they are dropped (about 10 MB at most).
const QUEUED_LINES: usize = 32 * 1024;

/// Bytes of log lines gathered into one write to stderr (whole lines only: a buffer is
/// written out before a line that would not fit in it).
const WRITE_BUFFER: usize = 64 * 1024;

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
    _worker: Option<WorkerGuard>,
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
    // The writer thread writes every queued line, then flushes: buffered, a busy server's
    // lines go out many to a write(2) instead of one each (one system call per request cost
    // 10 to 15 % of the throughput on 2 cores); an idle one's still go out at once.
    let stderr = std::io::BufWriter::with_capacity(WRITE_BUFFER, QuietStderr);
    let (writer, worker) = NonBlockingBuilder::default().lossy(true).buffered_lines_limit(QUEUED_LINES).finish(stderr);
    let builder = tracing_subscriber::fmt().with_writer(writer);
    let installed = match format.resolve() {
        LogFormat::Json => builder.json().flatten_event(true).finish().with(filter).try_init(),
        _ => builder.with_ansi(std::io::stderr().is_terminal()).finish().with(filter).try_init(),
    };
    if installed.is_err() {
        return LogGuard { _worker: None };
    }
    if let Some(warning) = invalid {
        tracing::warn!("{warning}");
    }
    LogGuard { _worker: Some(worker) }
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

/// The access log event of one request.
pub fn access(method: &Method, path: &str, query: Option<&str>, status: StatusCode, took: Duration, bytes: u64) {
    tracing::info!(
        target: ACCESS_TARGET,
        method = method.as_str(),
        path,
        query = query.unwrap_or(""),
        status = status.as_u16(),
        duration_us = took.as_micros() as u64,
        bytes,
    );
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
}
