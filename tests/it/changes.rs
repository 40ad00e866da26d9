//! The change record (issue 17): a rebuild records exactly what changed, an unchanged
//! rebuild adds nothing, and `--previous` continues the chain from another folder or from a
//! published site over HTTP (here `svcdir serve` on a loopback port, serving a first build).

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use svcdir_testkit::process::Process;

use crate::common::{self, assert_ok, fixture};

const CHANGED: &str = "5e000000-0000-4000-8000-000000000003";
const REMOVED: &str = "5e000000-0000-4000-8000-000000000008";

/// A copy of the small fixture.
fn input(work: &Path) -> std::path::PathBuf {
    let input = work.join("input");
    common::copy_dir(&fixture("small"), &input);
    input
}

/// The Argyle St Lunch Club gets a description; Online Peer Support goes.
fn edit(input: &Path) {
    let services = input.join("services.jsonl");
    let text = fs::read_to_string(&services).unwrap();
    let text = text.replacen(
        r#""name": "Argyle St Lunch Club","#,
        r#""name": "Argyle St Lunch Club", "description": "Now on Fridays too.","#,
        1,
    );
    let kept: Vec<&str> = text.lines().filter(|l| !l.contains("Online Peer Support")).collect();
    fs::write(&services, kept.join("\n") + "\n").unwrap();
}

fn build(input: &Path, work: &Path, extra: &[&str]) {
    assert_ok(&common::build(input, work, extra));
}

fn record(work: &Path) -> Value {
    common::json(&work.join("public"), "changes/index.json")
}

fn ids(value: &Value) -> Vec<&str> {
    value.as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect()
}

/// The organisation id of a service in a build.
fn organisation_of(work: &Path, service: &str) -> String {
    let doc = common::json(&work.join("public"), &format!("api/v4/services/{service}/index.json"));
    doc["data"]["organisation"]["id"].as_str().unwrap().to_owned()
}

#[test]
fn a_rebuild_records_exactly_the_changed_and_the_removed_service() {
    let work = tempfile::tempdir().unwrap();
    let input = input(work.path());
    build(&input, work.path(), &[]);
    let first = record(work.path());
    let builds = first["builds"].as_array().unwrap();
    assert_eq!(builds.len(), 1, "the first build records everything as added");
    assert_eq!(builds[0]["previous"], Value::Null);
    assert_eq!(first["next"], Value::Null);
    let import = common::json(&work.path().join("public"), "api/v4/import/index.json");
    assert_eq!(ids(&builds[0]["services"]["added"]).len() as u64, import["count"].as_u64().unwrap());
    let orgs = [organisation_of(work.path(), CHANGED), organisation_of(work.path(), REMOVED)];

    edit(&input);
    build(&input, work.path(), &[]);
    let second = record(work.path());
    let builds = second["builds"].as_array().unwrap();
    assert_eq!(builds.len(), 2, "{second}");
    assert_eq!(builds[1], first["builds"][0], "older entries stay as they were");
    let entry = &builds[0];
    assert_eq!(entry["previous"], first["builds"][0]["id"]);
    assert_eq!(entry["services"], json!({"added": [], "changed": [CHANGED], "removed": [REMOVED]}));
    // An organisation's response lists its services: those of the two services changed.
    let mut expected: Vec<&str> = orgs.iter().map(String::as_str).collect();
    expected.sort();
    expected.dedup();
    assert_eq!(entry["organisations"], json!({"added": [], "changed": expected, "removed": []}));
    let state = common::json(&work.path().join("public"), "changes/state.json");
    assert_eq!(state["build"], entry["id"]);
    assert!(state["services"].get(REMOVED).is_none() && state["services"].get(CHANGED).is_some());
    insta::assert_json_snapshot!("changes_index", second);

    // A rebuild of the same input adds nothing (compared anew: --previous skips the no-op).
    let public = work.path().join("public");
    let before = fs::read(public.join("changes/index.json")).unwrap();
    let copy = tempfile::tempdir().unwrap();
    common::copy_dir(&fs::canonicalize(&public).unwrap(), copy.path());
    build(&input, work.path(), &["--previous", copy.path().to_str().unwrap()]);
    assert_eq!(fs::read(public.join("changes/index.json")).unwrap(), before, "no entry for an unchanged rebuild");
}

/// `svcdir serve` of a build on port 0 (the port read back from its log), stopped when
/// dropped; and its origin.
fn serve(work: &Path) -> (Process, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_svcdir"));
    command.args(["serve", "--public"]).arg(work.join("public")).arg("--index").arg(work.join("search.idx"));
    command.args(["--listen", "127.0.0.1:0"]);
    let served = Process::spawn_on_port_0("svcdir serve", command, work.join("serve.log"));
    let origin = format!("http://127.0.0.1:{}", served.port);
    (served, origin)
}

#[test]
fn previous_continues_the_chain_from_a_published_site_or_a_folder() {
    // The reference: both builds in one place.
    let here = tempfile::tempdir().unwrap();
    let input = input(here.path());
    build(&input, here.path(), &[]);
    // `public` is a link to the current generation: copy what it points at.
    let generation = fs::canonicalize(here.path().join("public")).unwrap();
    let first_public = tempfile::tempdir().unwrap();
    common::copy_dir(&generation, first_public.path());
    let published = tempfile::tempdir().unwrap();
    common::copy_dir(&generation, &published.path().join("public"));
    fs::copy(here.path().join("search.idx"), published.path().join("search.idx")).unwrap();
    edit(&input);
    build(&input, here.path(), &[]);
    let expected = fs::read(here.path().join("public/changes/index.json")).unwrap();

    // A fresh place, the first build served over HTTP.
    let (_server, origin) = serve(published.path());
    let fresh = tempfile::tempdir().unwrap();
    build(&input, fresh.path(), &["--previous", &origin]);
    assert_eq!(fs::read(fresh.path().join("public/changes/index.json")).unwrap(), expected, "over HTTP");
    let entry = &record(fresh.path())["builds"][0];
    assert_eq!(entry["services"]["changed"], json!([CHANGED]));
    assert_eq!(entry["services"]["removed"], json!([REMOVED]));

    // The same from a folder holding the first build.
    let fresh = tempfile::tempdir().unwrap();
    build(&input, fresh.path(), &["--previous", first_public.path().to_str().unwrap()]);
    assert_eq!(fs::read(fresh.path().join("public/changes/index.json")).unwrap(), expected, "from a folder");

    // A site that cannot be reached fails the build, saying where.
    let dead = format!(
        "http://127.0.0.1:{}",
        std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
    );
    let fresh = tempfile::tempdir().unwrap();
    let out = common::build(&input, fresh.path(), &["--previous", &dead]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("change record") && stderr.contains(&dead), "{stderr}");
    assert!(!fresh.path().join("public").exists(), "a failed build publishes nothing");
}
