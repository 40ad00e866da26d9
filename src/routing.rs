//! The routing rules of the public URL space as one pure function: method, path, query
//! and `Accept` in, which file of `public/` (or which error) out (behaviour.md, "Routing",
//! "JSON or HTML", "Errors").
//!
//! [`route`] is what `svcdir serve` runs for every request. The nginx configuration
//! (`templates/nginx.conf.j2`) implements the same rules in nginx's own terms, and the
//! end-to-end suite (`tests/e2e`) runs one list of requests against both and checks they
//! answer alike. This module also owns the bodies that have no file under `public/` (invalid
//! page, 405, 400), so that nginx and the preview send the same bytes, and the
//! `Cache-Control` policy. It does not read files or speak HTTP: `crate::preview` does.
//!
//! The order of the checks follows Django REST framework, which the API describes: the URL
//! first (unknown → 404 whatever the method), then the `format` (unknown → 404), then the
//! method (→ 405), then the resource.

use axum::http::{HeaderMap, Method, StatusCode};

use crate::render::paths;
use crate::search::RawQuery;
use crate::server::negotiate::negotiate;
use crate::server::{ApiError, Format};

/// The cache policy lives with the rest of the HTTP contract in [`crate::api`].
pub use crate::api::{CACHE_ERROR, CACHE_NONE, CACHE_SEARCH, CACHE_STATIC};

/// Placeholder for the method in the 405 bodies rendered ahead of time: the preview puts
/// the request's method there, nginx the method of the request line.
pub const METHOD_PLACEHOLDER: &str = "SVCDIRREQUESTMETHOD";

/// Which origin made a response, for [`cache_control`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A file of `public/` or a fixed body.
    Static,
    /// The search server.
    Search,
}

/// The `Cache-Control` value of a response (README, "Deploying").
pub fn cache_control(origin: Origin, status: StatusCode) -> &'static str {
    match (origin, status.as_u16()) {
        (Origin::Static, 200 | 206 | 304) => CACHE_STATIC,
        (Origin::Search, 200 | 206 | 304) => CACHE_SEARCH,
        (_, 400 | 404) => CACHE_ERROR,
        _ => CACHE_NONE,
    }
}

/// Where a request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// One of the two search paths: the search server answers. The path to forward is the
    /// normalised one (nginx also passes its normalised form upstream), with the query as sent.
    Search(String),
    /// The static side answers.
    Static(Answer),
}

/// What the static side answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// 200 with the file at `path` (relative to `public/`), or `missing` when there is none.
    File {
        /// Relative path with `/` separators, made only of known folder names and keys of
        /// the slug alphabet, so it never leaves `public/`.
        path: String,
        /// JSON (`index.json`) or HTML (`index.html`).
        format: Format,
        /// The answer when the file does not exist.
        missing: Missing,
    },
    /// 404 `{"detail": "Not found."}`: `_errors/404.json` or `_errors/404.html`.
    NotFound(Format),
    /// 404 `{"detail": "Invalid page."}` (see [`invalid_page_body`]).
    InvalidPage(Format),
    /// 405 `{"detail": "Method \"X\" not allowed."}` (see [`method_not_allowed_body`]).
    MethodNotAllowed(Format),
    /// OPTIONS on an endpoint: 200, the headers, no body.
    Options(Format),
    /// 400 for a path nginx refuses: a bad `%` escape, an encoded NUL, `..` above the root.
    BadRequest,
}

/// What a [`Answer::File`] becomes when its file does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// Unknown id or slug.
    NotFound,
    /// An import page past the end.
    InvalidPage,
}

impl Answer {
    /// The status, given whether the file of an [`Answer::File`] exists.
    pub fn status(&self, file_exists: bool) -> StatusCode {
        match self {
            Answer::File { .. } if file_exists => StatusCode::OK,
            Answer::File { .. } | Answer::NotFound(_) | Answer::InvalidPage(_) => StatusCode::NOT_FOUND,
            Answer::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            Answer::Options(_) => StatusCode::OK,
            Answer::BadRequest => StatusCode::BAD_REQUEST,
        }
    }

    /// JSON or HTML.
    pub fn format(&self) -> Format {
        match self {
            Answer::File { format, .. }
            | Answer::NotFound(format)
            | Answer::InvalidPage(format)
            | Answer::MethodNotAllowed(format)
            | Answer::Options(format) => *format,
            Answer::BadRequest => Format::Json,
        }
    }
}

/// The two search paths and the list endpoints: the tables of [`crate::api::routes`].
use crate::api::routes::{LIST_FOLDERS as LISTS, SEARCH_PATHS};

