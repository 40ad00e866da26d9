//! `svcdir serve`: the local preview, one process that answers as the nginx configuration
//! plus `svcdir-search` do (behaviour.md, "The two programs").
//!
//! Every request goes through [`crate::api::routing::route`], the rules the nginx template
//! implements too: the two search paths are handed, under their normal form, to
//! `crate::server::live_app`; everything else is a file of `public/` or one of the bodies of
//! [`crate::api`]. The headers are the search server's (`server::standard_headers`),
//! plus the `Cache-Control` of [`cache_control`] and gzip as nginx applies it.
//! This module does not build anything and never writes to `public/`. Files are read per
//! request, so a rebuild is served at once; the search index is held in a
//! [`server::LiveState`] that SIGHUP reloads ([`server::reload`]), as in `svcdir-search`.
//!
//! A file answered 200 carries an `ETag`, the file's content hash as the build's
//! `_manifest.json` records it (XXH3-128 hex, hashed here from the bytes read, so it is
//! never stale), and `If-None-Match` with that tag is answered 304, as a CDN in front
//! does; a gzipped answer's tag is weak (`W/`), as nginx makes it.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use headers::HeaderMapExt;
use tower::ServiceExt;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;
use tower_http::compression::predicate::{Predicate, SizeAbove};

use crate::api::bodies::{self, ViewError};
use crate::api::headers::{HTML, JSON, Origin, cache_control};
use crate::api::routing::{self, Answer, Missing, Route};
use crate::api::{ApiError, Format};
use crate::index::IndexError;
use crate::server::{self, AppState, LiveState};
use crate::urls as paths;

/// Why the preview cannot start.
#[derive(Debug, thiserror::Error)]
pub enum PreviewError {
    /// `--public` holds no build.
    #[error("{} is not a build of svcdir ({} is missing): run `svcdir build` first", public.display(), missing.display())]
    NotABuild {
        /// The directory given.
        public: PathBuf,
        /// The file looked for.
        missing: PathBuf,
    },
    /// The search index cannot be read.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// A fixed body cannot be rendered (a bug).
    #[error("cannot render an error body: {0}")]
    View(#[from] ViewError),
}

/// A build and its search index, ready to serve.
#[derive(Debug)]
pub struct Site {
    public: PathBuf,
    live: Arc<LiveState>,
    bodies: Bodies,
}

/// The bodies with no file under `public/`, rendered once.
#[derive(Debug)]
struct Bodies {
    invalid_page: [Vec<u8>; 2],
    not_allowed: [Vec<u8>; 2],
}

fn slot(format: Format) -> usize {
    match format {
        Format::Json => 0,
        Format::Html => 1,
    }
}

impl Site {
    /// Opens the build in `public` and loads the search index.
    pub fn open(public: &Path, index: &Path) -> Result<Site, PreviewError> {
        let not_found = public.join(paths::ERRORS).join("404.json");
        if !not_found.is_file() {
            return Err(PreviewError::NotABuild { public: public.to_owned(), missing: not_found });
        }
        let live = Arc::new(LiveState::new(Arc::new(AppState::read(index)?)));
        let bodies = Bodies {
            invalid_page: [bodies::invalid_page_body(Format::Json)?, bodies::invalid_page_body(Format::Html)?],
            not_allowed: [
                bodies::method_not_allowed_body(Format::Json)?,
                bodies::method_not_allowed_body(Format::Html)?,
            ],
        };
        Ok(Site { public: public.to_owned(), live, bodies })
    }

    /// The base URL recorded in the index: the origin of the `next` links of searches (and,
    /// from the same build, of every absolute URL in the files).
    pub fn base_url(&self) -> String {
        self.live.load().map(|state| state.publication().base_url.clone()).unwrap_or_default()
    }

    /// The search index in force, which [`server::reload`] can replace while serving.
    pub fn live(&self) -> Arc<LiveState> {
        self.live.clone()
    }

    /// The whole preview as a router.
    pub fn router(self) -> Router {
        let search = server::live_app(self.live.clone(), server::Limits::default());
        let inner = Arc::new(Inner { public: self.public, search, bodies: self.bodies });
        Router::new()
            .fallback(handle)
            .with_state(inner)
            .layer(middleware::map_response(server::standard_headers))
            .layer(middleware::from_fn(server::cors_preflight))
            .layer(middleware::from_fn(mark_head))
            // tower-http 0.6's SizeAbove takes a u16 (256 fits).
            .layer(CompressionLayer::new().compress_when(SizeAbove::new(GZIP_MIN_LENGTH as u16).and(NginxGzip)))
            .layer(middleware::map_response(weaken_etag_when_encoded))
            .layer(CatchPanicLayer::custom(|_panic: Box<dyn std::any::Any + Send>| ApiError::Internal.into_response()))
    }
}

/// Serves `router` on `listener` until `shutdown` completes, then lets in-flight requests
/// finish; with the search server's connection limits (slow and idle clients closed).
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    server::serve_router(listener, router, server::Limits::default(), shutdown).await
}

