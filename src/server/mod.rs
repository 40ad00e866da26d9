//! The search server: `/api/v4/services/` and `/api/v3/search/` over a loaded
//! [`SearchIndex`], as an axum [`Router`].
//!
//! This module owns routing, methods, headers, format negotiation and response bodies of
//! the two search paths (behaviour.md, "Routing", "JSON or HTML", "Errors"); the search
//! itself is `crate::search`. [`app`] is free of anything listen-specific, so tests drive it
//! with `tower::ServiceExt::oneshot` and the local preview can reuse [`routes`] beside its
//! static files; [`serve`] runs it on a listener until a shutdown signal.

pub mod error;
pub mod negotiate;

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};
use serde::Serialize;
use tower_http::catch_panic::CatchPanicLayer;

use crate::index::SearchIndex;
use crate::render::html::{HtmlView, render_html};
use crate::search::{self, ApiVersion, RawQuery, ResultPage};
use crate::views::Publication;
use crate::views::v3::{SearchPage, ServiceV3};
use crate::views::v4::{PagedEnvelope, ServiceContext, ServiceView};
pub use error::ApiError;
pub use negotiate::Format;

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
}

impl AppState {
    /// Serves `index` with the publication recorded in it.
    pub fn new(index: SearchIndex) -> AppState {
        let publication = index.publication().clone();
        AppState { index, publication }
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

/// The two search paths, with and without trailing slash, answering GET, HEAD and OPTIONS
/// (405 otherwise). No fallback and no layers, so it can be merged into another router;
/// responses made here already carry their `Content-Type`, and [`standard_headers`] adds
/// the rest.
pub fn routes(state: Arc<AppState>) -> Router {
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
    layered(routes(state).fallback(not_found))
}

/// Wraps a router with what every response needs: panics turned into a 500 JSON body
/// instead of a dropped connection, the [`standard_headers`], and one access log line per
/// request on stderr (method, path and query, status, microseconds).
pub fn layered(router: Router) -> Router {
    router
        .layer(CatchPanicLayer::custom(|_panic: Box<dyn std::any::Any + Send>| ApiError::Internal.into_response()))
        .layer(middleware::map_response(standard_headers))
        .layer(middleware::from_fn(access_log))
}

/// Serves [`app`] on `listener` until `shutdown` completes, then lets in-flight requests
/// finish before returning.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: Arc<AppState>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|tcp| {
        // Small responses on kept-alive connections: send them now, not after a delayed ACK.
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app(state)).with_graceful_shutdown(shutdown).await
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
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
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

/// One line per request on stderr: method, path and query, status, microseconds.
async fn access_log(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let target = request.uri().path_and_query().map(|pq| pq.as_str().to_owned()).unwrap_or_else(|| "/".into());
    let response = next.run(request).await;
    let line = format!("{method} {target} {} {}us\n", response.status().as_u16(), started.elapsed().as_micros());
    // One write per line, so lines from concurrent requests never interleave.
    eprint!("{line}");
    response
}

fn endpoint(version: ApiVersion) -> MethodRouter<Arc<AppState>> {
    // `get` also answers HEAD: axum runs the GET handler and drops the body.
    get(move |State(state): State<Arc<AppState>>, uri: Uri, headers: HeaderMap| async move {
        search_response(&state, version, &uri, &headers)
    })
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

fn search_response(state: &AppState, version: ApiVersion, uri: &Uri, headers: &HeaderMap) -> Response {
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
        .and_then(|params| search::run::run(&state.index, &params).map_err(|_| ApiError::InvalidPage));
    let page = match page {
        Ok(page) => page,
        Err(error) => return respond(format, error.status(), &error.body(), &target),
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
                    eprintln!("svcdir-search: HTML view failed: {err}");
                    ApiError::Internal.into_response()
                }
            }
        }
    }
}
