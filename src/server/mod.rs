//! The search server: `/api/v4/services/` and `/api/v3/search/` over a loaded
//! [`SearchIndex`], as an axum [`Router`].
//!
//! This module owns routing, methods, headers, format negotiation and response bodies of
//! the two search paths (behaviour.md, "Routing", "JSON or HTML", "Errors"); the search
//! itself is `crate::search`. [`app`] is free of anything listen-specific, so tests drive it
//! with `tower::ServiceExt::oneshot` and the local preview can reuse [`routes`] beside its
//! static files; [`serve`] runs it on a listener until a shutdown signal.
//!
//! Hardening (issue 6, "The search server"): [`layered`] puts [`Limits`] on every request
//! (URL length 414, header size 431, requests at once 429, time per request 408), each
//! answered with a JSON body; [`connections`] limits connections and slow clients; a panic
//! becomes a 500 JSON body and a log line; the index lives in a [`LiveState`] so that
//! `svcdir-search` can swap in a re-read one on SIGHUP while requests go on.

pub mod connections;
pub mod error;
pub mod log;
pub mod negotiate;
pub mod operator;
pub mod reload;

use std::future::Future;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;

use axum::Router;
use axum::extract::{Extension, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};
use serde::Serialize;
use tokio::sync::Semaphore;
use tower_http::catch_panic::CatchPanicLayer;

use crate::index::{IndexError, SearchIndex};
use crate::render::html::{HtmlView, render_html};
use crate::search::{self, ApiVersion, Deadline, RawQuery, ResultPage};
use crate::views::Publication;
use crate::views::v3::{SearchPage, ServiceV3};
use crate::views::v4::{PagedEnvelope, ServiceContext, ServiceView};
pub use error::ApiError;
pub use negotiate::Format;
pub use operator::Telemetry;

/// `Content-Type` of JSON responses.
pub const JSON: &str = "application/json";
/// `Content-Type` of the HTML view.
pub const HTML: &str = "text/html; charset=utf-8";
/// The methods every path answers (behaviour.md, Routing).
pub const ALLOW: &str = "GET, HEAD, OPTIONS";
/// Canonical path of the v4 search, used in its `next`/`previous` links.
pub const V4_PATH: &str = "/api/v4/services/";
/// Canonical path of the v3 search, used in its `next`/`previous` links.
pub const V3_PATH: &str = "/api/v3/search/";

/// What the handlers share: the index and the publication the answers are made with.
#[derive(Debug)]
pub struct AppState {
    index: SearchIndex,
    publication: Publication,
    /// Content hash of the index file ([`crate::write::content_hash`]), as the build's
    /// manifest records it; worked out from the index itself when it was not read from a file.
    index_hash: OnceLock<String>,
    /// Time taken to read, check and prepare the index.
    load_time: Duration,
}

impl AppState {
    /// Serves `index` with the publication recorded in it.
    pub fn new(index: SearchIndex) -> AppState {
        let publication = index.publication().clone();
        AppState { index, publication, index_hash: OnceLock::new(), load_time: Duration::ZERO }
    }

    /// Reads the index at `path` ([`SearchIndex::from_bytes`]), with its content hash and
    /// the time the whole load took.
    pub fn read(path: &Path) -> Result<AppState, IndexError> {
        let started = Instant::now();
        let bytes = std::fs::read(path).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => IndexError::Missing { path: path.to_path_buf() },
            _ => IndexError::Read { path: path.to_path_buf(), source },
        })?;
        // The hash of the very bytes decoded: a file replaced meanwhile cannot mismatch.
        let hash = crate::write::content_hash(&bytes);
        let index = SearchIndex::from_bytes(&bytes, path)?;
        drop(bytes);
        let mut state = AppState::new(index);
        state.index_hash = OnceLock::from(hash);
        state.load_time = started.elapsed();
        Ok(state)
    }

    /// Content hash of the index in force: the `index` recorded in the build's manifest
    /// (`_manifest.json`) by the build that wrote it.
    pub fn index_hash(&self) -> &str {
        self.index_hash.get_or_init(|| match self.index.to_bytes() {
            Ok(bytes) => crate::write::content_hash(&bytes),
            Err(_) => String::new(),
        })
    }

    /// Time the index took to read, check and prepare (zero when not read from a file).
    pub fn load_time(&self) -> Duration {
        self.load_time
    }

    /// Replaces the base URL recorded in the index (`svcdir-search --base-url`): the origin
    /// of `next` and `previous`. `base_url` must already be validated, without a trailing `/`.
    pub fn with_base_url(mut self, base_url: String) -> AppState {
        self.publication.base_url = base_url;
        self
    }

    /// The loaded index.
    pub fn index(&self) -> &SearchIndex {
        &self.index
    }

    /// The publication in force.
    pub fn publication(&self) -> &Publication {
        &self.publication
    }
}

