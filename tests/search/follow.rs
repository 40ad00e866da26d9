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

/// A fake S3 store on loopback serving the files of `public` under `/bucket/`, whose pointer
/// is answered with a 1 TiB `Content-Length` once `huge` is set. Written on the socket: moto
/// cannot give that answer, and hyper refuses to send a length its body does not have.
fn fake_store(public: &Path, huge: Arc<AtomicBool>) -> u16 {
    use std::io::{BufRead as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let public = public.to_owned();
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            let (public, huge) = (public.clone(), huge.clone());
            std::thread::spawn(move || {
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
                        head.push(line);
                    }
                    let target = head[0].split_whitespace().nth(1).unwrap_or("").to_owned();
                    let path = target.split('?').next().unwrap().strip_prefix("/bucket/").unwrap_or("").to_owned();
                    let (status, length, body) = if path == "_search/current.json" && huge.load(Ordering::SeqCst) {
                        ("200 OK", 1u64 << 40, b"{".to_vec())
                    } else {
                        match std::fs::read(public.join(&path)) {
                            Ok(bytes) => ("200 OK", bytes.len() as u64, bytes),
                            Err(_) => ("404 Not Found", 0, Vec::new()),
                        }
                    };
                    let head = format!(
                        "HTTP/1.1 {status}\r\ncontent-length: {length}\r\netag: \"{}\"\r\n\
                         last-modified: Sat, 05 Dec 2026 12:00:00 GMT\r\n\r\n",
                        body.len()
                    );
                    if stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(&body)).is_err() {
                        return;
                    }
                    if length != body.len() as u64 {
                        // Some of the promised bytes (a reader that reads on gets its second
                        // chunk), then the end of the connection.
                        for _ in 0..128 {
                            if stream.write_all(&[b' '; 64 << 10]).is_err() {
                                return;
                            }
                        }
                        return;
                    }
                }
            });
        }
    });
    port
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
    let huge = Arc::new(AtomicBool::new(false));
    let port = fake_store(&work.path().join("public"), huge.clone());
    let env = svcdir_testkit::s3::S3Server::env_for(&format!("http://127.0.0.1:{port}"));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let cache = work.path().join("cache");
    let args = ["--from", "s3://bucket", "--cache", cache.to_str().unwrap(), "--poll", "1"];
    let mut server = Server::start_args(&args, &env);
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
    huge.store(true, Ordering::SeqCst);
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
