//! Incremental publishing (issue 5): a rebuild writes only the files whose bytes change,
//! and a build with nothing new writes nothing.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use svcdir::write::{Manifest, is_manifest_path};

use crate::common::{self, assert_ok, fixture, read_tree};

fn summary(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Paths whose bytes differ between two trees, or that exist in only one.
fn changed(
    before: &std::collections::BTreeMap<String, Vec<u8>>,
    after: &std::collections::BTreeMap<String, Vec<u8>>,
) -> BTreeSet<String> {
    before
        .keys()
        .chain(after.keys())
        // The index and its pointer change with any service (tests/it/publication.rs).
        .filter(|k| before.get(*k) != after.get(*k) && !is_manifest_path(k) && !k.starts_with("_search/"))
        .cloned()
        .collect()
}

fn build_into(input: &Path, work: &Path) -> std::process::Output {
    let args = common::build_args(input, work, &["--import-page-size", "4"]);
    let output = common::svcdir(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_ok(&output);
    output
}

/// The Open Referral UK folders that show a service: its own, its organisation's, its
/// service_at_locations, and the list pages that hold any of them.
fn oruk_folders_of(public: &Path, service: &str, org: &str) -> Vec<String> {
    let doc = crate::common::json(public, &format!("openreferral/services/{service}/index.json"));
    let sals: Vec<String> =
        doc["service_at_locations"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap().to_owned()).collect();
    let mut folders = vec![format!("openreferral/services/{service}"), format!("openreferral/organizations/{org}")];
    folders.extend(sals.iter().map(|id| format!("openreferral/service_at_locations/{id}")));
    for (list, ids) in [("services", vec![service.to_owned()]), ("service_at_locations", sals)] {
        for n in 1.. {
            let folder = format!("openreferral/{list}/page/{n}");
            if !public.join(&folder).is_dir() {
                break;
            }
            let page = crate::common::json(public, &format!("{folder}/index.json"));
            if page["contents"].as_array().unwrap().iter().any(|item| ids.iter().any(|id| item["id"] == id.as_str())) {
                if n == 1 {
                    folders.push(format!("openreferral/{list}"));
                }
                if page["last_page"] == true {
                    folders.push(format!("openreferral/{list}/page/last"));
                }
                folders.push(folder);
            }
        }
    }
    folders
}

#[test]
fn one_changed_service_rewrites_only_the_files_that_depend_on_it() {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("input");
    common::copy_dir(&fixture("small"), &input);
    build_into(&input, work.path());
    let public = work.path().join("public");
    let before = read_tree(&public);

    // Nothing new: nothing written, the published generation stays.
    let link_before = fs::read_link(&public).unwrap();
    let noop = build_into(&input, work.path());
    assert!(summary(&noop).contains("up to date"), "{}", summary(&noop));
    assert_eq!(fs::read_link(&public).unwrap(), link_before);
    assert_eq!(read_tree(&public), before);

    // The Argyle St Lunch Club (services.jsonl line 3, on import page 1) gets a new
    // description.
    let services = input.join("services.jsonl");
    let text = fs::read_to_string(&services).unwrap();
    let edited = text.replacen(
        r#""name": "Argyle St Lunch Club","#,
        r#""name": "Argyle St Lunch Club", "description": "Now on Fridays too.","#,
        1,
    );
    assert_ne!(text, edited);
    fs::write(&services, edited).unwrap();
    let rebuilt = build_into(&input, work.path());
    let after = read_tree(&public);
    let slug = "argyle-st-lunch-club";
    let org = "2c5f3b8e-1d44-4c1a-9f0e-6a7b8c9d0e1f";
    let service = "5e000000-0000-4000-8000-000000000003";
    let org_slug = crate::common::json(&public, &format!("api/v4/organisations/{org}/index.json"))["data"]["slug"]
        .as_str()
        .unwrap()
        .to_owned();
    let service_slug = crate::common::json(&public, &format!("api/v4/services/{service}/index.json"))["data"]["slug"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(service_slug.starts_with(slug));
    let mut expected = BTreeSet::new();
    for folder in [
        format!("api/v4/services/{service}"),
        format!("api/v4/services/{service_slug}"),
        format!("api/v4/organisations/{org}"),
        format!("api/v4/organisations/{org_slug}"),
        // The service is on import page 1, which is also the import's first URL.
        "api/v4/import".to_owned(),
        "api/v4/import/page/1".to_owned(),
    ]
    .into_iter()
    .chain(oruk_folders_of(&public, service, org))
    .chain(listing_folders_of(&public, service))
    {
        expected.insert(format!("{folder}/index.json"));
        expected.insert(format!("{folder}/index.html"));
    }
    // The bulk downloads hold every service; the change record gains an entry.
    expected.extend(
        [
            "downloads/openreferral-uk.zip",
            "downloads/services.ndjson.gz",
            "changes/index.json",
            "changes/index.html",
            "changes/page/1/index.json",
            "changes/page/1/index.html",
            "changes/page/last/index.json",
            "changes/page/last/index.html",
            "changes/state.json",
        ]
        .map(str::to_owned),
    );
    assert_eq!(changed(&before, &after), expected);
    let line = summary(&rebuilt);
    // Plus the new index and the pointer changed, the old index removed.
    assert!(line.contains(&format!("{} changed", expected.len() + 2)), "{line}");
    let described = before.keys().filter(|path| !is_manifest_path(path)).count();
    assert!(line.contains(&format!("{} unchanged", described - 2 - expected.len())), "{line}");
    assert!(line.contains("1 removed"), "{line}");

    // The next rebuild goes to the other generation, which catches up; the tree is the same
    // as a full build of the same input in a fresh place.
    fs::write(&services, fs::read_to_string(&services).unwrap().replace("Now on Fridays too.", "Fridays.")).unwrap();
    build_into(&input, work.path());
    let fresh = tempfile::tempdir().unwrap();
    build_into(&input, fresh.path());
    let mut ours = read_tree(&public);
    let mut theirs = read_tree(&fresh.path().join("public"));
    // The manifests agree on every file; only the fingerprint (same input) is compared too.
    ours.retain(|path, _| !is_manifest_path(path));
    theirs.retain(|path, _| !is_manifest_path(path));
    // The change record is the history of builds, which the fresh place does not share.
    ours.retain(|path, _| !path.starts_with("changes/"));
    theirs.retain(|path, _| !path.starts_with("changes/"));
    assert_eq!(ours, theirs);
}

#[test]
fn a_removed_service_removes_its_files() {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("input");
    common::copy_dir(&fixture("small"), &input);
    build_into(&input, work.path());
    let public = work.path().join("public");
    let before: BTreeSet<String> = read_tree(&public).into_keys().collect();
    let id = "5e000000-0000-4000-8000-000000000008";
    let doc = crate::common::json(&public, &format!("openreferral/services/{id}/index.json"));
    let services = input.join("services.jsonl");
    let text = fs::read_to_string(&services).unwrap();
    let kept: Vec<&str> = text.lines().filter(|l| !l.contains("Online Peer Support")).collect();
    fs::write(&services, kept.join("\n") + "\n").unwrap();
    let rebuilt = build_into(&input, work.path());
    assert!(!public.join(format!("api/v4/services/{id}")).exists());
    // id and slug folders, the ORUK service and its service_at_locations: JSON and HTML each.
    let after: BTreeSet<String> = read_tree(&public).into_keys().collect();
    // The old index goes too (tests/it/publication.rs); counted below.
    let removed: BTreeSet<&String> =
        before.difference(&after).filter(|p| !p.starts_with("_search/") && !is_manifest_path(p)).collect();
    let mut folders = vec![format!("api/v4/services/{id}"), format!("openreferral/services/{id}")];
    for sal in doc["service_at_locations"].as_array().into_iter().flatten() {
        folders.push(format!("openreferral/service_at_locations/{}", sal["id"].as_str().unwrap()));
    }
    for folder in &folders {
        assert!(removed.contains(&format!("{folder}/index.json")), "{folder}: {removed:?}");
    }
    assert_eq!(removed.len(), 2 * (folders.len() + 1), "{removed:?}");
    assert!(summary(&rebuilt).contains(&format!("{} removed", removed.len() + 1)), "{}", summary(&rebuilt));
    let manifest = Manifest::read(&public).expect("manifest");
    let listed: BTreeSet<String> = manifest.files.into_keys().collect();
    let mut on_disk: BTreeSet<String> = read_tree(&public).into_keys().collect();
    on_disk.retain(|path| !is_manifest_path(path));
    assert_eq!(listed, on_disk, "the manifest lists exactly the files");
}

#[test]
fn precompress_writes_variants_that_decode_to_each_file_and_follow_its_changes() {
    use std::io::Read;
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("input");
    common::copy_dir(&fixture("small"), &input);
    let build = || {
        let out = common::build(&input, work.path(), &["--precompress"]);
        assert_ok(&out);
    };
    build();
    let public = work.path().join("public");
    let tree = read_tree(&public);
    let mut variants = 0;
    for (path, bytes) in &tree {
        let compressible = (path.ends_with(".json") || path.ends_with(".html")) && !is_manifest_path(path);
        if !compressible {
            continue;
        }
        let (gz, br) = (tree.get(&format!("{path}.gz")), tree.get(&format!("{path}.br")));
        if bytes.len() < svcdir::compress::MIN_LEN {
            assert!(gz.is_none() && br.is_none(), "{path} is too small for variants");
            continue;
        }
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(&gz.unwrap_or_else(|| panic!("{path}.gz"))[..]).read_to_end(&mut back).unwrap();
        assert_eq!(&back, bytes, "{path}.gz");
        back.clear();
        brotli::Decompressor::new(&br.unwrap_or_else(|| panic!("{path}.br"))[..], 4096).read_to_end(&mut back).unwrap();
        assert_eq!(&back, bytes, "{path}.br");
        variants += 2;
    }
    assert!(variants > 80, "{variants}");
    let manifest = Manifest::read(&public).expect("manifest");
    let described = tree.keys().filter(|path| !is_manifest_path(path)).count();
    assert_eq!(manifest.files.len(), described, "variants are in the manifest");

    // A changed service: its files and their variants change, nothing else.
    let services = input.join("services.jsonl");
    let text = fs::read_to_string(&services).unwrap();
    fs::write(&services, text.replacen("Emergency food parcels.", "Emergency food parcels, weekdays.", 1)).unwrap();
    build();
    let after = read_tree(&public);
    let changed = changed(&tree, &after);
    assert!(!changed.is_empty());
    let worth_it = |base: &str| after.get(base).is_some_and(|b| svcdir::compress::worth_it(base, b.len()));
    for path in &changed {
        // A variant is `<file>.gz` or `.br` of a file that gets variants; the downloads
        // (`services.ndjson.gz`) are files of their own.
        let base = [".gz", ".br"].iter().find_map(|s| path.strip_suffix(s)).filter(|b| worth_it(b)).unwrap_or(path);
        assert!(changed.contains(base), "{path} changed without its file");
        if worth_it(base) {
            assert!(changed.contains(&format!("{base}.gz")) && changed.contains(&format!("{base}.br")), "{base}");
        }
    }
}

/// A build killed after writing the search index but before publishing leaves a new index
/// beside the old output; a later build of the old input must not take that pair for up to
/// date (found by the kill -9 test under load).
#[test]
fn an_index_that_does_not_match_the_published_output_is_rebuilt() {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("input");
    common::copy_dir(&fixture("small"), &input);
    build_into(&input, work.path());
    let index = work.path().join("search.idx");
    let good = fs::read(&index).unwrap();
    // Another dataset's index where this output's should be.
    let other = tempfile::tempdir().unwrap();
    let other_input = other.path().join("input");
    common::copy_dir(&fixture("small"), &other_input);
    let services = other_input.join("services.jsonl");
    fs::write(&services, fs::read_to_string(&services).unwrap().replace("Emergency food", "Hot food")).unwrap();
    build_into(&other_input, other.path());
    fs::copy(other.path().join("search.idx"), &index).unwrap();
    assert_ne!(fs::read(&index).unwrap(), good);

    let rebuilt = build_into(&input, work.path());
    assert!(!summary(&rebuilt).contains("up to date"), "{}", summary(&rebuilt));
    assert_eq!(fs::read(&index).unwrap(), good);
    // And now it is up to date.
    assert!(summary(&build_into(&input, work.path())).contains("up to date"));
}

/// The listings (issue 25) whose first page holds `service`, page 1 under its folder, its
/// `page/1` and its `page/last` (the fixture's listings are one page each).
fn listing_folders_of(public: &std::path::Path, service: &str) -> Vec<String> {
    let mut folders = Vec::new();
    for above in ["api/v4/categories", "api/v4/service-areas"] {
        for entry in std::fs::read_dir(public.join(above)).unwrap() {
            let folder = format!("{above}/{}/services", entry.unwrap().file_name().to_string_lossy());
            let Ok(bytes) = std::fs::read(public.join(&folder).join("index.json")) else { continue };
            if String::from_utf8_lossy(&bytes).contains(service) {
                folders.extend([folder.clone(), format!("{folder}/page/1"), format!("{folder}/page/last")]);
            }
        }
    }
    folders
}