/// The state the handlers read: an [`AppState`] that can be replaced while requests are being
/// answered. Each request loads the current one once and answers entirely from it, so a
/// swap never mixes two indexes in one answer (issue 6: a new index without restart).
#[derive(Debug)]
pub struct LiveState {
    current: ArcSwap<AppState>,
}

impl LiveState {
    /// Starts with `state`.
    pub fn new(state: Arc<AppState>) -> LiveState {
        LiveState { current: ArcSwap::new(state) }
    }

    /// The state in force now.
    pub fn load(&self) -> Arc<AppState> {
        self.current.load_full()
    }

    /// Puts `state` in force for the requests that start from now on; requests already
    /// running finish with the state they loaded.
    pub fn store(&self, state: Arc<AppState>) {
        self.current.store(state);
    }

    /// Reads the index at `path` again and puts it in force, with `base_url` (validated,
    /// as for [`AppState::with_base_url`]) over the one recorded in the new index. On an
    /// error (file missing, corrupt, of another format version) the state in force is kept.
    pub fn reload(&self, path: &Path, base_url: Option<&str>) -> Result<Arc<AppState>, IndexError> {
        let mut state = AppState::read(path)?;
        if let Some(base_url) = base_url {
            state = state.with_base_url(base_url.to_owned());
        }
        let state = Arc::new(state);
        self.store(state.clone());
        Ok(state)
    }
}

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
    /// search, which never awaits, reads the [`Deadline`] as it goes and stops itself.
    pub request_timeout: Duration,
    /// Requests answered at once: one more gets 429 at once rather than waiting in a queue,
    /// so that a flood is shed cheaply and nginx can try another server.
    pub max_concurrent: usize,
    /// Connections open at once: the next [`connections::OVERFLOW_CONNECTIONS`] get one 429
    /// answer and are closed; more wait in the accept queue until one closes.
    pub max_connections: usize,
    /// Time a connection may take to send a request's head, counted from when the server
    /// starts waiting for it (so also the idle time allowed between kept-alive requests):
    /// past it the connection is closed.
    pub header_timeout: Duration,
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
        }
    }
}

/// The two search paths, with and without trailing slash, answering GET, HEAD and OPTIONS
/// (405 otherwise). No fallback and no layers, so it can be merged into another router;
/// responses made here already carry their `Content-Type`, and [`standard_headers`] adds
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
pub fn live_app(state: Arc<LiveState>, limits: Limits) -> Router {
    layered_with(live_routes(state).fallback(not_found), limits)
}

/// What `svcdir-search` serves: [`live_app`] plus the operator's `/healthz` and `/metrics`
/// ([`operator`]), every request counted in `telemetry`.
pub fn operated_app(state: Arc<LiveState>, telemetry: Arc<Telemetry>, limits: Limits) -> Router {
    let router = operator::routes(state.clone(), telemetry.clone()).merge(live_routes(state)).fallback(not_found);
    // Outermost: the time counted is the whole answer, limits and access log included.
    layered_with(router, limits).layer(middleware::from_fn_with_state(telemetry, operator::measure))
}

/// [`layered_with`] the default [`Limits`].
pub fn layered(router: Router) -> Router {
    layered_with(router, Limits::default())
}

