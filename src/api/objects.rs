//! The metadata of each published object (behaviour.md, "Publishing and the CDN edge"):
//! the `Content-Type` nginx would send for the file, the `Cache-Control` of the cache
//! policy for the answer it makes, and `Content-Encoding` for a precompressed variant.
//! `super::headers::HARDENING` and the HTML views' CSP are not among them: object stores
//! keep only these standard headers (anything else becomes user metadata, sent as
//! `x-amz-meta-*` and the like, which browsers ignore), so the edge in front (the Worker of
//! `svcdir cdn-config`) adds them to every answer.

use super::headers::{CACHE_ERROR, CACHE_IMMUTABLE, CACHE_NONE, CACHE_STATIC};
use super::{content_type, routes};
use crate::urls as paths;
use crate::urls::search as published;
use crate::write::MANIFEST;

/// The headers stored with one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ObjectHeaders {
    /// `Content-Type`.
    pub content_type: String,
    /// `Cache-Control`.
    pub cache_control: &'static str,
    /// `Content-Encoding` of a precompressed variant (`gzip` or `br`).
    pub content_encoding: Option<&'static str>,
}

/// The headers of the object for the file `path` (relative, `/`-separated); `exists` says
/// whether another file of the same tree exists (an `X.gz` is a precompressed variant only
/// when `X` is there too; otherwise it is a download).
pub(crate) fn object_headers(path: &str, exists: impl Fn(&str) -> bool) -> ObjectHeaders {
    let encoded = [(".gz", "gzip"), (".br", "br")]
        .into_iter()
        .find_map(|(suffix, encoding)| path.strip_suffix(suffix).filter(|plain| exists(plain)).map(|p| (p, encoding)));
    let (plain, content_encoding) = match encoded {
        Some((plain, encoding)) => (plain, Some(encoding)),
        None => (path, None),
    };
    if path.starts_with(&format!("{}/", published::FOLDER)) {
        // Read by the search servers, never served (behaviour.md, "A publication"): the
        // pointer must never be cached, the index named by its hash always may be.
        let (content_type, cache_control) = if path == published::POINTER {
            (content_type(path), CACHE_NONE)
        } else {
            (OCTET_STREAM.to_owned(), CACHE_IMMUTABLE)
        };
        return ObjectHeaders { content_type, cache_control, content_encoding: None };
    }
    let cache_control = if plain == MANIFEST {
        // Read by the next publish, never served: no cache may hold an old one.
        CACHE_NONE
    } else if plain.starts_with(&format!("{}/", paths::ERRORS)) {
        // Only ever sent as the body of a 404.
        CACHE_ERROR
    } else {
        CACHE_STATIC
    };
    ObjectHeaders { content_type: content_type(plain), cache_control, content_encoding }
}

/// `Content-Type` of the published search index.
const OCTET_STREAM: &str = "application/octet-stream";

/// The stage of the pointer `_search/current.json`: after every other upload and after the
/// manifest, so that it never names an index the store does not hold yet.
pub(crate) const POINTER_STAGE: u8 = u8::MAX;

