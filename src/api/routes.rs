//! The URL space of the API as data, for front ends that cannot call [`super::routing::route`]
//! (the Cloudflare Worker of `crate::edge`): which paths are the search, which folders of a
//! build are endpoints (paged or not, keyed by an id or slug), which files are served as they
//! are, and the methods. Every table is made from the constants `route` itself reads; the
//! tests below check that `route` answers each entry as the table says.

use crate::urls as paths;

/// The two search paths, without their trailing slash.
pub const SEARCH_PATHS: [&str; 2] = super::routing::SEARCH_PATHS;

/// The folder of the 404 bodies.
pub(crate) const ERRORS_FOLDER: &str = paths::ERRORS;

/// Methods an endpoint answers; any other is 405.
pub(crate) const ALLOWED_METHODS: [&str; 3] = ["GET", "HEAD", "OPTIONS"];

/// Methods refused on every path before routing (nginx does so itself).
pub(crate) const EARLY_405_METHODS: [&str; 2] = ["TRACE", "CONNECT"];

/// Smallest body that is gzipped (nginx's `gzip_min_length`).
pub(crate) const GZIP_MIN_LENGTH: u64 = 256;

/// Lists paged with `?page=N` / `?page=last` (path without the leading slash): page 1 in the
/// folder, the others in `<folder>/page/<N or last>`.
pub(crate) fn paged_folders() -> Vec<String> {
    use crate::urls::openreferral::{self as oruk, List};
    let mut folders = vec![paths::IMPORT.to_owned(), crate::urls::CHANGES.to_owned()];
    folders.extend(List::ALL.into_iter().map(oruk::list));
    folders
}

/// The listings' folders (path without the leading slash) as one regular expression that
/// nginx and JavaScript read alike: the folder above the keys, a key as
/// [`super::routing::LISTINGS`] allows it, then the listing's segment. Each is paged as the
/// import.
pub(crate) fn listing_pattern() -> String {
    use super::routing::MAX_AREA_CODE_LEN;
    format!(
        "(?:{}/{}|{}/[A-Z0-9]{{1,{MAX_AREA_CODE_LEN}}})/{}",
        paths::CATEGORIES_V4,
        key_pattern(),
        paths::SERVICE_AREAS_V4,
        paths::LISTING
    )
}

/// The endpoints that are one folder each (path without the leading slash).
pub(crate) fn resource_folders() -> Vec<&'static str> {
    use crate::urls::openreferral as oruk;
    vec![
        paths::CATEGORIES_V4,
        paths::SERVICE_AREAS_V4,
        paths::CATEGORIES_V3,
        paths::SERVICE_AREAS_V3,
        paths::OPENAPI,
        oruk::ROOT,
        oruk::OPENAPI,
        paths::ROOT,
    ]
}

/// Folders whose sub-folders, named by a key (an id or a slug), are endpoints.
pub(crate) fn keyed_prefixes() -> Vec<String> {
    use crate::urls::openreferral::{self as oruk, List};
    let mut prefixes = vec![paths::service(""), paths::organisation("")];
    prefixes.extend(List::ALL.into_iter().map(|list| format!("{}/", oruk::list(list))));
    prefixes
}

/// Paths (exactly as written, leading slash) answered as another endpoint's folder: the
/// OpenAPI documents' well-known names, and `/`, the API root.
pub fn aliases() -> std::collections::BTreeMap<String, &'static str> {
    use crate::urls::openreferral as oruk;
    [
        (format!("/{}", paths::OPENAPI_FILE), paths::OPENAPI),
        (format!("/{}", oruk::OPENAPI_FILE), oruk::OPENAPI),
        ("/".to_owned(), paths::ROOT),
    ]
    .into_iter()
    .collect()
}

/// The key of a keyed folder as a regular expression nginx and JavaScript read alike: what
/// [`super::routing::route`] takes for an id or a slug.
fn key_pattern() -> String {
    format!("[a-z0-9-]{{1,{}}}", super::routing::MAX_KEY_LEN)
}

/// Every endpoint that is one folder, as one regular expression nginx and JavaScript read
/// alike (path without the leading slash): each of [`resource_folders`], and a key under
/// each of [`keyed_prefixes`]. The folders' names need no escaping: a test checks that they
/// hold only letters, digits, `-`, `_` and `/`.
pub(crate) fn folder_pattern() -> String {
    let mut alternatives: Vec<String> = resource_folders().into_iter().map(str::to_owned).collect();
    alternatives.extend(keyed_prefixes().into_iter().map(|prefix| format!("{prefix}{}", key_pattern())));
    format!("(?:{})", alternatives.join("|"))
}

/// [`paged_folders`] as one regular expression (see [`folder_pattern`]).
pub(crate) fn paged_pattern() -> String {
    format!("(?:{})", paged_folders().join("|"))
}

