//! The answers of the two search paths: the search run on the state in force, its JSON
//! envelope around the results rendered at build time, `next` and `previous`, the HTML view
//! when it is negotiated, OPTIONS, 404 and 405, and [`ApiError`] as a response.

use std::sync::Arc;

use axum::extract::{Extension, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get};
use serde::Serialize;

use super::state::{AppState, LiveState};
use crate::api::ApiError;
use crate::api::headers::{HTML, JSON};
use crate::api::html::{Body, Extras, HtmlView, PageResult, ResultFragment, ResultsMarkup, render_html_bytes};
use crate::api::negotiate::{self, Format};
use crate::api::routing::{V3_PATH, V4_PATH};
use crate::model::Point;
use crate::render::form::{CategoryOptions, SearchForm};
use crate::render::map::{self, Marker};
use crate::search::{self, ApiVersion, Deadline, RawQuery, ResultPage};

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::to_vec(&self.body()).unwrap_or_else(|_| b"{}".to_vec());
        with_error_headers(&self, (self.status(), [(header::CONTENT_TYPE, JSON)], body).into_response())
    }
}

/// Adds the headers `error`'s status calls for ([`ApiError::extra_headers`]) to `response`.
pub(crate) fn with_error_headers(error: &ApiError, mut response: Response) -> Response {
    for (name, value) in error.extra_headers() {
        response.headers_mut().insert(HeaderName::from_static(name), HeaderValue::from_static(value));
    }
    response
}

pub(super) fn endpoint(version: ApiVersion) -> MethodRouter<Arc<LiveState>> {
    // `get` also answers HEAD: axum runs the GET handler and drops the body.
    get(
        move |State(live): State<Arc<LiveState>>,
              deadline: Option<Extension<Deadline>>,
              uri: Uri,
              headers: HeaderMap| async move {
            // Inline on the worker, not on the blocking pool: `spawn_blocking` cost 28% of the
            // throughput and doubled the RSS in `make bench-search` (10,000 services: 12,181
            // vs 16,964 requests/s, p99 11.7 vs 8.1 ms). The time limit reaches the search as
            // a deadline it checks itself (see `time_limit`).
            let deadline = deadline.map_or(Deadline::NONE, |Extension(d)| d);
            match live.load() {
                Some(state) => search_response(&state, version, &uri, &headers, deadline),
                // `svcdir-search --from` before its first index is in force.
                None => error_response(ApiError::Unavailable, &uri, &headers, "Service unavailable"),
            }
        },
    )
    .options(|uri: Uri, headers: HeaderMap| async move { options(&uri, &headers) })
    .fallback(|method: Method, uri: Uri, headers: HeaderMap| async move {
        error_response(ApiError::MethodNotAllowed(method), &uri, &headers, "Method not allowed")
    })
}

/// OPTIONS: 200, the headers, no body.
fn options(uri: &Uri, headers: &HeaderMap) -> Response {
    let query = RawQuery::parse(uri.query().unwrap_or(""));
    let content_type = match negotiate::negotiate(&query, headers) {
        Ok(Format::Html) => HTML,
        _ => JSON,
    };
    (StatusCode::OK, [(header::CONTENT_TYPE, content_type)]).into_response()
}

/// 404 `{"detail": "Not found."}` (or its HTML view): the fallback of [`super::app`].
pub async fn not_found(uri: Uri, headers: HeaderMap) -> Response {
    error_response(ApiError::NotFound, &uri, &headers, "Not found")
}

fn error_response(error: ApiError, uri: &Uri, headers: &HeaderMap, title: &str) -> Response {
    let query = RawQuery::parse(uri.query().unwrap_or(""));
    match negotiate::negotiate(&query, headers) {
        Ok(format) => {
            let target = Target { uri, query: &query, title, size_hint: 256, search: None, links: None };
            respond(format, error.status(), &error.body(), &target)
        }
        Err(unknown_format) => unknown_format.into_response(),
    }
}

