//! The OpenAPI document against what is served: every JSON file of a fixture build and a set
//! of search answers (through `svcdir::server::app`) validate against the schema the
//! document gives for their path and status.

use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt;
use serde_json::Value;
use svcdir::index::SearchIndex;
use svcdir::server::{AppState, app};
use tower::ServiceExt;

use crate::common::{self, BASE_URL, assert_ok, fixture, read_tree};

/// Builds the fixture; returns the work folder (public/, search.idx) and the document.
fn built() -> (tempfile::TempDir, Value) {
    let work = tempfile::tempdir().unwrap();
    assert_ok(&common::build(&fixture("small"), work.path(), &["--import-page-size", "4"]));
    let doc = common::json(&work.path().join("public"), "api/openapi.json");
    (work, doc)
}

/// The document path that serves `url_path`: the exact one, else the one whose `{key}`
/// segment matches.
fn doc_path<'a>(doc: &'a Value, url_path: &str) -> &'a str {
    let paths = doc["paths"].as_object().unwrap();
    if let Some((path, _)) = paths.get_key_value(url_path) {
        return path;
    }
    let segments: Vec<&str> = url_path.split('/').collect();
    paths
        .keys()
        .find(|template| {
            let t: Vec<&str> = template.split('/').collect();
            t.len() == segments.len() && t.iter().zip(&segments).all(|(t, s)| t == s || t.starts_with('{'))
        })
        .unwrap_or_else(|| panic!("no path of the document serves {url_path}"))
}

/// JSON Schema pointer of the JSON body of `status` at `url_path`.
fn body_schema(doc: &Value, url_path: &str, status: u16) -> String {
    let path = doc_path(doc, url_path);
    let mut response = &doc["paths"][path]["get"]["responses"][status.to_string()];
    assert!(!response.is_null(), "{path} declares no {status}");
    if let Some(target) = response.get("$ref").and_then(Value::as_str) {
        response = doc.pointer(target.trim_start_matches('#')).unwrap();
    }
    let schema = &response["content"]["application/json"]["schema"];
    schema["$ref"].as_str().unwrap_or_else(|| panic!("{path} {status}: {schema}")).to_owned()
}

/// Validates `body` against the schema at `pointer` of the document.
fn check(doc: &Value, pointer: &str, body: &Value) -> Result<(), String> {
    let mut root = doc.clone();
    root["$schema"] = "https://json-schema.org/draft/2020-12/schema".into();
    root["$ref"] = pointer.into();
    let validator =
        jsonschema::draft202012::options().should_validate_formats(true).build(&root).map_err(|e| e.to_string())?;
    let errors: Vec<String> = validator.iter_errors(body).map(|e| format!("{e} at {}", e.instance_path())).collect();
    if errors.is_empty() { Ok(()) } else { Err(format!("{pointer}: {}", errors.join("; "))) }
}

#[test]
fn the_document_names_its_server_and_every_endpoint_in_both_slash_forms() {
    let (work, doc) = built();
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["servers"], serde_json::json!([{ "url": BASE_URL }]));
    for path in [
        "/api/v4/services",
        "/api/v4/services/{key}",
        "/api/v4/organisations/{key}",
        "/api/v4/categories",
        "/api/v4/service-areas",
        "/api/v4/import",
        "/api/v3/search",
        "/api/v3/categories",
        "/api/v3/service-areas",
    ] {
        for form in [path.to_owned(), format!("{path}/")] {
            assert!(doc["paths"][&form]["get"]["responses"]["200"].is_object(), "{form}");
        }
    }
    // /api/openapi/ serves the same bytes, and its HTML view is the reference page.
    let public = work.path().join("public");
    assert_eq!(
        std::fs::read(public.join("api/openapi.json")).unwrap(),
        std::fs::read(public.join("api/openapi/index.json")).unwrap()
    );
    let page = std::fs::read_to_string(public.join("api/openapi/index.html")).unwrap();
    // (minijinja escapes `/` in text as `&#x2f;`.)
    assert!(page.contains("{key}") && page.contains("id=\"schema-ServicePage\""), "{page}");
    assert!(!page.contains("<script"), "no scripts on the reference page");
}

#[test]
fn every_json_file_of_a_build_matches_the_document() {
    let (work, doc) = built();
    let tree = read_tree(&work.path().join("public"));
    let mut checked = 0;
    let mut failures = Vec::new();
    for (path, bytes) in &tree {
        let pointer = if path == "_errors/404.json" {
            "#/components/schemas/Detail".to_owned()
        } else if path == "changes/state.json" {
            body_schema(&doc, "/changes/state.json", 200)
        } else if let Some(folder) = path.strip_suffix("/index.json") {
            // The Open Referral UK documents are checked against the profile's own schemas
            // (tests/it/openreferral.rs).
            if folder.starts_with("api/openapi") || folder.starts_with("openreferral") {
                continue;
            }
            let url_path = if folder.starts_with("api/v4/import/page/") {
                "/api/v4/import/".to_owned()
            } else if folder.starts_with("changes/page/") {
                "/changes/".to_owned()
            } else if let Some((listing, _)) = folder.split_once("/services/page/") {
                // A listing's pages (issue 25) are its endpoint with `?page=N`.
                format!("/{listing}/services/")
            } else {
                format!("/{folder}/")
            };
            body_schema(&doc, &url_path, 200)
        } else {
            continue;
        };
        let body: Value = serde_json::from_slice(bytes).unwrap();
        if let Err(e) = check(&doc, &pointer, &body) {
            failures.push(format!("{path}: {e}"));
        }
        checked += 1;
    }
    assert!(checked >= 20, "{checked} files");
    // The schemas are closed: a field the views gain and the document lacks is caught.
    assert!(check(&doc, "#/components/schemas/Detail", &serde_json::json!({"detail": "x", "extra": 1})).is_err());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

async fn answer(state: &Arc<AppState>, uri: &str) -> (u16, Value) {
    let request = Request::builder().uri(uri).body(Body::empty()).unwrap();
    let response = app(state.clone()).oneshot(request).await.unwrap();
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&body).unwrap_or_else(|e| panic!("{uri}: {e}")))
}

#[tokio::test]
async fn search_answers_match_the_document() {
    let (work, doc) = built();
    let index = SearchIndex::read(&work.path().join("search.idx")).unwrap();
    let state = Arc::new(AppState::new(index));
    let cases: &[(&str, u16)] = &[
        ("/api/v4/services/?postcode=G2+1AL", 200),
        ("/api/v4/services?postcode=g21al&page_size=2&page=2", 200),
        ("/api/v4/services/?postcode=G2%201AL&q=food&category=money&location_type=local&radius=100000", 200),
        ("/api/v4/services/?postcode=AB11+6BA&location_type=national", 200),
        ("/api/v4/services/", 400),
        ("/api/v4/services/?postcode=XX1+1XX&category=nope&radius=-1&location_type=far", 400),
        ("/api/v4/services/?postcode=G2+1AL&page=99", 404),
        ("/api/v3/search/?postcode=G2+1AL", 200),
        ("/api/v3/search?postcode=G2+1AL&page=2", 404),
        ("/api/v3/search/?radius=x", 400),
    ];
    let mut failures = Vec::new();
    for (uri, status) in cases {
        let (got, body) = answer(&state, uri).await;
        assert_eq!(got, *status, "{uri}: {body}");
        let url_path = uri.split('?').next().unwrap();
        let pointer = body_schema(&doc, url_path, got);
        if let Err(e) = check(&doc, &pointer, &body) {
            failures.push(format!("{uri}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
