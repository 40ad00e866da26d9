//! Log lines on stderr that can never fail a request.
//!
//! `eprintln!` panics when stderr cannot be written (a full disk under a redirected log, a
//! closed pipe); in a response path that drops the connection with the request unanswered.
//! A log line that cannot be written is lost instead, and the request is answered.

use std::fmt;
use std::io::Write as _;
use std::time::Duration;

use axum::http::{Method, StatusCode};

/// Writes one line, ignoring failure. The line is formatted first and written in one call,
/// so lines from concurrent requests never interleave.
pub fn line(args: fmt::Arguments<'_>) {
    let text = format!("{args}\n");
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// The access log line of one request: method, path and query, status, microseconds.
pub fn access(method: &Method, target: &str, status: StatusCode, took: Duration) {
    line(format_args!("{method} {target} {} {}us", status.as_u16(), took.as_micros()));
}
