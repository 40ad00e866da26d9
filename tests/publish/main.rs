//! `svcdir publish` against a real S3-compatible server (`moto_server`, see
//! `svcdir_testkit::s3`): what the bucket holds, what moves on a second and a changed
//! publish, `--dry-run` and `--max-deletes`, a publish killed part-way and run again,
//! injected server errors, a missing bucket and refused credentials. Every test says
//! "skipped" and passes when moto is not installed (`.ci/run` installs it).
// A test crate's modules share items as `pub`; the lint is for the library's API (Cargo.toml).
#![allow(unreachable_pub)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use svcdir_testkit::proxy::{self, Proxy};
use svcdir_testkit::s3::{S3Server, StoredObject, publish, publish_command, summary};

/// A build of a dataset in a temporary directory.
struct Site {
    dir: tempfile::TempDir,
    public: PathBuf,
}

impl Site {
    /// Builds the small fixture, optionally without its last service.
    fn new(drop_last_service: bool) -> Site {
        let dir = tempfile::tempdir().expect("temp dir");
        let site = Site { public: dir.path().join("public"), dir };
        site.build(drop_last_service);
        site
    }

    /// (Re)builds into the same output, with `--precompress` (so .gz and .br variants exist).
    fn build(&self, drop_last_service: bool) {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/small");
        let input = self.dir.path().join("input");
        copy_dir(&fixture, &input);
        if drop_last_service {
            let services = std::fs::read_to_string(fixture.join("services.jsonl")).expect("services");
            let lines: Vec<&str> = services.lines().collect();
            std::fs::write(input.join("services.jsonl"), lines[..lines.len() - 1].join("\n") + "\n").expect("write");
        }
        let output = Command::new(env!("CARGO_BIN_EXE_svcdir"))
            .args([
                "build",
                "--quiet",
                "--precompress",
                "--import-page-size",
                "2",
                "--base-url",
                "https://api.example.org",
            ])
            .arg("--input")
            .arg(&input)
            .arg("--output")
            .arg(&self.public)
            .arg("--index")
            .arg(self.dir.path().join("search.idx"))
            .env_remove("SVCDIR_BASE_URL")
            .output()
            .expect("svcdir build runs");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    }

    /// Every file of the build (the manifest included), by relative path.
    fn files(&self) -> BTreeMap<String, Vec<u8>> {
        let root = self.public.canonicalize().expect("public");
        walkdir::WalkDir::new(&root)
            .into_iter()
            .map(|e| e.expect("walk"))
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let rel = e.path().strip_prefix(&root).unwrap().to_str().unwrap().to_owned();
                (rel, std::fs::read(e.path()).expect("read"))
            })
            .collect()
    }
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.expect("walk");
        let dest = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).expect("mkdir");
        } else {
            std::fs::copy(entry.path(), &dest).expect("copy");
        }
    }
}

/// The bucket holds exactly the files of `site`, byte for byte.
fn assert_exact(objects: &BTreeMap<String, StoredObject>, site: &Site) {
    let files = site.files();
    let stored: Vec<&String> = objects.keys().collect();
    let local: Vec<&String> = files.keys().collect();
    assert_eq!(stored, local, "the bucket holds other objects than the tree");
    for (rel, bytes) in &files {
        assert!(objects[rel].bytes == *bytes, "{rel}: other bytes in the bucket");
    }
}

fn n(value: &serde_json::Value, key: &str) -> u64 {
    value[key].as_u64().unwrap_or_else(|| panic!("{key} in {value}"))
}

fn ok(output: &std::process::Output) -> serde_json::Value {
    assert!(output.status.success(), "publish failed: {}", String::from_utf8_lossy(&output.stderr));
    let value = summary(output);
    assert_eq!(value["ok"], true, "{value}");
    value
}

/// How many files differ between two builds (new or changed) and how many are gone.
fn diff(old: &BTreeMap<String, Vec<u8>>, new: &BTreeMap<String, Vec<u8>>) -> (usize, usize) {
    let changed = new.iter().filter(|(rel, bytes)| old.get(*rel) != Some(bytes)).count();
    let gone = old.keys().filter(|rel| !new.contains_key(*rel)).count();
    (changed, gone)
}

