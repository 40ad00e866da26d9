//! Shared helpers of the search tests: a hand-made directory around Glasgow, requests
//! through `app().oneshot`, and a brute-force search written from behaviour.md alone.

#![allow(dead_code)]

use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::BodyExt;
use svcdir::server::{AppState, app};
use tower::ServiceExt;

pub mod brute;
pub mod random;

// The directory every search test starts from is the library's, shared with the unit tests.
pub use svcdir::test_support::directory::*;

/// A response, collected.
#[derive(Debug)]
pub struct Answer {
    /// Status.
    pub status: StatusCode,
    /// Headers.
    pub headers: HeaderMap,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl Answer {
    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
    }

    /// Names of the services of a v4 (`data`) or v3 (`results`) page, in order.
    pub fn names(&self) -> Vec<String> {
        let json = self.json();
        let list = json.get("data").or_else(|| json.get("results")).expect("a list");
        list.as_array().expect("array").iter().map(|s| s["name"].as_str().unwrap_or("").to_owned()).collect()
    }
}

/// Sends one request through `app(state)`.
pub async fn send(state: &Arc<AppState>, method: Method, uri: &str, headers: &[(&str, &str)]) -> Answer {
    let mut request = Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = app(state.clone()).oneshot(request.body(Body::empty()).expect("request")).await.expect("infallible");
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.into_body().collect().await.expect("body").to_bytes().to_vec();
    Answer { status, headers, body }
}

/// GET with no headers.
pub async fn get(state: &Arc<AppState>, uri: impl Into<String>) -> Answer {
    send(state, Method::GET, &uri.into(), &[]).await
}