/// Wraps a router with what every response needs: the [`Limits`], panics turned into a
/// 500 JSON body and a log line instead of a dropped connection, the [`standard_headers`],
/// and one access log line per request on stderr (method, path and query, status,
/// microseconds).
pub fn layered_with(router: Router, limits: Limits) -> Router {
    let guard = Arc::new(Guard { limits, permits: Arc::new(Semaphore::new(limits.max_concurrent)) });
    // Outermost last: the log sees every answer, the cheap size checks run before a
    // permit is taken, and the timeout covers the handler only.
    router
        .layer(middleware::from_fn_with_state(guard.clone(), time_limit))
        .layer(middleware::from_fn_with_state(guard.clone(), concurrency_limit))
        .layer(middleware::from_fn_with_state(guard, size_limits))
        .layer(CatchPanicLayer::custom(|panic: Box<dyn std::any::Any + Send>| {
            // issue 6: a panic is a 500 JSON body *and* a log line; the process keeps serving.
            tracing::error!(panic = panic_message(panic.as_ref()), "a handler panicked; answered 500");
            ApiError::Internal.into_response()
        }))
        .layer(middleware::map_response(standard_headers))
        .layer(middleware::from_fn(access_log))
}

/// The limits in force and the permits of [`Limits::max_concurrent`], shared by every
/// clone of a [`layered_with`] router.
struct Guard {
    limits: Limits,
    permits: Arc<Semaphore>,
}

/// 414 past [`Limits::max_uri_bytes`], 431 past [`Limits::max_header_bytes`]; both before
/// the query is parsed, so a huge one costs nothing more than its length.
async fn size_limits(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let uri_bytes = request.uri().path_and_query().map_or(0, |pq| pq.as_str().len());
    if uri_bytes > guard.limits.max_uri_bytes {
        return ApiError::UriTooLong.into_response();
    }
    // Each header as on the wire: name, ": ", value, CRLF.
    let header_bytes: usize = request.headers().iter().map(|(name, value)| name.as_str().len() + value.len() + 4).sum();
    if header_bytes > guard.limits.max_header_bytes {
        return ApiError::HeadersTooLarge.into_response();
    }
    next.run(request).await
}

/// 429 at once when [`Limits::max_concurrent`] requests are already being answered.
async fn concurrency_limit(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let Ok(_permit) = guard.permits.clone().try_acquire_owned() else {
        return ApiError::Overloaded.into_response();
    };
    next.run(request).await
}

/// 408 `{"detail": "Request timed out."}` after [`Limits::request_timeout`]. A handler that
/// awaits (the preview's file reads) is cut at the limit; a search computes inline without
/// awaiting (see `endpoint`), so it is handed the [`Deadline`] and stops itself.
async fn time_limit(State(guard): State<Arc<Guard>>, mut request: Request, next: Next) -> Response {
    let limit = guard.limits.request_timeout;
    request.extensions_mut().insert(Deadline::at(Instant::now() + limit));
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_elapsed) => ApiError::TimedOut.into_response(),
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    if let Some(message) = panic.downcast_ref::<&str>() {
        message
    } else if let Some(message) = panic.downcast_ref::<String>() {
        message
    } else {
        "(no message)"
    }
}

/// Serves `state` with `limits` ([`operated_app`], counting in `telemetry`) on `listener`
/// until `shutdown` completes, then stops accepting and lets the requests in flight finish
/// before returning (issue 6: SIGTERM drains).
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<LiveState>,
    telemetry: Arc<Telemetry>,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_router(listener, operated_app(state, telemetry, limits), limits, shutdown).await
}

/// Serves any `router` (the local preview's) under the connection limits of
/// [`connections`], until `shutdown` completes.
pub async fn serve_router(
    listener: tokio::net::TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let rejection = layered_with(Router::new().fallback(|| async { connections::too_many_connections() }), limits);
    connections::serve_connections(listener, router, rejection, limits, shutdown).await
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
/// `Access-Control-Allow-Origin`, and a JSON `Content-Type` where none was set.
pub async fn standard_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::ALLOW, HeaderValue::from_static(ALLOW));
    headers.insert(header::VARY, HeaderValue::from_static("Accept"));
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    headers.entry(header::CONTENT_TYPE).or_insert(HeaderValue::from_static(JSON));
    response
}