/// The request as the HTML view names it, and the expected size of the JSON body.
struct Target<'a> {
    uri: &'a Uri,
    query: &'a RawQuery,
    title: &'a str,
    size_hint: usize,
    /// For a search: what its HTML view shows besides the response.
    search: Option<SearchExtras<'a>>,
    /// For a page of results: `next` and `previous`; its HTML view then reads the JSON as
    /// text, without building a tree.
    links: Option<(Option<String>, Option<String>)>,
}

/// What the HTML view of a search shows besides the response: the form, and once the
/// search ran, the map.
struct SearchExtras<'a> {
    version: ApiVersion,
    categories: &'a CategoryOptions,
    /// The point searched from, its postcode (as normalised) and the radius in metres.
    from: Option<(Point, &'a str, u64)>,
}

fn search_response(
    state: &AppState,
    version: ApiVersion,
    uri: &Uri,
    headers: &HeaderMap,
    deadline: Deadline,
) -> Response {
    let query = RawQuery::parse(uri.query().unwrap_or(""));
    let format = match negotiate::negotiate(&query, headers) {
        Ok(format) => format,
        Err(unknown_format) => return unknown_format.into_response(),
    };
    let (title, path) = match version {
        ApiVersion::V4 => ("Service search", V4_PATH),
        ApiVersion::V3 => ("Search (v3)", V3_PATH),
    };
    let search = SearchExtras { version, categories: &state.category_options, from: None };
    let mut target = Target { uri, query: &query, title, size_hint: 256, search: Some(search), links: None };
    let page = search::params::parse(&query, state.index(), version).map_err(ApiError::BadRequest).and_then(|params| {
        if let Some(search) = target.search.as_mut() {
            search.from = Some((params.postcode.point, params.postcode.code, params.radius_m));
        }
        search::run::run(state.index(), &params, deadline).map_err(ApiError::from)
    });
    let page = match page {
        Ok(page) => page,
        Err(error) => return with_error_headers(&error, respond(format, error.status(), &error.body(), &target)),
    };
    let (next, previous) = links(&state.publication().base_url, path, &query, &page);
    let index = state.index();
    // The HTML view copies each result's markup stored in the index beside its JSON, when
    // every result of the page has one with what its map reads; else it walks the JSON.
    let stored = if format == Format::Html { stored_fragments(index, version, &page) } else { None };
    if format == Format::Html && stored.is_none() {
        target.links = Some((next.clone(), previous.clone()));
    }
    let size = page.hits.iter().map(|hit| index.rendered(version, hit.service).len() + 1).sum::<usize>();
    let mut body = Vec::with_capacity(size + 1024);
    // The envelope written field by field as serde writes `PagedEnvelope` (v4) and the v3
    // page (`{count, next, previous, results}`, no `meta`); each result is the JSON rendered
    // at build time, copied as bytes.
    let list = match version {
        ApiVersion::V4 => {
            body.extend_from_slice(b"{\"meta\":");
            body.extend_from_slice(&state.meta_json);
            body.extend_from_slice(b",\"count\":");
            "data"
        }
        ApiVersion::V3 => {
            body.extend_from_slice(b"{\"count\":");
            "results"
        }
    };
    body.extend_from_slice(page.count.to_string().as_bytes());
    body.extend_from_slice(b",\"next\":");
    write_json(&mut body, &next);
    body.extend_from_slice(b",\"previous\":");
    write_json(&mut body, &previous);
    body.extend_from_slice(format!(",\"{list}\":[").as_bytes());
    if let Some((items, results)) = stored {
        // The envelope with its list left empty: the results' markup goes there.
        body.extend_from_slice(b"]}");
        let Some(markup) = ResultsMarkup::of(&body, items) else { return ApiError::Internal.into_response() };
        return html_answer(StatusCode::OK, Body::Results { markup, next, previous }, &body, Some(results), &target);
    }
    for (n, hit) in page.hits.iter().enumerate() {
        if n > 0 {
            body.push(b',');
        }
        body.extend_from_slice(index.rendered(version, hit.service));
    }
    body.extend_from_slice(b"]}");
    target.size_hint = body.len();
    respond_encoded(format, StatusCode::OK, body, &target)
}

