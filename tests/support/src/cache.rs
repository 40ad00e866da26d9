//! The cache service behind workerd's Cache API (`cacheApiOutbound` in the `workerd.capnp`
//! of `svcdir cdn-config cloudflare --cache-service`), as the e2e suite's Worker uses it: an
//! HTTP server on 127.0.0.1 port 0 that holds what the Worker puts, in memory, for the
//! max-age of each entry's `Cache-Control`, and counts what it is asked.
//!
//! workerd's side of the protocol (as Miniflare, Cloudflare's own local runtime, serves it):
//! `cache.put` is a `PUT` to the key's URL whose body is the whole response serialised as
//! HTTP/1.1 (status line, headers, body), answered 204; `cache.match` is a `GET` to the key's
//! URL, answered with the stored response and `Cf-Cache-Status: HIT`, or with
//! `Cf-Cache-Status: MISS`; `cache.delete` is a `PURGE`, 200 when something was removed,
//! else 404.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use headers::{CacheControl, HeaderMapExt};
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};

/// What the cache was asked, and answered.
#[derive(Debug, Default)]
pub struct CacheCounts {
    /// `PUT`s stored.
    pub puts: AtomicUsize,
    /// `GET`s answered from the cache.
    pub hits: AtomicUsize,
    /// `GET`s answered with a miss (absent or expired).
    pub misses: AtomicUsize,
}

/// One stored response.
#[derive(Debug, Clone)]
struct Entry {
    status: StatusCode,
    headers: Vec<(String, Vec<u8>)>,
    body: Bytes,
    expires: Instant,
}

type Entries = Arc<Mutex<HashMap<String, Entry>>>;

/// A running cache service; it stops with the test process.
#[derive(Debug)]
pub struct CacheService {
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Its counters.
    pub counts: Arc<CacheCounts>,
}

impl CacheService {
    /// Starts an empty cache on a port of its own.
    pub fn start() -> CacheService {
        let counts = Arc::new(CacheCounts::default());
        let entries: Entries = Arc::default();
        let shared = counts.clone();
        let port = crate::loopback::serve(1, move |request| handle(request, shared.clone(), entries.clone()));
        CacheService { port, counts }
    }

    /// `127.0.0.1:PORT`, as `--cache-service` takes it.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

fn reply(status: StatusCode, cache_status: Option<&str>) -> Response<Full<Bytes>> {
    let mut response = Response::builder().status(status);
    if let Some(value) = cache_status {
        response = response.header("cf-cache-status", value);
    }
    response.body(Full::new(Bytes::new())).expect("response")
}

async fn handle(
    request: Request<Incoming>,
    counts: Arc<CacheCounts>,
    entries: Entries,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let key = request.uri().to_string();
    let method = request.method().clone();
    let body = request.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let now = Instant::now();
    let mut entries = entries.lock().unwrap_or_else(|p| p.into_inner());
    let answer = match method {
        Method::PUT => match parse_stored(&body) {
            Some((status, headers, body)) => {
                // No max-age (or `no-store`, `private`): nothing to keep, as a shared cache.
                let cache_control = stored_header_map(&headers).typed_get::<CacheControl>();
                match cache_control.filter(|c| !c.no_store() && !c.private()).and_then(|c| c.max_age()) {
                    Some(max_age) if max_age > Duration::ZERO => {
                        entries.insert(key, Entry { status, headers, body, expires: now + max_age });
                        counts.puts.fetch_add(1, Ordering::SeqCst);
                    }
                    _ => {}
                }
                reply(StatusCode::NO_CONTENT, None)
            }
            None => reply(StatusCode::BAD_REQUEST, None),
        },
        Method::GET => match entries.get(&key).filter(|e| e.expires > now) {
            Some(entry) => {
                counts.hits.fetch_add(1, Ordering::SeqCst);
                let mut response = Response::builder().status(entry.status);
                for (name, value) in &entry.headers {
                    response = response.header(name.as_str(), value.as_slice());
                }
                let response = response.header("cf-cache-status", "HIT");
                return Ok(response.body(Full::new(entry.body.clone())).expect("stored response"));
            }
            None => {
                counts.misses.fetch_add(1, Ordering::SeqCst);
                reply(StatusCode::GATEWAY_TIMEOUT, Some("MISS"))
            }
        },
        _ if method.as_str() == "PURGE" => match entries.remove(&key) {
            Some(_) => reply(StatusCode::OK, None),
            None => reply(StatusCode::NOT_FOUND, None),
        },
        _ => reply(StatusCode::METHOD_NOT_ALLOWED, None),
    };
    Ok(answer)
}

/// The headers of a stored response, as a map the typed headers read.
fn stored_header_map(headers: &[(String, Vec<u8>)]) -> hyper::HeaderMap {
    let mut map = hyper::HeaderMap::new();
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) =
            (hyper::header::HeaderName::from_bytes(name.as_bytes()), hyper::header::HeaderValue::from_bytes(value))
        {
            map.append(name, value);
        }
    }
    map
}

/// A stored response's status, headers and body.
type Stored = (StatusCode, Vec<(String, Vec<u8>)>, Bytes);

/// A response serialised as HTTP/1.1 (what workerd puts): its status, headers (without the
/// framing ones) and body, read by httparse; `None` when it is not one. The body is framed
/// by `Content-Length` or chunked.
fn parse_stored(bytes: &[u8]) -> Option<Stored> {
    let mut slots = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut slots);
    let httparse::Status::Complete(head) = response.parse(bytes).ok()? else { return None };
    let status = StatusCode::from_u16(response.code?).ok()?;
    let mut chunked = false;
    let mut length = None;
    let mut headers = Vec::new();
    for header in response.headers.iter() {
        if header.name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = header.value.eq_ignore_ascii_case(b"chunked");
        } else if header.name.eq_ignore_ascii_case("content-length") {
            length = std::str::from_utf8(header.value).ok()?.trim().parse::<usize>().ok();
        } else {
            headers.push((header.name.to_ascii_lowercase(), header.value.to_vec()));
        }
    }
    let rest = &bytes[head..];
    let body = if chunked {
        let mut body = Vec::new();
        let mut at = 0;
        loop {
            let httparse::Status::Complete((start, size)) = httparse::parse_chunk_size(&rest[at..]).ok()? else {
                return None;
            };
            let size = usize::try_from(size).ok()?;
            if size == 0 {
                break;
            }
            let from = at + start;
            body.extend_from_slice(rest.get(from..from + size)?);
            at = from + size + 2; // the chunk's CRLF
        }
        body
    } else {
        rest.get(..length.unwrap_or(rest.len()))?.to_vec()
    };
    Some((status, headers, Bytes::from(body)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_serialised_response_framed_either_way() {
        let plain = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nCache-Control: max-age=60\r\n\r\n{}";
        let (status, headers, body) = parse_stored(plain).unwrap();
        assert_eq!(status, StatusCode::OK);
        assert_eq!(&body[..], b"{}");
        assert!(headers.contains(&("content-type".to_owned(), b"application/json".to_vec())));
        assert!(!headers.iter().any(|(n, _)| n == "content-length"));
        let chunked = b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        let (status, _, body) = parse_stored(chunked).unwrap();
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(&body[..], b"abcde");
        assert!(parse_stored(b"not HTTP").is_none());
    }
}