#[test]
fn the_bucket_holds_exactly_the_tree_with_the_headers_nginx_sends() {
    let Some(s3) = S3Server::shared() else { return };
    let bucket = s3.bucket("exact");
    let site = Site::new(false);
    let env = S3Server::env_for(&s3.endpoint());
    let first = ok(&publish(&site.public, &format!("s3://{bucket}/site"), &env, &[]));
    let files = site.files();
    assert_eq!(n(&first, "uploaded") as usize, files.len());
    assert_eq!(n(&first, "bytes"), files.values().map(|b| b.len() as u64).sum::<u64>());
    assert_eq!((n(&first, "deleted"), n(&first, "unchanged")), (0, 0));
    assert_eq!(first["dry_run"], false);
    assert!(first["seconds"].as_f64().is_some());
    let objects = s3.objects(&bucket, "site");
    assert_exact(&objects, &site);
    for (rel, object) in &objects {
        let (plain, encoding) = match (rel.strip_suffix(".gz"), rel.strip_suffix(".br")) {
            (Some(plain), _) if files.contains_key(plain) => (plain, Some("gzip")),
            (_, Some(plain)) if files.contains_key(plain) => (plain, Some("br")),
            _ => (rel.as_str(), None),
        };
        // As nginx sends them: the downloads (issue 17) as they are, by their own type.
        let content_type = match plain.rsplit_once('.').map(|(_, ext)| ext) {
            Some("html") => "text/html; charset=utf-8",
            Some("zip") => "application/zip",
            Some("gz") => "application/gzip",
            Some("geojson") => "application/geo+json",
            // The search index (issue 21): for the search servers, named by its hash.
            Some("idx") => "application/octet-stream",
            _ => "application/json",
        };
        let cache = match plain {
            "_manifest.json" | "_search/current.json" => "no-store",
            p if p.starts_with("_search/") => "public, max-age=31536000, immutable",
            p if p.starts_with("_errors/") => "public, max-age=60",
            _ => "public, max-age=600",
        };
        assert_eq!(object.content_type.as_deref(), Some(content_type), "{rel}");
        assert_eq!(object.cache_control.as_deref(), Some(cache), "{rel}");
        assert_eq!(object.content_encoding.as_deref(), encoding, "{rel}");
    }
    assert!(objects.keys().any(|k| k.ends_with(".html.br")) && objects.keys().any(|k| k.ends_with(".json.gz")));
    let pointer: serde_json::Value = serde_json::from_slice(&objects["_search/current.json"].bytes).unwrap();
    assert!(objects.contains_key(pointer["path"].as_str().unwrap()), "the pointer names an uploaded index");
    assert!(
        objects.contains_key("downloads/openreferral-uk.zip") && objects.contains_key("downloads/services.ndjson.gz")
    );
}

#[test]
fn a_second_publish_reads_the_manifest_and_uploads_nothing() {
    let Some(s3) = S3Server::shared() else { return };
    let bucket = s3.bucket("noop");
    let site = Site::new(false);
    let proxy = Proxy::start(s3.port, 0, Duration::ZERO);
    let env = S3Server::env_for(&proxy.endpoint());
    ok(&publish(&site.public, &format!("s3://{bucket}"), &env, &[]));
    let before = proxy.counts.requests.load(Ordering::SeqCst);
    let second = ok(&publish(&site.public, &format!("s3://{bucket}"), &env, &[]));
    assert_eq!((n(&second, "uploaded"), n(&second, "deleted"), n(&second, "bytes")), (0, 0, 0));
    assert_eq!(n(&second, "unchanged") as usize, site.files().len());
    // One request: the remote manifest. No listing, no request per object.
    assert_eq!(proxy.counts.requests.load(Ordering::SeqCst) - before, 1);
    assert_exact(&s3.objects(&bucket, ""), &site);
}

