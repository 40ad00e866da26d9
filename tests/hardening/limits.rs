//! The search server's limits and faults (issue 6, "The search server"): URL length (414),
//! header size (431), time per request (408, a search included) and requests at once (429),
//! each answered with a JSON body; connections at once (429 and close, then the accept
//! queue); clients slow to send headers or idle; and a panic that becomes a 500 JSON body
//! while the server keeps serving. Driven through `app(..).oneshot` or, where the connection
//! matters, over loopback HTTP in-process.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::routing::get;
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use serde_json::json;
use svcdir::server::connections::OVERFLOW_CONNECTIONS;
use svcdir::server::{Limits, LiveState, app, layered, layered_with, live_routes};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower::ServiceExt;

use svcdir::test_support::directory::{directory, state_of};

async fn answer(router: Router, request: Request<Body>) -> (StatusCode, String, serde_json::Value) {
    let response = router.oneshot(request).await.expect("infallible");
    let status = response.status();
    let content_type =
        response.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    let body = response.into_body().collect().await.expect("body").to_bytes();
    let json = serde_json::from_slice(&body).unwrap_or_else(|_| json!(String::from_utf8_lossy(&body)));
    (status, content_type, json)
}

fn get_request(uri: &str) -> Request<Body> {
    Request::builder().uri(uri).body(Body::empty()).expect("request")
}

#[tokio::test]
async fn a_url_over_8_kib_gets_414_json_and_8_kib_is_still_answered() {
    let state = state_of(&directory());
    let prefix = "/api/v4/services/?postcode=G2+1AL&q=";
    let at_limit = format!("{prefix}{}", "a".repeat(8192 - prefix.len()));
    let (status, _, _) = answer(app(state.clone()), get_request(&at_limit)).await;
    assert_eq!(status, StatusCode::OK, "8 KiB exactly is within the limit");

    let over = format!("{at_limit}a");
    let (status, content_type, body) = answer(app(state.clone()), get_request(&over)).await;
    assert_eq!(status, StatusCode::URI_TOO_LONG);
    assert_eq!(content_type, "application/json");
    assert_eq!(body, json!({"detail": "Request-URI too long."}));
    // The same for any path, and whatever format the client asks for: the query is not read.
    let (status, content_type, body) =
        answer(app(state), get_request(&format!("/nowhere?format=api&x={}", "%41".repeat(3000)))).await;
    assert_eq!((status, content_type.as_str()), (StatusCode::URI_TOO_LONG, "application/json"));
    assert_eq!(body["detail"], "Request-URI too long.");
}

