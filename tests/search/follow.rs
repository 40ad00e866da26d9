//! `svcdir-search --from SOURCE` (behaviour.md, "A publication: the files and the search
//! index as one unit"), with the real binaries: following a built output folder under load,
//! and a publish destination (`file:///`) through a pointer to a missing index, an index
//! whose bytes do not match its name, and the next good publication.

use std::path::{Path, PathBuf};
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
/// The small fixture built in a new work folder and published to a `file://` store there:
/// the folder, the input, the built tree, the store's folder and its URL.
fn published_to_a_file_store() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf, String) {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("input");
    common::copy_dir(&fixture("small"), &input);
    let public = work.path().join("public");
    let store = work.path().join("store");
    std::fs::create_dir_all(&store).unwrap();
    let to = format!("file://{}", store.display());
    build(&input, work.path());
    assert_ok(&svcdir_testkit::s3::publish(&public, &to, &[], &[]));
    (work, input, public, store, to)
}

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
    let (work, input, public, store, to) = published_to_a_file_store();
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

/// How the fake store answers (each test sets what it needs).
#[derive(Debug, Default)]
struct Behaviour {
    /// The pointer is answered with a 1 TiB `Content-Length`.
    huge_pointer: bool,
    /// The index objects are announced this many bytes longer than they are (the bytes
    /// sent after them are spaces, then the connection ends).
    index_padding: u64,
    /// The index objects are served with their first byte changed.
    corrupt_index: bool,
    /// The next whole GET of an index is cut off after this many bytes (the bounded ranges a
    /// client's own retry asks for are always answered 503).
    cut_index_at: Option<u64>,
}

/// A request the fake store was sent: its method, path below the bucket and `Range`.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    range: Option<String>,
}

/// A fake S3 store on loopback serving the files of `public` under `/bucket/` (GET with
/// `Range` and `If-Match`, HEAD), answering as its [`Behaviour`] says and logging every
/// request. Written on the socket: moto cannot give these answers, and hyper refuses to
/// send a length its body does not have.
struct FakeStore {
    port: u16,
    behaviour: Arc<std::sync::Mutex<Behaviour>>,
    seen: Arc<std::sync::Mutex<Vec<Seen>>>,
}

impl FakeStore {
    fn start(public: &Path) -> FakeStore {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let store = FakeStore { port, behaviour: Arc::default(), seen: Arc::default() };
        let (public, behaviour, seen) = (public.to_owned(), store.behaviour.clone(), store.seen.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let (public, behaviour, seen) = (public.clone(), behaviour.clone(), seen.clone());
                std::thread::spawn(move || serve_connection(stream, &public, &behaviour, &seen));
            }
        });
        store
    }

    fn set(&self, change: impl FnOnce(&mut Behaviour)) {
        change(&mut self.behaviour.lock().unwrap());
    }

    /// The requests for `path` so far.
    fn seen(&self, path: &str) -> Vec<Seen> {
        self.seen.lock().unwrap().iter().filter(|s| s.path == path).cloned().collect()
    }

    /// The environment that points `svcdir-search --from s3://bucket` here.
    fn env(&self) -> Vec<(&'static str, String)> {
        svcdir_testkit::s3::S3Server::env_for(&format!("http://127.0.0.1:{}", self.port))
    }
}