#[test]
fn a_changed_dataset_uploads_only_what_changed_and_deletes_what_is_gone() {
    let Some(s3) = S3Server::shared() else { return };
    let bucket = s3.bucket("changed");
    let site = Site::new(false);
    let env = S3Server::env_for(&s3.endpoint());
    let to = format!("s3://{bucket}/v1");
    ok(&publish(&site.public, &to, &env, &[]));
    let old = site.files();
    site.build(true);
    let new = site.files();
    let (changed, gone) = diff(&old, &new);
    assert!(changed > 1 && gone > 0, "the smaller dataset must change and remove files");
    let second = ok(&publish(&site.public, &to, &env, &[]));
    // The manifest is among the changed files.
    assert_eq!(n(&second, "uploaded") as usize, changed);
    assert_eq!(n(&second, "deleted") as usize, gone);
    assert_eq!(n(&second, "unchanged") as usize, new.len() - changed);
    assert_exact(&s3.objects(&bucket, "v1"), &site);
    // And back: the removed service's files come back, nothing else moves.
    site.build(false);
    let third = ok(&publish(&site.public, &to, &env, &[]));
    let (changed_back, gone_back) = diff(&new, &site.files());
    assert_eq!((n(&third, "uploaded") as usize, n(&third, "deleted") as usize), (changed_back, gone_back));
    assert_exact(&s3.objects(&bucket, "v1"), &site);
}

#[test]
fn uploads_go_before_the_lists_before_the_manifest_before_the_deletes() {
    let Some(s3) = S3Server::shared() else { return };
    let bucket = s3.bucket("order");
    let site = Site::new(false);
    let env = S3Server::env_for(&s3.endpoint());
    let to = format!("s3://{bucket}/o");
    ok(&publish(&site.public, &to, &env, &[]));
    // A rebuild without one service: files change, others go. Published through a proxy
    // that records when each request started and finished.
    site.build(true);
    let proxy = Proxy::start(s3.port, 0, Duration::ZERO);
    let second = ok(&publish(&site.public, &to, &S3Server::env_for(&proxy.endpoint()), &[]));
    assert!(n(&second, "uploaded") > 1 && n(&second, "deleted") > 0, "{second}");
    let events = proxy.counts.events.lock().unwrap().clone();
    let prefix = format!("/{bucket}/o/");
    let rel = |target: &str| target.strip_prefix(&prefix).map(|r| r.split('?').next().unwrap_or(r).to_owned());
    let is_delete = |method: &str, target: &str| method == "DELETE" || (method == "POST" && target.contains("delete"));
    let index = |pred: &dyn Fn(&(bool, String, String)) -> bool, last: bool| {
        let found = if last { events.iter().rposition(pred) } else { events.iter().position(pred) };
        found.unwrap_or_else(|| panic!("no such request in {events:?}"))
    };
    const POINTER: &str = "_search/current.json";
    let file_put = |e: &(bool, String, String), want: &dyn Fn(&str) -> bool| {
        e.1 == "PUT" && rel(&e.2).is_some_and(|r| !r.starts_with("_manifest") && r != POINTER && want(&r))
    };
    // Stages as src/api/objects.rs sorts them (unit-tested there): every resource and page
    // in place before a list that links to it starts.
    let stage = |r: &str| svcdir::api::objects::upload_stage(r).0;
    let first_list_start = index(&|e| !e.0 && file_put(e, &|r| stage(r) == 2), false);
    let earlier_done = events.iter().rposition(|e| e.0 && file_put(e, &|r| stage(r) < 2));
    if let Some(earlier_done) = earlier_done {
        assert!(earlier_done < first_list_start, "a list was sent before the files it links to");
    }
    let last_file_done = index(&|e| e.0 && file_put(e, &|_| true), true);
    let first_delete = index(&|e| !e.0 && is_delete(&e.1, &e.2), false);
    let last_delete_done = index(&|e| e.0 && is_delete(&e.1, &e.2), true);
    let manifest_put = |e: &(bool, String, String)| e.1 == "PUT" && rel(&e.2).as_deref() == Some("_manifest.json");
    // The manifest (still marked "running" while deletes remain) after every upload, the
    // deletes after it, and the final manifest last of all.
    let manifest_after_files = events[last_file_done..].iter().position(|e| !e.0 && manifest_put(e));
    let manifest_after_files = last_file_done + manifest_after_files.expect("a manifest after the uploads");
    assert!(manifest_after_files < first_delete, "deletes before the manifest");
    // The manifest's shards after every file, before the root (issue 27).
    let shard_put = |e: &(bool, String, String)| e.1 == "PUT" && rel(&e.2).is_some_and(|r| r.starts_with("_manifest/"));
    let first_shard = index(&|e| !e.0 && shard_put(e), false);
    let last_shard_done = index(&|e| e.0 && shard_put(e), true);
    assert!(last_file_done < first_shard && last_shard_done < manifest_after_files, "shards between files and root");
    let final_manifest = index(&|e| !e.0 && manifest_put(e), true);
    assert!(final_manifest > last_delete_done, "the final manifest before the deletes finished");
    // The new index with the files (before the manifest); its pointer once the manifest is
    // in place, and before the deletes take the old index away (issue 21).
    let index_done = index(&|e| e.0 && file_put(e, &|r| r.ends_with(".idx")), false);
    assert!(index_done < manifest_after_files, "the index after the manifest");
    let manifest_done =
        manifest_after_files + events[manifest_after_files..].iter().position(|e| e.0 && manifest_put(e)).unwrap();
    let pointer_put = |e: &(bool, String, String)| e.1 == "PUT" && rel(&e.2).as_deref() == Some(POINTER);
    let pointer_start = index(&|e| !e.0 && pointer_put(e), false);
    let pointer_done = index(&|e| e.0 && pointer_put(e), false);
    assert!(manifest_done < pointer_start, "the pointer before the manifest was in place");
    assert!(pointer_done < first_delete, "the old index deleted before the pointer moved");
    assert_exact(&s3.objects(&bucket, "o"), &site);
}

