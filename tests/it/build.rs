//! `svcdir build` on the fixture dataset: snapshots of every endpoint, id/slug identity,
//! determinism, and the shape of every object kind per version.

use std::fs;

use crate::common::{self, assert_ok, fixture, read_tree};

#[test]
fn every_endpoint_matches_its_reviewed_snapshot() {
    let work = tempfile::tempdir().unwrap();
    assert_ok(&common::build(&fixture("small"), work.path(), &["--import-page-size", "4"]));
    let tree = read_tree(&work.path().join("public"));
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        let paths: Vec<&String> = tree.keys().collect();
        insta::assert_json_snapshot!("file_list", paths);
        for (path, bytes) in &tree {
            if let Some(endpoint) = path.strip_suffix("/index.json").or(path.strip_suffix(".json")) {
                let value: serde_json::Value = serde_json::from_slice(bytes).unwrap();
                let name = endpoint.replace('/', "__");
                insta::assert_json_snapshot!(name, value);
            }
        }
    });
}

#[test]
fn id_and_slug_give_identical_bytes() {
    let work = tempfile::tempdir().unwrap();
    assert_ok(&common::build(&fixture("small"), work.path(), &[]));
    let public = work.path().join("public");
    let mut checked = 0;
    for kind in ["services", "organisations"] {
        for entry in fs::read_dir(public.join("api/v4").join(kind)).unwrap() {
            let dir = entry.unwrap().path();
            let key = dir.file_name().unwrap().to_str().unwrap().to_owned();
            if uuid::Uuid::try_parse(&key).is_err() {
                continue;
            }
            let by_id = fs::read(dir.join("index.json")).unwrap();
            let value: serde_json::Value = serde_json::from_slice(&by_id).unwrap();
            let slug = value["data"]["slug"].as_str().unwrap();
            let by_slug = fs::read(public.join("api/v4").join(kind).join(slug).join("index.json")).unwrap();
            assert_eq!(by_id, by_slug, "{kind}/{key} vs {slug}");
            checked += 1;
        }
    }
    assert_eq!(checked, 6 + 2);
}

#[test]
fn two_builds_give_byte_identical_trees() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    assert_ok(&common::build(&fixture("small"), a.path(), &[]));
    assert_ok(&common::build(&fixture("small"), b.path(), &[]));
    let (ta, tb) = (read_tree(&a.path().join("public")), read_tree(&b.path().join("public")));
    assert!(!ta.is_empty());
    assert_eq!(ta, tb);
    assert_eq!(fs::read(a.path().join("search.idx")).unwrap(), fs::read(b.path().join("search.idx")).unwrap());
}
