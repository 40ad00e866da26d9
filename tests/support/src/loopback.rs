//! The accept loop of the small HTTP servers the tests run in-process (the S3 proxy, the
//! cache service of workerd's Cache API): 127.0.0.1 on port 0, read back, on a runtime of
//! their own on a thread of their own, one hyper HTTP/1.1 connection a client.

use std::convert::Infallible;
use std::future::Future;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

/// Serves `handle` on 127.0.0.1, on a port of its own (returned), until the process ends:
/// on a current-thread runtime when `threads` is 1, else on a multi-threaded one.
pub fn serve<F, Fut>(threads: usize, handle: F) -> u16
where
    F: Fn(Request<Incoming>) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<Response<Full<Bytes>>, Infallible>> + Send + 'static,
{
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let port = listener.local_addr().expect("address").port();
    listener.set_nonblocking(true).expect("nonblocking");
    std::thread::spawn(move || {
        let runtime = match threads {
            1 => tokio::runtime::Builder::new_current_thread().enable_all().build(),
            _ => tokio::runtime::Builder::new_multi_thread().worker_threads(threads).enable_all().build(),
        };
        runtime.expect("runtime").block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let handle = handle.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(handle);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
    });
    port
}
