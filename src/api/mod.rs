//! The HTTP contract of the deployed API, shared by every front end that serves a build:
//! media types, cache policy and the metadata of published objects. `svcdir serve`
//! (`crate::preview`), the nginx configuration (`crate::nginx`) and `svcdir publish`
//! (`crate::publish`) read these tables instead of keeping copies of their own.

pub mod objects;
pub mod routes;

/// `Cache-Control` of a static 200 (and of OPTIONS on a static endpoint): the files change
/// only when the site is rebuilt, so a CDN or browser may keep them for a while.
pub const CACHE_STATIC: &str = "public, max-age=600";
/// `Cache-Control` of a search 200: results change with every rebuild of the index.
pub const CACHE_SEARCH: &str = "public, max-age=60";
/// `Cache-Control` of a 400 or 404: short, so a fix or a rebuild shows up soon.
pub const CACHE_ERROR: &str = "public, max-age=60";
/// `Cache-Control` of anything else (405, 5xx): never stored.
pub const CACHE_NONE: &str = "no-store";

/// The media types of the files of a build, by file extension (nginx's `types` block).
pub const MEDIA_TYPES: [(&str, &str); 4] = [
    ("json", "application/json"),
    ("html", "text/html"),
    // Downloads: sent as they are, without a Content-Encoding.
    ("gz", "application/gzip"),
    ("zip", "application/zip"),
];

/// The media type of a file with no known extension (nginx's `default_type`).
pub const DEFAULT_MEDIA_TYPE: &str = "application/json";

/// The media types sent with `; charset=utf-8` (nginx's `charset utf-8` applies to its
/// `charset_types`, of which the build has only `text/html`).
pub const CHARSET_TYPES: [&str; 1] = ["text/html"];

/// The `Content-Type` nginx sends for a file with this name.
pub fn content_type(name: &str) -> String {
    let media = name
        .rsplit_once('.')
        .and_then(|(_, ext)| MEDIA_TYPES.iter().find(|(e, _)| e.eq_ignore_ascii_case(ext)))
        .map_or(DEFAULT_MEDIA_TYPE, |(_, media)| media);
    if CHARSET_TYPES.contains(&media) { format!("{media}; charset=utf-8") } else { media.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_are_nginx_s() {
        assert_eq!(content_type("api/v4/categories/index.json"), "application/json");
        assert_eq!(content_type("api/v4/categories/index.html"), "text/html; charset=utf-8");
        assert_eq!(content_type("openreferral/data.json.gz"), "application/gzip");
        assert_eq!(content_type("openreferral/data.zip"), "application/zip");
        assert_eq!(content_type("no-extension"), DEFAULT_MEDIA_TYPE);
    }
}
