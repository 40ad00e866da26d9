//! The accept loop of `svcdir-search` (issue 6: limits on connections, slow clients and
//! shutdown), on hyper's HTTP/1.1 connection driver rather than `axum::serve`, which has no
//! setting for any of these.
//!
//! - Up to [`Limits::max_connections`] connections are served normally.
//! - Past that, up to [`OVERFLOW_CONNECTIONS`] more are accepted only to be told so (after
//!   `CLOSING_GRACE` at most, in case a permit comes back meanwhile): one 429 JSON answer
//!   with `Connection: close` and `Retry-After`, so a client (or nginx, to another replica)
//!   learns at once to come back, instead of hanging in a queue.
//! - Past both, new connections wait in the kernel's accept queue until one closes: a flood
//!   costs no task, buffer or file descriptor.
//! - A connection that takes longer than [`Limits::header_timeout`] to send a request's
//!   head, including the wait for the next request on a kept-alive connection, is closed:
//!   slow-header (slowloris) and idle clients cannot hold connections.
//! - On shutdown, accepting stops, idle connections close, and requests in flight are let
//!   finish for up to [`Limits::request_timeout`] plus [`Limits::drain_grace`] ([`DRAIN_GRACE`]).
//!
//! The accepted connections are served on [`Workers`]: for `svcdir-search` one
//! current-thread runtime per core, each connection on the one with the fewest open (issue
//! 24: the multi-threaded runtime's wake-ups between its threads were a sixth of the
//! server's time under load). The limits stay in the one accept loop, so they hold for
//! the whole process.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc};
use tower::{Service, ServiceExt as _};

use super::Limits;
use crate::api::ApiError;

/// Connections past [`Limits::max_connections`] that are still accepted, to be answered 429.
pub const OVERFLOW_CONNECTIONS: usize = 256;

/// How long a connection past [`Limits::max_connections`] waits for a permit before it is
/// answered 429: long enough for a connection closed at the same time on another worker
/// runtime to give its permit back.
const CLOSING_GRACE: Duration = Duration::from_millis(100);

/// The default of [`Limits::drain_grace`]: time added to [`Limits::request_timeout`] for the
/// requests in flight at shutdown to be written out to slow readers.
pub const DRAIN_GRACE: Duration = Duration::from_secs(5);

/// Serves `service` on `listener` under `limits` until `shutdown` completes, then drains
/// (see the module's documentation). `rejection` answers the connections past the limit.
pub(crate) async fn serve_connections<S>(
    mut listener: TcpListener,
    service: S,
    rejection: Router,
    limits: Limits,
    workers: &Workers,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
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
        // Taken here, in the order of the accepts.
        let permit = normal.clone().try_acquire_owned().ok();
        let (normal, service, rejection) = (normal.clone(), service.clone(), rejection.clone());
        let (watcher, builder) = (graceful.watcher(), builder.clone());
        workers.serve(stream, move |stream| async move {
            // A connection that has just closed on another worker gives its permit back a
            // moment later: that moment is waited for before this one is told no.
            let permit = match permit {
                Some(permit) => Some(permit),
                None => tokio::time::timeout(CLOSING_GRACE, normal.acquire_owned()).await.ok().and_then(Result::ok),
            };
            let io = TokioIo::new(stream);
            // Errors here are the client's (reset, header timeout, bad request line); hyper
            // has already answered what could be answered.
            let _ = if permit.is_some() {
                // hyper's body in axum's box, as a Router does for itself.
                let service = service.map_request(|request: hyper::Request<Incoming>| request.map(Body::new));
                watcher.watch(builder.serve_connection(io, TowerToHyperService::new(service))).await
            } else {
                watcher.watch(builder.serve_connection(io, TowerToHyperService::new(rejection))).await
            };
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

/// Where accepted connections are served: on the accepting runtime ([`Workers::none`]), or
/// on current-thread runtimes of their own ([`Workers::per_core`]).
#[derive(Debug, Default)]
pub struct Workers {
    lanes: Vec<Lane>,
}

/// One worker runtime: where its connections are sent, and how many it has open.
#[derive(Debug)]
struct Lane {
    jobs: mpsc::UnboundedSender<Job>,
    open: Arc<AtomicUsize>,
}

/// A connection handed to a worker, started on its runtime.
type Job = Box<dyn FnOnce() + Send>;

impl Workers {
    /// Connections served on the runtime that accepts them.
    pub fn none() -> Workers {
        Workers::default()
    }

    /// One current-thread runtime per core (`available_parallelism`), each on a thread of
    /// its own that ends once the `Workers` are dropped and its connections are done.
    pub fn per_core() -> std::io::Result<Workers> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let lanes = (0..cores)
            .map(|n| {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
                let (jobs, mut queue) = mpsc::unbounded_channel::<Job>();
                std::thread::Builder::new().name(format!("svcdir-conn-{n}")).spawn(move || {
                    runtime.block_on(async move {
                        while let Some(job) = queue.recv().await {
                            job();
                        }
                    });
                    // Dropping the runtime here cancels what is left: only connections past
                    // the drain's time limit, which the accept loop has given up on.
                })?;
                Ok(Lane { jobs, open: Arc::default() })
            })
            .collect::<std::io::Result<Vec<Lane>>>()?;
        Ok(Workers { lanes })
    }

    /// Runs `serve(stream)` on the worker with the fewest open connections (or here).
    fn serve<F, Fut>(&self, stream: TcpStream, serve: F)
    where
        F: FnOnce(TcpStream) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let Some(lane) = self.lanes.iter().min_by_key(|lane| lane.open.load(Ordering::Relaxed)) else {
            tokio::spawn(serve(stream));
            return;
        };
        // Out of this runtime's reactor, into the worker's (it stays non-blocking).
        let Ok(stream) = stream.into_std() else { return };
        let open = lane.open.clone();
        open.fetch_add(1, Ordering::Relaxed);
        let job: Job = Box::new(move || match TcpStream::from_std(stream) {
            Ok(stream) => {
                tokio::spawn(async move {
                    serve(stream).await;
                    open.fetch_sub(1, Ordering::Relaxed);
                });
            }
            Err(_) => {
                open.fetch_sub(1, Ordering::Relaxed);
            }
        });
        // A worker only stops once the `Workers` are dropped; a failed send drops the job,
        // closing the connection and giving back its permits.
        if lane.jobs.send(job).is_err() {
            lane.open.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// The answer on a connection past [`Limits::max_connections`]: 429 JSON, then close.
pub(crate) fn too_many_connections() -> Response {
    let mut response = ApiError::Overloaded.into_response();
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}