struct Inner {
    public: PathBuf,
    search: Router,
    bodies: Bodies,
}

async fn handle(State(inner): State<Arc<Inner>>, request: Request) -> Response {
    let route = routing::route(request.method(), request.uri().path(), request.uri().query(), request.headers());
    match route {
        Route::Search(path) => search(&inner, request, &path).await,
        Route::Static(answer) => {
            let started = Instant::now();
            let method = request.method().clone();
            let response = answer_static(&inner, &answer, &method, request.headers()).await;
            // The same event as the search server's access log (which logs the searches).
            let uri = request.uri();
            let bytes = server::body_bytes(&response);
            server::log::access(&method, uri.path(), uri.query(), response.status(), started.elapsed(), bytes);
            response
        }
    }
}

/// Hands a search request to the search server under the path's normal form, as nginx's
/// `proxy_pass` does, and sets the search's `Cache-Control`.
async fn search(inner: &Inner, request: Request, path: &str) -> Response {
    let target = match request.uri().query() {
        Some(query) => format!("{path}?{query}"),
        None => path.to_owned(),
    };
    let Ok(uri) = target.parse::<Uri>() else {
        return answer_bytes(StatusCode::BAD_REQUEST, Format::Json, bodies::bad_request_body(), Origin::Static);
    };
    let (mut parts, body) = request.into_parts();
    parts.uri = uri;
    let Ok(mut response) = inner.search.clone().oneshot(Request::from_parts(parts, body)).await;
    let cache = cache_control(Origin::Search, response.status());
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    response
}

async fn answer_static(inner: &Inner, answer: &Answer, method: &Method, request: &HeaderMap) -> Response {
    let format = answer.format();
    match answer {
        Answer::File { path, missing, .. } => match read(&inner.public, path).await {
            Ok(Some(bytes)) => answer_file(format, bytes, request),
            Ok(None) => match missing {
                Missing::NotFound => not_found(inner, format).await,
                Missing::InvalidPage => invalid_page(inner, format),
            },
            Err(response) => response,
        },
        Answer::Download { path, content_type } => match read(&inner.public, path).await {
            Ok(Some(bytes)) => {
                let cache = cache_control(Origin::Static, StatusCode::OK);
                (StatusCode::OK, [(header::CONTENT_TYPE, *content_type), (header::CACHE_CONTROL, cache)], bytes)
                    .into_response()
            }
            Ok(None) => not_found(inner, format).await,
            Err(response) => response,
        },
        Answer::NotFound(_) => not_found(inner, format).await,
        Answer::InvalidPage(_) => invalid_page(inner, format),
        Answer::MethodNotAllowed(_) => {
            let body = bodies::method_not_allowed_for(&inner.bodies.not_allowed[slot(format)], format, method);
            answer_bytes(StatusCode::METHOD_NOT_ALLOWED, format, body, Origin::Static)
        }
        Answer::Options(_) => answer_bytes(StatusCode::OK, format, Vec::new(), Origin::Static),
        Answer::BadRequest => answer_bytes(StatusCode::BAD_REQUEST, format, bodies::bad_request_body(), Origin::Static),
    }
}

/// A file of the build, 200 with its `ETag`, or 304 when `If-None-Match` names that tag.
fn answer_file(format: Format, bytes: Vec<u8>, request: &HeaderMap) -> Response {
    let tag = format!("\"{}\"", crate::write::content_hash(&bytes));
    let etag: headers::ETag = tag.parse().expect("a quoted hex string is an entity tag");
    let unchanged = request.typed_get::<headers::IfNoneMatch>().is_some_and(|inm| !inm.precondition_passes(&etag));
    let mut response = if unchanged {
        let cache = cache_control(Origin::Static, StatusCode::OK);
        (StatusCode::NOT_MODIFIED, [(header::CACHE_CONTROL, cache)]).into_response()
    } else {
        answer_bytes(StatusCode::OK, format, bytes, Origin::Static)
    };
    response.headers_mut().typed_insert(etag);
    response
}

/// A compressed body is another representation: its tag becomes weak, as nginx's gzip
/// makes it (a weak tag still matches `If-None-Match`, which compares weakly).
async fn weaken_etag_when_encoded<B>(mut response: axum::http::Response<B>) -> axum::http::Response<B> {
    let headers = response.headers_mut();
    if headers.contains_key(header::CONTENT_ENCODING)
        && let Some(tag) = headers.get(header::ETAG).and_then(|v| v.to_str().ok())
        && !tag.starts_with("W/")
        && let Ok(weak) = HeaderValue::from_str(&format!("W/{tag}"))
    {
        headers.insert(header::ETAG, weak);
    }
    response
}