/// One access log event per request ([`log::access`]): method, path, query, status,
/// duration, body bytes.
async fn access_log(request: Request, next: Next) -> Response {
    // Turned off (`RUST_LOG=...,svcdir::access=off`): nothing copied, nothing timed.
    if !tracing::enabled!(target: log::ACCESS_TARGET, tracing::Level::INFO) {
        return next.run(request).await;
    }
    let started = Instant::now();
    let method = request.method().clone();
    let uri = request.uri().clone();
    let response = next.run(request).await;
    log::access(&method, uri.path(), uri.query(), response.status(), started.elapsed(), body_bytes(&response));
    response
}

/// Length of a response's body, as far as it is known before it is sent.
pub fn body_bytes(response: &Response) -> u64 {
    let hint = axum::body::HttpBody::size_hint(response.body());
    hint.exact().unwrap_or(hint.lower())
}

fn endpoint(version: ApiVersion) -> MethodRouter<Arc<LiveState>> {
    // `get` also answers HEAD: axum runs the GET handler and drops the body.
    get(
        move |State(live): State<Arc<LiveState>>,
              deadline: Option<Extension<Deadline>>,
              uri: Uri,
              headers: HeaderMap| async move {
            // Inline on the worker, not on the blocking pool: `spawn_blocking` cost 28% of the
            // throughput and doubled the RSS in `make bench-search` (10,000 services: 12,181
            // vs 16,964 requests/s, p99 11.7 vs 8.1 ms). The time limit reaches the search as
            // a deadline it checks itself (see `time_limit`).
            let deadline = deadline.map_or(Deadline::NONE, |Extension(d)| d);
            search_response(&live.load(), version, &uri, &headers, deadline)
        },
    )
    .options(|uri: Uri, headers: HeaderMap| async move { options(&uri, &headers) })
    .fallback(|method: Method, uri: Uri, headers: HeaderMap| async move {
        error_response(ApiError::MethodNotAllowed(method), &uri, &headers, "Method not allowed")
    })
}

/// OPTIONS: 200, the headers, no body.
fn options(uri: &Uri, headers: &HeaderMap) -> Response {
    let query = RawQuery::parse(uri.query().unwrap_or(""));
    let content_type = match negotiate::negotiate(&query, headers) {
        Ok(Format::Html) => HTML,
        _ => JSON,
    };
    (StatusCode::OK, [(header::CONTENT_TYPE, content_type)]).into_response()
}

/// 404 `{"detail": "Not found."}` (or its HTML view): the fallback of [`app`].
pub async fn not_found(uri: Uri, headers: HeaderMap) -> Response {
    error_response(ApiError::NotFound, &uri, &headers, "Not found")
}

fn error_response(error: ApiError, uri: &Uri, headers: &HeaderMap, title: &str) -> Response {
    let query = RawQuery::parse(uri.query().unwrap_or(""));
    match negotiate::negotiate(&query, headers) {
        Ok(format) => {
            let target = Target { uri, query: &query, title, size_hint: 256 };
            respond(format, error.status(), &error.body(), &target)
        }
        Err(unknown_format) => unknown_format.into_response(),
    }
}

/// The request as the HTML view names it, and the expected size of the JSON body.
struct Target<'a> {
    uri: &'a Uri,
    query: &'a RawQuery,
    title: &'a str,
    size_hint: usize,
}