/// Files served as they are at their own path (exactly as written, leading slash), whatever
/// `format` and `Accept` say: path → content type.
pub(crate) fn exact_files() -> std::collections::BTreeMap<String, &'static str> {
    super::routing::EXACT_FILES.iter().map(|(file, media, _)| (format!("/{file}"), *media)).collect()
}

#[cfg(test)]
mod tests {
    use super::super::negotiate::Format;
    use super::super::routing::{Answer, Missing, Route, route};
    use super::*;
    use axum::http::{HeaderMap, Method};

    fn get(path: &str, query: Option<&str>) -> Route {
        route(&Method::GET, path, query, &HeaderMap::new())
    }

    fn file(path: String, missing: Missing) -> Route {
        Route::Static(Answer::File { path, format: Format::Json, missing })
    }

    #[test]
    fn route_answers_every_table_entry_as_the_table_says() {
        for search in SEARCH_PATHS {
            assert!(matches!(get(search, None), Route::Search(_)), "{search}");
        }
        for folder in paged_folders() {
            for slash in ["", "/"] {
                let path = format!("/{folder}{slash}");
                assert_eq!(get(&path, None), file(format!("{folder}/index.json"), Missing::NotFound));
                assert_eq!(
                    get(&path, Some("page=3")),
                    file(format!("{folder}/page/3/index.json"), Missing::InvalidPage)
                );
                assert_eq!(
                    get(&path, Some("page=last")),
                    file(format!("{folder}/page/last/index.json"), Missing::InvalidPage)
                );
                assert_eq!(get(&path, Some("page=0")), Route::Static(Answer::InvalidPage(Format::Json)));
            }
        }
        for folder in resource_folders() {
            for slash in ["", "/"] {
                let path = format!("/{folder}{slash}");
                assert_eq!(get(&path, None), file(format!("{folder}/index.json"), Missing::NotFound), "{path}");
            }
        }
        for prefix in keyed_prefixes() {
            let path = format!("/{prefix}some-key-1");
            assert_eq!(get(&path, None), file(format!("{prefix}some-key-1/index.json"), Missing::NotFound), "{path}");
            assert_eq!(get(&format!("/{prefix}Not_A_Key"), None), Route::Static(Answer::NotFound(Format::Json)));
        }
        for (alias, folder) in aliases() {
            assert_eq!(get(&alias, None), file(format!("{folder}/index.json"), Missing::NotFound), "{alias}");
        }
        for (path, content_type) in exact_files() {
            let rel = path.trim_start_matches('/').to_owned();
            assert_eq!(get(&path, None), Route::Static(Answer::Download { path: rel, content_type }), "{path}");
        }
        assert!(SEARCH_PATHS.iter().all(|p| !ERRORS_FOLDER.contains(p)));
        // The patterns hold the folders as they are: nothing in a name that a regular
        // expression would read otherwise.
        let plain = |name: &str| name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_/".contains(&b));
        assert!(resource_folders().into_iter().chain(keyed_prefixes().iter().map(String::as_str)).all(plain));
        assert!(paged_folders().iter().all(|f| plain(f)));
        let folders = regex::Regex::new(&format!("^{}$", folder_pattern())).expect("a regular expression");
        let paged = regex::Regex::new(&format!("^{}$", paged_pattern())).expect("a regular expression");
        for rel in ["api/v4/services/a-b-1", "api/v4/categories", "api", "openreferral/services/x", "openreferral"] {
            assert!(folders.is_match(rel) && !paged.is_match(rel), "{rel}");
        }
        for rel in ["api/v4/services", "api/v4/services/A", "api/v4", "openreferral/services"] {
            assert!(!folders.is_match(rel), "{rel}");
        }
        for rel in paged_folders() {
            assert!(paged.is_match(&rel) && !folders.is_match(&rel), "{rel}");
        }
        // The listings' pattern admits exactly the folders `route` pages.
        let pattern = regex::Regex::new(&format!("^{}$", listing_pattern())).expect("a regular expression");
        let long = "a".repeat(super::super::routing::MAX_KEY_LEN + 1);
        for rel in [
            "api/v4/categories/food-banks/services".to_owned(),
            "api/v4/service-areas/S12000046/services".into(),
            "api/v4/service-areas/XS/services".into(),
            "api/v4/service-areas/s12000046/services".into(),
            "api/v4/categories/Food/services".into(),
            "api/v4/categories/food_banks/services".into(),
            "api/v4/service-areas/S12-46/services".into(),
            format!("api/v4/categories/{long}/services"),
            format!("api/v4/service-areas/{}/services", "S".repeat(33)),
            "api/v3/categories/food/services".into(),
        ] {
            let paged = matches!(get(&format!("/{rel}"), None), Route::Static(Answer::File { .. }));
            assert_eq!(pattern.is_match(&rel), paged, "{rel}");
        }
    }
}
