//! Any bytes as the query string of both search paths: the parser must answer (a result
//! page, 400 or 404), and the whole path (parse, search, JSON or HTML view) must never
//! fail with a 500, which is what a panic or a failed render becomes.

#![no_main]

use std::path::Path;
use std::sync::{Arc, LazyLock};

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use libfuzzer_sys::fuzz_target;
use svcdir::index::SearchIndex;
use svcdir::search::{ApiVersion, RawQuery, params};
use svcdir::server::{AppState, app};
use svcdir::views::Publication;
use tower::ServiceExt;

/// The embedded dataset (`input/`, 400 services), indexed once.
static STATE: LazyLock<Arc<AppState>> = LazyLock::new(|| {
    let input = Path::new(env!("CARGO_MANIFEST_DIR")).join("../input");
    let dir = svcdir::validate::load_directory(&input).expect("the embedded dataset is valid");
    let publication = Publication::with_defaults("https://api.example.org".into(), "https://www.example.org".into());
    Arc::new(AppState::new(SearchIndex::build(&dir, &publication)))
});

static RUNTIME: LazyLock<tokio::runtime::Runtime> =
    LazyLock::new(|| tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime"));

/// Bytes a URI query may hold as they are; every other byte is percent-encoded. `%` stays
/// raw, so that broken escapes (`%zz`, `%f`) reach the parser too.
fn as_query(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len() * 3);
    for &byte in data {
        if byte.is_ascii_alphanumeric() || b"%&=+-._~,:;!*'()/?@$".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let state = &*STATE;
    // The parser alone, on the raw text.
    let text = String::from_utf8_lossy(data);
    let raw = RawQuery::parse(&text);
    for version in [ApiVersion::V4, ApiVersion::V3] {
        let _ = params::parse(&raw, state.index(), version);
    }
    // The whole path, as a client would send it.
    let query = as_query(data);
    for path in ["/api/v4/services/", "/api/v3/search/"] {
        let Ok(request) = Request::builder().uri(format!("{path}?{query}")).body(Body::empty()) else {
            return;
        };
        let status = RUNTIME.block_on(async {
            let response = app(state.clone()).oneshot(request).await.expect("infallible");
            let status = response.status();
            let _ = response.into_body().collect().await;
            status
        });
        assert_ne!(status, StatusCode::INTERNAL_SERVER_ERROR, "{path}?{query}");
    }
});
