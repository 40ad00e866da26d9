//! A rebuild is served at once: nginx and the preview read `public/` per request, so the
//! swap that `svcdir build` makes needs no reload (README, "Deploying").

use std::sync::Arc;

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
}

#[test]
fn nginx_serves_a_rebuild_without_reload() {
    let Some(nginx) = support::nginx_binary() else {
        eprintln!("skipped: nginx is not installed (.ci/run installs it)");
        return;
    };
    let build = Arc::new(Build::new("small", BASE_URL));
    serves_the_new_build(&support::start_nginx(&nginx, build, true, &[]));
}

#[test]
fn preview_serves_a_rebuild_without_restart() {
    let build = Arc::new(Build::new("small", BASE_URL));
    serves_the_new_build(&support::start_preview(build));
}
