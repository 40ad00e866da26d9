//! The search server: `/api/v4/services/` and `/api/v3/search/` over a loaded
//! [`SearchIndex`](crate::index::SearchIndex), as an axum [`Router`].
//!
//! This module is the transport: the router, its layers, the listener and the shutdown.
//! What each answer says is the contract's (`crate::api`); the search itself is
//! `crate::search`; the answers of the two search paths are `respond`'s. [`app`] is free of anything listen-specific, so tests drive it
//! with `tower::ServiceExt::oneshot` and the local preview can reuse [`routes`] beside its
//! static files; [`serve`] runs it on a listener until a shutdown signal.
//!
//! Hardening (issue 6, "The search server"): [`layered`] puts [`Limits`] on every request
//! (URL length 414, header size 431, requests at once 429, time per request 408), each
//! answered with a JSON body; [`connections`] limits connections and slow clients; a panic
//! becomes a 500 JSON body and a log line; the index lives in a [`LiveState`] so that
//! `svcdir-search` can swap in a re-read one on SIGHUP while requests go on.

pub mod connections;
pub mod follow;
mod front;
pub(crate) mod limits;
pub mod log;
pub(crate) mod operator;
pub mod reload;
pub(crate) mod respond;
pub(crate) mod state;

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;

use crate::api::ApiError;
use crate::api::headers::{self, JSON};
use crate::search::ApiVersion;
pub use limits::Limits;
pub use operator::Telemetry;
use respond::endpoint;
pub use respond::{links, not_found};
pub use state::{AppState, LiveState};

/// The two search paths, with and without trailing slash, answering GET, HEAD and OPTIONS
/// (405 otherwise). No fallback and no layers, so it can be merged into another router;
/// responses made here already carry their `Content-Type`, and `standard_headers` adds
/// the rest.
pub fn routes(state: Arc<AppState>) -> Router {
    live_routes(Arc::new(LiveState::new(state)))
}

/// [`routes`] over a [`LiveState`], whose index can be swapped while serving.
pub fn live_routes(state: Arc<LiveState>) -> Router {
    let v4 = || endpoint(ApiVersion::V4);
    let v3 = || endpoint(ApiVersion::V3);
    Router::new()
        .route("/api/v4/services/", v4())
        .route("/api/v4/services", v4())
        .route("/api/v3/search/", v3())
        .route("/api/v3/search", v3())
        .with_state(state)
}

/// The whole search service: [`routes`], 404 `{"detail": "Not found."}` for any other path,
/// and the [`layered`] concerns.
///
/// To serve the search beside other routes (the local preview), merge [`routes`] into that
/// router, give it its own fallback, and wrap the result with [`layered`]: axum refuses to
/// merge two routers that both have a fallback.
pub fn app(state: Arc<AppState>) -> Router {
    live_app(Arc::new(LiveState::new(state)), Limits::default())
}

/// [`app`] over a [`LiveState`] and with the given [`Limits`].
pub(crate) fn live_app(state: Arc<LiveState>, limits: Limits) -> Router {
    layered_with(live_routes(state).fallback(not_found), limits)
}

/// What `svcdir-search` serves: [`live_app`] plus the operator's `/healthz` and `/metrics`
/// ([`operator`]), every request counted in `telemetry`.
///
/// The [`front::Front`] itself, served without a router around it (one route lookup and
/// two allocations a request fewer than [`layered_with`]'s).
pub(crate) fn operated_app(state: Arc<LiveState>, telemetry: Arc<Telemetry>, limits: Limits) -> front::Front {
    let router = operator::routes(state.clone(), telemetry.clone()).merge(live_routes(state)).fallback(not_found);
    front::Front::new(router, limits, Some(telemetry))
}

/// [`layered_with`] the default [`Limits`].
pub fn layered(router: Router) -> Router {
    layered_with(router, Limits::default())
}

