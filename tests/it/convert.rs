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
    let mut args: Vec<String> = ["convert", "--output", converted.to_str().unwrap()].map(str::to_owned).to_vec();
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
    assert_eq!(std::fs::read_to_string(out.join("categories.json")).unwrap(), svcdir::sample::CATEGORIES_JSON);
    let bad = common::svcdir(&[
        "convert",
        "--from-import",
        out.join("categories.json").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(bad.status.code(), Some(1), "a file that is not an import page");
}

/// issue 15: an incomplete dump is refused, naming the missing page; the whole one converts.
#[test]
fn convert_names_a_missing_import_page() {
    let first = tempfile::tempdir().unwrap();
    assert_ok(&common::build(&fixture("small"), first.path(), &["--import-page-size", "2"]));
    let public = first.path().join("public");
    let page = |n: u64| public.join(format!("api/v4/import/page/{n}/index.json")).to_string_lossy().into_owned();
    let count = serde_json::from_slice::<serde_json::Value>(&std::fs::read(page(1)).unwrap()).unwrap()["count"]
        .as_u64()
        .unwrap();
    let pages = count.div_ceil(2);
    assert!(pages >= 3, "{count}");
    let out = first.path().join("converted");
    let convert = |numbers: &[u64]| {
        let files: Vec<String> = numbers.iter().map(|&n| page(n)).collect();
        let mut args = vec!["convert", "--output", out.to_str().unwrap(), "--from-import"];
        args.extend(files.iter().map(String::as_str));
        common::svcdir(&args)
    };
    for (given, missing) in [(vec![1, 3], 2), ((2..=pages).collect::<Vec<_>>(), 1), ((1..pages).collect(), pages)] {
        let output = convert(&given);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{given:?}: {stderr}");
        assert!(stderr.contains(&format!("page {missing} of {pages} is missing")), "{given:?}: {stderr}");
        assert!(!out.join("services.jsonl").exists(), "nothing written");
    }
    // Every page, in any order, some twice (the last page also under page=last).
    let mut all: Vec<u64> = (1..=pages).rev().collect();
    all.push(1);
    assert_ok(&convert(&all));
    assert_eq!(std::fs::read_to_string(out.join("services.jsonl")).unwrap().lines().count() as u64, count);
}
