//! A small HTTP proxy on 127.0.0.1 in front of the S3 server: it counts requests, can slow
//! each one down, and can fail every Nth with 500 or 503 (alternately), as a store under
//! load does, to show that `svcdir publish` retries.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

/// What the proxy saw.
#[derive(Debug, Default)]
pub struct Counts {
    /// Requests received.
    pub requests: AtomicUsize,
    /// Requests answered with an injected error.
    pub failed: AtomicUsize,
    /// PUT requests passed on to the server.
    pub puts: AtomicUsize,
    /// Requests received and not yet answered (or abandoned by the client).
    pub in_flight: AtomicUsize,
    /// The requests passed on, in the order they started and finished: (finished?, method,
    /// path and query).
    pub events: std::sync::Mutex<Vec<(bool, String, String)>>,
    /// Every request passed on and answered: method, path and query, bytes of the request's
    /// body and of the answer's (what a publish moves, counted).
    pub transfers: std::sync::Mutex<Vec<Transfer>>,
}

/// One request passed on and answered, with the bytes of both bodies.
#[derive(Debug, Clone)]
pub struct Transfer {
    /// The method.
    pub method: String,
    /// The path and query.
    pub target: String,
    /// Bytes of the request's body.
    pub sent: u64,
    /// Bytes of the answer's body.
    pub received: u64,
}

impl Counts {
    fn event(&self, done: bool, method: &hyper::Method, uri: &hyper::Uri) {
        let target = uri.path_and_query().map_or_else(|| uri.path().to_owned(), |pq| pq.as_str().to_owned());
        self.events.lock().unwrap_or_else(|p| p.into_inner()).push((done, method.to_string(), target));
    }
}

/// Counts a request out of [`Counts::in_flight`] when dropped.
struct InFlight(Arc<Counts>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A running proxy; it stops with the process.
#[derive(Debug)]
pub struct Proxy {
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Its counters.
    pub counts: Arc<Counts>,
}

impl Proxy {
    /// Starts a proxy to 127.0.0.1:`upstream` that fails every `fail_every`th request (0:
    /// none) and waits `delay` before passing each one on.
    pub fn start(upstream: u16, fail_every: usize, delay: Duration) -> Proxy {
        let counts = Arc::new(Counts::default());
        let shared = counts.clone();
        let port =
            crate::loopback::serve(2, move |request| handle(request, upstream, fail_every, delay, shared.clone()));
        Proxy { port, counts }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

async fn handle(
    request: Request<Incoming>,
    upstream: u16,
    fail_every: usize,
    delay: Duration,
    counts: Arc<Counts>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let n = counts.requests.fetch_add(1, Ordering::SeqCst) + 1;
    counts.in_flight.fetch_add(1, Ordering::SeqCst);
    // Counted down however this ends: answered, or dropped with its connection.
    let _in_flight = InFlight(counts.clone());
    let (parts, body) = request.into_parts();
    let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    if fail_every > 0 && n.is_multiple_of(fail_every) {
        counts.failed.fetch_add(1, Ordering::SeqCst);
        let status = if (n / fail_every) % 2 == 1 { 500 } else { 503 };
        let xml = "<?xml version=\"1.0\"?><Error><Code>InternalError</Code><Message>injected by the test proxy</Message></Error>";
        return Ok(Response::builder().status(status).body(Full::new(Bytes::from(xml))).expect("response"));
    }
    // The deliberate slowness of a store under load (a rate, not a wait for something).
    tokio::time::sleep(delay).await;
    if parts.method == hyper::Method::PUT {
        counts.puts.fetch_add(1, Ordering::SeqCst);
    }
    counts.event(false, &parts.method, &parts.uri);
    let stream = match tokio::net::TcpStream::connect(("127.0.0.1", upstream)).await {
        Ok(stream) => stream,
        Err(_) => return Ok(Response::builder().status(502).body(Full::default()).expect("response")),
    };
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.expect("handshake");
    tokio::spawn(connection);
    let mut forward = Request::builder().method(parts.method.clone()).uri(parts.uri.clone());
    for (name, value) in &parts.headers {
        forward = forward.header(name, value);
    }
    let sent = body.len();
    let response =
        sender.send_request(forward.body(Full::new(body)).expect("request")).await.expect("upstream answers");
    let (mut head, body) = response.into_parts();
    head.headers.remove(hyper::header::TRANSFER_ENCODING);
    head.headers.remove(hyper::header::CONNECTION);
    let answer = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    counts.event(true, &parts.method, &parts.uri);
    counts.transfers.lock().unwrap_or_else(|p| p.into_inner()).push(Transfer {
        method: parts.method.to_string(),
        target: parts.uri.path_and_query().map_or_else(|| parts.uri.path().to_owned(), |pq| pq.as_str().to_owned()),
        sent: sent as u64,
        received: answer.len() as u64,
    });
    let body = answer;
    Ok(Response::from_parts(head, Full::new(body)))
}
