//! Replicas (issue 6): two `svcdir-search` processes behind nginx with the configuration of
//! `svcdir nginx-config --search A --search B`; one is killed (SIGKILL) under load and no
//! client request fails. Loopback only; the load loop is bounded in time.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;

use crate::support;

/// The search requests of the load loop: v4 and v3, JSON and HTML, several pages.
const TARGETS: [&str; 5] = [
    "/api/v4/services/?postcode=G2+1AL",
    "/api/v4/services/?postcode=G2+1AL&page=2&page_size=1",
    "/api/v3/search/?postcode=G2+1AL",
    "/api/v3/search?postcode=AB11+6BA&q=caf%C3%A9",
    "/api/v4/services/?postcode=G2+1AL&format=api",
];
const CLIENTS: usize = 4;
const LOAD: Duration = Duration::from_secs(3);
/// When, after the load starts, one replica is killed.
const KILL_AT: Duration = Duration::from_millis(1500);

/// A `svcdir-search` on a port of its own choosing (`--listen 127.0.0.1:0`); killed on drop.
struct Replica {
    child: svcdir_testkit::KillOnDrop,
    address: String,
}

impl Replica {
    fn start(index: &Path, log: PathBuf) -> Replica {
        Replica::spawn(&["--index".as_ref(), index.as_os_str()], &[], log)
    }

