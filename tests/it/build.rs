//! `svcdir build` on the fixture dataset: snapshots of each kind of endpoint, id/slug identity,
//! determinism, and the shape of every object kind per version.

use std::fs;

use crate::common::{self, assert_ok, fixture, read_tree};

/// One endpoint of each kind of object per version: the shapes a reviewer reads. The other
/// endpoints of a kind share its code; their bytes are checked by the schema tests (every
/// response), the id/slug identity and the determinism tests below, not frozen one by one.
const SHAPES: [&str; 12] = [
    "_errors/404.json",
    "api/openapi/index.json",
    "api/v3/categories/index.json",
    "api/v3/service-areas/index.json",
    "api/v4/categories/index.json",
    "api/v4/service-areas/index.json",
    "api/v4/import/index.json",
    "api/v4/organisations/cafe-comhla/index.json",
    // A service at locations (by id), and one that is online only (by slug).
    "api/v4/services/5e000000-0000-4000-8000-000000000001/index.json",
    "api/v4/services/befriending-line/index.json",
    "changes/index.json",
    "changes/state.json",
];

#[test]
fn each_kind_of_endpoint_matches_its_reviewed_snapshot() {
    let work = tempfile::tempdir().unwrap();
    assert_ok(&common::build(&fixture("small"), work.path(), &["--import-page-size", "4"]));
    let mut tree = read_tree(&work.path().join("public"));
    // The index and its pointer are named by the index's hash, which every change of the
    // index format changes: checked in tests/it/publication.rs, not reviewed as snapshots.
    tree.retain(|path, _| !path.starts_with("_search/"));
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        // Which files a build writes: every endpoint, by path. The manifest's shards are
        // named by their content's hash, which every change of any file changes: counted here,
        // their format checked in src/write/manifest.rs and tests/it/incremental.rs.
        let paths: Vec<&str> = tree
            .keys()
            .map(|path| if path.starts_with("_manifest/") { "_manifest/<shard hash>.json" } else { path.as_str() })
            .collect();
        insta::assert_json_snapshot!("file_list", paths);
        for path in SHAPES {
            let bytes = tree.get(path).unwrap_or_else(|| panic!("{path} is not built"));
            let value: serde_json::Value = serde_json::from_slice(bytes).unwrap();
            let endpoint = path.strip_suffix("/index.json").or(path.strip_suffix(".json")).unwrap();
            insta::assert_json_snapshot!(endpoint.replace('/', "__"), value);
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
    // The open-data tree (issue 17) is part of it.
    for file in ["openreferral/index.json", "downloads/services.ndjson.gz", "downloads/openreferral-uk.zip"] {
        assert!(ta.contains_key(file), "{file}");
    }
    assert_eq!(ta, tb);
    assert_eq!(fs::read(a.path().join("search.idx")).unwrap(), fs::read(b.path().join("search.idx")).unwrap());
    // No wall clock reaches the downloads (two builds within zip's 2-second time resolution
    // would not show it): every zip entry has the zip epoch, the gzip header no time.
    let zip = &ta["downloads/openreferral-uk.zip"];
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(zip)).unwrap();
    assert!(!archive.is_empty());
    for i in 0..archive.len() {
        let entry = archive.by_index(i).unwrap();
        assert_eq!(entry.last_modified(), Some(zip::DateTime::default()), "{:?}", entry.name());
    }
    let gz = &ta["downloads/services.ndjson.gz"];
    assert_eq!(&gz[..2], [0x1f, 0x8b], "a gzip member");
    assert_eq!(&gz[4..8], [0, 0, 0, 0], "MTIME: none");
}

#[test]
fn help_explains_every_option() {
    let top = common::svcdir(&["--help"]);
    assert_ok(&top);
    let text = String::from_utf8_lossy(&top.stdout);
    for command in ["build", "validate", "sample"] {
        assert!(text.contains(command), "--help lists {command}:\n{text}");
    }
    let cases: [(&str, &[&str]); 2] = [
        (
            "build",
            &[
                "--input",
                "--output",
                "--index",
                "--base-url",
                "--site-url",
                "--import-page-size",
                "--allow-shrink",
                "--quiet",
            ],
        ),
        ("sample", &["--services", "--seed", "--output"]),
    ];
    for (command, options) in cases {
        let out = common::svcdir(&[command, "--help"]);
        assert_ok(&out);
        let text = String::from_utf8_lossy(&out.stdout);
        for option in options {
            let line = text
                .lines()
                .skip_while(|l| !l.trim_start().starts_with(option) && !l.contains(&format!(", {option}")))
                .take(2)
                .collect::<Vec<_>>()
                .join(" ");
            // Each option has a sentence of its own, not only its name.
            assert!(line.split_whitespace().count() >= 5, "{command} --help explains {option}:\n{text}");
        }
    }
}

#[test]
fn bad_usage_exits_2() {
    let out = common::svcdir(&["build", "--base-url", "not-a-url"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--base-url"));
    assert_eq!(common::svcdir(&["build", "--no-such-option"]).status.code(), Some(2));
}

#[test]
fn html_views_match_their_reviewed_snapshots() {
    let work = tempfile::tempdir().unwrap();
    assert_ok(&common::build(&fixture("small"), work.path(), &["--import-page-size", "4"]));
    let public = work.path().join("public");
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("snapshots/html");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for (name, rel) in [
            ("service_by_slug", "api/v4/services/befriending-line/index.html"),
            ("organisation_by_slug", "api/v4/organisations/cafe-comhla/index.html"),
            ("import_page_1", "api/v4/import/index.html"),
            ("v3_categories", "api/v3/categories/index.html"),
            ("not_found", "_errors/404.html"),
            ("front_page", "api/index.html"),
        ] {
            let html = fs::read_to_string(public.join(rel)).unwrap();
            insta::assert_snapshot!(name, html);
        }
    });
}