/// When an object is uploaded, as `(stage, order within the stage)`: a file goes before the
/// lists that link to it (behaviour.md, "Publishing and the CDN edge"). Stage 0 holds the
/// resources (services, organisations, Open Referral objects, the OpenAPI documents, error
/// pages, downloads); stage 1 the numbered pages of the paged lists (`routes::paged_folders`),
/// highest first (each links to the next), `page/last` before them; stage 2 the list
/// endpoints and the paged lists' first pages, which link into the stages before.
pub fn upload_stage(path: &str) -> (u8, std::cmp::Reverse<u64>) {
    if path == published::POINTER {
        return (POINTER_STAGE, std::cmp::Reverse(0));
    }
    let folder = path.rsplit_once('/').map_or("", |(folder, _)| folder);
    let paged = routes::paged_folders();
    let lists = [paths::CATEGORIES_V4, paths::SERVICE_AREAS_V4, paths::CATEGORIES_V3, paths::SERVICE_AREAS_V3];
    if lists.contains(&folder) || paged.iter().any(|p| p == folder) || super::routing::listing_key(folder).is_some() {
        return (2, std::cmp::Reverse(0));
    }
    // A listing's pages (issue 25), as the paged lists' below.
    if let Some((listing, page)) = folder.rsplit_once("/page/")
        && super::routing::listing_key(listing).is_some()
    {
        match page {
            crate::api::query::PageNumber::LAST => return (1, std::cmp::Reverse(u64::MAX)),
            n => {
                if let Ok(n) = n.parse::<u64>() {
                    return (1, std::cmp::Reverse(n));
                }
            }
        }
    }
    for list in &paged {
        let page = folder.strip_prefix(list.as_str()).and_then(|rest| rest.strip_prefix("/page/"));
        match page {
            Some(crate::api::query::PageNumber::LAST) => return (1, std::cmp::Reverse(u64::MAX)),
            Some(n) => {
                if let Ok(n) = n.parse::<u64>() {
                    return (1, std::cmp::Reverse(n));
                }
            }
            None => {}
        }
    }
    (0, std::cmp::Reverse(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precompressed_variants_carry_their_encoding_and_the_plain_type() {
        let tree = ["api/v4/categories/index.html", "api/v4/categories/index.json"];
        let exists = |p: &str| tree.contains(&p);
        let br = object_headers("api/v4/categories/index.html.br", exists);
        assert_eq!(br.content_type, "text/html; charset=utf-8");
        assert_eq!(br.content_encoding, Some("br"));
        assert_eq!(br.cache_control, CACHE_STATIC);
        let gz = object_headers("api/v4/categories/index.json.gz", exists);
        assert_eq!((gz.content_type.as_str(), gz.content_encoding), ("application/json", Some("gzip")));
        // A .gz with nothing beside it is a download.
        let download = object_headers("openreferral/services.json.gz", exists);
        assert_eq!((download.content_type.as_str(), download.content_encoding), ("application/gzip", None));
    }

    #[test]
    fn the_index_is_immutable_and_its_pointer_never_cached() {
        let hash = crate::write::content_hash(b"x");
        let index = object_headers(&published::index_path(&hash), |_| false);
        assert_eq!((index.content_type.as_str(), index.cache_control), ("application/octet-stream", CACHE_IMMUTABLE));
        let pointer = object_headers(published::POINTER, |_| true);
        assert_eq!((pointer.content_type.as_str(), pointer.cache_control), ("application/json", CACHE_NONE));
        assert_eq!(pointer.content_encoding, None);
        assert_eq!(upload_stage(&published::index_path(&hash)).0, 0, "the index goes with the resources");
        assert_eq!(upload_stage(published::POINTER).0, POINTER_STAGE);
    }

    #[test]
    fn resources_go_before_import_pages_before_lists() {
        let mut paths = vec![
            "api/v4/import/index.json",
            "api/v4/import/page/1/index.json",
            "api/v4/categories/index.html",
            "api/v4/import/page/10/index.json",
            "api/v4/import/page/2/index.json.gz",
            "api/v4/import/page/last/index.json",
            "changes/page/2/index.json",
            "api/v4/categories/food/services/index.json",
            "api/v4/categories/food/services/page/2/index.json",
            "api/v4/service-areas/XS/services/page/last/index.html",
            "changes/index.json",
            "api/v4/services/abc/index.json",
            "_errors/404.json",
        ];
        paths.sort_by_key(|p| (upload_stage(p), *p));
        assert_eq!(
            paths,
            [
                "_errors/404.json",
                "api/v4/services/abc/index.json",
                "api/v4/import/page/last/index.json",
                "api/v4/service-areas/XS/services/page/last/index.html",
                "api/v4/import/page/10/index.json",
                "api/v4/categories/food/services/page/2/index.json",
                "api/v4/import/page/2/index.json.gz",
                "changes/page/2/index.json",
                "api/v4/import/page/1/index.json",
                "api/v4/categories/food/services/index.json",
                "api/v4/categories/index.html",
                "api/v4/import/index.json",
                "changes/index.json",
            ]
        );
    }

    #[test]
    fn error_pages_and_the_manifest_have_their_own_cache_policy() {
        let none = |_: &str| false;
        assert_eq!(object_headers("_errors/404.json", none).cache_control, CACHE_ERROR);
        assert_eq!(object_headers("_manifest.json", none).cache_control, CACHE_NONE);
        assert_eq!(object_headers("api/v4/services/x/index.json", none).cache_control, CACHE_STATIC);
    }
}
