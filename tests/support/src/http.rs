//! A plain HTTP/1.1 client on hyper: one connection per request, the request-target sent
//! exactly as written (so `..`, `%2f` and `//` reach the server), no redirects followed, no
//! headers added but `Host`, and the body as received (not decompressed). Moved here from
//! the e2e suite's support module (issue 23), which re-exports it.

use std::time::Duration;

use http_body_util::{BodyExt, Empty};
use hyper::Request;
use hyper::body::Bytes;

/// A response, headers in the order received with lower-case names.
#[derive(Debug, Clone)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// `(name, value)` pairs.
    pub headers: Vec<(String, String)>,
    /// The body bytes.
    pub body: Vec<u8>,
}

impl Response {
    /// The first value of a header.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
    }

    /// Every value of a header, split at commas and trimmed (`Vary: A` + `Vary: B` = [A, B]).
    pub fn header_list(&self, name: &str) -> Vec<String> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .filter(|(n, _)| *n == name)
            .flat_map(|(_, v)| v.split(',').map(|s| s.trim().to_owned()))
            .collect()
    }

    /// `Content-Type`, or "".
    pub fn content_type(&self) -> &str {
        self.header("content-type").unwrap_or("")
    }

    /// The body as JSON, with the response in the panic message otherwise.
    pub fn json(&self) -> serde_json::Value {
        assert_eq!(self.content_type(), "application/json", "{self:?}");
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends one request to 127.0.0.1:`port`.
pub fn request(port: u16, method: &str, target: &str, headers: &[(&str, &str)]) -> Response {
    try_request(port, method, target, headers).unwrap_or_else(|e| panic!("{e}"))
}

/// [`request`], its failure (no connection, no answer in 20 s) returned rather than a panic:
/// for polling a server that may not listen yet.
pub fn try_request(port: u16, method: &str, target: &str, headers: &[(&str, &str)]) -> Result<Response, String> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let what = format!("{method} {target}");
    runtime
        .block_on(async { tokio::time::timeout(Duration::from_secs(20), send(port, method, target, headers)).await })
        .map_err(|_| format!("{what}: no answer in 20 s"))?
        .map_err(|e| format!("{what}: {e}"))
}

async fn send(
    port: u16,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
) -> Result<Response, Box<dyn std::error::Error + Send + Sync>> {
    let mut builder = Request::builder().method(method).uri(target);
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
        builder = builder.header("host", format!("127.0.0.1:{port}"));
    }
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let response = crate::try_one_request(&format!("127.0.0.1:{port}"), builder.body(Empty::<Bytes>::new())?).await?;
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let body = response.into_body().collect().await?.to_bytes().to_vec();
    Ok(Response { status, headers, body })
}