/// The stored markup of each result of `page`, with its name and locations for the map
/// (`ResultFragment`); None for an empty page, or when a result has none.
#[allow(clippy::type_complexity)]
fn stored_fragments<'i>(
    index: &'i crate::index::SearchIndex,
    version: ApiVersion,
    page: &ResultPage,
) -> Option<(Vec<&'i [u8]>, Vec<PageResult<'i>>)> {
    if page.hits.is_empty() {
        return None;
    }
    let fragments = page.hits.iter().map(|hit| ResultFragment::decode(index.rendered_html(version, hit.service)));
    fragments
        .map(|fragment| fragment.and_then(|f| Some((f.markup, f.result?))))
        .collect::<Option<Vec<_>>>()
        .map(|pairs| pairs.into_iter().unzip())
}

/// Appends `value` as JSON (an `Option<String>` cannot fail to serialise).
fn write_json(out: &mut Vec<u8>, value: &Option<String>) {
    if serde_json::to_writer(&mut *out, value).is_err() {
        out.extend_from_slice(b"null");
    }
}

/// `next` and `previous` (behaviour.md, Search 8): absolute, from the configured base URL
/// and the version's canonical path; every parameter the client sent, in its order, with
/// `page` dropped and the new `page` appended (`format` is kept, so an HTML page links to
/// HTML pages); page 2's `previous` has no `page`.
pub fn links(base_url: &str, path: &str, query: &RawQuery, page: &ResultPage) -> (Option<String>, Option<String>) {
    let url = |append: Option<(&str, &str)>| {
        let mut url = String::with_capacity(base_url.len() + path.len() + 64);
        url.push_str(base_url);
        url.push_str(path);
        url.push('?');
        if !query.append_encoded(&mut url, "page", append) {
            url.pop();
        }
        url
    };
    let next = page.has_next.then(|| url(Some(("page", &(page.page + 1).to_string()))));
    let previous = page.has_previous.then(|| match page.page {
        2 => url(None),
        n => url(Some(("page", &(n - 1).to_string()))),
    });
    (next, previous)
}

/// Serialises `body` as JSON, or shows it in the HTML view.
fn respond<T: Serialize>(format: Format, status: StatusCode, body: &T, target: &Target<'_>) -> Response {
    let mut bytes = Vec::with_capacity(target.size_hint);
    match serde_json::to_writer(&mut bytes, body) {
        Ok(()) => respond_encoded(format, status, bytes, target),
        Err(_) => ApiError::Internal.into_response(),
    }
}

/// Sends JSON already encoded, or shows it in the HTML view.
fn respond_encoded(format: Format, status: StatusCode, bytes: Vec<u8>, target: &Target<'_>) -> Response {
    match format {
        Format::Json => (status, [(header::CONTENT_TYPE, JSON)], bytes).into_response(),
        Format::Html => {
            let value;
            // A page of results: its markup and what its map reads, in one walk of the text.
            let (body, results) = match &target.links {
                Some((next, previous)) => {
                    let Ok((markup, read)) = crate::api::html::page_html_from_json(&bytes) else {
                        return ApiError::Internal.into_response();
                    };
                    (Body::Markup { html: markup.into(), next: next.clone(), previous: previous.clone() }, read)
                }
                None => {
                    let Ok(parsed) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
                        return ApiError::Internal.into_response();
                    };
                    value = parsed;
                    (Body::Value(&value), None)
                }
            };
            html_answer(status, body, &bytes, results, target)
        }
    }
}

