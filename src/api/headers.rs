//! The headers of every answer and the cache policy (behaviour.md, "Routing", "Headers"):
//! the set every response carries, the content types, `Cache-Control` by origin and status,
//! and the CORS preflight. The search server, `svcdir serve`, the nginx template and the
//! HTML views read them from here.

use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};

/// `Content-Type` of JSON answers.
pub const JSON: &str = "application/json";
/// `Content-Type` of the HTML view.
pub const HTML: &str = "text/html; charset=utf-8";
/// `Allow`: the methods every path answers.
pub(crate) const ALLOW: &str = "GET, HEAD, OPTIONS";
/// `Vary`: the answer depends on `Accept` (JSON or HTML).
pub(crate) const VARY: &str = "Accept";
/// `Access-Control-Allow-Origin`: the API is public.
pub(crate) const ALLOW_ORIGIN: &str = "*";

/// The headers every answer carries, whatever its status (name as the HTML view shows it).
pub(crate) const COMMON: [(&str, &str); 3] =
    [("Allow", ALLOW), ("Vary", VARY), ("Access-Control-Allow-Origin", ALLOW_ORIGIN)];

/// Headers every answer carries beside [`COMMON`], which the HTML view does not list:
/// browsers take the `Content-Type` as sent, never sniff a JSON body or a download into
/// something they would run (issue 28).
pub(crate) const HARDENING: [(&str, &str); 1] = [("X-Content-Type-Options", "nosniff")];

/// `Content-Security-Policy` of every HTML answer: the views run no script and load
/// nothing; their only style is the inline `<style>` of `templates/base.html` (inline SVG
/// needs no source); links go anywhere, forms only to this origin.
pub const HTML_CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; \
form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// Whether a `Content-Type` is the HTML view's (the answers that get [`HTML_CSP`]).
pub fn is_html(content_type: &str) -> bool {
    content_type.get(..9).is_some_and(|t| t.eq_ignore_ascii_case("text/html"))
}

/// The headers of a JSON answer, in the order the HTML view lists them.
pub(crate) fn json_headers() -> Vec<(String, String)> {
    let [allow, vary, origin] = COMMON;
    [allow, ("Content-Type", JSON), vary, origin].iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

/// `Cache-Control` of a static 200 (and of OPTIONS on a static endpoint): the files change
/// only when the site is rebuilt, so a CDN or browser may keep them for a while.
pub(crate) const CACHE_STATIC: &str = "public, max-age=600";
/// `Cache-Control` of an object named by its content hash (the published search index):
/// its bytes can never change, so any cache may keep it.
pub(crate) const CACHE_IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// `Cache-Control` of a search 200: results change with every rebuild of the index.
pub const CACHE_SEARCH: &str = "public, max-age=60";
/// `Cache-Control` of a 400 or 404: short, so a fix or a rebuild shows up soon.
pub const CACHE_ERROR: &str = "public, max-age=60";
/// `Cache-Control` of anything else (405, 5xx): never stored.
pub(crate) const CACHE_NONE: &str = "no-store";

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

/// `Access-Control-Allow-Methods` of a CORS preflight (behaviour.md, Routing).
pub const CORS_ALLOW_METHODS: &str = ALLOW;
/// `Access-Control-Allow-Headers` of a preflight that names no headers: the set that
/// django-cors-headers, which the described service runs, allows by default.
pub const CORS_DEFAULT_ALLOW_HEADERS: &str =
    "accept, accept-encoding, authorization, content-type, dnt, origin, user-agent, x-csrftoken, x-requested-with";
/// `Access-Control-Max-Age` of a preflight: browsers may keep the answer for a day.
pub(crate) const CORS_MAX_AGE: &str = "86400";

/// The headers a CORS preflight gets beside the usual ones (behaviour.md, Routing), or
/// `None` when the request is not a preflight: an OPTIONS with a non-empty
/// `Access-Control-Request-Method`. The headers allowed are those the browser asks for
/// (`Access-Control-Request-Headers`, as sent), else [`CORS_DEFAULT_ALLOW_HEADERS`], so a
/// client app's own headers pass.
pub(crate) fn preflight_headers(method: &Method, headers: &HeaderMap) -> Option<[(&'static str, HeaderValue); 3]> {
    let asked = |name: &str| headers.get(name).filter(|v| !v.as_bytes().trim_ascii().is_empty());
    if *method != Method::OPTIONS || asked("access-control-request-method").is_none() {
        return None;
    }
    let allow_headers = asked("access-control-request-headers")
        .cloned()
        .unwrap_or(HeaderValue::from_static(CORS_DEFAULT_ALLOW_HEADERS));
    Some([
        ("access-control-allow-methods", HeaderValue::from_static(CORS_ALLOW_METHODS)),
        ("access-control-allow-headers", allow_headers),
        ("access-control-max-age", HeaderValue::from_static(CORS_MAX_AGE)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_policy() {
        assert_eq!(cache_control(Origin::Static, StatusCode::OK), CACHE_STATIC);
        assert_eq!(cache_control(Origin::Search, StatusCode::OK), CACHE_SEARCH);
        assert_eq!(cache_control(Origin::Search, StatusCode::BAD_REQUEST), CACHE_ERROR);
        assert_eq!(cache_control(Origin::Static, StatusCode::NOT_FOUND), CACHE_ERROR);
        assert_eq!(cache_control(Origin::Static, StatusCode::METHOD_NOT_ALLOWED), CACHE_NONE);
    }
}