fn invalid_page(inner: &Inner, format: Format) -> Response {
    let body = inner.bodies.invalid_page[slot(format)].clone();
    answer_bytes(StatusCode::NOT_FOUND, format, body, Origin::Static)
}

/// The build's 404 page (`_errors/404.json` or `.html`).
async fn not_found(inner: &Inner, format: Format) -> Response {
    let file = match format {
        Format::Json => "404.json",
        Format::Html => "404.html",
    };
    match read(&inner.public, &format!("{}/{file}", paths::ERRORS)).await {
        Ok(Some(bytes)) => answer_bytes(StatusCode::NOT_FOUND, format, bytes, Origin::Static),
        // The build was replaced by something without a 404 page: still answer the API's 404.
        Ok(None) => ApiError::NotFound.into_response(),
        Err(response) => response,
    }
}

/// A file of `public/`: `Ok(None)` when missing. `rel` comes from [`routing::route`], made
/// of known folder names and keys of the slug alphabet only, so it stays inside `public/`.
async fn read(public: &Path, rel: &str) -> Result<Option<Vec<u8>>, Response> {
    let (public, owned) = (public.to_owned(), rel.to_owned());
    let read = tokio::task::spawn_blocking(move || read_inside(&public, &owned))
        .await
        .unwrap_or_else(|joined| Err(std::io::Error::other(joined)));
    match read {
        Ok(bytes) => Ok(bytes),
        Err(err) => {
            tracing::error!(file = rel, error = %err, "cannot read a file of the build; answered 500");
            Err(ApiError::Internal.into_response())
        }
    }
}

/// The file `rel` below `public`, `None` when it is missing or any component of `rel` is a
/// symbolic link: a link planted inside the tree is not followed, as nginx's
/// `disable_symlinks` refuses it (issue 28). `public` itself may be a link (the output's
/// link to its generation).
fn read_inside(public: &Path, rel: &str) -> std::io::Result<Option<Vec<u8>>> {
    let missing =
        |err: &std::io::Error| matches!(err.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory);
    let mut path = public.to_owned();
    for part in rel.split('/') {
        path.push(part);
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => return Ok(None),
            Ok(_) => {}
            Err(err) if missing(&err) => return Ok(None),
            Err(err) => return Err(err),
        }
    }
    match std::fs::read(&path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(err) if missing(&err) => Ok(None),
        Err(err) => Err(err),
    }
}

fn answer_bytes(status: StatusCode, format: Format, body: Vec<u8>, origin: Origin) -> Response {
    let content_type = match format {
        Format::Json => JSON,
        Format::Html => HTML,
    };
    (status, [(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, cache_control(origin, status))], body)
        .into_response()
}

/// Marks the response to a HEAD request, which nginx never compresses.
#[derive(Debug, Clone, Copy)]
struct HeadResponse;

/// Smallest body nginx compresses (`gzip_min_length`).
const GZIP_MIN_LENGTH: u64 = 256;

async fn mark_head(request: Request, next: Next) -> Response {
    let head = request.method() == Method::HEAD;
    let mut response = next.run(request).await;
    if head {
        // nginx does not compress the answer to a HEAD but still says it would vary.
        let length = response
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
            .or_else(|| axum::body::HttpBody::size_hint(response.body()).exact())
            .unwrap_or(0);
        if gzip_eligible(&response) && length >= GZIP_MIN_LENGTH {
            response.headers_mut().append(header::VARY, HeaderValue::from_static("accept-encoding"));
        }
        response.extensions_mut().insert(HeadResponse);
    }
    response
}

/// Whether nginx's `gzip` applies to a response of this type and status: JSON and HTML
/// (`gzip_types`) of status 200, 403 or 404 (nginx's own rule).
fn gzip_eligible<B>(response: &axum::http::Response<B>) -> bool {
    let type_ok = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json") || v.starts_with("text/html"));
    type_ok && matches!(response.status().as_u16(), 200 | 403 | 404)
}

/// What nginx compresses, as a tower-http predicate: [`gzip_eligible`], never a HEAD.
#[derive(Debug, Clone, Copy)]
struct NginxGzip;

impl Predicate for NginxGzip {
    fn should_compress<B: axum::body::HttpBody>(&self, response: &axum::http::Response<B>) -> bool {
        gzip_eligible(response) && response.extensions().get::<HeadResponse>().is_none()
    }
}
