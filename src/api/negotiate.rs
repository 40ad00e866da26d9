//! JSON or HTML (behaviour.md, "JSON or HTML").
//!
//! `format=json` → JSON, `format=api` → HTML, any other non-empty `format` → 404. Without
//! `format`, the `Accept` header decides: HTML only when it prefers `text/html` to
//! `application/json`, so `*/*`, no header, or a tie of wildcards give JSON.

use axum::http::{HeaderMap, header};

use super::error::ApiError;
use crate::api::query::RawQuery;

/// The form of a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `application/json`.
    Json,
    /// The HTML view, `text/html; charset=utf-8`.
    Html,
}

/// Chooses the form from the query's `format` and the `Accept` headers.
pub fn negotiate(query: &RawQuery, headers: &HeaderMap) -> Result<Format, ApiError> {
    match query.last("format") {
        Some("json") => Ok(Format::Json),
        Some("api") => Ok(Format::Html),
        None | Some("") => {
            let accept: Vec<&str> = headers.get_all(header::ACCEPT).iter().filter_map(|v| v.to_str().ok()).collect();
            Ok(if prefers_html(&accept.join(",")) { Format::Html } else { Format::Json })
        }
        Some(_) => Err(ApiError::NotFound),
    }
}

/// How well one media range fits a media type: its quality, specificity (2 exact, 1
/// `type/*`, 0 `*/*`) and position in the header.
#[derive(Debug, Clone, Copy)]
struct Fit {
    q: f32,
    specificity: u8,
    position: usize,
}

/// The fit of the most specific range matching `type_/subtype` (RFC 9110, 12.5.1).
fn best_fit(ranges: &[(mime::Mime, usize)], type_: &str, subtype: &str) -> Option<Fit> {
    let mut best: Option<Fit> = None;
    for (range, position) in ranges {
        let specificity = match (range.type_().as_str(), range.subtype().as_str()) {
            (t, s) if t == type_ && s == subtype => 2,
            (t, "*") if t == type_ => 1,
            ("*", "*") => 0,
            _ => continue,
        };
        let q = range.get_param("q").and_then(|q| q.as_str().parse::<f32>().ok()).unwrap_or(1.0);
        let q = if q.is_finite() { q.clamp(0.0, 1.0) } else { 0.0 };
        if best.is_none_or(|b| specificity > b.specificity) {
            best = Some(Fit { q, specificity, position: *position });
        }
    }
    best
}

/// How much of `Accept` negotiation reads, in bytes: the ranges that end within them
/// (`read_part`). A browser sends under 300; the cap keeps the work per request small
/// and equal on every front end (the nginx template and the Worker read the same part).
pub const MAX_ACCEPT_BYTES: usize = 1024;

/// The part of an `Accept` value negotiation reads: all of it up to [`MAX_ACCEPT_BYTES`],
/// else the longest prefix of at most that many bytes that a `,` follows ("" when none).
pub(crate) fn read_part(accept: &str) -> &str {
    if accept.len() <= MAX_ACCEPT_BYTES {
        return accept;
    }
    match accept.as_bytes()[..=MAX_ACCEPT_BYTES].iter().rposition(|&b| b == b',') {
        Some(comma) => &accept[..comma],
        None => "",
    }
}

/// Whether an `Accept` value prefers `text/html` to `application/json`. At equal quality
/// the more specific range wins, then the one listed first (as Django REST framework picks
/// for `text/html, application/json`). Only `read_part` of the value counts.
pub fn prefers_html(accept: &str) -> bool {
    let ranges: Vec<(mime::Mime, usize)> = read_part(accept)
        .split(',')
        .filter_map(|part| part.trim().parse::<mime::Mime>().ok())
        .enumerate()
        .map(|(i, m)| (m, i))
        .collect();
    let Some(html) = best_fit(&ranges, "text", "html").filter(|f| f.q > 0.0) else {
        return false;
    };
    let Some(json) = best_fit(&ranges, "application", "json").filter(|f| f.q > 0.0) else {
        return true;
    };
    html.q > json.q
        || (html.q == json.q
            && (html.specificity > json.specificity
                || (html.specificity == json.specificity && html.position < json.position)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browsers_get_html_and_clients_json() {
        let browser = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8";
        assert!(prefers_html(browser));
        assert!(prefers_html("text/html"));
        assert!(prefers_html("text/*"));
        assert!(prefers_html("text/html, application/json"));
        for json in [
            "",
            "*/*",
            "application/json",
            "application/json, text/html",
            "text/html;q=0.5, application/json",
            "text/html;q=0, */*",
            "application/*, text/*",
            "garbage, ;;;",
        ] {
            assert!(!prefers_html(json), "{json:?}");
        }
    }

    #[test]
    fn only_the_ranges_within_the_cap_are_read() {
        let filler = |n: usize| "x".repeat(n);
        // A range that ends exactly at the cap counts; one a byte longer does not.
        let head = format!("application/x-{}", filler(MAX_ACCEPT_BYTES - "application/x-,text/html".len()));
        assert_eq!(read_part(&format!("{head},text/html")).len(), MAX_ACCEPT_BYTES);
        assert!(prefers_html(&format!("{head},text/html")));
        assert!(!prefers_html(&format!("{head}x,text/html")), "text/html ends past the cap");
        assert_eq!(read_part(&format!("text/html,{}", filler(2000))), "text/html");
        assert_eq!(read_part(&filler(2000)), "");
        assert!(!prefers_html(&format!("text/html;q=0.5;{}", filler(2000))));
    }

    #[test]
    fn format_parameter_wins() {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, "text/html".parse().unwrap());
        assert_eq!(negotiate(&RawQuery::parse("format=json"), &headers), Ok(Format::Json));
        assert_eq!(negotiate(&RawQuery::parse("format=api"), &HeaderMap::new()), Ok(Format::Html));
        assert_eq!(negotiate(&RawQuery::parse("format="), &headers), Ok(Format::Html));
        assert_eq!(negotiate(&RawQuery::parse("format=xml"), &headers), Err(ApiError::NotFound));
        assert_eq!(negotiate(&RawQuery::parse(""), &HeaderMap::new()), Ok(Format::Json));
    }
}
