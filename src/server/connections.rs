//! The accept loop of `svcdir-search` (issue 6: limits on connections, slow clients and
//! shutdown), on hyper's HTTP/1.1 connection driver rather than `axum::serve`, which has no
//! setting for any of these.
//!
//! - Up to [`Limits::max_connections`] connections are served normally.
//! - Past that, up to [`OVERFLOW_CONNECTIONS`] more are accepted only to be told so: one
//!   429 JSON answer with `Connection: close` and `Retry-After`, so a client (or nginx, to
//!   another replica) learns at once to come back, instead of hanging in a queue.
//! - Past both, new connections wait in the kernel's accept queue until one closes: a flood
//!   costs no task, buffer or file descriptor.
//! - A connection that takes longer than [`Limits::header_timeout`] to send a request's
//!   head, including the wait for the next request on a kept-alive connection, is closed:
//!   slow-header (slowloris) and idle clients cannot hold connections.
//! - On shutdown, accepting stops, idle connections close, and requests in flight are let
//!   finish for up to [`Limits::request_timeout`] plus [`Limits::drain_grace`] ([`DRAIN_GRACE`]).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use super::Limits;
use crate::api::ApiError;

/// Connections past [`Limits::max_connections`] that are still accepted, to be answered 429.
pub const OVERFLOW_CONNECTIONS: usize = 256;

/// The default of [`Limits::drain_grace`]: time added to [`Limits::request_timeout`] for the
/// requests in flight at shutdown to be written out to slow readers.
pub const DRAIN_GRACE: Duration = Duration::from_secs(5);

/// Serves `router` on `listener` under `limits` until `shutdown` completes, then drains
/// (see the module's documentation). `rejection` answers the connections past the limit.
pub(crate) async fn serve_connections(
    mut listener: TcpListener,
    router: Router,
    rejection: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let normal = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let any = Arc::new(Semaphore::new(limits.max_connections.max(1) + OVERFLOW_CONNECTIONS));
    let graceful = GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout).keep_alive(true);
    let mut shutdown = std::pin::pin!(shutdown);

    loop {
        // Wait for room before accepting: past both limits, clients wait in the kernel queue.
        let slot = tokio::select! {
            () = &mut shutdown => break,
            slot = any.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
        };
        let (stream, _address) = tokio::select! {
            () = &mut shutdown => break,
            // axum's accept retries on per-connection errors and backs off on EMFILE.
            accepted = axum::serve::Listener::accept(&mut listener) => accepted,
        };
        // Small responses on kept-alive connections: send them now, not after a delayed ACK.
        let _ = stream.set_nodelay(true);
        let io = TokioIo::new(stream);
        let (service, permit) = match normal.clone().try_acquire_owned() {
            Ok(permit) => (router.clone(), Some(permit)),
            Err(_) => (rejection.clone(), None),
        };
        let connection = graceful.watch(builder.serve_connection(io, TowerToHyperService::new(service)));
        tokio::spawn(async move {
            // Errors here are the client's (reset, header timeout, bad request line); hyper
            // has already answered what could be answered.
            let _ = connection.await;
            drop((permit, slot));
        });
    }

    // Signal the connections before the listener closes: a client that sees the port closed
    // and then finishes its request must get `connection: close`, even when this thread is
    // preempted between the two steps.
    // The first poll sends the signal; with no connection open it is also the last.
    let mut drained = std::pin::pin!(graceful.shutdown());
    let done = std::future::poll_fn(|cx| std::task::Poll::Ready(drained.as_mut().poll(cx).is_ready())).await;
    drop(listener);
    let drain = limits.request_timeout + limits.drain_grace;
    if !done && tokio::time::timeout(drain, drained).await.is_err() {
        tracing::warn!("connections still open {} ms after shutdown began; closing them", drain.as_millis());
    }
    Ok(())
}

/// The answer on a connection past [`Limits::max_connections`]: 429 JSON, then close.
pub(crate) fn too_many_connections() -> Response {
    let mut response = ApiError::Overloaded.into_response();
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}
