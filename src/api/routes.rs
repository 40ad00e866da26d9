//! The URL space of the API as data: which paths are the search, which folders of a build
//! are endpoints, the methods and the headers every answer carries. `crate::routing` (the
//! preview) decides with these tables, and `crate::edge` writes them into the Worker.

use crate::render::paths;

/// The two search paths, without their trailing slash.
pub const SEARCH_PATHS: [&str; 2] = ["/api/v4/services", "/api/v3/search"];

/// The endpoints that are one folder each (path without the leading slash).
pub const LIST_FOLDERS: [&str; 4] =
    [paths::CATEGORIES_V4, paths::SERVICE_AREAS_V4, paths::CATEGORIES_V3, paths::SERVICE_AREAS_V3];

/// The import's folder (`?page=N` picks `page/N/` below it).
pub const IMPORT_FOLDER: &str = paths::IMPORT;

/// The folder of the 404 bodies.
pub const ERRORS_FOLDER: &str = paths::ERRORS;

/// Methods an endpoint answers; any other is 405.
pub const ALLOWED_METHODS: [&str; 3] = ["GET", "HEAD", "OPTIONS"];

/// Methods refused on every path before routing (nginx does so itself).
pub const EARLY_405_METHODS: [&str; 2] = ["TRACE", "CONNECT"];

/// Headers on every answer (behaviour.md, "Routing").
pub const COMMON_HEADERS: [(&str, &str); 3] =
    [("Allow", "GET, HEAD, OPTIONS"), ("Vary", "Accept"), ("Access-Control-Allow-Origin", "*")];

/// Smallest body that is gzipped (nginx's `gzip_min_length`).
pub const GZIP_MIN_LENGTH: u64 = 256;

/// The body of a 503 when the search servers cannot be reached.
pub const UNAVAILABLE_BODY: &str = r#"{"detail":"Service temporarily unavailable, try again later."}"#;

/// The endpoints that are one folder each: the lists and the OpenAPI document.
pub fn resource_folders() -> Vec<&'static str> {
    LIST_FOLDERS.iter().copied().chain([paths::OPENAPI]).collect()
}

/// Folders whose sub-folders, named by a key (an id or a slug), are endpoints.
pub fn keyed_prefixes() -> Vec<String> {
    vec![paths::service(""), paths::organisation("")]
}

/// Paths answered as another endpoint: the OpenAPI document's well-known name.
pub fn aliases() -> std::collections::BTreeMap<String, &'static str> {
    [(format!("/{}", paths::OPENAPI_FILE), paths::OPENAPI)].into_iter().collect()
}