fn search_response(
    state: &AppState,
    version: ApiVersion,
    uri: &Uri,
    headers: &HeaderMap,
    deadline: Deadline,
) -> Response {
    let query = RawQuery::parse(uri.query().unwrap_or(""));
    let format = match negotiate::negotiate(&query, headers) {
        Ok(format) => format,
        Err(unknown_format) => return unknown_format.into_response(),
    };
    let (title, path) = match version {
        ApiVersion::V4 => ("Service search", V4_PATH),
        ApiVersion::V3 => ("Search (v3)", V3_PATH),
    };
    let mut target = Target { uri, query: &query, title, size_hint: 256 };
    let dir = state.index.directory();
    let page = search::params::parse(&query, dir, version)
        .map_err(ApiError::BadRequest)
        .and_then(|params| search::run::run(&state.index, &params, deadline).map_err(ApiError::from));
    let page = match page {
        Ok(page) => page,
        Err(error) => return error.with_headers(respond(format, error.status(), &error.body(), &target)),
    };
    let (next, previous) = links(&state.publication.base_url, path, &query, &page);
    target.size_hint = 2048 + 2048 * page.hits.len();
    let services = page.hits.iter().map(|hit| &dir.services[hit.service as usize]);
    match version {
        ApiVersion::V4 => {
            let body = PagedEnvelope {
                meta: state.publication.meta_full(),
                count: page.count,
                next,
                previous,
                data: services
                    .map(|s| ServiceView::new(dir, &state.publication, s, ServiceContext::List))
                    .collect::<Vec<_>>(),
            };
            respond(format, StatusCode::OK, &body, &target)
        }
        ApiVersion::V3 => {
            let body = SearchPage {
                count: page.count,
                next,
                previous,
                results: services.map(|s| ServiceV3::new(dir, s)).collect(),
            };
            respond(format, StatusCode::OK, &body, &target)
        }
    }
}

/// `next` and `previous` (behaviour.md, Search 8): absolute, from the configured base URL
/// and the version's canonical path; every parameter the client sent, in its order, with
/// `page` dropped and the new `page` appended (`format` is kept, so an HTML page links to
/// HTML pages); page 2's `previous` has no `page`.
pub fn links(base_url: &str, path: &str, query: &RawQuery, page: &ResultPage) -> (Option<String>, Option<String>) {
    let url = |qs: String| {
        if qs.is_empty() { format!("{base_url}{path}") } else { format!("{base_url}{path}?{qs}") }
    };
    let next = page.has_next.then(|| url(query.encode_with("page", Some(("page", &(page.page + 1).to_string())))));
    let previous = page.has_previous.then(|| match page.page {
        2 => url(query.encode_with("page", None)),
        n => url(query.encode_with("page", Some(("page", &(n - 1).to_string())))),
    });
    (next, previous)
}

/// Serialises `body` as JSON, or shows it in the HTML view.
fn respond<T: Serialize>(format: Format, status: StatusCode, body: &T, target: &Target<'_>) -> Response {
    match format {
        Format::Json => {
            // A search page is about 1.5 kB per service: size the buffer once instead of
            // growing (and copying) it a dozen times.
            let mut bytes = Vec::with_capacity(target.size_hint);
            match serde_json::to_writer(&mut bytes, body) {
                Ok(()) => (status, [(header::CONTENT_TYPE, JSON)], bytes).into_response(),
                Err(_) => ApiError::Internal.into_response(),
            }
        }
        Format::Html => {
            let Ok(value) = serde_json::to_value(body) else {
                return ApiError::Internal.into_response();
            };
            let request = target.uri.path_and_query().map(|pq| pq.as_str()).unwrap_or("/").to_owned();
            let qs = target.query.encode_with("format", Some(("format", "json")));
            let view = HtmlView {
                title: target.title.to_owned(),
                request,
                status: status.as_u16(),
                // The headers of the JSON response this page shows.
                headers: [
                    ("Allow", ALLOW),
                    ("Content-Type", JSON),
                    ("Vary", "Accept"),
                    ("Access-Control-Allow-Origin", "*"),
                ]
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .to_vec(),
                body: &value,
                json_url: format!("{}?{qs}", target.uri.path()),
            };
            match render_html(&view) {
                Ok(html) => (status, [(header::CONTENT_TYPE, HTML)], html).into_response(),
                Err(err) => {
                    tracing::error!(error = %err, "the HTML view failed; answered 500");
                    ApiError::Internal.into_response()
                }
            }
        }
    }
}