fn serve_connection(
    stream: std::net::TcpStream,
    public: &Path,
    behaviour: &std::sync::Mutex<Behaviour>,
    seen: &std::sync::Mutex<Vec<Seen>>,
) {
    use std::io::{BufRead as _, Write as _};
    let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    loop {
        let mut head = Vec::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
            head.push(line.trim_end().to_owned());
        }
        let mut words = head[0].split_whitespace();
        let method = words.next().unwrap_or("").to_owned();
        let target = words.next().unwrap_or("").to_owned();
        let path = target.split('?').next().unwrap().strip_prefix("/bucket/").unwrap_or("").to_owned();
        let header = |name: &str| {
            head[1..].iter().find_map(|line| {
                let (key, value) = line.split_once(':')?;
                key.eq_ignore_ascii_case(name).then(|| value.trim().to_owned())
            })
        };
        let range = header("range");
        seen.lock().unwrap().push(Seen { method: method.clone(), path: path.clone(), range: range.clone() });
        let is_index = path.starts_with("_search/") && path.ends_with(".idx");
        let mut b = behaviour.lock().unwrap();
        let mut body = std::fs::read(public.join(&path)).ok();
        if is_index
            && b.corrupt_index
            && let Some(body) = body.as_mut()
        {
            body[0] ^= 0xff;
        }
        let e_tag = body.as_ref().map(|body| format!("\"{:016x}\"", xxhash_rust::xxh3::xxh3_64(body)));
        let mut status = "200 OK";
        let mut extra = String::new();
        let mut announced = body.as_ref().map_or(0, |b| b.len() as u64);
        let mut cut = None;
        match &mut body {
            None => status = "404 Not Found",
            Some(_) if path == "_search/current.json" && b.huge_pointer => announced = 1 << 40,
            Some(_) if header("if-match").is_some_and(|m| Some(m) != e_tag) => {
                status = "412 Precondition Failed";
                body = Some(Vec::new());
                announced = 0;
            }
            Some(bytes) if is_index => match range.as_deref().and_then(|r| r.strip_prefix("bytes=")) {
                Some(r) if r.ends_with('-') => {
                    let from: usize = r.trim_end_matches('-').parse().unwrap();
                    extra = format!("content-range: bytes {from}-{}/{}\r\n", bytes.len() - 1, bytes.len());
                    *bytes = bytes.split_off(from);
                    status = "206 Partial Content";
                    announced = bytes.len() as u64;
                }
                // Only a client's own retry asks for a bounded range (object_store's,
                // after a body cut off): it fails, so that the next poll must resume.
                Some(_) => {
                    status = "503 Service Unavailable";
                    body = Some(Vec::new());
                    announced = 0;
                }
                None => {
                    announced += b.index_padding;
                    cut = b.cut_index_at.take();
                }
            },
            Some(_) => {}
        }
        drop(b);
        let body = body.unwrap_or_default();
        let e_tag = e_tag.map(|e| format!("etag: {e}\r\n")).unwrap_or_default();
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-length: {announced}\r\n{e_tag}{extra}\
             last-modified: Sat, 05 Dec 2026 12:00:00 GMT\r\n\r\n"
        );
        if stream.write_all(head.as_bytes()).is_err() || method == "HEAD" {
            if method == "HEAD" {
                continue;
            }
            return;
        }
        if let Some(at) = cut {
            let _ = stream.write_all(&body[..at as usize]);
            return;
        }
        if stream.write_all(&body).is_err() {
            return;
        }
        if announced != body.len() as u64 {
            // Some of the promised bytes (a reader that reads on gets its second chunk),
            // then the end of the connection.
            for _ in 0..128 {
                if stream.write_all(&[b' '; 64 << 10]).is_err() {
                    return;
                }
            }
            return;
        }
    }
}

/// Starts `svcdir-search --from s3://bucket` on `store`, its cache in `cache`.
fn follow_the_fake_store(store: &FakeStore, cache: &Path, extra: &[&str]) -> Server {
    let env = store.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut args = vec!["--from", "s3://bucket", "--cache", cache.to_str().unwrap(), "--poll", "1"];
    args.extend_from_slice(extra);
    Server::start_args(&args, &env)
}

/// Waits until `n` more polls have failed than at `from` (a count of failed polls).
fn wait_for_failed_polls(server: &Server, from: f64, n: f64) {
    let deadline = Instant::now() + Duration::from_secs(POLL * n as u64 + 10);
    while server.scrape().value("svcdir_index_polls_total", &[("outcome", "failed")]) < from + n {
        assert!(Instant::now() < deadline, "not {n} failed polls: {}", server.health());
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn failed_polls(server: &Server) -> f64 {
    server.scrape().value("svcdir_index_polls_total", &[("outcome", "failed")])
}

/// The sizes of the regular files in `dir`, by name.
fn files_in(dir: &Path) -> std::collections::BTreeMap<String, u64> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.metadata().unwrap().len()))
        .collect()
}

/// The small fixture built, served by a fake store and followed from it (`extra`: more
/// arguments); then the next build, with one service renamed, waiting in the tree.
/// The work folder, the store, the server and the two indexes' hashes.
fn followed_then_rebuilt(extra: &[&str]) -> (tempfile::TempDir, FakeStore, Server, String, String) {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("input");
    common::copy_dir(&fixture("small"), &input);
    build(&input, work.path());
    let store = FakeStore::start(&work.path().join("public"));
    let server = follow_the_fake_store(&store, &work.path().join("cache"), extra);
    let good = published_hash(work.path());
    wait_for_index(&server, &good, Duration::from_secs(POLL + 10));
    rename_a_service(&input, "Argyle St Lunch Club", "Argyle Street Lunch Club");
    build(&input, work.path());
    let next = published_hash(work.path());
    (work, store, server, good, next)
}

