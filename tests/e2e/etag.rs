//! Conditional requests to `svcdir serve` (issue 15 item 8): a file answered 200 carries
//! its content hash from the build's `_manifest.json` as `ETag`, and `If-None-Match` with
//! it is answered 304 with no body, as a CDN in front of the build answers.

use crate::support;

/// The manifest's content hash of a file of the build, as an entity tag.
fn manifest_tag(build: &support::Build, rel: &str) -> String {
    let manifest = svcdir::write::Manifest::read(&build.public).expect("the build's manifest");
    let hash = manifest.files.get(rel).map(|e| e.hash.as_str()).unwrap_or_else(|| panic!("{rel} in the manifest"));
    assert_eq!(hash.len(), 32, "XXH3-128 hex");
    format!("\"{hash}\"")
}

#[test]
fn preview_answers_if_none_match_with_304_using_the_manifest_hashes() {
    let d = support::preview();
    let json_tag = manifest_tag(&d.build, "api/v4/categories/index.json");
    let html_tag = manifest_tag(&d.build, "api/v4/categories/index.html");
    assert_ne!(json_tag, html_tag);

    let first = d.get("/api/v4/categories/");
    assert_eq!(first.status, 200);
    assert_eq!(first.header("etag"), Some(json_tag.as_str()), "the manifest's hash");

    let html = d.send("GET", "/api/v4/categories/", &[("accept", "text/html")]);
    assert_eq!(html.status, 200);
    assert_eq!(html.header("etag"), Some(html_tag.as_str()), "each representation its own tag");

    for sent in [json_tag.clone(), format!("W/{json_tag}"), format!("\"other\", {json_tag}"), "*".to_owned()] {
        for method in ["GET", "HEAD"] {
            let again = d.send(method, "/api/v4/categories/", &[("if-none-match", &sent)]);
            assert_eq!(again.status, 304, "{method} If-None-Match: {sent}");
            assert!(again.body.is_empty(), "a 304 has no body");
            assert_eq!(again.header("etag"), Some(json_tag.as_str()));
            assert!(again.header("cache-control").is_some(), "the 200's Cache-Control");
        }
    }

    let changed = d.send("GET", "/api/v4/categories/", &[("if-none-match", "\"0123\"")]);
    assert_eq!(changed.status, 200, "another tag: the file is sent");
    assert_eq!(changed.body, first.body);
    let stale_html = d.send("GET", "/api/v4/categories/", &[("if-none-match", &html_tag)]);
    assert_eq!(stale_html.status, 200, "the HTML's tag does not match the JSON");

    // Gzipped, the tag turns weak (as nginx's gzip makes it) and still validates.
    let gzipped = d.send("GET", "/api/v4/categories/", &[("accept-encoding", "gzip")]);
    assert_eq!(gzipped.header("content-encoding"), Some("gzip"));
    let weak = format!("W/{json_tag}");
    assert_eq!(gzipped.header("etag"), Some(weak.as_str()));
    let revalidated = d.send("GET", "/api/v4/categories/", &[("accept-encoding", "gzip"), ("if-none-match", &weak)]);
    assert_eq!(revalidated.status, 304);

    // Errors carry no tag.
    let missing = d.get("/api/v4/services/no-such-service/");
    assert_eq!(missing.status, 404);
    assert_eq!(missing.header("etag"), None);
}
