//! The real `svcdir-search` binary: started on a free port with an index written here,
//! asked over real HTTP, stopped with SIGTERM; and its start-up failures.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::{directory, publication};
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use svcdir::index::SearchIndex;
use svcdir_testkit::search_server::Server;

const BIN: &str = env!("CARGO_BIN_EXE_svcdir-search");

struct Reply {
    status: u16,
    headers: hyper::HeaderMap,
    body: Bytes,
}

/// One HTTP/1.1 request on a fresh connection.
async fn request(address: &str, method: &str, target: &str) -> Reply {
    let request = hyper::Request::builder()
        .method(method)
        .uri(target)
        .header("host", "attacker.example")
        .body(Empty::<Bytes>::new())
        .expect("request");
    let response = svcdir_testkit::one_request(address, request).await;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.into_body().collect().await.expect("body").to_bytes();
    Reply { status, headers, body }
}

fn write_index(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("nested/search.idx");
    SearchIndex::build(&directory(), &publication()).write(&path).expect("index written");
    path
}

#[test]
fn serves_searches_over_http_and_stops_on_sigterm() {
    let work = tempfile::tempdir().expect("temp dir");
    let index = write_index(work.path());
    let mut server = Server::start(&index, &["--base-url", "https://search.example.net/"]);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let reply = request(&server.address, "GET", "/api/v4/services/?postcode=g2%201al&page_size=5").await;
        assert_eq!(reply.status, 200);
        assert_eq!(reply.headers["content-type"], "application/json");
        assert_eq!(reply.headers["allow"], "GET, HEAD, OPTIONS");
        assert_eq!(reply.headers["vary"], "Accept");
        assert_eq!(reply.headers["access-control-allow-origin"], "*");
        let json: serde_json::Value = serde_json::from_slice(&reply.body).expect("JSON");
        assert_eq!(json["count"], 12);
        assert_eq!(json["data"][0]["name"], "Drop-in Centre");
        // The configured base URL, never the Host header.
        assert_eq!(json["next"], "https://search.example.net/api/v4/services/?page=2&page_size=5&postcode=g2+1al");

        let reply = request(&server.address, "HEAD", "/api/v3/search?postcode=G2+1AL").await;
        assert_eq!(reply.status, 200);
        assert!(reply.body.is_empty());
        let reply = request(&server.address, "DELETE", "/api/v3/search/").await;
        assert_eq!(reply.status, 405);
        assert_eq!(reply.headers["allow"], "GET, HEAD, OPTIONS");
        let reply = request(&server.address, "GET", "/api/v4/categories/").await;
        assert_eq!(reply.status, 404);
    });
    let status = server.terminate();
    assert_eq!(status.code(), Some(0), "{:?}", server.log());
    // The log, one JSON object per line (issue 14): start-up, one event per request, stop.
    let events = server.events();
    let loaded = events.iter().find(|e| e["message"] == "loaded the index").expect("a start-up event");
    assert_eq!(loaded["services"], 15, "{loaded}");
    assert_eq!(loaded["index_hash"], svcdir::write::content_hash(&std::fs::read(&index).expect("read")));
    let access: Vec<_> = events.iter().filter(|e| e["target"] == "svcdir::access").collect();
    let search = access.iter().find(|e| e["method"] == "GET" && e["path"] == "/api/v4/services/").expect("logged");
    assert_eq!(search["query"], "postcode=g2%201al&page_size=5");
    assert_eq!(search["status"], 200);
    assert!(search["duration_us"].is_u64() && search["bytes"].as_u64() > Some(1000), "{search}");
    assert!(search["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')), "{search}");
    assert!(access.iter().any(|e| e["method"] == "DELETE" && e["status"] == 405), "{access:?}");
    assert_eq!(access.len(), 4, "one event per request: {access:?}");
    assert!(events.iter().any(|e| e["message"] == "stopped"), "{events:?}");
}

fn run_to_exit(args: &[&str]) -> (Option<i32>, String) {
    let output = Command::new(BIN).args(args).stdin(Stdio::null()).output().expect("svcdir-search runs");
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn a_missing_index_exits_1_with_a_clear_message() {
    let work = tempfile::tempdir().expect("temp dir");
    let missing = work.path().join("nope.idx");
    let (code, stderr) = run_to_exit(&["--index", missing.to_str().unwrap(), "--listen", "127.0.0.1:0"]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("does not exist") && stderr.contains("nope.idx"), "{stderr}");
}

#[test]
fn a_corrupt_or_foreign_index_exits_1() {
    let work = tempfile::tempdir().expect("temp dir");
    let good = std::fs::read(write_index(work.path())).expect("read");
    // A byte flipped in the core (decoded at start-up) and one in the rendered results (read
    // in place, never decoded): both caught by the checksum before anything is served.
    let flipped = |at: usize| {
        let mut bytes = good.clone();
        bytes[at] ^= 0x01;
        bytes
    };
    let core_len = u64::from_le_bytes(good[16..24].try_into().unwrap()) as usize;
    // Files of earlier formats: the magic bytes, version 1 (postcard only), 2 (a record
    // per service and postcode) or 5 (the checksum in the header), then the rest.
    let old = |version: u32| [&good[..8], &version.to_le_bytes()[..], &good[12..]].concat();
    for (name, bytes, expected) in [
        ("foreign.idx", b"<html>not an index</html>".to_vec(), "not a svcdir search index"),
        ("cut.idx", good[..good.len() / 2].to_vec(), "cut short"),
        ("cut-by-one.idx", good[..good.len() - 1].to_vec(), "cut short"),
        ("header-only.idx", good[..20].to_vec(), "cut short"),
        ("future.idx", [&good[..8], &99u32.to_le_bytes()[..], &good[12..]].concat(), "format version 99"),
        ("old.idx", old(1), "has format version 1, this program reads version 6"),
        ("v2.idx", old(2), "has format version 2, this program reads version 6"),
        ("v5.idx", old(5), "has format version 5, this program reads version 6"),
        ("flipped-core.idx", flipped(48 + core_len / 2), "checksum does not match"),
        ("flipped-result.idx", flipped(good.len() - 10), "checksum does not match"),
        ("flipped-checksum.idx", flipped(good.len() - 1), "checksum does not match"),
    ] {
        let path = work.path().join(name);
        std::fs::write(&path, bytes).expect("write");
        let (code, stderr) = run_to_exit(&["--index", path.to_str().unwrap(), "--listen", "127.0.0.1:0"]);
        assert_eq!(code, Some(1), "{name}: {stderr}");
        assert!(stderr.contains(expected), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
}

#[test]
fn a_taken_port_exits_1() {
    let work = tempfile::tempdir().expect("temp dir");
    let index = write_index(work.path());
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = taken.local_addr().expect("address").to_string();
    let (code, stderr) = run_to_exit(&["--index", index.to_str().unwrap(), "--listen", &address]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains(&format!("cannot listen on {address}")), "{stderr}");
}

#[test]
fn a_bad_base_url_is_refused() {
    let work = tempfile::tempdir().expect("temp dir");
    let index = write_index(work.path());
    let (code, stderr) =
        run_to_exit(&["--index", index.to_str().unwrap(), "--listen", "127.0.0.1:0", "--base-url", "example.org"]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("--base-url"), "{stderr}");
}

#[test]
fn help_explains_the_options() {
    let output = Command::new(BIN).arg("--help").output().expect("runs");
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success());
    for needle in ["--index", "build/search.idx", "--listen", "127.0.0.1:8081", "--base-url", "SIGTERM"] {
        assert!(help.contains(needle), "{needle}: {help}");
    }
}

/// `/healthz` and `/metrics` (issue 14): the health object, and the metrics read by a
/// Prometheus text-format parser, their counters moving with the requests made.
#[test]
fn healthz_and_metrics_report_the_index_and_count_the_requests() {
    let work = tempfile::tempdir().expect("temp dir");
    let index = write_index(work.path());
    let mut server = Server::start(&index, &[]);
    let health = server.health();
    assert_eq!(health["status"], "ok");
    assert_eq!(health["services"], 15);
    // The content hash of the index file: the one the build's manifest records.
    assert_eq!(health["index_hash"], svcdir::write::content_hash(&std::fs::read(&index).expect("read")));
    assert!(health["uptime_seconds"].as_u64().is_some_and(|s| s < 600), "{health}");

    let v4 = [("route", "/api/v4/services/"), ("status", "200")];
    let before = server.scrape();
    for target in [
        "/api/v4/services/?postcode=G2+1AL",
        "/api/v4/services?postcode=G2+1AL",
        "/api/v4/services/?postcode=G2+1AL&q=food",
    ] {
        assert_eq!(server.get(target).0, 200, "{target}");
    }
    assert_eq!(server.get("/api/v3/search/?postcode=nowhere").0, 400);
    assert_eq!(server.get("/wp-login.php").0, 404);
    let after = server.scrape();

    let moved = |labels: &[(&str, &str)]| {
        after.value("svcdir_http_requests_total", labels) - before.value("svcdir_http_requests_total", labels)
    };
    assert_eq!(moved(&v4), 3.0, "{}", after.text);
    assert_eq!(moved(&[("route", "/api/v3/search/"), ("status", "400")]), 1.0, "{}", after.text);
    // Unknown paths share one label: scanning cannot grow the series.
    assert_eq!(moved(&[("route", "other"), ("status", "404")]), 1.0, "{}", after.text);
    assert_eq!(moved(&[("route", "/metrics"), ("status", "200")]), 1.0, "the first scrape is counted");
    assert!(after.find("svcdir_http_requests_total", &[("route", "/wp-login.php")]).is_empty());

    // Latency: a histogram with buckets, its count moving with the requests.
    assert!(after.text.contains("# TYPE svcdir_http_request_duration_seconds histogram"), "{}", after.text);
    let histogram = after.find("svcdir_http_request_duration_seconds", &[("route", "/api/v4/services/")]);
    let [histogram] = histogram.as_slice() else { panic!("one v4 latency histogram: {}", after.text) };
    let prometheus_parse::Value::Histogram(buckets) = &histogram.value else { panic!("not a histogram") };
    assert!(buckets.len() >= 10 && buckets.iter().any(|b| b.less_than == f64::INFINITY), "{buckets:?}");
    assert!(buckets.windows(2).all(|w| w[0].less_than < w[1].less_than && w[0].count <= w[1].count));
    assert_eq!(buckets.last().map(|b| b.count), Some(3.0));
    let count = |m: &svcdir_testkit::search_server::Metrics| {
        m.value("svcdir_http_request_duration_seconds_count", &[("route", "/api/v4/services/")])
    };
    assert_eq!(count(&after) - count(&before), 3.0);

    // In flight: this scrape itself. Index, info and process memory.
    assert_eq!(after.value("svcdir_http_requests_in_flight", &[]), 1.0);
    assert_eq!(after.value("svcdir_index_services", &[]), 15.0);
    assert!(after.value("svcdir_index_load_duration_seconds", &[]) > 0.0);
    assert_eq!(after.value("svcdir_index_info", &[("index_hash", health["index_hash"].as_str().unwrap())]), 1.0);
    assert!(after.value("process_resident_memory_bytes", &[]) > 1e6, "{}", after.text);

    // Each request one JSON log event. The log is written off the request path, so the
    // last scrape's line may land just after its answer: wait for it (at most 10 s).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut events = server.events();
    while events.iter().filter(|e| e["target"] == "svcdir::access").count() < 8 && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
        events = server.events();
    }
    let access: Vec<_> = events.iter().filter(|e| e["target"] == "svcdir::access").collect();
    assert_eq!(access.len(), 1 + 2 + 5, "healthz, two scrapes, five requests: {access:?}");
    let scan = access.iter().find(|e| e["path"] == "/wp-login.php").expect("logged");
    assert_eq!((&scan["method"], &scan["status"], &scan["query"]), (&"GET".into(), &404.into(), &"".into()));
    assert_eq!(server.terminate().code(), Some(0));
}

/// `RUST_LOG` filters the log; the access log is its own target, so it can be turned off alone.
#[test]
fn rust_log_turns_the_access_log_off_and_keeps_the_rest() {
    let work = tempfile::tempdir().expect("temp dir");
    let index = write_index(work.path());
    let mut server = Server::start_with_env(&index, &[], &[("RUST_LOG", "info,svcdir::access=off")]);
    for _ in 0..3 {
        assert_eq!(server.get("/api/v4/services/?postcode=G2+1AL").0, 200);
    }
    assert_eq!(server.terminate().code(), Some(0));
    let events = server.events();
    assert!(events.iter().any(|e| e["message"] == "loaded the index"), "{events:?}");
    assert!(events.iter().any(|e| e["message"] == "stopped"), "{events:?}");
    assert!(!events.iter().any(|e| e["target"] == "svcdir::access"), "{events:?}");
}
