//! A hostile object store in front of `svcdir-search --from`: a small HTTP server of the
//! test's own (moto cannot give these answers) answering the pointer with a huge error body
//! that quotes the credentials, or with a redirect to another origin.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Response, StatusCode};
use svcdir_testkit::loopback;
use svcdir_testkit::search_server::Server;

const KEY_ID: &str = "AKIAHOSTILETESTKEY01";
const SECRET: &str = "hostile/test+secret=key0123456789";
const TOKEN: &str = "FQoGZXIvYXdzEHostileSessionToken/with+signs=";

/// The AWS_* environment pointing `--from s3://bucket` at `endpoint`, a session token set.
fn env(endpoint: &str) -> Vec<(&'static str, String)> {
    vec![
        ("AWS_ACCESS_KEY_ID", KEY_ID.to_owned()),
        ("AWS_SECRET_ACCESS_KEY", SECRET.to_owned()),
        ("AWS_SESSION_TOKEN", TOKEN.to_owned()),
        ("AWS_REGION", "us-east-1".to_owned()),
        ("AWS_ENDPOINT_URL", endpoint.to_owned()),
        ("AWS_ALLOW_HTTP", "true".to_owned()),
    ]
}

fn start(endpoint: &str) -> Server {
    let env = env(endpoint);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Server::start_args(&["--from", "s3://bucket", "--poll", "1"], &env)
}

/// Waits (at most 20 s) for `/healthz` to report a failed poll; returns its body's bytes.
fn failed_health(server: &Server) -> Vec<u8> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (_, _, body) = server.get("/healthz");
        let health: serde_json::Value = serde_json::from_slice(&body).expect("healthz is JSON");
        if health["last_poll_error"].is_string() {
            return body;
        }
        assert!(Instant::now() < deadline, "no failed poll: {health}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_huge_error_body_quoting_the_credentials_gives_a_small_healthz_and_log_without_them() {
    let body = Arc::new(format!(
        "<?xml version=\"1.0\"?><Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match</Message>\
         <AWSAccessKeyId>{KEY_ID}</AWSAccessKeyId><StringToSign>x-amz-security-token:{TOKEN}</StringToSign>\
         <CanonicalRequest>GET /bucket/_search/current.json X-Amz-Security-Token={TOKEN}&amp;X-Amz-Credential={KEY_ID}</CanonicalRequest>{}</Error>",
        format!("padding {TOKEN} {SECRET} ").repeat(20 * 1024 * 1024 / 80),
    ));
    assert!(body.len() > 20_000_000);
    let port = loopback::serve(1, move |_request| {
        let body = body.clone();
        async move {
            let mut response = Response::new(Full::new(Bytes::from(body.as_bytes().to_vec())));
            *response.status_mut() = StatusCode::FORBIDDEN;
            Ok(response)
        }
    });
    // A password in the endpoint is never printed either.
    let server = start(&format!("http://svcdir:hunter2-password@127.0.0.1:{port}"));
    let health = failed_health(&server);
    let text = String::from_utf8(health).expect("UTF-8");
    assert!(text.len() < 4096, "/healthz is {} bytes", text.len());
    let event = server.wait_for_events(0, "poll of the publication failed; no index in force yet (503)", 1);
    assert!(event["error"].as_str().is_some_and(|e| e.contains("SignatureDoesNotMatch")), "{event}");
    let log = server.log().join("\n");
    for (what, secret) in [("token", TOKEN), ("key id", KEY_ID), ("secret", SECRET), ("password", "hunter2-password")] {
        assert!(!text.contains(secret), "the {what} is in /healthz: {text}");
        assert!(!log.contains(secret), "the {what} is in the log");
    }
    assert!(log.len() < 64 * 1024, "the log is {} bytes", log.len());
}

#[test]
fn a_redirect_to_another_origin_is_refused_and_that_origin_gets_nothing() {
    let elsewhere = Arc::new(AtomicUsize::new(0));
    let seen = elsewhere.clone();
    let other = loopback::serve(1, move |_request| {
        seen.fetch_add(1, Ordering::SeqCst);
        async { Ok(Response::new(Full::new(Bytes::from_static(b"{}")))) }
    });
    let asked = Arc::new(AtomicUsize::new(0));
    let count = asked.clone();
    let port = loopback::serve(1, move |request| {
        count.fetch_add(1, Ordering::SeqCst);
        let location = format!("http://127.0.0.1:{other}{}", request.uri().path());
        async move {
            let mut response = Response::new(Full::new(Bytes::new()));
            *response.status_mut() = StatusCode::TEMPORARY_REDIRECT;
            response.headers_mut().insert("location", location.parse().expect("a header value"));
            Ok(response)
        }
    });
    let server = start(&format!("http://127.0.0.1:{port}"));
    let health: serde_json::Value = serde_json::from_slice(&failed_health(&server)).expect("JSON");
    let error = health["last_poll_error"].as_str().expect("an error");
    assert!(error.contains("redirect") && error.contains("307"), "{error}");
    // Polls go on (one a second): still nothing reaches the other origin.
    let polls = asked.load(Ordering::SeqCst);
    let deadline = Instant::now() + Duration::from_secs(10);
    while asked.load(Ordering::SeqCst) < polls + 2 {
        assert!(Instant::now() < deadline, "no further poll");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(elsewhere.load(Ordering::SeqCst), 0, "the other origin was asked");
}