/// Wraps a router with what every response needs: the [`Limits`], panics turned into a
/// 500 JSON body and a log line instead of a dropped connection, the `standard_headers`,
/// and one access log line per request on stderr (method, path and query, status,
/// microseconds).
///
/// The router goes behind one `front::Front` service, the fallback of an outer router.
/// `Router::layer` would wrap each route in each layer, boxed, and axum clones a route's
/// boxes on every request (issue 24: a search took 154 allocations with them, 80 without,
/// counted by a probe on `malloc` under load).
pub fn layered_with(router: Router, limits: Limits) -> Router {
    Router::new().fallback_service(front::Front::new(router, limits, None))
}

/// Serves `state` with `limits` (`operated_app`, counting in `telemetry`) on `listener`
/// until `shutdown` completes, then stops accepting and lets the requests in flight finish
/// before returning (issue 6: SIGTERM drains). The connections are served on one
/// current-thread runtime per core ([`connections::Workers::per_core`]); this runtime only
/// accepts them.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<LiveState>,
    telemetry: Arc<Telemetry>,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let workers = connections::Workers::per_core()?;
    serve_on(listener, operated_app(state, telemetry, limits), limits, &workers, shutdown).await
}

/// Serves any `router` (the local preview's) under the connection limits of
/// [`connections`], until `shutdown` completes.
pub(crate) async fn serve_router(
    listener: tokio::net::TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_on(listener, router, limits, &connections::Workers::none(), shutdown).await
}

/// [`serve_router`] of any `service`, with the connections served on `workers`.
async fn serve_on<S>(
    listener: tokio::net::TcpListener,
    service: S,
    limits: Limits,
    workers: &connections::Workers,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    S: tower::Service<Request, Response = Response, Error = std::convert::Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    let rejection = layered_with(Router::new().fallback(|| async { connections::too_many_connections() }), limits);
    connections::serve_connections(listener, service, rejection, limits, workers, shutdown).await
}

/// Completes on Ctrl-C (SIGINT) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    let signal = tokio::select! {
        () = ctrl_c => "Ctrl-C",
        () = terminate => "SIGTERM",
    };
    tracing::info!("{signal}: stopping; finishing the requests in flight");
}

/// Sets the headers every response carries (behaviour.md, Routing): `Allow`, `Vary`,
/// the CORS origin ([`headers::COMMON`]), [`headers::HARDENING`], a JSON `Content-Type`
/// where none was set, and [`headers::HTML_CSP`] on HTML.
pub(crate) async fn standard_headers(mut response: Response) -> Response {
    set_standard_headers(response.headers_mut());
    response
}

/// [`standard_headers`] on a response's header map.
fn set_standard_headers(map: &mut HeaderMap) {
    map.insert(header::ALLOW, HeaderValue::from_static(headers::ALLOW));
    map.insert(header::VARY, HeaderValue::from_static(headers::VARY));
    map.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static(headers::ALLOW_ORIGIN));
    for (name, value) in headers::HARDENING {
        map.insert(name, HeaderValue::from_static(value));
    }
    let content_type = map.entry(header::CONTENT_TYPE).or_insert(HeaderValue::from_static(JSON));
    if content_type.to_str().is_ok_and(headers::is_html) {
        map.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(headers::HTML_CSP));
    }
}

/// Adds the CORS preflight headers ([`headers::preflight_headers`]) to the answer to a
/// preflight, whatever its status.
pub(crate) async fn cors_preflight(request: Request, next: Next) -> Response {
    let preflight = headers::preflight_headers(request.method(), request.headers());
    let mut response = next.run(request).await;
    insert_preflight_headers(response.headers_mut(), preflight);
    response
}

/// Puts the headers [`headers::preflight_headers`] gave (if any) on an answer.
fn insert_preflight_headers(map: &mut HeaderMap, preflight: Option<[(&'static str, HeaderValue); 3]>) {
    for (name, value) in preflight.into_iter().flatten() {
        map.insert(name, value);
    }
}

/// Length of a response's body, as far as it is known before it is sent.
pub(crate) fn body_bytes(response: &Response) -> u64 {
    let hint = axum::body::HttpBody::size_hint(response.body());
    hint.exact().unwrap_or(hint.lower())
}
