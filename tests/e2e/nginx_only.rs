//! What only the nginx deployment has: nginx's own check of the generated configuration,
//! and the answers when the search servers cannot be reached.

use std::process::Command;

use crate::support;

/// `nginx -t -p PREFIX -c FILE` accepts the configuration `svcdir nginx-config` prints.
#[test]
fn nginx_t_accepts_the_generated_configuration() {
    let Some(nginx) = support::nginx_binary() else {
        svcdir::test_support::skipped("nginx is not installed (.ci/run installs it)");
        return;
    };
    let build = support::small_build();
    let search = ["127.0.0.1:18081".to_owned(), "[::1]:18082".to_owned()];
    let (prefix, conf) = support::nginx_prefix(&build, support::free_port(), &search);
    let output = Command::new(nginx)
        .arg("-t")
        .arg("-p")
        .arg(prefix.path())
        .arg("-c")
        .arg(&conf)
        .output()
        .expect("nginx -t runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "nginx -t refused the configuration:\n{stderr}");
    assert!(stderr.contains("syntax is ok") && stderr.contains("test is successful"), "{stderr}");
    // Warnings (e.g. a duplicate MIME type) would point at a sloppy template.
    assert!(!stderr.contains("[warn]"), "{stderr}");
}

/// No search server answers: the search paths are 503 JSON with the API's headers, and the
/// static side is unaffected.
#[test]
fn search_down_is_503_json_and_static_still_served() {
    let Some(nginx) = support::nginx_binary() else {
        svcdir::test_support::skipped("nginx is not installed (.ci/run installs it)");
        return;
    };
    // A port nothing listens on.
    let dead = format!("127.0.0.1:{}", support::free_port());
    let d = support::start_nginx(&nginx, support::small_build(), false, &[dead]);
    for target in ["/api/v4/services/?postcode=G2+1AL", "/api/v3/search"] {
        let r = d.get(target);
        assert_eq!(r.status, 503, "{target}: {}", r.text());
        assert_eq!(r.json(), serde_json::json!({"detail": "Service temporarily unavailable, try again later."}));
        assert_eq!(r.header("allow"), Some("GET, HEAD, OPTIONS"));
        assert_eq!(r.header("access-control-allow-origin"), Some("*"));
        assert_eq!(r.header("cache-control"), Some("no-store"));
    }
    assert_eq!(d.get("/api/v4/categories/").status, 200);
}

/// With two search servers of which one is down, every search still succeeds.
#[test]
fn a_dead_search_server_is_skipped() {
    let Some(nginx) = support::nginx_binary() else {
        svcdir::test_support::skipped("nginx is not installed (.ci/run installs it)");
        return;
    };
    let dead = format!("127.0.0.1:{}", support::free_port());
    let d = support::start_nginx(&nginx, support::small_build(), true, &[dead]);
    for _ in 0..6 {
        let r = d.get("/api/v4/services/?postcode=G2+1AL");
        assert_eq!(r.status, 200, "{}", r.text());
    }
}
