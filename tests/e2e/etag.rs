//! `svcdir serve` answers conditional requests as a CDN in front of the published files
//! would (issue 15, item 8): each file's `ETag` is its content hash in `_manifest.json`, and
//! `If-None-Match` with it gets 304 and no body.

use crate::support;

#[test]
fn serve_sends_manifest_etags_and_answers_if_none_match_with_304() {
    let d = support::preview();
    let manifest = d.build.json("_manifest.json");
    for (target, file) in [
        ("/api/v4/categories/", "api/v4/categories/index.json"),
        ("/api/v4/services/befriending-line?format=api", "api/v4/services/befriending-line/index.html"),
        ("/api/v4/import/?format=json&page=last", "api/v4/import/page/last/index.json"),
    ] {
        let hash = manifest["files"][file]["hash"].as_str().unwrap_or_else(|| panic!("{file} in the manifest"));
        let etag = format!("\"{hash}\"");
        let first = d.get(target);
        assert_eq!(first.status, 200, "{target}");
        assert_eq!(first.header("etag"), Some(etag.as_str()), "{target}");

        for matching in [etag.clone(), format!("W/{etag}"), format!("\"other\", {etag}"), "*".to_owned()] {
            for method in ["GET", "HEAD"] {
                let again = d.send(method, target, &[("if-none-match", &matching)]);
                assert_eq!(again.status, 304, "{method} {target} If-None-Match: {matching}");
                assert!(again.body.is_empty(), "{target}");
                assert_eq!(again.header("etag"), Some(etag.as_str()), "{target}");
                assert_eq!(again.header("cache-control"), Some(svcdir::routing::CACHE_STATIC), "{target}");
            }
        }
        let stale = d.send("GET", target, &[("if-none-match", "\"0123\"")]);
        assert_eq!((stale.status, stale.body.len()), (200, first.body.len()), "{target}");
    }
    // Compressed, the tag is weak (other bytes); it still matches.
    let gzip = d.send("GET", "/api/v4/import/", &[("accept-encoding", "gzip")]);
    assert_eq!(gzip.header("content-encoding"), Some("gzip"));
    let weak = gzip.header("etag").expect("etag").to_owned();
    assert!(weak.starts_with("W/\""), "{weak}");
    assert_eq!(d.send("GET", "/api/v4/import/", &[("if-none-match", &weak)]).status, 304);
    // Errors and searches carry none.
    assert_eq!(d.get("/api/v4/services/nope/").header("etag"), None);
    assert_eq!(d.get("/api/v4/services/?postcode=G2+1AL").header("etag"), None);
}