/// Decides the answer to one request. `path` and `query` are as sent (percent-encoded);
/// `headers` supplies `Accept`.
pub fn route(method: &Method, path: &str, query: Option<&str>, headers: &HeaderMap) -> Route {
    let Ok(normal) = normalise_path(path) else {
        return Route::Static(Answer::BadRequest);
    };
    let query = RawQuery::parse(query.unwrap_or(""));
    // nginx refuses TRACE (and CONNECT) itself, before choosing a location, so these are
    // 405 on every path, search paths included.
    let early_405 = *method == Method::TRACE || *method == Method::CONNECT;
    let endpoint = normal.as_deref().map_or(Endpoint::Unknown, endpoint);
    let format = negotiate(&query, headers);
    if early_405 {
        return Route::Static(Answer::MethodNotAllowed(format.unwrap_or(Format::Json)));
    }
    let folder = match endpoint {
        Endpoint::Search => return Route::Search(normal.unwrap_or_default()),
        Endpoint::Unknown => return Route::Static(Answer::NotFound(format.unwrap_or(Format::Json))),
        Endpoint::Resource(folder) => Some(folder),
        Endpoint::Import => None,
    };
    let Ok(format) = format else {
        // An unknown `format` is 404 in JSON (DRF falls back to its first renderer).
        return Route::Static(Answer::NotFound(Format::Json));
    };
    if !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return Route::Static(Answer::MethodNotAllowed(format));
    }
    if *method == Method::OPTIONS {
        return Route::Static(Answer::Options(format));
    }
    let (folder, missing) = match folder {
        Some(folder) => (folder, Missing::NotFound),
        // The import's pages: `page` as the search reads it (its last value, trimmed, a whole
        // number from 1); no `page` is the first page (behaviour.md, "Import and lists").
        None => match query.last("page").map(|p| p.trim().parse::<u64>()) {
            None => (paths::IMPORT.to_owned(), Missing::NotFound),
            Some(Ok(n)) if n >= 1 => (format!("{}/page/{n}", paths::IMPORT), Missing::InvalidPage),
            Some(_) => return Route::Static(Answer::InvalidPage(format)),
        },
    };
    let file = match format {
        Format::Json => "index.json",
        Format::Html => "index.html",
    };
    Route::Static(Answer::File { path: format!("{folder}/{file}"), format, missing })
}

/// The kinds of path of the URL space.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Endpoint {
    Search,
    Import,
    /// A folder of `public/` holding `index.json` and `index.html`.
    Resource(String),
    Unknown,
}

/// Classifies a normalised path. Every endpoint answers with and without its trailing
/// slash (behaviour.md, "Routing"); nothing else is reachable, in particular not the
/// internal folders `_errors/` and `api/v4/import/page/`.
fn endpoint(path: &str) -> Endpoint {
    let trimmed = path.strip_suffix('/').unwrap_or(path);
    if SEARCH_PATHS.contains(&trimmed) {
        return Endpoint::Search;
    }
    let Some(rel) = trimmed.strip_prefix('/') else {
        return Endpoint::Unknown;
    };
    if rel == paths::IMPORT {
        return Endpoint::Import;
    }
    if LISTS.contains(&rel) || rel == paths::OPENAPI {
        return Endpoint::Resource(rel.to_owned());
    }
    // The OpenAPI document's well-known name: the same endpoint as `/api/openapi/`.
    if path == format!("/{}", paths::OPENAPI_FILE) {
        return Endpoint::Resource(paths::OPENAPI.to_owned());
    }
    for folder_of in [paths::service as fn(&str) -> String, paths::organisation] {
        let prefix = folder_of("");
        if let Some(key) = rel.strip_prefix(prefix.as_str())
            && is_key(key)
        {
            return Endpoint::Resource(rel.to_owned());
        }
    }
    Endpoint::Unknown
}

/// An id or a slug: the alphabet both are written in (input-format.md, "Slugs"), so a key
/// can name nothing but a folder directly below its endpoint.
fn is_key(key: &str) -> bool {
    !key.is_empty() && key.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// A path that nginx answers with 400 before routing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BadPath {
    /// `%` not followed by two hex digits.
    #[error("bad percent escape")]
    Escape,
    /// `%00`.
    #[error("encoded NUL")]
    Nul,
    /// `..` above the root, or a path not starting with `/`.
    #[error("path outside the root")]
    Outside,
}

