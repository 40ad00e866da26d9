//! The index inside the published tree (behaviour.md, "A publication: the files and the
//! search index as one unit"): `_search/<index>.idx` and `_search/current.json` switch with
//! the files, `--index FILE` follows right after, and a build stopped at either step leaves
//! a tree whose files and index come from the same build.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::{self, assert_ok, fixture, read_tree};

fn content_hash(bytes: &[u8]) -> String {
    svcdir::write::content_hash(bytes)
}

/// `svcdir build` into `<work>/public` and `<work>/search.idx` with extra environment.
fn build_env(input: &Path, work: &Path, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(svcdir_testkit::bin("svcdir"));
    command.args(common::build_args(input, work, &["--quiet"]));
    // `make test` skips the flush to disk (SVCDIR_UNSAFE_NO_SYNC=1); only `env` decides here.
    command.env_remove("SVCDIR_BASE_URL").env_remove(svcdir::write::NO_SYNC_ENV).envs(env.iter().copied());
    command.output().unwrap()
}

/// The published tree's index, checked against its pointer and manifest: its bytes.
fn published_index(public: &Path) -> Vec<u8> {
    let pointer = common::json(public, "_search/current.json");
    let hash = pointer["index"].as_str().unwrap();
    assert_eq!(pointer["path"], format!("_search/{hash}.idx"));
    let bytes = fs::read(public.join(format!("_search/{hash}.idx"))).unwrap();
    assert_eq!(pointer["bytes"], bytes.len() as u64);
    assert_eq!(content_hash(&bytes), hash, "the index's name is its content hash");
    assert_eq!(common::json(public, "_manifest.json")["index"], hash, "the manifest names the same index");
    let mut search: Vec<String> = fs::read_dir(public.join("_search"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    search.sort();
    assert_eq!(search, [format!("{hash}.idx"), "current.json".to_owned()], "_search/ holds nothing else");
    bytes
}

/// Renames one service of the fixture.
fn edit_a_service(input: &Path) {
    let services = input.join("services.jsonl");
    let text = fs::read_to_string(&services).unwrap();
    let edited = text.replacen(r#""name": "Argyle St Lunch Club","#, r#""name": "Argyle Street Lunch Club","#, 1);
    assert_ne!(text, edited);
    fs::write(&services, edited).unwrap();
}

#[test]
fn a_build_stopped_before_the_switch_leaves_tree_and_index_of_one_build() {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("input");
    common::copy_dir(&fixture("small"), &input);
    let public = work.path().join("public");
    let file = work.path().join("search.idx");
    // The synced path (no SVCDIR_UNSAFE_NO_SYNC): syncfs before the switch.
    let first = build_env(&input, work.path(), &[]);
    assert_ok(&first);
    let index = published_index(&public);
    assert_eq!(fs::read(&file).unwrap(), index, "--index FILE has the tree's index bytes");
    let before = read_tree(&public);

    edit_a_service(&input);
    let stopped = build_env(&input, work.path(), &[("SVCDIR_TEST_CRASH_AT", "before-switch")]);
    assert!(!stopped.status.success(), "the fault stops the build");
    assert!(String::from_utf8_lossy(&stopped.stderr).contains("before-switch"));
    assert_eq!(read_tree(&public), before, "nothing published: files, index and pointer of the first build");
    assert_eq!(published_index(&public), index);
    assert_eq!(fs::read(&file).unwrap(), index, "FILE untouched");

    // The next build publishes the edit with its own index, and FILE gets it.
    assert_ok(&build_env(&input, work.path(), &[]));
    let rebuilt = published_index(&public);
    assert_ne!(rebuilt, index);
    assert_eq!(fs::read(&file).unwrap(), rebuilt);
    let service = common::json(&public, "api/v4/services/5e000000-0000-4000-8000-000000000003/index.json");
    assert_eq!(service["data"]["name"], "Argyle Street Lunch Club");
    let bytes = String::from_utf8_lossy(&rebuilt).into_owned();
    assert!(bytes.contains("Argyle Street Lunch Club"), "the index renders the edited name");
}

#[test]
fn a_build_stopped_after_the_switch_leaves_file_one_behind_until_the_next_build() {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("input");
    common::copy_dir(&fixture("small"), &input);
    let public = work.path().join("public");
    let file = work.path().join("search.idx");
    let no_sync = [("SVCDIR_UNSAFE_NO_SYNC", "1")];
    assert_ok(&build_env(&input, work.path(), &no_sync));
    let old = fs::read(&file).unwrap();

    edit_a_service(&input);
    let stopped = build_env(&input, work.path(), &[no_sync[0], ("SVCDIR_TEST_CRASH_AT", "before-index-file")]);
    assert!(!stopped.status.success());
    let published = published_index(&public);
    assert_ne!(published, old, "the tree and its index switched together");
    assert_eq!(fs::read(&file).unwrap(), old, "FILE one build behind");

    // Same input: the tree is this build's, but FILE is not its index, so the build is no
    // no-op and FILE gets the index.
    let repaired = build_env(&input, work.path(), &no_sync);
    assert_ok(&repaired);
    assert_eq!(fs::read(&file).unwrap(), published);
    assert_eq!(published_index(&public), published);
    // Now everything agrees: a true no-op, the published generation stays.
    let link = fs::read_link(&public).unwrap();
    assert_ok(&build_env(&input, work.path(), &no_sync));
    assert_eq!(fs::read_link(&public).unwrap(), link);
    assert_eq!(fs::read(&file).unwrap(), published);
}
