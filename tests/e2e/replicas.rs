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
        let file = std::fs::File::create(&log).expect("log file");
        let child = Command::new(env!("CARGO_BIN_EXE_svcdir-search"))
            .arg("--index")
            .arg(index)
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
