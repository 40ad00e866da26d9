//! A rebuild is served at once: nginx and the preview read `public/` per request, so the
//! swap that `svcdir build` makes needs no reload (README, "Deploying"); the search index is
//! read again on SIGHUP, by svcdir-search and by `svcdir serve` alike (issue 14).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::{self, BASE_URL, Build, Deployment};

/// Rebuilds the deployment's build from the `xss` fixture (the `small` one with a given slug
/// and changed names) and checks the static side shows the new generation.
fn serves_the_new_build(d: &Deployment) {
    let slug = "/api/v4/services/city-centre-foodbank/";
    assert_eq!(d.get(slug).status, 404, "not in the first build");
    let before = d.get("/api/v4/organisations/2c5f3b8e-1d44-4c1a-9f0e-6a7b8c9d0e1f").json();
    d.build.rebuild("xss", BASE_URL);
    let r = d.get(slug);
    assert_eq!(r.status, 200, "{}", r.text());
    let after = d.get("/api/v4/organisations/2c5f3b8e-1d44-4c1a-9f0e-6a7b8c9d0e1f").json();
    assert_ne!(before["data"]["name"], after["data"]["name"]);
    assert!(after["data"]["name"].as_str().unwrap().contains("<svg"), "{after}");

    // The search still answers from the index it loaded, until SIGHUP.
    let search = "/api/v4/services/?postcode=G2+1AL&page_size=100&format=json";
    let names = |d: &Deployment| d.get(search).json()["data"].to_string();
    assert!(!names(d).contains("<script>"), "the index in force until SIGHUP");
    d.reload_search();
    // Behind nginx the answer may come from its cache: the new index is answered within the
    // max-age of the cached one (issue 24).
    let max_age = Duration::from_secs(svcdir::nginx::max_age(svcdir::api::headers::CACHE_SEARCH));
    let deadline = Instant::now() + Duration::from_secs(20) + max_age;
    while !names(d).contains("<script>document.title='XSS-script'</script>City Centre Foodbank") {
        assert!(Instant::now() < deadline, "the rebuilt index is not answered after SIGHUP:\n{}", d.svcdir_log());
        std::thread::sleep(Duration::from_millis(20));
    }
    // The log is written off the request path: its line may follow the answer by a moment.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !d.svcdir_log().contains("reloaded the index") {
        assert!(Instant::now() < deadline, "{}", d.svcdir_log());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn nginx_serves_a_rebuild_and_svcdir_search_its_index_after_sighup() {
    let Some(nginx) = support::nginx_binary() else {
        svcdir::test_support::skipped("nginx is not installed (.ci/run installs it)");
        return;
    };
    let build = Arc::new(Build::new("small", BASE_URL));
    serves_the_new_build(&support::start_nginx(&nginx, build, true, &[]));
}

#[test]
fn preview_serves_a_rebuild_and_its_index_after_sighup() {
    let build = Arc::new(Build::new("small", BASE_URL));
    let preview = support::start_preview(build);
    serves_the_new_build(&preview);
    // Its log: one JSON object per event on stderr (not a terminal), one per request, for
    // the searches and the files alike.
    let log = preview.svcdir_log();
    let events: Vec<serde_json::Value> =
        log.lines().filter(|l| l.starts_with('{')).map(|l| serde_json::from_str(l).expect("a JSON event")).collect();
    let access = |path: &str| {
        events
            .iter()
            .filter(|e| e["target"] == "svcdir::access" && e["path"] == path && e["status"] == 200)
            .map(|e| e["bytes"].as_u64().expect("bytes"))
            .collect::<Vec<_>>()
    };
    assert!(!access("/api/v4/services/").is_empty(), "{log}");
    let files = access("/api/v4/organisations/2c5f3b8e-1d44-4c1a-9f0e-6a7b8c9d0e1f");
    assert!(files.len() == 2 && files.iter().all(|&b| b > 100), "{log}");
    assert!(events.iter().all(|e| e["timestamp"].is_string()), "{log}");
}