/// The path as nginx matches locations against it: percent-decoded, runs of `/` merged,
/// `.` and `..` segments resolved. `Ok(None)` when the decoded bytes are not UTF-8 (such a
/// path matches no endpoint).
pub fn normalise_path(raw: &str) -> Result<Option<String>, BadPath> {
    if !raw.starts_with('/') {
        return Err(BadPath::Outside);
    }
    let decoded = percent_decode(raw.as_bytes())?;
    let Ok(decoded) = String::from_utf8(decoded) else {
        return Ok(None);
    };
    let mut out: Vec<&str> = Vec::new();
    let mut trailing_slash = false;
    for segment in decoded.split('/').skip(1) {
        trailing_slash = matches!(segment, "" | "." | "..");
        match segment {
            "" | "." => {}
            ".." => {
                out.pop().ok_or(BadPath::Outside)?;
            }
            name => out.push(name),
        }
    }
    let mut path = String::with_capacity(decoded.len());
    for segment in &out {
        path.push('/');
        path.push_str(segment);
    }
    if trailing_slash || out.is_empty() {
        path.push('/');
    }
    Ok(Some(path))
}

fn percent_decode(raw: &[u8]) -> Result<Vec<u8>, BadPath> {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(raw.len());
    let mut bytes = raw.iter().copied();
    while let Some(b) = bytes.next() {
        if b != b'%' {
            out.push(b);
            continue;
        }
        let hi = bytes.next().and_then(hex).ok_or(BadPath::Escape)?;
        let lo = bytes.next().and_then(hex).ok_or(BadPath::Escape)?;
        match hi << 4 | lo {
            0 => return Err(BadPath::Nul),
            byte => out.push(byte),
        }
    }
    Ok(out)
}

/// JSON body of a 400 for a malformed request (Django REST framework's `ParseError`).
pub fn bad_request_body() -> Vec<u8> {
    br#"{"detail":"Malformed request."}"#.to_vec()
}

/// Body of the 404 for an import page that does not exist, in the form asked for.
pub fn invalid_page_body(format: Format) -> Result<Vec<u8>, ViewError> {
    error_view(format, &ApiError::InvalidPage, "Invalid page", "/api/v4/import/")
}

/// Body of the 405, with [`METHOD_PLACEHOLDER`] where the method goes.
pub fn method_not_allowed_body(format: Format) -> Result<Vec<u8>, ViewError> {
    let placeholder = Method::from_bytes(METHOD_PLACEHOLDER.as_bytes()).map_err(|_| ViewError::Placeholder)?;
    error_view(format, &ApiError::MethodNotAllowed(placeholder), "Method not allowed", "/")
}

/// The 405 body of [`method_not_allowed_body`] for one method.
pub fn method_not_allowed_for(template: &[u8], format: Format, method: &Method) -> Vec<u8> {
    let name = match format {
        Format::Json => serde_json::to_string(method.as_str())
            .map(|quoted| quoted[1..quoted.len() - 1].to_owned())
            .unwrap_or_default(),
        // Methods are tokens; escape anyway, the page must never carry markup from a request.
        Format::Html => method
            .as_str()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c.to_string()
                } else {
                    format!("&#{};", c as u32)
                }
            })
            .collect(),
    };
    String::from_utf8_lossy(template).replace(METHOD_PLACEHOLDER, &name).into_bytes()
}

/// An error body could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// The HTML view failed.
    #[error(transparent)]
    Html(#[from] crate::render::html::HtmlError),
    /// The method placeholder is not a valid method (a bug).
    #[error("the method placeholder is not a valid HTTP method")]
    Placeholder,
}

