//! `svcdir convert --from-import` round trip (issue 7): build → save the import pages →
//! convert → build again gives the same service, import and search responses. The
//! organisation-only fields the import does not hold (description, url, phone, email,
//! facebook, twitter, last_edited) are the listed exception, so organisation files differ.

use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt;
use svcdir::index::SearchIndex;
use svcdir::server::{AppState, app};
use tower::ServiceExt;

use crate::common::{self, assert_ok, fixture, read_tree};

async fn search(index: &std::path::Path, uri: &str) -> (u16, Vec<u8>) {
    let state = Arc::new(AppState::new(SearchIndex::read(index).unwrap()));
    let response = app(state).oneshot(Request::builder().uri(uri).body(Body::empty()).unwrap()).await.unwrap();
    let status = response.status().as_u16();
    (status, response.into_body().collect().await.unwrap().to_bytes().to_vec())
}

#[tokio::test]
async fn build_import_convert_build_gives_the_same_responses() {
    let first = tempfile::tempdir().unwrap();
    assert_ok(&common::build(&fixture("small"), first.path(), &["--import-page-size", "4"]));
    let tree = read_tree(&first.path().join("public"));
    let pages: Vec<String> = tree
        .keys()
        .filter(|p| p.starts_with("api/v4/import/page/") && p.ends_with("/index.json"))
        .map(|p| first.path().join("public").join(p).to_string_lossy().into_owned())
        .collect();
    assert!(pages.len() >= 2, "{pages:?}");

    let converted = first.path().join("converted");
    let small = |name: &str| fixture("small").join(name).to_string_lossy().into_owned();
    let mut args: Vec<String> = ["convert", "--out", converted.to_str().unwrap()].map(str::to_owned).to_vec();
    args.extend(["--categories".to_owned(), small("categories.json")]);
    args.extend(["--service-areas".to_owned(), small("service_areas.json")]);
    args.extend(["--postcodes".to_owned(), small("postcodes"), "--from-import".to_owned()]);
    args.extend(pages.iter().cloned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = common::svcdir(&args);
    assert_ok(&output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("not carried over: organisations"), "{stdout}");

    let second = tempfile::tempdir().unwrap();
    assert_ok(&common::build(&converted, second.path(), &["--import-page-size", "4"]));
    let again = read_tree(&second.path().join("public"));

    let mut compared = 0;
    for (path, bytes) in &tree {
        let same_kind = path.starts_with("api/v4/services/") || path.starts_with("api/v4/import/");
        if same_kind && path.ends_with(".json") {
            assert!(again.get(path) == Some(bytes), "{path} differs after the round trip");
            compared += 1;
        }
    }
    assert!(compared >= 12 + 2, "{compared}");
    for (path, _) in tree.iter().filter(|(p, _)| p.starts_with("api/v4/organisations/") && p.ends_with(".json")) {
        assert!(again.contains_key(path), "{path} is missing after the round trip");
    }

    for uri in [
        "/api/v4/services/?postcode=G2+1AL&page_size=100",
        "/api/v4/services/?postcode=AB11+6BA&radius=500000",
        "/api/v4/services/?postcode=G2+1AL&q=food&page_size=2&page=1",
        "/api/v3/search/?postcode=G2+1AL",
    ] {
        let a = search(&first.path().join("search.idx"), uri).await;
        let b = search(&second.path().join("search.idx"), uri).await;
        assert_eq!(a.0, 200, "{uri}");
        assert!(a == b, "{uri}: the search answers differ after the round trip");
    }
}

#[test]
fn convert_without_overrides_writes_the_fixed_lists_and_reports_postcodes() {
    let first = tempfile::tempdir().unwrap();
    assert_ok(&common::build(&fixture("small"), first.path(), &[]));
    let page = first.path().join("public/api/v4/import/index.json");
    let out = first.path().join("converted");
    let output = common::svcdir(&["convert", "--from-import", page.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_ok(&output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("not carried over: postcodes"), "{stdout}");
    assert_eq!(std::fs::read_to_string(out.join("categories.json")).unwrap(), svcdir::input::writer::CATEGORIES_JSON);
    let bad = common::svcdir(&[
        "convert",
        "--from-import",
        out.join("categories.json").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(bad.status.code(), Some(1), "a file that is not an import page");
}

// --- issue 15 item 6: a partial import dump is refused, naming what is missing ---

#[test]
fn convert_refuses_an_incomplete_import_and_names_the_missing_page() {
    let work = tempfile::tempdir().unwrap();
    assert_ok(&common::build(&fixture("small"), work.path(), &["--import-page-size", "2"]));
    let page = |n: usize| work.path().join(format!("public/api/v4/import/page/{n}/index.json"));
    let out = work.path().join("converted");
    let convert = |pages: &[std::path::PathBuf]| {
        let mut args = vec!["convert".to_owned(), "--out".to_owned(), out.to_string_lossy().into_owned()];
        args.push("--from-import".to_owned());
        args.extend(pages.iter().map(|p| p.to_string_lossy().into_owned()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        common::svcdir(&args)
    };
    let stderr = |output: &std::process::Output| String::from_utf8_lossy(&output.stderr).into_owned();

    // 6 services, 2 a page: pages 1 to 3.
    let gap = convert(&[page(1), page(3)]);
    assert_eq!(gap.status.code(), Some(1));
    assert!(stderr(&gap).contains("page 2 is missing (the import has 3 pages)"), "{}", stderr(&gap));
    assert!(!out.exists(), "nothing written");

    let end = convert(&[page(2), page(1)]);
    assert_eq!(end.status.code(), Some(1));
    assert!(stderr(&end).contains("page 3 is missing"), "{}", stderr(&end));

    let start = convert(&[page(3), page(2)]);
    assert_eq!(start.status.code(), Some(1));
    assert!(stderr(&start).contains("page 1 is missing"), "{}", stderr(&start));

    // Every page present, but one lost a service: the results do not add up to `count`.
    let mut short: serde_json::Value = serde_json::from_slice(&std::fs::read(page(2)).unwrap()).unwrap();
    short["data"].as_array_mut().unwrap().pop();
    let short_path = work.path().join("page2-short.json");
    std::fs::write(&short_path, serde_json::to_vec(&short).unwrap()).unwrap();
    let lost = convert(&[page(1), short_path, page(3)]);
    assert_eq!(lost.status.code(), Some(1));
    assert!(stderr(&lost).contains("hold 5 different services but the import's count is 6"), "{}", stderr(&lost));

    assert_ok(&convert(&[page(3), page(1), page(2)]));
}
