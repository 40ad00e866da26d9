//! `svcdir-search --from SOURCE` (behaviour.md, "A publication: the files and the search
//! index as one unit"), with the real binaries: following a built output folder under load,
//! and a publish destination (`file:///`) through a pointer to a missing index, an index
//! whose bytes do not match its name, and the next good publication.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use svcdir_testkit::dataset::{self as common, assert_ok, fixture};
use svcdir_testkit::search_server::Server;

/// The poll interval of these tests, in seconds.
const POLL: u64 = 1;
/// A search that lists the fixture's Glasgow services, the renamed one among them.
const GLASGOW: &str = "/api/v4/services/?postcode=G2+1AL&page_size=50";

fn build(input: &Path, work: &Path) {
    assert_ok(&common::build(input, work, &[]));
}

/// The index the build at `work` published (its manifest's `index`).
fn published_hash(work: &Path) -> String {
    common::json(&work.join("public"), "_manifest.json")["index"].as_str().unwrap().to_owned()
}

fn rename_a_service(input: &Path, from: &str, to: &str) {
    let services = input.join("services.jsonl");
    let text = std::fs::read_to_string(&services).unwrap();
    let edited = text.replacen(&format!(r#""name": "{from}","#), &format!(r#""name": "{to}","#), 1);
    assert_ne!(text, edited, "{from} is in the fixture");
    std::fs::write(&services, edited).unwrap();
}

/// Waits until `/healthz` answers 200 with `index_hash` = `hash`; how long it took.
fn wait_for_index(server: &Server, hash: &str, within: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let (status, health) = server.health_status();
        if status == 200 && health["index_hash"] == hash {
            return started.elapsed();
        }
        assert!(started.elapsed() < within, "index {hash} not in force after {within:?}: {health}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until `/healthz` names a failed poll whose message contains `needle`.
fn wait_for_poll_error(server: &Server, needle: &str) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(POLL + 10);
    loop {
        let (status, health) = server.health_status();
        assert_eq!(status, 200, "an index is in force: {health}");
        if health["last_poll_error"].as_str().is_some_and(|e| e.contains(needle)) {
            return health;
        }
        assert!(Instant::now() < deadline, "no failed poll naming {needle:?}: {health}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Searches on fresh connections until `stop`, counting the answers that are not 200.
fn load(address: String, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<(usize, usize)> {
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (ok, failed) = (AtomicUsize::new(0), AtomicUsize::new(0));
        while !stop.load(Ordering::Relaxed) {
            let request = hyper::Request::builder()
                .uri(GLASGOW)
                .header("host", "x")
                .body(http_body_util::Empty::<hyper::body::Bytes>::new())
                .unwrap();
            let status = runtime.block_on(async {
                use http_body_util::BodyExt as _;
                let response = svcdir_testkit::one_request(&address, request).await;
                let status = response.status().as_u16();
                // The whole body: an answer cut off by the swap would fail here.
                response.into_body().collect().await.map(|_| status).unwrap_or(0)
            });
            let counter = if status == 200 { &ok } else { &failed };
            counter.fetch_add(1, Ordering::Relaxed);
        }
        (ok.into_inner(), failed.into_inner())
    })
}

fn search_names(server: &Server) -> String {
    let (status, _, body) = server.get(GLASGOW);
    assert_eq!(status, 200);
    String::from_utf8(body).unwrap()
}

#[test]
fn follows_a_built_folder_from_no_index_to_each_new_build_with_no_failed_request() {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("input");
    common::copy_dir(&fixture("small"), &input);
    let public = work.path().join("public");
    let poll = POLL.to_string();
    // Started before any build: not ready, and searches 503.
    let server = Server::start_args(&["--from", public.to_str().unwrap(), "--poll", &poll], &[]);
    let (status, health) = server.health_status();
    assert_eq!((status, health["status"].as_str()), (503, Some("starting")), "{health}");
    let (status, content_type, body) = server.get(GLASGOW);
    assert_eq!((status, content_type.as_str()), (503, "application/json"));
    let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body, serde_json::json!({"detail": "Service temporarily unavailable, try again later."}));

    build(&input, work.path());
    wait_for_index(&server, &published_hash(work.path()), Duration::from_secs(POLL + 5));
    assert!(search_names(&server).contains("Argyle St Lunch Club"));

    // A rebuild under load: in force within the poll interval (plus 5 s), no request failed.
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..2).map(|_| load(server.address.clone(), stop.clone())).collect();
    rename_a_service(&input, "Argyle St Lunch Club", "Argyle Street Lunch Club");
    build(&input, work.path());
    let took = wait_for_index(&server, &published_hash(work.path()), Duration::from_secs(POLL + 5));
    // Deliberate: 300 ms more of load after the swap (a span of load, not a wait for something).
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    let (ok, failed) = clients.into_iter().map(|c| c.join().unwrap()).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    assert_eq!(failed, 0, "{ok} answered 200, {failed} did not");
    assert!(ok > 10, "the load ran ({ok} requests)");
    eprintln!("new build in force {took:?} after the build ended; {ok} searches, none failed");
    let names = search_names(&server);
    assert!(names.contains("Argyle Street Lunch Club") && !names.contains("Argyle St Lunch Club"), "{names}");
    let metrics = server.scrape();
    assert!(metrics.value("svcdir_index_polls_total", &[("outcome", "swapped")]) >= 2.0);
    // SIGHUP polls at once, and never ends the process.
    let from = server.log().len();
    server.signal("-HUP");
    server.wait_for_log(from, "SIGHUP: polling the publication now");
    assert_eq!(server.health()["index_hash"], published_hash(work.path()));
}

#[test]
fn a_bad_publication_keeps_the_index_in_force_until_the_next_good_one() {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("input");
    common::copy_dir(&fixture("small"), &input);
    let public = work.path().join("public");
    let store = work.path().join("store");
    std::fs::create_dir_all(&store).unwrap();
    let to = format!("file://{}", store.display());
    build(&input, work.path());
    assert_ok(&svcdir_testkit::s3::publish(&public, &to, &[], &[]));
    let cache = work.path().join("cache");
    let args = ["--from", &to, "--cache", cache.to_str().unwrap(), "--poll", "1"];
    let server = Server::start_args(&args, &[]);
    let good = published_hash(work.path());
    wait_for_index(&server, &good, Duration::from_secs(POLL + 5));
    assert_eq!(server.health()["last_poll_error"], serde_json::Value::Null);

    // The cache folder belongs to one process.
    let second = std::process::Command::new(svcdir_testkit::bin("svcdir-search"))
        .args(args)
        .args(["--listen", "127.0.0.1:0", "--log-format", "text"])
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(stderr.contains("is in use by another svcdir-search"), "{stderr}");

    // A pointer naming an index the store does not hold.
    let pointer = store.join("_search/current.json");
    let missing = "0".repeat(32);
    let write_pointer = |hash: &str, bytes: u64| {
        let body = format!(r#"{{"index":"{hash}","path":"_search/{hash}.idx","bytes":{bytes}}}"#);
        std::fs::write(&pointer, body).unwrap();
    };
    write_pointer(&missing, 10);
    let health = wait_for_poll_error(&server, &format!("_search/{missing}.idx"));
    assert_eq!(health["index_hash"], good.as_str(), "the index in force stays");
    assert!(search_names(&server).contains("Argyle St Lunch Club"));

    // An index whose bytes do not match its name.
    let wrong = "1".repeat(32);
    let bytes = std::fs::read(public.join(format!("_search/{good}.idx"))).unwrap();
    std::fs::write(store.join(format!("_search/{wrong}.idx")), &bytes).unwrap();
    write_pointer(&wrong, bytes.len() as u64);
    let health = wait_for_poll_error(&server, &format!("not to the {wrong} its name says"));
    assert_eq!(health["index_hash"], good.as_str());
    let metrics = server.scrape();
    assert!(metrics.value("svcdir_index_polls_total", &[("outcome", "failed")]) >= 2.0, "{}", metrics.text);

    // The next good publication is picked up, and the error cleared.
    rename_a_service(&input, "Argyle St Lunch Club", "Argyle Street Lunch Club");
    build(&input, work.path());
    assert_ok(&svcdir_testkit::s3::publish(&public, &to, &[], &[]));
    let next = published_hash(work.path());
    wait_for_index(&server, &next, Duration::from_secs(POLL + 5));
    assert!(search_names(&server).contains("Argyle Street Lunch Club"));
    assert_eq!(server.health()["last_poll_error"], serde_json::Value::Null);
    // The cache keeps the index in force and the one before it, nothing else.
    let mut cached: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".idx"))
        .collect();
    cached.sort();
    let mut expected = vec![format!("{good}.idx"), format!("{next}.idx")];
    expected.sort();
    assert_eq!(cached, expected);
}