#[test]
fn an_index_larger_than_its_pointer_says_is_refused_unread_and_not_fetched_again() {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("input");
    common::copy_dir(&fixture("small"), &input);
    build(&input, work.path());
    let store = FakeStore::start(&work.path().join("public"));
    // 2 GiB more than the index: refused before a byte of it is read.
    store.set(|b| b.index_padding = 2 << 30);
    let server = follow_the_fake_store(&store, &work.path().join("cache"), &[]);
    let good = published_hash(work.path());
    let index = format!("_search/{good}.idx");
    let size = std::fs::metadata(work.path().join("public").join(&index)).unwrap().len();
    wait_for_failed_polls(&server, 0.0, 1.0);
    let (status, health) = server.health_status();
    assert_eq!(status, 503, "no index in force: {health}");
    let error = health["last_poll_error"].as_str().unwrap().to_owned();
    assert!(error.contains(&format!("{} bytes, not the {size} the pointer gives", size + (2 << 30))), "{error}");
    // Nothing of it written to the cache, and not asked for again while it is unchanged.
    let polls = failed_polls(&server);
    wait_for_failed_polls(&server, polls, 3.0);
    let gets = store.seen(&index).iter().filter(|s| s.method == "GET").count();
    assert_eq!(gets, 1, "{:?}", store.seen(&index));
    assert!(server.health_status().1["last_poll_error"].as_str().unwrap().contains("is not fetched again"));
    let cached: u64 = files_in(&work.path().join("cache")).values().sum();
    assert!(cached < 4096, "{cached} bytes in the cache");

    // Served as it is (another object): fetched and put in force.
    store.set(|b| b.index_padding = 0);
    wait_for_index(&server, &good, Duration::from_secs(POLL + 10));
    let cached: u64 = files_in(&work.path().join("cache")).values().sum();
    assert!(cached < size + 4096, "{cached} bytes in the cache for an index of {size}");
    drop(server);

    // A pointer over --max-index-bytes: refused before the index is asked for.
    let before = store.seen(&index).len();
    let cache = work.path().join("cache-2");
    let server = follow_the_fake_store(&store, &cache, &["--max-index-bytes", "1000"]);
    wait_for_failed_polls(&server, 0.0, 1.0);
    let error = server.health_status().1["last_poll_error"].as_str().unwrap().to_owned();
    assert!(
        error.contains(&format!("the pointer gives it {size} bytes, over the 1000 of --max-index-bytes")),
        "{error}"
    );
    assert_eq!(store.seen(&index).len(), before, "the index was asked for");
}

#[test]
fn an_index_whose_bytes_are_refused_is_fetched_once_until_its_object_changes() {
    let (_work, store, server, good, next) = followed_then_rebuilt(&[]);
    store.set(|b| b.corrupt_index = true);
    server.signal("-HUP");
    let health = wait_for_poll_error(&server, &format!("not to the {next} its name says"));
    assert_eq!(health["index_hash"], good.as_str());
    wait_for_failed_polls(&server, failed_polls(&server), 3.0);
    let index = format!("_search/{next}.idx");
    let gets = store.seen(&index).iter().filter(|s| s.method == "GET").count();
    assert_eq!(gets, 1, "{:?}", store.seen(&index));
    let error = server.health()["last_poll_error"].as_str().unwrap().to_owned();
    assert!(error.contains(&format!("{next} is unchanged since it was refused")), "{error}");
    assert!(search_names(&server).contains("Argyle St Lunch Club"));

    // Repaired in the store (another ETag): fetched again and put in force.
    store.set(|b| b.corrupt_index = false);
    wait_for_index(&server, &next, Duration::from_secs(POLL + 10));
    assert!(search_names(&server).contains("Argyle Street Lunch Club"));
    let gets = store.seen(&index).iter().filter(|s| s.method == "GET").count();
    assert_eq!(gets, 2);
}

#[test]
fn an_index_fetch_cut_off_is_resumed_from_where_it_stopped() {
    let (work, store, server, _, next) = followed_then_rebuilt(&[]);
    let index = format!("_search/{next}.idx");
    let size = std::fs::metadata(work.path().join("public").join(&index)).unwrap().len();
    let half = size / 2;
    store.set(|b| b.cut_index_at = Some(half));
    let from = server.log().len();
    server.signal("-HUP");
    wait_for_index(&server, &next, Duration::from_secs(POLL + 20));
    assert!(search_names(&server).contains("Argyle Street Lunch Club"));
    let seen = store.seen(&index);
    let whole = seen.iter().filter(|s| s.method == "GET" && s.range.is_none()).count();
    assert_eq!(whole, 1, "fetched whole once: {seen:?}");
    assert!(
        seen.iter().any(|s| s.range.as_deref() == Some(format!("bytes={half}-").as_str())),
        "no request going on from byte {half}: {seen:?}"
    );
    let resumed = server.wait_for_log(from, "resuming the fetch of an index");
    assert!(resumed.contains(&format!("\"from_byte\":{half}")), "{resumed}");
    // The cache: the two indexes, no partial fetch left.
    let names: Vec<String> = files_in(&work.path().join("cache")).into_keys().collect();
    assert_eq!(names.iter().filter(|n| n.ends_with(".idx")).count(), 2, "{names:?}");
    assert!(!names.iter().any(|n| n.contains("partial")), "{names:?}");
}

