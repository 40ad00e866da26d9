//! Limits on each request (issue 6, "The search server"), applied by [`super::front`]: URL length (414),
//! header size (431), requests at once (429) and time per request (408), each answered
//! with a JSON body. The limits on connections are [`super::connections`]'.

use std::time::Duration;

use axum::extract::Request;

use crate::api::ApiError;

/// Limits on each request (issue 6, "The search server"); [`Limits::default`] gives the
/// values `svcdir-search` uses unless told otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest path and query, in bytes: longer gets 414 `{"detail": "Request-URI too long."}`.
    pub max_uri_bytes: usize,
    /// Largest sum of header names and values, in bytes: larger gets 431. (hyper itself
    /// refuses, with an empty 431, more than 100 headers or a head over about 400 KiB.)
    pub max_header_bytes: usize,
    /// Time allowed to answer one request: later gets 408 `{"detail": "Request timed out."}`
    /// and the connection is closed. A handler that awaits is cut at its next await; a
    /// search, which never awaits, reads the [`Deadline`](crate::search::Deadline) as it
    /// goes and stops itself.
    pub request_timeout: Duration,
    /// Requests answered at once: one more gets 429 at once rather than waiting in a queue,
    /// so that a flood is shed cheaply and nginx can try another server.
    pub max_concurrent: usize,
    /// Connections open at once: the next [`super::connections::OVERFLOW_CONNECTIONS`] get one 429
    /// answer and are closed; more wait in the accept queue until one closes.
    pub max_connections: usize,
    /// Time a connection may take to send a request's head, counted from when the server
    /// starts waiting for it (so also the idle time allowed between kept-alive requests):
    /// past it the connection is closed.
    pub header_timeout: Duration,
    /// Time added to `request_timeout` at shutdown for the requests in flight to be written
    /// out to slow readers ([`super::connections::DRAIN_GRACE`] unless a test shortens it).
    pub drain_grace: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            // 8 KiB, nginx's default `large_client_header_buffers` line size: anything longer
            // could not have come through the deployed proxy anyway.
            max_uri_bytes: 8 * 1024,
            max_header_bytes: 16 * 1024,
            request_timeout: Duration::from_millis(5000),
            max_concurrent: 1024,
            max_connections: 4096,
            // Longer than nginx's upstream keep-alive in the generated configuration (10 s),
            // so nginx, not this server, closes its idle connections: no request is ever sent
            // on a connection this server is closing.
            header_timeout: Duration::from_secs(20),
            drain_grace: super::connections::DRAIN_GRACE,
        }
    }
}

/// 414 past [`Limits::max_uri_bytes`], 431 past [`Limits::max_header_bytes`]; both before
/// the query is parsed, so a huge one costs nothing more than its length.
pub(super) fn size_limits(request: &Request, limits: &Limits) -> Result<(), ApiError> {
    let uri_bytes = request.uri().path_and_query().map_or(0, |pq| pq.as_str().len());
    if uri_bytes > limits.max_uri_bytes {
        return Err(ApiError::UriTooLong);
    }
    // Each header as on the wire: name, ": ", value, CRLF.
    let header_bytes: usize = request.headers().iter().map(|(name, value)| name.as_str().len() + value.len() + 4).sum();
    if header_bytes > limits.max_header_bytes {
        return Err(ApiError::HeadersTooLarge);
    }
    Ok(())
}

pub(super) fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    if let Some(message) = panic.downcast_ref::<&str>() {
        message
    } else if let Some(message) = panic.downcast_ref::<String>() {
        message
    } else {
        "(no message)"
    }
}