    /// A replica that follows the publication at `source` (`--from`), polling every
    /// `poll` seconds, its fetched indexes in `cache`.
    fn follow(source: &str, env: &[(&'static str, String)], cache: &Path, poll: u64, log: PathBuf) -> Replica {
        let poll = poll.to_string();
        let args = [
            "--from".as_ref(),
            source.as_ref(),
            "--cache".as_ref(),
            cache.as_os_str(),
            "--poll".as_ref(),
            poll.as_ref(),
        ];
        Replica::spawn(&args, env, log)
    }

    fn spawn(args: &[&std::ffi::OsStr], env: &[(&'static str, String)], log: PathBuf) -> Replica {
        let file = std::fs::File::create(&log).expect("log file");
        let child = Command::new(env!("CARGO_BIN_EXE_svcdir-search"))
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .args(["--listen", "127.0.0.1:0", "--log-format", "text"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .expect("svcdir-search starts");
        let mut replica = Replica { child: svcdir_testkit::KillOnDrop(child), address: String::new() };
        let deadline = Instant::now() + Duration::from_secs(20);
        while replica.address.is_empty() {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if let Some(rest) = text.split("listening on http://").nth(1) {
                replica.address = rest.lines().next().unwrap_or("").trim().to_owned();
                break;
            }
            if let Ok(Some(status)) = replica.child.try_wait() {
                panic!("svcdir-search exited with {status}:\n{text}");
            }
            assert!(Instant::now() < deadline, "svcdir-search does not listen after 20 s:\n{text}");
            std::thread::sleep(Duration::from_millis(10));
        }
        replica
    }

    fn port(&self) -> u16 {
        self.address.rsplit(':').next().and_then(|p| p.parse().ok()).expect("port")
    }

    /// SIGKILL, and reaped.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What one client saw.
#[derive(Default)]
struct Seen {
    ok: usize,
    ok_after_kill: usize,
    failures: Vec<String>,
}

/// One keep-alive client to nginx: the targets in turn until `stop`; every answer must be 200
/// with exactly the body the replicas gave directly. A broken connection is a failure, and
/// the client reconnects (and after an announced `Connection: close`, which is no failure).
async fn client(
    port: u16,
    first: usize,
    expected: Arc<Vec<Vec<u8>>>,
    stop: Arc<AtomicBool>,
    killed: Arc<AtomicBool>,
) -> Seen {
    let mut seen = Seen::default();
    let mut n = first;
    'connect: while !stop.load(Ordering::SeqCst) {
        let stream = match tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
            Ok(stream) => stream,
            Err(e) => {
                seen.failures.push(format!("connect: {e}"));
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let (mut sender, connection) =
            match hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await {
                Ok(pair) => pair,
                Err(e) => {
                    seen.failures.push(format!("handshake: {e}"));
                    continue;
                }
            };
        tokio::spawn(connection);
        while !stop.load(Ordering::SeqCst) {
            let i = n % TARGETS.len();
            n += 1;
            let target = TARGETS[i];
            let request = hyper::Request::get(target)
                .header("host", format!("127.0.0.1:{port}"))
                .body(Empty::<Bytes>::new())
                .expect("request");
            let after_kill = killed.load(Ordering::SeqCst);
            let response = match sender.try_send_request(request).await {
                Ok(response) => response,
                // The connection closed before the request went out (a kept-alive
                // connection closing as it was reused): nothing was sent, so, as HTTP
                // clients do (RFC 9112, 9.3.1), send it again on a new connection.
                Err(e) if e.message().is_some() => {
                    n -= 1;
                    continue 'connect;
                }
                Err(e) => {
                    seen.failures.push(format!("{target}: {}", e.into_error()));
                    continue 'connect;
                }
            };
            let status = response.status().as_u16();
            // nginx closes a client connection after `keepalive_requests` (1000) answers,
            // saying so with `Connection: close`: a well-behaved client then reconnects.
            let closing = response
                .headers()
                .get(hyper::header::CONNECTION)
                .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"close"));
            let body = match response.into_body().collect().await {
                Ok(body) => body.to_bytes(),
                Err(e) => {
                    seen.failures.push(format!("{target}: body: {e}"));
                    continue 'connect;
                }
            };
            if status != 200 {
                seen.failures.push(format!("{target}: {status} {}", String::from_utf8_lossy(&body)));
            } else if body[..] != expected[i][..] {
                seen.failures.push(format!("{target}: unexpected body {}", String::from_utf8_lossy(&body)));
            } else {
                seen.ok += 1;
                if after_kill {
                    seen.ok_after_kill += 1;
                }
            }
            if closing {
                continue 'connect;
            }
        }
    }
    seen
}

/// Two replicas behind the generated nginx configuration; one is killed with SIGKILL half-way
/// through 3 s of load from 4 keep-alive clients: every request is answered 200 with the
/// right body, before and after the kill.
#[test]
fn a_replica_killed_under_load_loses_no_request() {
    let Some(nginx) = support::nginx_binary() else {
        svcdir::test_support::skipped("nginx is not installed (.ci/run installs it)");
        return;
    };
    let build = support::small_build();
    let mut a = Replica::start(&build.index, build.dir().join("replica-a.log"));
    let b = Replica::start(&build.index, build.dir().join("replica-b.log"));

    // The reference answers, from each replica directly: the same for both.
    let expected: Vec<Vec<u8>> = TARGETS
        .iter()
        .map(|target| {
            let from_a = support::request(a.port(), "GET", target, &[]);
            let from_b = support::request(b.port(), "GET", target, &[]);
            assert_eq!(from_a.status, 200, "{target}: {}", from_a.text());
            assert_eq!(from_a.body, from_b.body, "{target}: the replicas disagree");
            from_a.body
        })
        .collect();
    let expected = Arc::new(expected);

    let d = support::start_nginx(&nginx, build.clone(), false, &[a.address.clone(), b.address.clone()]);
    let port = d.port;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let (seen, kill_after) = runtime.block_on(async {
        let stop = Arc::new(AtomicBool::new(false));
        let killed = Arc::new(AtomicBool::new(false));
        let tasks: Vec<_> = (0..CLIENTS)
            .map(|c| tokio::spawn(client(port, c, expected.clone(), stop.clone(), killed.clone())))
            .collect();
        let started = Instant::now();
        // Deliberate: load of a fixed length, a replica killed in its middle (not a wait).
        tokio::time::sleep(KILL_AT).await;
        // Both blocking calls are short: a signal and a wait for an exited child.
        a.kill();
        killed.store(true, Ordering::SeqCst);
        let kill_after = started.elapsed();
        tokio::time::sleep(LOAD.saturating_sub(kill_after)).await;
        stop.store(true, Ordering::SeqCst);
        let mut all = Vec::new();
        for task in tasks {
            all.push(tokio::time::timeout(Duration::from_secs(30), task).await.expect("client stops").expect("client"));
        }
        (all, kill_after)
    });
    let ok: usize = seen.iter().map(|s| s.ok).sum();
    let ok_after: usize = seen.iter().map(|s| s.ok_after_kill).sum();
    let failures: Vec<&String> = seen.iter().flat_map(|s| &s.failures).collect();
    eprintln!(
        "replicas: {ok} answers ({ok_after} after the kill at {:.2} s), {} failures",
        kill_after.as_secs_f64(),
        failures.len()
    );
    assert!(failures.is_empty(), "{} failed requests, first: {:?}", failures.len(), &failures[..failures.len().min(5)]);
    assert!(ok - ok_after > 0, "no answer before the kill");
    assert!(ok_after > 0, "no answer after the kill");
    // The survivor is still the one answering.
    let r = d.get(TARGETS[0]);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.body, expected[0]);
}

/// The poll interval of the replicas that follow a publication, in seconds.
const POLL: u64 = 2;
/// The load of `wrk` while a new publication goes out.
const WRK_SECONDS: u64 = 30;
/// Through nginx: the searches (answered by the replicas) and a static file.
const WRK_PATHS: [&str; 4] = [
    "/api/v4/services/?postcode=G2+1AL&page_size=50",
    "/api/v3/search/?postcode=G2+1AL",
    "/api/v4/services/?postcode=G2+1AL&q=lunch",
    "/api/v4/categories/",
];

/// `/healthz` of a replica: status and body.
fn health(replica: &Replica) -> (u16, serde_json::Value) {
    let r = support::request(replica.port(), "GET", "/healthz", &[]);
    (r.status, serde_json::from_slice(&r.body).unwrap_or_default())
}

/// Waits until every replica serves `hash`; the time from `since` at which the last did.
fn wait_all(replicas: &[&Replica], hash: &str, since: Instant, within: Duration) -> Duration {
    let mut last = Duration::ZERO;
    for replica in replicas {
        loop {
            let (status, body) = health(replica);
            if status == 200 && body["index_hash"] == hash {
                last = last.max(since.elapsed());
                break;
            }
            assert!(since.elapsed() < within, "{} not on {hash} after {within:?}: {status} {body}", replica.address);
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    last
}

/// Waits until every replica answers 200 and names a failed poll.
fn wait_failed_poll(replicas: &[&Replica], within: Duration) {
    let since = Instant::now();
    for replica in replicas {
        loop {
            let (status, body) = health(replica);
            assert_eq!(status, 200, "{} keeps its index: {body}", replica.address);
            if body["last_poll_error"].is_string() {
                break;
            }
            assert!(since.elapsed() < within, "{}: no failed poll after {within:?}: {body}", replica.address);
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The small fixture with one service removed, one renamed and one added.
fn rebuilt_dataset(dir: &Path) -> PathBuf {
    let input = dir.join("input-next");
    svcdir_testkit::dataset::copy_dir(&support::repo().join("tests/fixtures/small"), &input);
    let services = input.join("services.jsonl");
    let text = std::fs::read_to_string(&services).expect("services");
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| !l.contains(r#""name": "Glasgow Befriending Line""#))
        .map(|l| l.replace(r#""name": "Argyle St Lunch Club""#, r#""name": "Argyle Street Lunch Club""#))
        .collect();
    lines.push(
        r#"{"id": "5e000000-0000-4000-8000-000000000009", "organisation_id": "2c5f3b8e-1d44-4c1a-9f0e-6a7b8c9d0e1f", "name": "Govan Community Larder", "categories": ["community-cafe"], "service_areas": ["S12000046"], "last_updated": "2024-01-01T00:00:00Z"}"#
            .to_owned(),
    );
    std::fs::write(&services, lines.join("\n") + "\n").expect("write services");
    input
}

/// Three `svcdir-search --from s3://...` replicas (moto) behind the generated nginx
/// configuration, under `wrk` for 30 s while a rebuilt dataset is published: every replica
/// serves the new index within the poll interval plus 5 s, with no socket error and no
/// non-2xx answer; then the store is stopped for 10 s and started again empty, a replica
/// started meanwhile answers 503 until the tree is published again, and all of them keep
/// answering from the index in force throughout.
#[test]
fn replicas_follow_a_publication_through_nginx_under_load_and_a_store_outage() {
    let Some(nginx) = support::nginx_binary() else {
        svcdir::test_support::skipped("nginx is not installed (.ci/run installs it)");
        return;
    };
    let Some(moto) = svcdir_testkit::s3::moto_binary() else {
        svcdir::test_support::skipped("moto_server is not installed (.ci/run installs it)");
        return;
    };
    let Some(wrk) = ["/usr/bin/wrk", "/usr/local/bin/wrk"].into_iter().map(PathBuf::from).find(|p| p.is_file()) else {
        svcdir::test_support::skipped("wrk is not installed (.ci/run installs it)");
        return;
    };
    use svcdir_testkit::s3::{S3Server, publish};
    let s3 = S3Server::start(&moto, &[]);
    let port = s3.port;
    let bucket = s3.bucket("follow");
    let env = S3Server::env_for(&s3.endpoint());
    let to = format!("s3://{bucket}/site");
    let build = Arc::new(support::Build::new("small", support::BASE_URL));
    let published = |build: &support::Build| {
        let output = publish(&build.public, &to, &env, &[]);
        assert!(output.status.success(), "svcdir publish failed:\n{}", String::from_utf8_lossy(&output.stderr));
        build.json("_manifest.json")["index"].as_str().expect("index").to_owned()
    };
    let first = published(&build);
    let replicas: Vec<Replica> = (0..3)
        .map(|i| {
            let cache = build.dir().join(format!("cache-{i}"));
            Replica::follow(&to, &env, &cache, POLL, build.dir().join(format!("follow-{i}.log")))
        })
        .collect();
    let all: Vec<&Replica> = replicas.iter().collect();
    wait_all(&all, &first, Instant::now(), Duration::from_secs(POLL + 10));
    let addresses: Vec<String> = replicas.iter().map(|r| r.address.clone()).collect();
    let d = support::start_nginx(&nginx, build.clone(), false, &addresses);

    // wrk through nginx, the paths in turn.
    let script = build.dir().join("paths.lua");
    let paths = WRK_PATHS.iter().map(|p| format!("{p:?}")).collect::<Vec<_>>().join(", ");
    std::fs::write(
        &script,
        format!(
            "local paths = {{{paths}}}\nlocal i = 0\nrequest = function()\n  i = i % #paths + 1\n  return wrk.format(\"GET\", paths[i])\nend\n"
        ),
    )
    .expect("script");
    let started = Instant::now();
    let load = Command::new(&wrk)
        .args(["-t", "2", "-c", "8", "-d", &format!("{WRK_SECONDS}s"), "-s"])
        .arg(&script)
        .arg(format!("http://127.0.0.1:{}", d.port))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("wrk runs");

    // Deliberate: 3 s of load on the old publication (a span of load, not a wait for
    // something), then a rebuilt dataset, published while the load runs.
    std::thread::sleep(Duration::from_secs(3));
    build.rebuild_from(&rebuilt_dataset(build.dir()), support::BASE_URL);
    let next = published(&build);
    assert_ne!(next, first);
    let publish_end = Instant::now();
    let took = wait_all(&all, &next, publish_end, Duration::from_secs(POLL + 5));
    let output = load.wait_with_output().expect("wrk ends");
    let report = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "wrk failed: {report}{}", String::from_utf8_lossy(&output.stderr));
    assert!(started.elapsed() >= Duration::from_secs(WRK_SECONDS));
    eprintln!("all three replicas on the new index {:.2} s after the publish ended\n{report}", took.as_secs_f64());
    assert!(!report.contains("Socket errors"), "{report}");
    assert!(!report.contains("Non-2xx"), "{report}");
    let requests: u64 = report
        .lines()
        .find_map(|l| l.trim().split_once(" requests in ").map(|(n, _)| n.trim().parse().expect("count")))
        .expect("wrk's count");
    assert!(requests > 1000, "{report}");

    // Through nginx, the searches show the rename and the addition, not the removed one. The
    // load left the old answers of WRK_PATHS in nginx's search cache (kept for their max-age,
    // 60 s), so ask for a query it has not seen: the replicas answer it.
    let found = d.get(&format!("{}&page=1", WRK_PATHS[0]));
    assert_eq!(found.status, 200);
    let names = found.text();
    assert!(names.contains("Argyle Street Lunch Club") && names.contains("Govan Community Larder"), "{names}");
    assert!(!names.contains("Glasgow Befriending Line") && !names.contains("Argyle St Lunch Club"), "{names}");

    // The store stops for 10 s: every replica keeps answering from its index and says so.
    drop(s3);
    wait_failed_poll(&all, Duration::from_secs(POLL + 5));
    let late_cache = build.dir().join("cache-late");
    let late = Replica::follow(&to, &env, &late_cache, POLL, build.dir().join("follow-late.log"));
    let (status, body) = health(&late);
    assert_eq!(status, 503, "no index yet: {body}");
    assert_eq!(support::request(late.port(), "GET", WRK_PATHS[0], &[]).status, 503);
    let outage = Instant::now();
    while outage.elapsed() < Duration::from_secs(10) {
        assert_eq!(d.get(WRK_PATHS[0]).status, 200, "nginx still answers searches");
        // Deliberate rate: a search every 200 ms through an outage of a fixed length.
        std::thread::sleep(Duration::from_millis(200));
    }
    // Started again, empty (as moto restarts); the tree published again.
    let s3 = S3Server::start_on(&moto, port, &[]);
    s3.create_bucket(&bucket);
    assert_eq!(published(&build), next);
    let back = Instant::now();
    let mut every = all.clone();
    every.push(&late);
    wait_all(&every, &next, back, Duration::from_secs(POLL + 5));
    // The replicas that kept their index poll the store again successfully: the error goes.
    for replica in &every {
        loop {
            let (status, body) = health(replica);
            assert_eq!(status, 200, "{body}");
            if body["last_poll_error"].is_null() {
                break;
            }
            assert!(back.elapsed() < Duration::from_secs(POLL + 5), "{}: {body}", replica.address);
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