#[test]
fn the_cache_folder_holds_only_its_own_files_and_at_most_two_indexes() {
    let (work, input, public, _store, to) = published_to_a_file_store();
    let cache = work.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    // The operator's files, and links to a file outside, whose bytes must not change.
    let victim = work.path().join("victim");
    std::fs::write(&victim, b"not the cache's").unwrap();
    std::fs::write(cache.join("search.idx"), b"the build's index").unwrap();
    std::fs::write(cache.join(format!("{}.idx", "a".repeat(32))), b"an index of another server").unwrap();
    std::os::unix::fs::symlink(&victim, cache.join("linked.idx")).unwrap();
    let foreign = files_in(&cache);

    let server = Server::start_args(&["--from", &to, "--cache", cache.to_str().unwrap(), "--poll", "1"], &[]);
    let mut hashes = vec![published_hash(work.path())];
    wait_for_index(&server, &hashes[0], Duration::from_secs(POLL + 5));
    let names = ["Argyle St Lunch Club", "Argyle Street Lunch Club", "Argyle Street Lunch Club Tuesdays", "The Argyle"];
    for pair in names.windows(2) {
        rename_a_service(&input, pair[0], pair[1]);
        build(&input, work.path());
        assert_ok(&svcdir_testkit::s3::publish(&public, &to, &[], &[]));
        hashes.push(published_hash(work.path()));
        wait_for_index(&server, hashes.last().unwrap(), Duration::from_secs(POLL + 5));
        let files = files_in(&cache);
        let ours: Vec<&String> = files.keys().filter(|n| !foreign.contains_key(*n) && n.ends_with(".idx")).collect();
        let n = hashes.len();
        let mut expected = [format!("{}.idx", hashes[n - 2]), format!("{}.idx", hashes[n - 1])];
        expected.sort();
        assert_eq!(ours, expected.iter().collect::<Vec<_>>(), "{files:?}");
        for (name, size) in &foreign {
            assert_eq!(files.get(name), Some(size), "{name} changed: {files:?}");
        }
    }
    assert_eq!(std::fs::read(&victim).unwrap(), b"not the cache's");
    assert_eq!(std::fs::read_link(cache.join("linked.idx")).unwrap(), victim);
    assert_eq!(std::fs::read(cache.join("search.idx")).unwrap(), b"the build's index");
}

#[test]
fn the_default_cache_folder_is_new_private_and_removed_at_the_end() {
    use std::os::unix::fs::PermissionsExt as _;
    let (work, _, _, _, to) = published_to_a_file_store();
    let tmp = work.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let mut server = Server::start_args(&["--from", &to, "--poll", "1"], &[("TMPDIR", tmp.to_str().unwrap())]);
    wait_for_index(&server, &published_hash(work.path()), Duration::from_secs(POLL + 5));
    let folders: Vec<PathBuf> = std::fs::read_dir(&tmp).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(folders.len(), 1, "{folders:?}");
    let name = folders[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("svcdir-search-"), "{name}");
    assert_ne!(name, format!("svcdir-search-{}", server.child.id()), "a predictable name");
    let mode = std::fs::symlink_metadata(&folders[0]).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "{mode:o}");
    assert_eq!(server.terminate().code(), Some(0));
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "the folder is removed");
}

/// The process's virtual memory size in bytes (`VmSize` of `/proc/PID/status`).
fn virtual_size(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|line| line.starts_with("VmSize:")).expect("VmSize");
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

