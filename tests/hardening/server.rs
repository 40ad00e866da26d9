//! The real `svcdir-search` binary under faults (issue 6, "The search server"): limits that
//! hyper enforces before our code runs, ten new indexes in a row on SIGHUP with zero failed
//! requests under load and each shown by `/healthz` (issue 14), a bad index on SIGHUP kept
//! out, and SIGTERM draining the requests in flight. Loopback only; every wait is bounded.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use svcdir::index::SearchIndex;
use svcdir::model::Directory;

use svcdir::test_support::directory::{directory, publication};
use svcdir_testkit::search_server::Server;

const QUERY: &str = "/api/v4/services/?postcode=G2+1AL&page_size=5";
/// Name of the first answer to [`QUERY`] in the fixture directory.
const OLD_NAME: &str = "Drop-in Centre";
/// SIGHUPs in a row in the reload test.
const RELOADS: usize = 10;

fn write_index(path: &Path, dir: &Directory) {
    // `write` goes through a temporary file and a rename: a reader sees the old file or the
    // new one, never half of one.
    SearchIndex::build(dir, &publication()).write(path).expect("index written");
}

/// The first answer to [`QUERY`] after reload `n` (0: the fixture itself).
fn name_of(n: usize) -> String {
    if n == 0 { OLD_NAME.to_owned() } else { format!("{OLD_NAME} (reload {n})") }
}

/// Which reload an answer's first name comes from.
fn reload_of(name: &str) -> usize {
    (0..=RELOADS).find(|&n| name_of(n) == name).unwrap_or_else(|| panic!("unexpected first answer {name:?}"))
}

/// Published services after reload `n`: every other reload drops the last one.
fn services_of(n: usize) -> usize {
    directory().services.len() - n % 2
}

/// The directory of reload `n`: the fixture with [`QUERY`]'s first answer renamed and, for
/// odd `n`, its last service (the highest id, so no other index moves) gone.
fn reloaded_directory(n: usize) -> Directory {
    let mut dir = directory();
    while dir.services.len() > services_of(n) {
        let gone = svcdir::model::ServiceIx::new(dir.services.len() - 1);
        let service = dir.services.pop().expect("a service");
        assert_ne!(service.name, OLD_NAME);
        for organisation in &mut dir.organisations {
            organisation.services.retain(|&s| s != gone);
        }
    }
    dir.services.iter_mut().find(|s| s.name == OLD_NAME).expect("fixture service").name = name_of(n);
    dir
}

