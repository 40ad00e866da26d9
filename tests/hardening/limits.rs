//! The search server's limits and faults (issue 6, "The search server"): URL length, header
//! size, time per request and requests at once, each answered with a JSON body; connections at
//! once, past which new ones wait to be accepted; and a panic
//! that becomes a 500 JSON body while the server keeps serving. Driven through
//! `app(..).oneshot` or, where the connection matters, over loopback HTTP in-process.

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
use svcdir::server::{Limits, app, layered, layered_with};
use tower::ServiceExt;

use crate::search_support::{directory, state_of};

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
async fn a_request_over_the_time_limit_gets_503_json() {
    let router = Router::new()
        .route("/slow", get(|| async { tokio::time::sleep(Duration::from_secs(30)).await }))
        .route("/fast", get(|| async { "{}" }));
    let limits = Limits { request_timeout: Duration::from_millis(100), ..Limits::default() };
    let router = layered_with(router, limits);
    let started = std::time::Instant::now();
    let (status, content_type, body) = answer(router.clone(), get_request("/slow")).await;
    assert!(started.elapsed() < Duration::from_secs(10), "cut at the limit, not after the handler");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(content_type, "application/json");
    assert_eq!(body, json!({"detail": "Request timed out."}));
    let (status, _, _) = answer(router, get_request("/fast")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(Limits::default().request_timeout, Duration::from_millis(5000));
}

#[tokio::test]
async fn requests_past_the_concurrency_limit_get_503_json_at_once() {
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

    let (status, content_type, body) = answer(router.clone(), get_request("/wait")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(content_type, "application/json");
    assert_eq!(body, json!({"detail": "Service temporarily unavailable, try again later."}));

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

    let connect = || async {
        let stream = tokio::net::TcpStream::connect(address).await.expect("connects");
        let (sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await.expect("handshake");
        tokio::spawn(connection);
        sender
    };
    let mut sender = connect().await;
    for _ in 0..3 {
        assert_eq!(send(&mut sender, "/boom").await, (500, json!({"detail": "A server error occurred."})));
        assert_eq!(send(&mut sender, "/ok").await, (200, json!({"ok": true})));
    }
    let mut fresh = connect().await;
    assert_eq!(send(&mut fresh, "/ok").await, (200, json!({"ok": true})));
    assert!(!server.is_finished());
    server.abort();
}

#[tokio::test]
async fn connections_past_the_limit_wait_until_one_closes() {
    let router = Router::new().route("/ok", get(|| async { "{\"ok\": true}" }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let address = listener.local_addr().expect("address");
    let limited = svcdir::server::listener::LimitedListener::new(listener, 2);
    let server = tokio::spawn(async move { axum::serve(limited, router).await });
    let connect = || async {
        let stream = tokio::net::TcpStream::connect(address).await.expect("connects");
        let (sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await.expect("handshake");
        let driver = tokio::spawn(connection);
        (sender, driver)
    };
    let (mut first, first_driver) = connect().await;
    let (mut second, _second_driver) = connect().await;
    assert_eq!(send(&mut first, "/ok").await.0, 200);
    assert_eq!(send(&mut second, "/ok").await.0, 200);
    // A third connection is queued, not served, while both stay open...
    let (mut third, _third_driver) = connect().await;
    let waiting = tokio::spawn(async move { send(&mut third, "/ok").await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "the third connection was served past the limit");
    // ...and served as soon as one closes.
    drop(first);
    first_driver.abort();
    let answer = tokio::time::timeout(Duration::from_secs(5), waiting).await.expect("served after a close");
    assert_eq!(answer.expect("join").0, 200);
    server.abort();
}