#[test]
fn a_huge_pointer_from_a_store_is_refused_unread_under_a_memory_limit() {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("input");
    common::copy_dir(&fixture("small"), &input);
    build(&input, work.path());
    let store = FakeStore::start(&work.path().join("public"));
    let mut server = follow_the_fake_store(&store, &work.path().join("cache"), &[]);
    let good = published_hash(work.path());
    wait_for_index(&server, &good, Duration::from_secs(POLL + 10));

    // 256 MiB more address space than it has now: far less than the pointer announces.
    let pid = server.child.id();
    let limit = virtual_size(pid) + (256 << 20);
    let limited = std::process::Command::new("prlimit")
        .args([format!("--pid={pid}"), format!("--as={limit}")])
        .status()
        .expect("prlimit runs");
    assert!(limited.success());
    store.set(|b| b.huge_pointer = true);
    let health = wait_for_poll_error(&server, "is over the 65536 bytes a pointer may have");
    assert_eq!(health["index_hash"], good.as_str(), "the index in force stays: {health}");
    // Polls go on, and it keeps serving.
    let polls = server.scrape().value("svcdir_index_polls_total", &[("outcome", "failed")]);
    let deadline = Instant::now() + Duration::from_secs(POLL + 10);
    while server.scrape().value("svcdir_index_polls_total", &[("outcome", "failed")]) <= polls {
        assert!(Instant::now() < deadline, "no later poll");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(search_names(&server).contains("Argyle St Lunch Club"));
    assert!(server.child.try_wait().unwrap().is_none(), "still running");
    server.terminate();
}

#[test]
fn a_fifo_or_a_device_at_the_pointer_of_a_folder_never_hangs_the_follower() {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("input");
    common::copy_dir(&fixture("small"), &input);
    let public = work.path().join("public");
    build(&input, work.path());
    let poll = POLL.to_string();
    let mut server = Server::start_args(&["--from", public.to_str().unwrap(), "--poll", &poll], &[]);
    let good = published_hash(work.path());
    wait_for_index(&server, &good, Duration::from_secs(POLL + 5));
    let pointer = public.join("_search/current.json");
    let contents = std::fs::read(&pointer).unwrap();
    let mkfifo = |path: &Path| {
        std::fs::remove_file(path).unwrap();
        assert!(std::process::Command::new("mkfifo").arg(path).status().unwrap().success());
    };
    let restore = |path: &Path| {
        std::fs::remove_file(path).unwrap();
        std::fs::write(path, &contents).unwrap();
    };
    let wait_for_clean_poll = |server: &Server| {
        let deadline = Instant::now() + Duration::from_secs(POLL + 10);
        while !server.health()["last_poll_error"].is_null() {
            assert!(Instant::now() < deadline, "no clean poll: {}", server.health());
            std::thread::sleep(Duration::from_millis(20));
        }
    };

    // A FIFO nobody writes to: refused at once, not waited on.
    mkfifo(&pointer);
    let health = wait_for_poll_error(&server, "_search/current.json: not a regular file");
    assert_eq!(health["index_hash"], good.as_str());
    restore(&pointer);
    wait_for_clean_poll(&server);

    // A link to /dev/zero: refused, not read until memory runs out.
    std::fs::remove_file(&pointer).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &pointer).unwrap();
    wait_for_poll_error(&server, "_search/current.json: not a regular file");
    restore(&pointer);

    // Later polls still work: the next build is put in force.
    rename_a_service(&input, "Argyle St Lunch Club", "Argyle Street Lunch Club");
    build(&input, work.path());
    let next = published_hash(work.path());
    assert_ne!(next, good);
    wait_for_index(&server, &next, Duration::from_secs(POLL + 5));

    // And with a FIFO there again, SIGTERM ends it promptly.
    mkfifo(&pointer);
    wait_for_poll_error(&server, "not a regular file");
    let started = Instant::now();
    let status = server.terminate();
    assert_eq!(status.code(), Some(0), "{:?}", server.log());
    assert!(started.elapsed() < Duration::from_secs(10), "SIGTERM took {:?}", started.elapsed());
}

#[test]
fn a_fifo_at_the_pointer_of_a_file_store_never_hangs_the_follower() {
    let (work, _, _, store, to) = published_to_a_file_store();
    let cache = work.path().join("cache");
    let mut server = Server::start_args(&["--from", &to, "--cache", cache.to_str().unwrap(), "--poll", "1"], &[]);
    let good = published_hash(work.path());
    wait_for_index(&server, &good, Duration::from_secs(POLL + 5));

    let pointer = store.join("_search/current.json");
    std::fs::remove_file(&pointer).unwrap();
    assert!(std::process::Command::new("mkfifo").arg(&pointer).status().unwrap().success());
    let health = wait_for_poll_error(&server, "_search/current.json: not a regular file");
    assert_eq!(health["index_hash"], good.as_str());
    let started = Instant::now();
    let status = server.terminate();
    assert_eq!(status.code(), Some(0), "{:?}", server.log());
    assert!(started.elapsed() < Duration::from_secs(10), "SIGTERM took {:?}", started.elapsed());
}
