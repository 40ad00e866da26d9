//! The HTTP contract of the API, with no transport in it: which paths exist and what each
//! answers ([`routing`], `path`), JSON or HTML ([`negotiate`]), the errors and their bodies
//! (`error`, [`bodies`]), and the headers and cache policy ([`headers`]); the URL space as
//! tables for the Cloudflare Worker ([`routes`]) and the metadata of published objects
//! ([`objects`], read by `svcdir publish`).
//!
//! Every front end answers from these rules: the search server (`crate::server`), the local
//! preview (`crate::preview`), the generated nginx configuration (`crate::nginx`) and the
//! generated Cloudflare Worker (`crate::edge`). A rule
//! changes here, once; the end-to-end suite (`tests/e2e`) checks that they answer alike.

pub mod bodies;
pub(crate) mod error;
pub mod headers;
pub(crate) mod html;
pub mod negotiate;
pub mod objects;
pub(crate) mod path;
pub(crate) mod query;
pub mod routes;
pub mod routing;

pub(crate) use error::ApiError;
pub use negotiate::Format;

/// The media types of the files of a build, by file extension (nginx's `types` block).
pub(crate) const MEDIA_TYPES: [(&str, &str); 5] = [
    ("json", "application/json"),
    ("html", "text/html"),
    // Downloads: sent as they are, without a Content-Encoding.
    ("gz", "application/gzip"),
    ("zip", "application/zip"),
    // The map file (RFC 7946).
    ("geojson", "application/geo+json"),
];

/// The media type of a file with no known extension (nginx's `default_type`).
pub(crate) const DEFAULT_MEDIA_TYPE: &str = "application/json";

/// The media types sent with `; charset=utf-8` (nginx's `charset utf-8` applies to its
/// `charset_types`, of which the build has only `text/html`).
pub(crate) const CHARSET_TYPES: [&str; 1] = ["text/html"];

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
        assert_eq!(content_type("api/v4/categories/index.html"), headers::HTML);
        assert_eq!(content_type("downloads/services.ndjson.gz"), "application/gzip");
        assert_eq!(content_type("downloads/openreferral-uk.zip"), "application/zip");
        assert_eq!(content_type("no-extension"), DEFAULT_MEDIA_TYPE);
        // The downloads' own content types (routing::EXACT_FILES) agree with the table.
        for (file, media, _) in routing::EXACT_FILES {
            assert_eq!(content_type(file), media, "{file}");
        }
    }
}