fn error_view(format: Format, error: &ApiError, title: &str, request: &str) -> Result<Vec<u8>, ViewError> {
    let body = error.body();
    match format {
        Format::Json => Ok(body.to_string().into_bytes()),
        Format::Html => {
            let (base, _) = request.split_once('?').unwrap_or((request, ""));
            let view = crate::render::html::HtmlView {
                title: title.to_owned(),
                request: request.to_owned(),
                status: error.status().as_u16(),
                headers: crate::render::json_headers(),
                body: &body,
                json_url: format!("{base}?format=json"),
            };
            Ok(crate::render::html::render_html(&view)?.into_bytes())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderValue, header};

    fn accept(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_str(value).unwrap());
        headers
    }

    fn get(path_and_query: &str) -> Route {
        let (path, query) = path_and_query.split_once('?').map_or((path_and_query, None), |(p, q)| (p, Some(q)));
        route(&Method::GET, path, query, &HeaderMap::new())
    }

    fn file(path: &str, format: Format, missing: Missing) -> Route {
        Route::Static(Answer::File { path: path.to_owned(), format, missing })
    }

    #[test]
    fn every_endpoint_with_and_without_slash() {
        for (url, path) in [
            ("/api/v4/categories", "api/v4/categories/index.json"),
            ("/api/v4/service-areas", "api/v4/service-areas/index.json"),
            ("/api/v3/categories", "api/v3/categories/index.json"),
            ("/api/v3/service-areas", "api/v3/service-areas/index.json"),
            ("/api/v4/import", "api/v4/import/index.json"),
            ("/api/v4/services/befriending-line", "api/v4/services/befriending-line/index.json"),
            (
                "/api/v4/organisations/2c5f3b8e-1d44-4c1a-9f0e-6a7b8c9d0e1f",
                "api/v4/organisations/2c5f3b8e-1d44-4c1a-9f0e-6a7b8c9d0e1f/index.json",
            ),
        ] {
            let expected = file(path, Format::Json, Missing::NotFound);
            assert_eq!(get(url), expected, "{url}");
            assert_eq!(get(&format!("{url}/")), expected, "{url}/");
        }
        for url in ["/api/v4/services", "/api/v4/services/", "/api/v3/search", "/api/v3/search/"] {
            assert_eq!(get(&format!("{url}?postcode=G2+1AL")), Route::Search(url.to_owned()));
        }
    }

    #[test]
    fn import_pages() {
        let page = |n: u64| file(&format!("api/v4/import/page/{n}/index.json"), Format::Json, Missing::InvalidPage);
        assert_eq!(get("/api/v4/import/?format=json&page=2"), page(2));
        assert_eq!(get("/api/v4/import/?page=1&page=3"), page(3), "the last value counts");
        assert_eq!(get("/api/v4/import/?page=+4+"), page(4), "trimmed, as the search reads it");
        assert_eq!(get("/api/v4/import/?page=007"), page(7));
        for bad in ["0", "-1", "two", "", "1.0", "%2D1"] {
            assert_eq!(
                get(&format!("/api/v4/import/?page={bad}")),
                Route::Static(Answer::InvalidPage(Format::Json)),
                "{bad:?}"
            );
        }
        assert_eq!(
            route(&Method::GET, "/api/v4/import/", Some("page=0&format=api"), &HeaderMap::new()),
            Route::Static(Answer::InvalidPage(Format::Html))
        );
    }

    #[test]
    fn negotiation() {
        let html = |q: Option<&str>, h: &HeaderMap| route(&Method::GET, "/api/v4/categories/", q, h);
        let json = file("api/v4/categories/index.json", Format::Json, Missing::NotFound);
        let page = file("api/v4/categories/index.html", Format::Html, Missing::NotFound);
        assert_eq!(html(Some("format=json"), &accept("text/html")), json);
        assert_eq!(html(Some("format=api"), &HeaderMap::new()), page);
        assert_eq!(html(None, &accept("text/html,application/xhtml+xml,*/*;q=0.8")), page);
        assert_eq!(html(None, &accept("*/*")), json);
        assert_eq!(html(None, &HeaderMap::new()), json);
        assert_eq!(html(Some("format=xml"), &accept("text/html")), Route::Static(Answer::NotFound(Format::Json)));
        assert_eq!(
            route(&Method::GET, "/nope", Some("format=api"), &HeaderMap::new()),
            Route::Static(Answer::NotFound(Format::Html))
        );
    }

    #[test]
    fn methods() {
        let r = |m: &str, path: &str, q: Option<&str>| {
            route(&Method::from_bytes(m.as_bytes()).unwrap(), path, q, &HeaderMap::new())
        };
        let na = Route::Static(Answer::MethodNotAllowed(Format::Json));
        assert_eq!(r("POST", "/api/v4/categories/", None), na);
        assert_eq!(r("DELETE", "/api/v4/services/no-such-slug", None), na, "405 before the lookup");
        assert_eq!(r("PATCH", "/api/v4/import/", Some("page=0")), na, "405 before the page");
        assert_eq!(r("POST", "/nope", None), Route::Static(Answer::NotFound(Format::Json)), "unknown URL first");
        assert_eq!(r("POST", "/api/v4/categories/", Some("format=x")), Route::Static(Answer::NotFound(Format::Json)));
        assert_eq!(r("TRACE", "/api/v4/services/", None), na, "nginx refuses TRACE everywhere");
        assert_eq!(r("TRACE", "/nope", Some("format=api")), Route::Static(Answer::MethodNotAllowed(Format::Html)));
        assert_eq!(r("OPTIONS", "/api/v4/services/x", None), Route::Static(Answer::Options(Format::Json)));
        assert_eq!(r("OPTIONS", "/nope", None), Route::Static(Answer::NotFound(Format::Json)));
        assert_eq!(r("POST", "/api/v4/services/", None), Route::Search("/api/v4/services/".into()));
    }

    #[test]
    fn internal_folders_and_odd_keys_are_not_found() {
        for url in [
            "/",
            "/_errors/404.json",
            "/_errors/",
            "/api/v4/import/page/2/",
            "/api/v4/import/page/2/index.json",
            "/api/v4/categories/index.json",
            "/api/v4/services/Befriending-Line/",
            "/api/v4/services/a/b",
            "/api/v4/services/a.json",
            "/api/v4/services/a_b",
            "/api/v4/organisations//",
            "/api/v4/locations/x/",
            "/api/v5/categories/",
            "/api/v4/categories//x",
            "/API/v4/categories/",
            "/api/v4/services/%ff/",
        ] {
            assert_eq!(get(url), Route::Static(Answer::NotFound(Format::Json)), "{url}");
        }
    }

    #[test]
    fn paths_normalise_as_nginx_does() {
        let n = |p: &str| normalise_path(p);
        assert_eq!(n("/api//v4/./categories"), Ok(Some("/api/v4/categories".into())));
        assert_eq!(n("/a%2Fb//c/./d/%2e%2E/e%2f..%2Ff"), Ok(Some("/a/b/c/f".into())));
        assert_eq!(n("/a/.."), Ok(Some("/".into())));
        assert_eq!(n("/a/."), Ok(Some("/a/".into())));
        assert_eq!(n("/a/b/../"), Ok(Some("/a/".into())));
        assert_eq!(n("/a/..."), Ok(Some("/a/...".into())));
        assert_eq!(n("/%C3%A9"), Ok(Some("/é".into())));
        assert_eq!(n("/%ff"), Ok(None));
        assert_eq!(n("/a/../../etc/passwd"), Err(BadPath::Outside));
        assert_eq!(n("/.."), Err(BadPath::Outside));
        assert_eq!(n("*"), Err(BadPath::Outside));
        assert_eq!(n("/a%zz"), Err(BadPath::Escape));
        assert_eq!(n("/a%2"), Err(BadPath::Escape));
        assert_eq!(n("/a%00b"), Err(BadPath::Nul));
        assert_eq!(
            get("/api/v4/service%73/x/../../categories"),
            file("api/v4/categories/index.json", Format::Json, Missing::NotFound)
        );
        assert_eq!(get("/api/v4/service%73"), Route::Search("/api/v4/services".into()));
        assert_eq!(get("/api/v4/services/..%2f..%2f..%2fetc%2fpasswd"), Route::Static(Answer::NotFound(Format::Json)));
        assert_eq!(get("/api/v4/services/..%2f..%2f..%2f..%2fetc%2fpasswd"), Route::Static(Answer::BadRequest));
        assert_eq!(get("/../etc/passwd"), Route::Static(Answer::BadRequest));
    }

    #[test]
    fn cache_policy() {
        assert_eq!(cache_control(Origin::Static, StatusCode::OK), CACHE_STATIC);
        assert_eq!(cache_control(Origin::Search, StatusCode::OK), CACHE_SEARCH);
        assert_eq!(cache_control(Origin::Search, StatusCode::BAD_REQUEST), CACHE_ERROR);
        assert_eq!(cache_control(Origin::Static, StatusCode::NOT_FOUND), CACHE_ERROR);
        assert_eq!(cache_control(Origin::Static, StatusCode::METHOD_NOT_ALLOWED), CACHE_NONE);
    }

    #[test]
    fn generated_bodies() {
        assert_eq!(invalid_page_body(Format::Json).unwrap(), br#"{"detail":"Invalid page."}"#);
        let html = String::from_utf8(invalid_page_body(Format::Html).unwrap()).unwrap();
        assert!(html.contains("Invalid page."), "{html}");
        let json = method_not_allowed_body(Format::Json).unwrap();
        assert_eq!(
            method_not_allowed_for(&json, Format::Json, &Method::POST),
            br#"{"detail":"Method \"POST\" not allowed."}"#
        );
        assert_eq!(
            String::from_utf8(json).unwrap(),
            ApiError::MethodNotAllowed(Method::from_bytes(METHOD_PLACEHOLDER.as_bytes()).unwrap()).body().to_string()
        );
        let html = method_not_allowed_body(Format::Html).unwrap();
        let odd = Method::from_bytes(b"X'Y").unwrap();
        let page = String::from_utf8(method_not_allowed_for(&html, Format::Html, &odd)).unwrap();
        assert!(page.contains("X&#39;Y") && !page.contains(METHOD_PLACEHOLDER), "{page}");
    }
}