/// Sends raw bytes on a fresh connection and reads the whole answer (the server closes).
fn raw(address: &str, bytes: &[u8]) -> String {
    let mut stream = TcpStream::connect(address).expect("connects");
    stream.set_read_timeout(Some(Duration::from_secs(20))).expect("timeout");
    // The server may answer and close before it has read everything: ignore a reset here.
    let _ = stream.write_all(bytes);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

fn status_of(answer: &str) -> &str {
    answer.split(' ').nth(1).unwrap_or("")
}

fn first_name(body: &[u8]) -> String {
    let json: serde_json::Value = serde_json::from_slice(body).expect("JSON");
    json["data"][0]["name"].as_str().expect("a name").to_owned()
}

#[test]
fn the_binary_refuses_oversized_requests_and_keeps_serving() {
    let work = tempfile::tempdir().expect("temp dir");
    let index = work.path().join("search.idx");
    write_index(&index, &directory());
    let mut server = Server::start(&index, &[]);
    let ok = format!("GET {QUERY} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");

    // Our limit: a JSON 414.
    let long = format!("GET {QUERY}&q={} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "a".repeat(9000));
    let answer = raw(&server.address, long.as_bytes());
    assert_eq!(status_of(&answer), "414", "{answer}");
    assert!(answer.ends_with(r#"{"detail":"Request-URI too long."}"#), "{answer}");
    // Our limit: a JSON 431.
    let padded =
        format!("GET {QUERY} HTTP/1.1\r\nHost: x\r\nX-Pad: {}\r\nConnection: close\r\n\r\n", "p".repeat(20_000));
    let answer = raw(&server.address, padded.as_bytes());
    assert_eq!(status_of(&answer), "431", "{answer}");
    assert!(answer.ends_with(r#"{"detail":"Request header fields too large."}"#), "{answer}");
    // hyper's limits, before any of our code: more than 100 headers, or a head larger than
    // its read buffer (about 400 KiB), get a bodiless 431 and a closed connection.
    let many: String = (0..101).map(|i| format!("X-H{i}: v\r\n")).collect();
    let answer = raw(&server.address, format!("GET {QUERY} HTTP/1.1\r\nHost: x\r\n{many}\r\n").as_bytes());
    assert_eq!(status_of(&answer), "431", "{answer}");
    let huge = format!("GET {QUERY} HTTP/1.1\r\nHost: x\r\nX-Pad: {}\r\n\r\n", "p".repeat(600_000));
    let answer = raw(&server.address, huge.as_bytes());
    assert!(matches!(status_of(&answer), "431" | ""), "refused or closed: {answer:.200}");
    // A URI hyper cannot even represent (the http crate's 64 KiB limit): refused, not a crash.
    let giant = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(70_000));
    let answer = raw(&server.address, giant.as_bytes());
    assert!(matches!(status_of(&answer), "414" | "431" | ""), "refused or closed: {answer:.200}");
    // Garbage instead of HTTP.
    let answer = raw(&server.address, b"\x00\xff\r\n\r\nnot http at all\r\n\r\n");
    assert!(matches!(status_of(&answer), "400" | ""), "{answer:.200}");

    // Still serving, and the process is the same one.
    let answer = raw(&server.address, ok.as_bytes());
    assert_eq!(status_of(&answer), "200", "{answer:.300}");
    assert!(matches!(server.child.try_wait(), Ok(None)));
    server.signal("-TERM");
    assert_eq!(server.wait_exit().code(), Some(0));
}

/// What one client of the load loop saw.
#[derive(Default)]
struct Seen {
    ok: usize,
    failures: Vec<String>,
    /// First names in the order of the answers.
    names: Vec<String>,
}

/// One keep-alive client: GET [`QUERY`] until `stop`, at most `limit` times; `answered`
/// counts its answers as they come, for the test to wait on.
async fn client(address: String, stop: Arc<AtomicBool>, limit: usize, answered: Arc<AtomicUsize>) -> Seen {
    let mut seen = Seen::default();
    let stream = tokio::net::TcpStream::connect(&address).await.expect("connects");
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await.expect("handshake");
    tokio::spawn(connection);
    for _ in 0..limit {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let request =
            hyper::Request::builder().uri(QUERY).header("host", "x").body(Empty::<Bytes>::new()).expect("req");
        match sender.send_request(request).await {
            Ok(response) => {
                let status = response.status().as_u16();
                match response.into_body().collect().await {
                    Ok(body) if status == 200 => {
                        seen.ok += 1;
                        seen.names.push(first_name(&body.to_bytes()));
                        answered.fetch_add(1, Ordering::SeqCst);
                    }
                    Ok(_) => seen.failures.push(format!("status {status}")),
                    Err(err) => seen.failures.push(format!("body: {err}")),
                }
            }
            Err(err) => {
                seen.failures.push(format!("request: {err}"));
                break;
            }
        }
    }
    seen
}

#[test]
fn ten_sighups_under_load_swap_in_each_new_index_with_zero_failed_requests() {
    let work = tempfile::tempdir().expect("temp dir");
    let index = work.path().join("search.idx");
    write_index(&index, &directory());
    let hash_of_file = || svcdir::write::content_hash(&std::fs::read(&index).expect("read the index"));
    let mut server = Server::start(&index, &[]);
    let health = server.health();
    assert_eq!((health["status"].as_str(), health["services"].as_u64()), (Some("ok"), Some(15)), "{health}");
    assert_eq!(health["index_hash"], hash_of_file(), "{health}");
    assert!(health["uptime_seconds"].is_u64(), "{health}");

    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let stop = Arc::new(AtomicBool::new(false));
    let answered: Vec<Arc<AtomicUsize>> = (0..4).map(|_| Arc::default()).collect();
    let clients: Vec<_> = answered
        .iter()
        .map(|count| runtime.spawn(client(server.address.clone(), stop.clone(), 100_000, count.clone())))
        .collect();
    // Every client answered by the first index before the first SIGHUP.
    wait_for_answers(&answered, 1);

    let mut hashes = vec![health["index_hash"].as_str().expect("a hash").to_owned()];
    for n in 1..=RELOADS {
        write_index(&index, &reloaded_directory(n));
        server.signal("-HUP");
        let event = server.wait_for_events(0, "reloaded the index", n);
        assert_eq!(event["services"].as_u64(), Some(services_of(n) as u64), "{event}");
        // Shown by /healthz at once: the number of services and the hash of the new file.
        let health = server.health();
        assert_eq!(health["services"].as_u64(), Some(services_of(n) as u64), "reload {n}: {health}");
        assert_eq!(health["index_hash"], hash_of_file(), "reload {n}: {health}");
        assert_eq!(health["index_hash"], event["index_hash"]);
        assert!(!hashes.iter().any(|h| health["index_hash"] == h.as_str()), "reload {n}: a new hash");
        hashes.push(health["index_hash"].as_str().expect("a hash").to_owned());
        // And answered: new requests get the new data.
        let (status, _, body) = server.get(QUERY);
        assert_eq!((status, first_name(&body)), (200, name_of(n)));
        // Load between the reloads: each client answered again.
        wait_for_answers(&answered, 1);
    }
    let last = server.health();

    // A bad file on SIGHUP: an error in the log, and the index in force is kept and shown.
    // Put in place by a rename, as every index is (the index in force is read from a memory
    // map of its file: README, "Publishing a rebuild").
    let bad = work.path().join("bad.idx.tmp");
    std::fs::write(&bad, b"<html>not an index</html>").expect("write");
    std::fs::rename(&bad, &index).expect("rename");
    server.signal("-HUP");
    let event = server.wait_for_events(0, "reload failed, keeping the index in force", 1);
    assert!(event["error"].as_str().is_some_and(|e| e.contains("not a svcdir search index")), "{event}");
    std::fs::remove_file(&index).expect("remove");
    server.signal("-HUP");
    let event = server.wait_for_events(0, "reload failed, keeping the index in force", 2);
    assert!(event["error"].as_str().is_some_and(|e| e.contains("does not exist")), "{event}");
    let health = server.health();
    assert_eq!((&health["services"], &health["index_hash"]), (&last["services"], &last["index_hash"]), "{health}");
    let (status, _, body) = server.get(QUERY);
    assert_eq!((status, first_name(&body)), (200, name_of(RELOADS)), "the old index still answers");
    // Two more answers each: the second was asked after this point, of the last index.
    wait_for_answers(&answered, 2);
    stop.store(true, Ordering::SeqCst);

    let seen: Vec<Seen> = runtime.block_on(async { futures_join(clients).await }).into_iter().collect();
    let total: usize = seen.iter().map(|s| s.ok).sum();
    let failures: Vec<&String> = seen.iter().flat_map(|s| &s.failures).collect();
    assert!(failures.is_empty(), "{failures:?}");
    assert!(total >= 40, "the load loop ran: {total} requests");
    eprintln!("{RELOADS} reloads and 2 refused ones under load: {total} requests, 0 failed");
    for client in &seen {
        // Each request is answered by one index, and a client never goes back to an older
        // one: its answers come from reloads 0, ..., 10 in order, never from the bad files.
        let reloads: Vec<usize> = client.names.iter().map(|n| reload_of(n)).collect();
        assert_eq!(reloads.first(), Some(&0), "old answers before the first SIGHUP");
        assert_eq!(reloads.last(), Some(&RELOADS), "the last index answers at the end");
        assert!(reloads.windows(2).all(|w| w[0] <= w[1]), "never back to an older index: {reloads:?}");
    }

    // The reloads as metrics: counted by outcome, and one info series, the index in force.
    let metrics = server.scrape();
    assert_eq!(metrics.value("svcdir_index_reloads_total", &[("outcome", "ok")]), RELOADS as f64);
    assert_eq!(metrics.value("svcdir_index_reloads_total", &[("outcome", "failed")]), 2.0);
    let info = metrics.find("svcdir_index_info", &[]);
    assert_eq!(info.len(), 1, "{}", metrics.text);
    assert_eq!(Some(info[0].labels.get("index_hash").unwrap_or("")), last["index_hash"].as_str());
    assert_eq!(metrics.value("svcdir_index_services", &[]), services_of(RELOADS) as f64);

    assert!(matches!(server.child.try_wait(), Ok(None)), "SIGHUP did not end the process");
    server.signal("-TERM");
    assert_eq!(server.wait_exit().code(), Some(0));
}

/// Waits until every load client has had `more` answers since now (at most 30 s).
fn wait_for_answers(answered: &[Arc<AtomicUsize>], more: usize) {
    let since: Vec<usize> = answered.iter().map(|count| count.load(Ordering::SeqCst)).collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    while answered.iter().zip(&since).any(|(count, &since)| count.load(Ordering::SeqCst) < since + more) {
        assert!(Instant::now() < deadline, "the load clients stopped getting answers");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Sockets the process `pid` holds open (its listener and the connections it accepted).
fn sockets_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|fds| {
            fds.filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
                .filter(|target| target.to_string_lossy().starts_with("socket:"))
                .count()
        })
        .unwrap_or(0)
}

/// Whether the server listening on `address` has at least `connections` connections open
/// and has read every byte sent on them (Linux's /proc/net/tcp: the receive queue of each
/// established socket whose local port is the server's).
fn every_head_read(address: &str, connections: usize) -> bool {
    let port = address.rsplit(':').next().and_then(|port| port.parse::<u16>().ok()).expect("a port");
    let Ok(table) = std::fs::read_to_string("/proc/net/tcp") else { return true };
    let local = format!(":{port:04X}");
    let queues: Vec<&str> = table
        .lines()
        .skip(1)
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .filter(|fields| fields.len() > 4 && fields[1].ends_with(&local) && fields[3] == "01")
        .map(|fields| fields[4])
        .collect();
    queues.len() >= connections && queues.iter().all(|queues| queues.ends_with(":00000000"))
}

async fn futures_join(handles: Vec<tokio::task::JoinHandle<Seen>>) -> Vec<Seen> {
    let mut all = Vec::new();
    for handle in handles {
        all.push(tokio::time::timeout(Duration::from_secs(60), handle).await.expect("client finishes").expect("join"));
    }
    all
}

#[test]
fn sigterm_lets_the_requests_in_flight_finish_then_exits_0() {
    let work = tempfile::tempdir().expect("temp dir");
    let index: PathBuf = work.path().join("search.idx");
    write_index(&index, &directory());
    let mut server = Server::start(&index, &[]);
    let sockets_before = sockets_of(server.child.id());

    // 32 requests in flight: each head sent but its last line held back, so that the server
    // has accepted every one of them when SIGTERM arrives.
    let mut streams: Vec<TcpStream> = (0..32)
        .map(|_| {
            let mut stream = TcpStream::connect(&server.address).expect("connects");
            stream.set_read_timeout(Some(Duration::from_secs(20))).expect("timeout");
            stream.write_all(format!("GET {QUERY} HTTP/1.1\r\nHost: x\r\n").as_bytes()).expect("write");
            stream
        })
        .collect();
    // Accepted: the server process holds a socket for each (Linux's /proc).
    let deadline = Instant::now() + Duration::from_secs(20);
    while sockets_of(server.child.id()) < sockets_before + streams.len() {
        assert!(Instant::now() < deadline, "the server did not accept the 32 connections");
        std::thread::sleep(Duration::from_millis(2));
    }
    // In flight: the server has read what each sent (its receive queues are empty). A
    // connection accepted but not yet read from is closed at shutdown like an idle one, as
    // hyper cannot tell it from an idle one.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !every_head_read(&server.address, streams.len()) {
        assert!(Instant::now() < deadline, "the server did not read the 32 request heads");
        std::thread::sleep(Duration::from_millis(2));
    }
    server.signal("-TERM");
    // The listener closes at once: from then on the server is draining.
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(&server.address).is_ok() {
        assert!(Instant::now() < deadline, "still accepting after SIGTERM");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(matches!(server.child.try_wait(), Ok(None)), "waits for the requests in flight");
    for stream in &mut streams {
        stream.write_all(b"\r\n").expect("finish the request");
    }
    for stream in &mut streams {
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).expect("a whole answer");
        let answer = String::from_utf8_lossy(&answer);
        assert_eq!(status_of(&answer), "200", "{answer:.300}");
        assert!(answer.to_ascii_lowercase().contains("connection: close"), "{answer:.300}");
        assert!(answer.contains(OLD_NAME));
    }
    assert_eq!(server.wait_exit().code(), Some(0), "{:?}", server.log());
    assert!(server.events().iter().any(|e| e["message"] == "stopped"), "{:?}", server.log());
}

/// `eprintln!` panics when stderr cannot be written; in a handler that drops the connection
/// with the request unanswered. With its log on a full disk (`/dev/full`), the server still
/// starts, answers every request on kept-alive connections, and exits 0 on SIGTERM.
#[test]
fn a_log_that_cannot_be_written_loses_no_request() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        svcdir::test_support::skipped("no /dev/full here");
        return;
    };
    let work = tempfile::tempdir().expect("temp dir");
    let index: PathBuf = work.path().join("search.idx");
    write_index(&index, &directory());
    // Its log cannot say where it listens: pick a port first, and another if a parallel
    // test took it before the server bound it (the server then exits at once).
    let start = |address: std::net::SocketAddr| {
        let mut child = svcdir_testkit::KillOnDrop(
            std::process::Command::new(env!("CARGO_BIN_EXE_svcdir-search"))
                .args(["--index", index.to_str().expect("utf-8"), "--listen", &address.to_string()])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(full.try_clone().expect("/dev/full"))
                .spawn()
                .expect("starts"),
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(address).is_err() {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!("exited with {status}: port {} in use?", address.port()));
            }
            assert!(Instant::now() < deadline, "server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok((child, address))
    };
    let (mut child, address) =
        svcdir_testkit::process::retry_port(|port| start(std::net::SocketAddr::from(([127, 0, 0, 1], port))));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let seen = runtime.block_on(async {
        let clients = (0..4)
            .map(|_| tokio::spawn(client(address.to_string(), Arc::new(AtomicBool::new(false)), 50, Arc::default())));
        futures_join(clients.collect()).await
    });
    for s in &seen {
        assert_eq!((s.ok, &s.failures), (50, &Vec::<String>::new()));
    }
    // Errors and HTML views log too.
    assert_eq!(
        status_of(&raw(&address.to_string(), b"GET /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")),
        "404"
    );
    let _ = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let status = child.wait().expect("exits");
    assert_eq!(status.code(), Some(0));
}