#[test]
fn dry_run_and_a_refused_max_deletes_change_nothing() {
    let Some(s3) = S3Server::shared() else { return };
    let bucket = s3.bucket("dry");
    let site = Site::new(false);
    let env = S3Server::env_for(&s3.endpoint());
    let to = format!("s3://{bucket}");

    // A dry run on an empty bucket lists every file and writes nothing.
    let dry = publish(&site.public, &to, &env, &["--dry-run"]);
    let value = ok(&dry);
    assert_eq!(value["dry_run"], true);
    assert_eq!(n(&value, "uploaded") as usize, site.files().len());
    let plan = String::from_utf8_lossy(&dry.stderr);
    assert!(plan.lines().any(|l| l == "upload api/v4/import/index.json"), "{plan}");
    assert!(s3.objects(&bucket, "").is_empty());

    ok(&publish(&site.public, &to, &env, &[]));
    let before = s3.objects(&bucket, "");
    site.build(true);
    let (changed, gone) = diff(&site_files_of(&before), &site.files());

    let dry = ok(&publish(&site.public, &to, &env, &["--dry-run"]));
    assert_eq!((n(&dry, "uploaded") as usize, n(&dry, "deleted") as usize), (changed, gone), "shards included");
    assert_eq!(s3.objects(&bucket, ""), before);

    // The manifest's old shard is no object of the site: --max-deletes does not count it.
    let shards_gone =
        before.keys().filter(|rel| rel.starts_with("_manifest/") && !site.files().contains_key(*rel)).count();
    let gone = gone - shards_gone;
    let refused = publish(&site.public, &to, &env, &["--max-deletes", &(gone - 1).to_string()]);
    assert_eq!(refused.status.code(), Some(1));
    let value = summary(&refused);
    assert_eq!(value["ok"], false);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains(&format!("would delete {gone} objects")) && stderr.contains("nothing was changed"),
        "{stderr}"
    );
    assert_eq!(s3.objects(&bucket, ""), before);

    // Exactly at the limit it goes through.
    ok(&publish(&site.public, &to, &env, &["--max-deletes", &gone.to_string()]));
    assert_exact(&s3.objects(&bucket, ""), &site);
}

fn site_files_of(objects: &BTreeMap<String, StoredObject>) -> BTreeMap<String, Vec<u8>> {
    objects.iter().map(|(k, v)| (k.clone(), v.bytes.clone())).collect()
}