/// The HTML view of an answer whose JSON is `json` and whose body is shown as `body`, with
/// the form and map of a search (`results`: what the map reads, if already read).
fn html_answer(
    status: StatusCode,
    body: Body<'_>,
    json: &[u8],
    results: Option<Vec<PageResult<'_>>>,
    target: &Target<'_>,
) -> Response {
    let request = target.uri.path_and_query().map(|pq| pq.as_str()).unwrap_or("/").to_owned();
    let qs = target.query.encode_with("format", Some(("format", "json")));
    let json_url = format!("{}?{qs}", target.uri.path());
    let mut view = HtmlView::of_body(target.title, request, status.as_u16(), body, json_url);
    if let Some(search) = &target.search {
        let errors = match &view.body {
            Body::Value(value) if status == StatusCode::BAD_REQUEST => Some(*value),
            _ => None,
        };
        match search_extras(search, target.query, status, errors, json, results) {
            Ok(extras) => view.extras = extras,
            Err(err) => {
                tracing::error!(error = %err, "the search form failed; answered 500");
                return ApiError::Internal.into_response();
            }
        }
    }
    match render_html_bytes(&view) {
        Ok(html) => (status, [(header::CONTENT_TYPE, HTML)], html).into_response(),
        Err(err) => {
            tracing::error!(error = %err, "the HTML view failed; answered 500");
            ApiError::Internal.into_response()
        }
    }
}

/// The form, filled in with the query (and the 400's messages, `errors`), and for a page of
/// results the map of its located results, each at its location nearest the point searched
/// from (`results`, as the walk that wrote the markup read them, or else read from the JSON
/// text `json` as typed records: no tree is built).
fn search_extras(
    search: &SearchExtras<'_>,
    query: &RawQuery,
    status: StatusCode,
    errors: Option<&serde_json::Value>,
    json: &[u8],
    results: Option<Vec<PageResult<'_>>>,
) -> Result<Extras, crate::api::html::HtmlError> {
    let form = SearchForm { version: search.version, query, errors, categories: search.categories }.render()?;
    let map = match search.from {
        Some((from, code, radius)) if status == StatusCode::OK => {
            let results = match results {
                Some(results) => results,
                None => {
                    let page: Located<'_> = serde_json::from_slice(json)?;
                    let located = |r: LocatedResult<'_>| PageResult {
                        locations: r.locations.iter().map(|l| (l.latitude, l.longitude)).collect(),
                        name: std::borrow::Cow::Owned(r.name.into_owned()),
                    };
                    page.results.into_iter().map(located).collect()
                }
            };
            let markers: Vec<Marker<'_>> = results
                .iter()
                .enumerate()
                .filter_map(|(n, result)| {
                    let nearest = result
                        .locations
                        .iter()
                        .map(|&(lat, lon)| Point { lat, lon })
                        .min_by(|a, b| from.distance_m(*a).total_cmp(&from.distance_m(*b)))?;
                    Some(Marker { number: n + 1, point: nearest, label: &result.name })
                })
                .collect();
            map::search_map(from, code, radius, &markers)
        }
        _ => None,
    };
    Ok(Extras { front: None, form: Some(form), map })
}

/// What the map reads of a page of results: each result's name and locations (v4's `data`,
/// v3's `results`); serde skips the rest of the text without keeping it.
#[derive(serde::Deserialize)]
struct Located<'a> {
    #[serde(alias = "data", borrow)]
    results: Vec<LocatedResult<'a>>,
}

#[derive(serde::Deserialize)]
struct LocatedResult<'a> {
    #[serde(borrow)]
    name: std::borrow::Cow<'a, str>,
    locations: Vec<LatLon>,
}

#[derive(serde::Deserialize)]
struct LatLon {
    latitude: f64,
    longitude: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_carry_the_headers_their_status_calls_for() {
        let throttled = ApiError::Overloaded.into_response();
        assert_eq!(throttled.headers()[header::RETRY_AFTER], "1");
        assert_eq!(throttled.headers()[header::CONTENT_TYPE], JSON);
        assert_eq!(ApiError::TimedOut.into_response().headers()[header::CONNECTION], "close");
        assert!(ApiError::NotFound.into_response().headers().get(header::CONNECTION).is_none());
    }
}
