//! The routing rules of the public URL space as one pure function: method, path, query
//! and `Accept` in, which file of `public/` (or which error) out (behaviour.md, "Routing",
//! "JSON or HTML", "Errors").
//!
//! [`route`] is what `svcdir serve` runs for every request. The nginx configuration
//! (`templates/nginx.conf.j2`) implements the same rules in nginx's own terms, and the
//! end-to-end suite (`tests/e2e`) runs one list of requests against both and checks they
//! answer alike. It does not read files or speak HTTP: `crate::preview` does.
//!
//! The order of the checks follows Django REST framework, which the API describes: the URL
//! first (unknown → 404 whatever the method), then the `format` (unknown → 404), then the
//! method (→ 405), then the resource.

use axum::http::{HeaderMap, Method, StatusCode};

use super::negotiate::{Format, negotiate};
use super::path::normalise_path;
use crate::api::query::{PageNumber, RawQuery};
use crate::urls as paths;

/// Canonical path of the v4 search, used in its `next`/`previous` links.
pub const V4_PATH: &str = crate::urls::SEARCH_V4;
/// Canonical path of the v3 search, used in its `next`/`previous` links.
pub const V3_PATH: &str = crate::urls::SEARCH_V3;

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
    /// The invalid-page 404 (see [`super::bodies::invalid_page_body`]).
    InvalidPage(Format),
    /// 405 `{"detail": "Method \"X\" not allowed."}` (see [`super::bodies::method_not_allowed_body`]).
    MethodNotAllowed(Format),
    /// OPTIONS on an endpoint: 200, the headers, no body.
    Options(Format),
    /// 400 for a path nginx refuses: a bad `%` escape, an encoded NUL, `..` above the root.
    BadRequest,
    /// 200 with a bulk download of `public/downloads/` as it is, whatever `format` and
    /// `Accept` say (issue 17); 404 when the build has none.
    Download {
        /// Relative path under `public/`.
        path: String,
        /// `application/gzip` or `application/zip`.
        content_type: &'static str,
    },
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
            Answer::File { .. } | Answer::Download { .. } if file_exists => StatusCode::OK,
            Answer::File { .. } | Answer::Download { .. } | Answer::NotFound(_) | Answer::InvalidPage(_) => {
                StatusCode::NOT_FOUND
            }
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
            Answer::BadRequest | Answer::Download { .. } => Format::Json,
        }
    }
}