#[tokio::test]
async fn headers_over_16_kib_get_431_json() {
    let state = state_of(&directory());
    let request = |size: usize| {
        Request::builder()
            .uri("/api/v4/services/?postcode=G2+1AL")
            .header("x-padding", "p".repeat(size))
            .body(Body::empty())
            .expect("request")
    };
    let (status, _, _) = answer(app(state.clone()), request(8 * 1024)).await;
    assert_eq!(status, StatusCode::OK);
    let (status, content_type, body) = answer(app(state), request(17 * 1024)).await;
    assert_eq!(status, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
    assert_eq!(content_type, "application/json");
    assert_eq!(body, json!({"detail": "Request header fields too large."}));
}

#[tokio::test]
async fn a_request_over_the_time_limit_gets_408_json_and_closes() {
    let router = Router::new()
        // Deliberate: a handler far slower than the limit, which the timeout must cut.
        .route("/slow", get(|| async { tokio::time::sleep(Duration::from_secs(30)).await }))
        .route("/fast", get(|| async { "{}" }));
    let limits = Limits { request_timeout: Duration::from_millis(100), ..Limits::default() };
    let router = layered_with(router, limits);
    let started = std::time::Instant::now();
    let response = router.clone().oneshot(get_request("/slow")).await.expect("infallible");
    assert!(started.elapsed() < Duration::from_secs(10), "cut at the limit, not after the handler");
    assert_eq!(response.status(), StatusCode::REQUEST_TIMEOUT);
    assert_eq!(response.headers()["connection"], "close", "RFC 9110: a 408 closes the connection");
    let (status, content_type, body) = answer(router.clone(), get_request("/slow")).await;
    assert_eq!((status, content_type.as_str()), (StatusCode::REQUEST_TIMEOUT, "application/json"));
    assert_eq!(body, json!({"detail": "Request timed out."}));
    let (status, _, _) = answer(router, get_request("/fast")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(Limits::default().request_timeout, Duration::from_millis(5000));
}

/// A search never awaits, so nothing outside it can stop it: it reads its deadline itself.
/// With no time at all it stops at its first check; with time, the same search answers.
#[tokio::test]
async fn a_search_past_its_deadline_stops_itself_with_408_json() {
    let state = state_of(&directory());
    let search = "/api/v4/services/?postcode=G2+1AL&radius=999999999";
    let no_time = layered_with(
        live_routes(Arc::new(LiveState::new(state.clone()))),
        Limits { request_timeout: Duration::ZERO, ..Limits::default() },
    );
    for target in [search, "/api/v4/services/?postcode=G2+1AL&q=food", "/api/v3/search/?postcode=G2+1AL"] {
        let response = no_time.clone().oneshot(get_request(target)).await.expect("infallible");
        assert_eq!(response.status(), StatusCode::REQUEST_TIMEOUT, "{target}");
        assert_eq!(response.headers()["connection"], "close");
        let body = response.into_body().collect().await.expect("body").to_bytes();
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&body).unwrap(),
            json!({"detail": "Request timed out."})
        );
    }
    // The HTML view of the same error.
    let response = no_time.oneshot(get_request(&format!("{search}&format=api"))).await.expect("infallible");
    assert_eq!(response.status(), StatusCode::REQUEST_TIMEOUT);
    assert_eq!(response.headers()["content-type"], "text/html; charset=utf-8");

    let (status, _, body) = answer(app(state), get_request(search)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(body["count"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn requests_past_the_concurrency_limit_get_429_json_at_once() {
    let entered = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(tokio::sync::Notify::new());
    let (inside, gate) = (entered.clone(), release.clone());
    let router = Router::new().route(
        "/wait",
        get(move || {
            let (inside, gate) = (inside.clone(), gate.clone());
            async move {
                let notified = gate.notified();
                inside.fetch_add(1, Ordering::SeqCst);
                notified.await;
                "{}"
            }
        }),
    );
    let router = layered_with(router, Limits { max_concurrent: 2, ..Limits::default() });
    let running: Vec<_> = (0..2).map(|_| tokio::spawn(answer(router.clone(), get_request("/wait")))).collect();
    tokio::time::timeout(Duration::from_secs(10), async {
        while entered.load(Ordering::SeqCst) < 2 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("both requests are being answered");

    let response = router.clone().oneshot(get_request("/wait")).await.expect("infallible");
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(response.headers()["retry-after"], "1");
    assert_eq!(response.headers()["content-type"], "application/json");
    let body = response.into_body().collect().await.expect("body").to_bytes();
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&body).unwrap(),
        json!({"detail": "Request was throttled. Expected available in 1 second."})
    );

    release.notify_waiters();
    for task in running {
        let (status, _, _) =
            tokio::time::timeout(Duration::from_secs(10), task).await.expect("finishes").expect("join");
        assert_eq!(status, StatusCode::OK);
    }
    // The permits came back.
    let third = tokio::spawn(answer(router, get_request("/wait")));
    tokio::time::timeout(Duration::from_secs(10), async {
        while entered.load(Ordering::SeqCst) < 3 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("a later request is let in");
    release.notify_waiters();
    assert_eq!(third.await.expect("join").0, StatusCode::OK);
}

/// GET `target` on an open HTTP/1.1 connection.
async fn send(
    sender: &mut hyper::client::conn::http1::SendRequest<Empty<Bytes>>,
    target: &str,
) -> (u16, serde_json::Value) {
    let request =
        hyper::Request::builder().uri(target).header("host", "localhost").body(Empty::new()).expect("request");
    let response = sender.send_request(request).await.expect("an answer, not a dropped connection");
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.expect("body").to_bytes();
    (status, serde_json::from_slice(&body).expect("JSON body"))
}

#[tokio::test]
async fn after_a_panic_the_server_keeps_serving_on_the_same_connection_and_new_ones() {
    let router = layered(
        Router::new()
            .route(
                "/boom",
                get(|| async {
                    if true {
                        panic!("deliberate, issue 6");
                    }
                    ""
                }),
            )
            .route("/ok", get(|| async { "{\"ok\": true}" })),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let address = listener.local_addr().expect("address");
    let server = tokio::spawn(async move { axum::serve(listener, router).await });

    let mut sender = connect(address).await;
    for _ in 0..3 {
        assert_eq!(send(&mut sender, "/boom").await, (500, json!({"detail": "A server error occurred."})));
        assert_eq!(send(&mut sender, "/ok").await, (200, json!({"ok": true})));
    }
    let mut fresh = connect(address).await;
    assert_eq!(send(&mut fresh, "/ok").await, (200, json!({"ok": true})));
    assert!(!server.is_finished());
    server.abort();
}

/// The search server on a loopback port with `limits`: its address, the sender that stops
/// it (when sent to or dropped), and its task.
struct Running {
    address: std::net::SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn start_server(limits: Limits) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let address = listener.local_addr().expect("address");
    let live = Arc::new(LiveState::new(state_of(&directory())));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(svcdir::server::serve(listener, live, Default::default(), limits, async move {
        let _ = stopped.await;
    }));
    Running { address, stop, task }
}

async fn connect(address: std::net::SocketAddr) -> hyper::client::conn::http1::SendRequest<Empty<Bytes>> {
    let stream = tokio::net::TcpStream::connect(address).await.expect("connects");
    let (sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await.expect("handshake");
    tokio::spawn(connection);
    sender
}

/// Reads until the server closes the connection; what it sent.
async fn read_to_close(stream: &mut tokio::net::TcpStream, within: Duration) -> String {
    let mut got = Vec::new();
    tokio::time::timeout(within, stream.read_to_end(&mut got)).await.expect("closed in time").expect("read");
    String::from_utf8_lossy(&got).into_owned()
}

const SEARCH: &str = "/api/v4/services/?postcode=G2+1AL";

#[tokio::test]
async fn connections_past_the_limit_get_429_json_and_are_closed_then_later_ones_wait() {
    let limits = Limits { max_connections: 2, ..Limits::default() };
    let Running { address, stop: _stop, .. } = start_server(limits).await;
    let mut first = connect(address).await;
    let mut second = connect(address).await;
    assert_eq!(send(&mut first, SEARCH).await.0, 200);
    assert_eq!(send(&mut second, SEARCH).await.0, 200);

    // A third connection while both stay open: told at once, and closed.
    let mut third = tokio::net::TcpStream::connect(address).await.expect("connects");
    third.write_all(b"GET /api/v4/services/?postcode=G2+1AL HTTP/1.1\r\nHost: x\r\n\r\n").await.expect("write");
    let answer = read_to_close(&mut third, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 429 "), "{answer}");
    let head = answer.to_ascii_lowercase();
    assert!(head.contains("\r\nconnection: close\r\n") && head.contains("\r\nretry-after: 1\r\n"), "{answer}");
    assert!(answer.ends_with(r#"{"detail":"Request was throttled. Expected available in 1 second."}"#), "{answer}");

    // Past the limit and all the overflow slots, a connection waits to be accepted...
    let mut overflow = Vec::new();
    for _ in 0..OVERFLOW_CONNECTIONS {
        overflow.push(tokio::net::TcpStream::connect(address).await.expect("connects"));
    }
    let mut waiting_sender = connect(address).await;
    let waiting = tokio::spawn(async move { send(&mut waiting_sender, SEARCH).await.0 });
    // Deliberate: a while in which nothing may happen (no condition to wait for).
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "a connection past every limit was served");
    // ...and is served normally once the connections ahead of it have gone.
    drop(overflow);
    drop(first);
    let status = tokio::time::timeout(Duration::from_secs(10), waiting).await.expect("served after a close");
    assert_eq!(status.expect("join"), 200);
    assert_eq!(send(&mut second, SEARCH).await.0, 200, "the connections within the limit were never disturbed");
}

#[tokio::test]
async fn a_client_slow_to_send_its_headers_or_idle_that_long_is_disconnected() {
    let limits = Limits { header_timeout: Duration::from_millis(300), ..Limits::default() };
    let Running { address, stop: _stop, .. } = start_server(limits).await;

    // Slowloris: a request head that never ends.
    let mut slow = tokio::net::TcpStream::connect(address).await.expect("connects");
    slow.write_all(b"GET /api/v4/services/?postcode=G2+1AL HTTP/1.1\r\nHost: x\r\nX-Slow: ").await.expect("write");
    let started = std::time::Instant::now();
    let answer = read_to_close(&mut slow, Duration::from_secs(10)).await;
    assert!(started.elapsed() >= Duration::from_millis(250), "closed before the timeout");
    assert!(!answer.starts_with("HTTP/1.1 2"), "{answer}");

    // An idle kept-alive connection: served, then closed after the same time.
    let mut idle = tokio::net::TcpStream::connect(address).await.expect("connects");
    idle.write_all(b"GET /api/v4/services/?postcode=G2+1AL HTTP/1.1\r\nHost: x\r\n\r\n").await.expect("write");
    let answer = read_to_close(&mut idle, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");

    // A connection that keeps sending requests is kept, however long it lives.
    let mut busy = connect(address).await;
    for _ in 0..8 {
        assert_eq!(send(&mut busy, SEARCH).await.0, 200);
        // Deliberate rate: requests 100 ms apart, 800 ms in all, past the 300 ms timeout.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// On shutdown the requests in flight may finish, but a client that never completes its
/// request cannot hold the process: the drain ends after the request time limit plus the
/// drain grace, well before the header timeout would have closed that connection. Both are
/// shortened here (the defaults, 5 s + 5 s, are the same code path).
#[tokio::test]
async fn the_drain_at_shutdown_is_bounded() {
    let limits = Limits {
        request_timeout: Duration::from_millis(100),
        drain_grace: Duration::from_millis(100),
        header_timeout: Duration::from_secs(120),
        // One connection: a second one answered 429 shows the stuck one was accepted.
        max_connections: 1,
        ..Limits::default()
    };
    let Running { address, stop, task: server } = start_server(limits).await;
    let mut stuck = tokio::net::TcpStream::connect(address).await.expect("connects");
    stuck.write_all(b"GET /api/v4/services/?postcode=G2+1AL HTTP/1.1\r\nHost: x\r\n").await.expect("write");
    let mut probe = tokio::net::TcpStream::connect(address).await.expect("connects");
    probe.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").await.expect("write");
    let answer = read_to_close(&mut probe, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 429 "), "the stuck connection holds the one slot: {answer}");

    let started = std::time::Instant::now();
    stop.send(()).expect("server running");
    let result = tokio::time::timeout(Duration::from_secs(60), server).await.expect("the drain ended");
    result.expect("join").expect("serve returns Ok");
    let took = started.elapsed();
    let bound = limits.request_timeout + limits.drain_grace;
    assert!(took >= bound && took < bound + Duration::from_secs(5), "drained in {took:?}");
    assert_eq!(Limits::default().drain_grace, svcdir::server::connections::DRAIN_GRACE);
}