/// Starts a publish through a slow proxy, kills it with SIGKILL once `after` uploads went
/// through, and returns the bucket's objects at that moment.
fn kill_part_way(
    s3: &S3Server,
    bucket: &str,
    site: &Site,
    after: usize,
) -> (BTreeMap<String, StoredObject>, Arc<proxy::Counts>) {
    let proxy = Proxy::start(s3.port, 0, Duration::from_millis(40));
    let env = S3Server::env_for(&proxy.endpoint());
    let mut child = publish_command(&site.public, &format!("s3://{bucket}"), &env, &["--jobs", "2"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start publish");
    let deadline = Instant::now() + Duration::from_secs(60);
    while proxy.counts.puts.load(Ordering::SeqCst) < after {
        assert!(child.try_wait().expect("wait").is_none(), "the publish finished before it could be killed");
        assert!(Instant::now() < deadline, "the publish made no progress");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    // Let the requests in flight through the proxy land.
    let deadline = Instant::now() + Duration::from_secs(30);
    while proxy.counts.in_flight.load(Ordering::SeqCst) > 0 {
        assert!(Instant::now() < deadline, "requests still in flight through the proxy after 30 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    (s3.objects(bucket, ""), proxy.counts.clone())
}

#[test]
fn a_publish_killed_part_way_then_run_again_uploads_only_what_was_missing() {
    let Some(s3) = S3Server::shared() else { return };
    let env = S3Server::env_for(&s3.endpoint());

    // A first publish, killed.
    let bucket = s3.bucket("killed");
    let site = Site::new(false);
    let files = site.files();
    let (arrived, _) = kill_part_way(&s3, &bucket, &site, 20);
    assert!(!arrived.is_empty() && arrived.len() < files.len(), "{} of {}", arrived.len(), files.len());
    assert!(!arrived.contains_key("_manifest.json"), "the manifest goes last");
    let rerun = ok(&publish(&site.public, &format!("s3://{bucket}"), &env, &[]));
    assert_eq!(n(&rerun, "uploaded") as usize, files.len() - arrived.len());
    assert_eq!(n(&rerun, "unchanged") as usize, arrived.len());
    assert_exact(&s3.objects(&bucket, ""), &site);

    // An update killed part-way, then run again with the dataset as it was before (so what
    // the killed run uploaded must be put back and its new files deleted).
    site.build(true);
    let smaller = site.files();
    let (changed, gone) = diff(&files, &smaller);
    let (arrived, _) = kill_part_way(&s3, &bucket, &site, 3);
    let touched = smaller
        .iter()
        .filter(|(rel, bytes)| arrived.get(*rel).map(|o| &o.bytes) == Some(bytes) && files.get(*rel) != Some(bytes))
        .count();
    assert!(touched > 0 && touched < changed, "{touched} of {changed} changed files arrived before the kill");
    let rerun = ok(&publish(&site.public, &format!("s3://{bucket}"), &env, &[]));
    // Only what had not arrived (the manifest among it), and the deletes.
    assert_eq!(n(&rerun, "uploaded") as usize, changed - touched);
    assert_eq!(n(&rerun, "deleted") as usize, gone);
    assert_exact(&s3.objects(&bucket, ""), &site);
    site.build(false);
    let (arrived, _) = kill_part_way(&s3, &bucket, &site, 3);
    assert_ne!(site_files_of(&arrived), site.files());
    ok(&publish(&site.public, &format!("s3://{bucket}"), &env, &[]));
    assert_exact(&s3.objects(&bucket, ""), &site);
}

#[test]
fn server_errors_are_retried_and_the_result_is_exact() {
    let Some(s3) = S3Server::shared() else { return };
    let bucket = s3.bucket("retry");
    let site = Site::new(false);
    let proxy = Proxy::start(s3.port, 5, Duration::ZERO);
    let env = S3Server::env_for(&proxy.endpoint());
    let to = format!("s3://{bucket}/p");
    ok(&publish(&site.public, &to, &env, &[]));
    assert_exact(&s3.objects(&bucket, "p"), &site);
    site.build(true);
    ok(&publish(&site.public, &to, &env, &[]));
    assert_exact(&s3.objects(&bucket, "p"), &site);
    let failed = proxy.counts.failed.load(Ordering::SeqCst);
    assert!(failed >= 10, "only {failed} errors injected");
}

#[test]
fn a_missing_bucket_and_refused_credentials_are_clear_errors() {
    let Some(s3) = S3Server::shared() else { return };
    let site = Site::new(false);
    let env = S3Server::env_for(&s3.endpoint());
    let missing = publish(&site.public, "s3://no-such-bucket-svcdir/x", &env, &[]);
    assert_eq!(missing.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains("s3://no-such-bucket-svcdir/x: the bucket does not exist"), "{stderr}");
    assert_eq!(summary(&missing)["ok"], false);

    // moto checks credentials when told to (no action allowed without a known key).
    let binary = svcdir_testkit::s3::moto_binary().expect("moto");
    let strict = S3Server::start(&binary, &[("INITIAL_NO_AUTH_ACTION_COUNT", "0")]);
    let refused = publish(&site.public, "s3://any-bucket", &S3Server::env_for(&strict.endpoint()), &[]);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("the store refused the credentials (InvalidAccessKeyId"), "{stderr}");
    for output in [&missing, &refused] {
        let all = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert!(!all.contains(svcdir_testkit::s3::SECRET_KEY), "a credential was printed: {all}");
    }
}

#[test]
fn a_local_folder_is_a_store_too() {
    let site = Site::new(false);
    let dest = tempfile::tempdir().expect("temp dir");
    let to = format!("file://{}", dest.path().display());
    let first = ok(&publish(&site.public, &to, &[], &[]));
    assert_eq!(n(&first, "uploaded") as usize, site.files().len());
    site.build(true);
    ok(&publish(&site.public, &to, &[], &[]));
    let copied: BTreeMap<String, Vec<u8>> = walkdir::WalkDir::new(dest.path())
        .into_iter()
        .map(|e| e.expect("walk"))
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            (e.path().strip_prefix(dest.path()).unwrap().to_str().unwrap().to_owned(), std::fs::read(e.path()).unwrap())
        })
        .collect();
    assert_eq!(copied, site.files());
    let again = ok(&publish(&site.public, &to, &[], &[]));
    assert_eq!(n(&again, "uploaded"), 0);
}

/// Over HTTPS (issue 23): rustls with the ring provider, as every cloud store is reached.
/// moto answers with a certificate for `IP:127.0.0.1` from a test CA; trusted through the
/// standard `SSL_CERT_FILE`, the publish is exact; with the CA not trusted, it is refused.
#[test]
fn a_publish_over_https_trusts_the_ca_given_by_ssl_cert_file() {
    let Some(binary) = svcdir_testkit::s3::moto_binary() else {
        svcdir::test_support::skipped("moto_server is not installed (.ci/run installs it)");
        return;
    };
    let Some(tls) = svcdir_testkit::tls::TestCertificate::for_loopback() else { return };
    let s3 = S3Server::start_https(&binary, &tls);
    assert!(s3.endpoint().starts_with("https://127.0.0.1:"), "{}", s3.endpoint());
    let bucket = s3.bucket("https");
    let site = Site::new(false);
    let mut env = S3Server::env_for(&s3.endpoint());
    env.retain(|(key, _)| *key != "AWS_ALLOW_HTTP");

    // Not trusted: the system's roots do not hold the test CA.
    let untrusted = publish_command(&site.public, &format!("s3://{bucket}"), &env, &[])
        .env_remove("SSL_CERT_FILE")
        .env_remove("SSL_CERT_DIR")
        .output()
        .expect("svcdir publish runs");
    assert_eq!(untrusted.status.code(), Some(1), "{}", String::from_utf8_lossy(&untrusted.stderr));
    assert_eq!(summary(&untrusted)["ok"], false);
    assert!(s3.objects(&bucket, "").is_empty(), "nothing was written over an untrusted connection");

    env.push(("SSL_CERT_FILE", tls.ca.to_str().expect("utf-8").to_owned()));
    let first = ok(&publish(&site.public, &format!("s3://{bucket}"), &env, &[]));
    assert_eq!(n(&first, "uploaded") as usize, site.files().len());
    assert_exact(&s3.objects(&bucket, ""), &site);
    let second = ok(&publish(&site.public, &format!("s3://{bucket}"), &env, &[]));
    assert_eq!(n(&second, "uploaded"), 0);
}

/// Issue 27: a publish after one service changed uploads exactly the objects whose bytes
/// changed (by the two builds' manifests), reads and writes only the manifest's shards that
/// changed, lists nothing; a publish with nothing to do reads the root manifest alone. The
/// bytes are counted at the proxy (`svcdir_testkit::traffic`, which `make bench-s3-publish`
/// runs at 100,000 services).
#[test]
fn one_changed_service_moves_its_objects_and_only_the_shards_that_changed() {
    use svcdir_testkit::traffic::{Sample, Traffic};
    let Some(s3) = S3Server::shared() else { return };
    let bucket = s3.bucket("sharded");
    let dir = tempfile::tempdir().expect("temp dir");
    // Enough files for 16 shards, so that one service's files leave some untouched.
    let sample = Sample::generate(dir.path(), 400, 3);
    let old = sample.build();
    assert!(old.0.shards.len() >= 16, "{} shards", old.0.shards.len());
    let public = sample.public.clone();
    ok(&publish(&public, &format!("s3://{bucket}/site"), &S3Server::env_for(&s3.endpoint()), &[]));

    let traffic = Traffic::count(&sample, &old, &s3, &bucket);
    // Nothing to do: one request, the root manifest, and no more bytes than it holds.
    let noop = &traffic.noop;
    assert_eq!(noop.len(), 1, "{noop:?}");
    assert_eq!((noop[0].method.as_str(), noop[0].sent, noop[0].received), ("GET", 0, traffic.root_bytes));

    // One service's description changed.
    assert!(!traffic.changed.is_empty() && traffic.changed.len() < 100, "{:?}", traffic.changed);
    // At this size one service's files touch most of the 16 shards; at 100,000 services a
    // few of 4,096 (`make bench-s3-publish` prints the figures).
    assert!(!traffic.old_shards.is_empty());
    traffic.assert_only_what_changed_moved();
    let (other, bound) = (traffic.other_bytes(), traffic.other_bound());
    assert!(other <= bound, "{other} bytes beside the objects, more than {bound}");
    let objects = s3.objects(&bucket, "site");
    let on_disk: std::collections::BTreeSet<String> = walkdir::WalkDir::new(public.canonicalize().expect("public"))
        .into_iter()
        .map(|e| e.expect("walk"))
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().strip_prefix(public.canonicalize().unwrap()).unwrap().to_str().unwrap().to_owned())
        .collect();
    assert_eq!(objects.keys().cloned().collect::<std::collections::BTreeSet<_>>(), on_disk, "old shards deleted");
}

#[test]
fn verify_restores_objects_deleted_behind_a_clean_manifest() {
    let Some(s3) = S3Server::shared() else { return };
    let bucket = s3.bucket("verify");
    let site = Site::new(false);
    let env = S3Server::env_for(&s3.endpoint());
    let to = format!("s3://{bucket}");
    ok(&publish(&site.public, &to, &env, &[]));
    let pointer: serde_json::Value =
        serde_json::from_slice(&site.files()["_search/current.json"]).expect("the pointer is JSON");
    let index = pointer["path"].as_str().expect("the pointer names its index").to_owned();
    let page = site.files().keys().find(|rel| rel.ends_with("index.json")).expect("a page").clone();
    svcdir_testkit::s3::delete_objects(&s3.endpoint(), &bucket, &[&index, &page]);
    assert!(!s3.objects(&bucket, "").contains_key(&index));
    // The clean manifest still vouches for both: a plain publish cannot see they are gone.
    let trusting = ok(&publish(&site.public, &to, &env, &[]));
    assert_eq!(n(&trusting, "uploaded"), 0, "{trusting}");
    let verified = ok(&publish(&site.public, &to, &env, &["--verify"]));
    assert!(n(&verified, "uploaded") >= 2, "{verified}");
    assert_exact(&s3.objects(&bucket, ""), &site);
    // Verified again: nothing is missing any more.
    let again = ok(&publish(&site.public, &to, &env, &["--verify"]));
    assert_eq!((n(&again, "uploaded"), n(&again, "deleted")), (0, 0), "{again}");
}

#[test]
fn symbolic_links_are_not_published_and_each_is_named() {
    let site = Site::new(false);
    let outside = tempfile::tempdir().expect("temp dir");
    std::fs::write(outside.path().join("secret.txt"), "not for the site").expect("write");
    let public = std::fs::canonicalize(&site.public).expect("the build");
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), public.join("linked.txt")).expect("a file link");
    std::os::unix::fs::symlink(outside.path(), public.join("linked-dir")).expect("a folder link");
    let dest = tempfile::tempdir().expect("temp dir");
    let output = publish(&site.public, &format!("file://{}", dest.path().display()), &[], &[]);
    ok(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    for rel in ["linked.txt", "linked-dir"] {
        assert!(stderr.contains(&format!("warning: {rel} is a symbolic link: not published")), "{stderr}");
        assert!(!dest.path().join(rel).exists(), "{rel} was published");
    }
}