/// The two search paths, without their trailing slash.
pub const SEARCH_PATHS: [&str; 2] = [V4_PATH.split_at(V4_PATH.len() - 1).0, V3_PATH.split_at(V3_PATH.len() - 1).0];
/// The list endpoints (folder = path without the leading slash).
const LISTS: [&str; 4] = [paths::CATEGORIES_V4, paths::SERVICE_AREAS_V4, paths::CATEGORIES_V3, paths::SERVICE_AREAS_V3];

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
        // A download is a file as it is: `format` does not apply, the method does.
        Endpoint::Download(path, content_type) => {
            let format = format.unwrap_or(Format::Json);
            return Route::Static(match *method {
                Method::GET | Method::HEAD => Answer::Download { path, content_type },
                Method::OPTIONS => Answer::Options(format),
                _ => Answer::MethodNotAllowed(format),
            });
        }
        Endpoint::Unknown => return Route::Static(Answer::NotFound(format.unwrap_or(Format::Json))),
        Endpoint::Resource(folder) => (folder, false),
        Endpoint::Paged(folder) => (folder, true),
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
        (folder, false) => (folder, Missing::NotFound),
        // The import's pages (and those of the other paged lists) follow the search's page
        // rule (behaviour.md, "Import and lists"); no `page` is the first page, `page=last`
        // a page folder of its own.
        (folder, true) => match (query.last("page"), PageNumber::from_query(&query)) {
            (None, _) => (folder, Missing::NotFound),
            (_, PageNumber::Number(n)) => (format!("{folder}/page/{n}"), Missing::InvalidPage),
            (_, PageNumber::Last) => (format!("{folder}/page/{}", PageNumber::LAST), Missing::InvalidPage),
            (_, PageNumber::Invalid) => return Route::Static(Answer::InvalidPage(format)),
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
    /// A list paged with `?page=N`: the folder of page 1, pages at `<folder>/page/N`.
    Paged(String),
    /// A bulk download: its file and content type.
    Download(String, &'static str),
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
    // The API root: `/` exactly, and `/api` with or without its slash (`/api/v4/` is not).
    if path == "/" {
        return Endpoint::Resource(paths::ROOT.to_owned());
    }
    let Some(rel) = trimmed.strip_prefix('/') else {
        return Endpoint::Unknown;
    };
    if rel == paths::IMPORT {
        return Endpoint::Paged(rel.to_owned());
    }
    if let Some(endpoint) = open_data_endpoint(path, rel) {
        return endpoint;
    }
    if listing_key(rel).is_some() {
        return Endpoint::Paged(rel.to_owned());
    }
    if LISTS.contains(&rel) || rel == paths::OPENAPI || rel == paths::ROOT {
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

/// Files served as they are at their own path, whatever `format` and `Accept` say (issue
/// 17): path under `public/`, content type, and whether gzip applies (not to the downloads,
/// which are compressed already and are no precompressed variant of anything).
pub(crate) const EXACT_FILES: [(&str, &str, bool); 4] = [
    (crate::urls::SERVICES_NDJSON_GZ, "application/gzip", false),
    (crate::urls::OPENREFERRAL_ZIP, "application/zip", false),
    // The map file (issue 25), served as the other downloads are.
    (crate::urls::LOCATIONS_GEOJSON, "application/geo+json", false),
    (crate::urls::CHANGES_STATE, "application/json", true),
];

/// The open-data paths (issue 17): the Open Referral UK API under `/openreferral/`, and the
/// change record (`/changes/`, paged), and the exact files of [`EXACT_FILES`].
fn open_data_endpoint(path: &str, rel: &str) -> Option<Endpoint> {
    use crate::urls::openreferral::{self as oruk, List};
    for (file, content_type, _) in EXACT_FILES {
        if path == format!("/{file}") {
            return Some(Endpoint::Download(file.to_owned(), content_type));
        }
    }
    if rel == crate::urls::CHANGES {
        return Some(Endpoint::Paged(rel.to_owned()));
    }
    if rel == oruk::ROOT || rel == oruk::OPENAPI {
        return Some(Endpoint::Resource(rel.to_owned()));
    }
    if path == format!("/{}", oruk::OPENAPI_FILE) {
        return Some(Endpoint::Resource(oruk::OPENAPI.to_owned()));
    }
    for list in List::ALL {
        let folder = oruk::list(list);
        if rel == folder {
            return Some(Endpoint::Paged(folder));
        }
        if let Some(key) = rel.strip_prefix(folder.as_str()).and_then(|k| k.strip_prefix('/'))
            && is_key(key)
        {
            return Some(Endpoint::Resource(rel.to_owned()));
        }
    }
    None
}

/// The listings without a postcode (behaviour.md, "Import and lists"), each a folder of
/// keyed folders whose `services` sub-folder is paged as the import: the folder above the
/// keys, and whether a key is one of its keys (a category's slug; a service area's code,
/// case-sensitive, so that `s12000046` names nothing).
pub(crate) const LISTINGS: [(&str, KeyRule); 2] =
    [(paths::CATEGORIES_V4, is_key), (paths::SERVICE_AREAS_V4, is_area_code)];

/// Whether a path segment is a key of a listing's folder.
pub(crate) type KeyRule = fn(&str) -> bool;

/// The longest service-area code (input-format.md, `service_areas.json`).
pub(crate) const MAX_AREA_CODE_LEN: usize = 32;

/// The key of a listing's folder (`api/v4/categories/<slug>/services`, path without the
/// leading slash), if `rel` is one.
pub(crate) fn listing_key(rel: &str) -> Option<&str> {
    let (above, key) = rel.strip_suffix(paths::LISTING)?.strip_suffix('/')?.rsplit_once('/')?;
    LISTINGS.iter().any(|(folder, is)| *folder == above && is(key)).then_some(key)
}

/// A service area's code: 1 to [`MAX_AREA_CODE_LEN`] upper-case letters and digits.
fn is_area_code(key: &str) -> bool {
    (1..=MAX_AREA_CODE_LEN).contains(&key.len()) && key.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

/// The longest key of a resource: a slug (at most `crate::model::slug::MAX_SLUG_LEN`
/// bytes) or a UUID (36). A longer key names nothing, so it is not found without asking the
/// file system (whose name limit it may pass).
pub const MAX_KEY_LEN: usize = crate::model::slug::MAX_SLUG_LEN;
const _: () = assert!(MAX_KEY_LEN >= 36, "a UUID is a key");

/// An id or a slug: the alphabet both are written in (input-format.md, "Slugs"), so a key
/// can name nothing but a folder directly below its endpoint, and no longer than
/// [`MAX_KEY_LEN`].
fn is_key(key: &str) -> bool {
    (1..=MAX_KEY_LEN).contains(&key.len())
        && key.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
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
    fn the_api_root_is_one_endpoint_at_three_paths() {
        for url in ["/", "/api", "/api/", "/?format=json"] {
            assert_eq!(get(url), file("api/index.json", Format::Json, Missing::NotFound), "{url}");
        }
        assert_eq!(get("/?format=api"), file("api/index.html", Format::Html, Missing::NotFound));
        assert_eq!(get("/?format=xml"), Route::Static(Answer::NotFound(Format::Json)));
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
    fn listings_are_paged_as_the_import() {
        let json = |path: &str, missing| file(path, Format::Json, missing);
        for folder in ["api/v4/categories/food-banks/services", "api/v4/service-areas/S12000046/services"] {
            for slash in ["", "/"] {
                assert_eq!(get(&format!("/{folder}{slash}")), json(&format!("{folder}/index.json"), Missing::NotFound));
            }
            assert_eq!(
                get(&format!("/{folder}/?format=json&page=2")),
                json(&format!("{folder}/page/2/index.json"), Missing::InvalidPage)
            );
            assert_eq!(
                get(&format!("/{folder}?page=last")),
                json(&format!("{folder}/page/last/index.json"), Missing::InvalidPage)
            );
            assert_eq!(get(&format!("/{folder}/?page=0")), Route::Static(Answer::InvalidPage(Format::Json)));
            assert_eq!(
                get(&format!("/{folder}/?format=api")),
                file(&format!("{folder}/index.html"), Format::Html, Missing::NotFound)
            );
        }
        for unknown in [
            "/api/v4/service-areas/s12000046/services/",
            "/api/v4/categories/Food/services/",
            "/api/v4/categories/food/",
            "/api/v4/categories/food/services/page/2/",
            "/api/v4/categories//services/",
            "/api/v3/categories/food/services/",
            "/api/v4/service-areas/S1/services/x/",
        ] {
            assert_eq!(get(unknown), Route::Static(Answer::NotFound(Format::Json)), "{unknown}");
        }
    }

    #[test]
    fn open_referral_paths() {
        let json = |path: &str, missing| file(path, Format::Json, missing);
        assert_eq!(get("/openreferral"), json("openreferral/index.json", Missing::NotFound));
        assert_eq!(get("/openreferral/"), json("openreferral/index.json", Missing::NotFound));
        assert_eq!(get("/openreferral/openapi.json"), json("openreferral/openapi/index.json", Missing::NotFound));
        let id = "5e000000-0000-4000-8000-000000000001";
        for list in ["services", "service_at_locations", "organizations", "taxonomies", "taxonomy_terms"] {
            let first = json(&format!("openreferral/{list}/index.json"), Missing::NotFound);
            assert_eq!(get(&format!("/openreferral/{list}")), first);
            assert_eq!(get(&format!("/openreferral/{list}/")), first);
            let page = json(&format!("openreferral/{list}/page/3/index.json"), Missing::InvalidPage);
            assert_eq!(get(&format!("/openreferral/{list}/?page=3")), page);
            let last = json(&format!("openreferral/{list}/page/last/index.json"), Missing::InvalidPage);
            assert_eq!(get(&format!("/openreferral/{list}/?page=last")), last);
            assert_eq!(get(&format!("/openreferral/{list}?page=0")), Route::Static(Answer::InvalidPage(Format::Json)));
            assert_eq!(
                get(&format!("/openreferral/{list}/{id}")),
                json(&format!("openreferral/{list}/{id}/index.json"), Missing::NotFound)
            );
        }
        let download = |path: &str, content_type| Route::Static(Answer::Download { path: path.into(), content_type });
        assert_eq!(
            get("/downloads/services.ndjson.gz?format=api"),
            download("downloads/services.ndjson.gz", "application/gzip")
        );
        assert_eq!(get("/downloads/openreferral-uk.zip"), download("downloads/openreferral-uk.zip", "application/zip"));
        let post = route(&Method::POST, "/downloads/openreferral-uk.zip", None, &HeaderMap::new());
        assert_eq!(post, Route::Static(Answer::MethodNotAllowed(Format::Json)));
        assert_eq!(get("/changes/state.json"), download("changes/state.json", "application/json"));
        assert_eq!(get("/changes"), json("changes/index.json", Missing::NotFound));
        assert_eq!(get("/changes/?page=2"), json("changes/page/2/index.json", Missing::InvalidPage));
        for url in [
            "/changes/page/2/",
            "/downloads/services.ndjson",
            "/downloads/services.ndjson.gz/",
            "/downloads/",
            "/openreferral/services/page/2",
            "/openreferral/services/page/2/index.json",
            "/openreferral/services/A",
            "/openreferral/locations/",
            "/openreferral/index.json",
        ] {
            assert_eq!(get(url), Route::Static(Answer::NotFound(Format::Json)), "{url}");
        }
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
            "/api/v4/",
            "/api/v4",
            "/apis/",
            "/api/v3",
            "/api/index.json",
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
    fn keys_longer_than_any_id_or_slug_are_not_found() {
        let longest = "a".repeat(MAX_KEY_LEN);
        let expected = file(&format!("api/v4/services/{longest}/index.json"), Format::Json, Missing::NotFound);
        assert_eq!(get(&format!("/api/v4/services/{longest}")), expected);
        let long = "a".repeat(MAX_KEY_LEN + 1);
        for url in [
            format!("/api/v4/services/{long}"),
            format!("/api/v4/organisations/{long}/"),
            format!("/openreferral/services/{long}"),
        ] {
            assert_eq!(get(&url), Route::Static(Answer::NotFound(Format::Json)), "{url}");
        }
    }

    #[test]
    fn encoded_paths_route_as_nginx_does() {
        assert_eq!(
            get("/api/v4/service%73/x/../../categories"),
            file("api/v4/categories/index.json", Format::Json, Missing::NotFound)
        );
        assert_eq!(get("/api/v4/service%73"), Route::Search("/api/v4/services".into()));
        assert_eq!(get("/api/v4/services/..%2f..%2f..%2fetc%2fpasswd"), Route::Static(Answer::NotFound(Format::Json)));
        assert_eq!(get("/api/v4/services/..%2f..%2f..%2f..%2fetc%2fpasswd"), Route::Static(Answer::BadRequest));
        assert_eq!(get("/../etc/passwd"), Route::Static(Answer::BadRequest));
    }
}
