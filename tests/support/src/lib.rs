//! What svcdir's integration test targets (`tests/it`, `tests/e2e`, `tests/hardening`,
//! `tests/search`, `tests/publish`) share, as a crate of its own so that no target includes
//! another's files: the real binaries ([`bin`]), datasets and built trees ([`dataset`]),
//! `svcdir-search` as a running process ([`search_server`]), an S3-compatible server
//! ([`s3`]), a plain HTTP/1.1 client ([`http`]), a test certificate for HTTPS on loopback ([`tls`]), the cache service of workerd's Cache API ([`cache`]), a
//! counting proxy in front of the S3 server ([`proxy`]) and what a publish moves through it
//! ([`traffic`]), both on the same small server loop ([`loopback`]), other servers as child
//! processes on loopback ports ([`process`]). The in-memory test directory is the library's own
//! (`svcdir::test_support::directory`), so unit tests use it too.

pub mod cache;
pub mod dataset;
pub mod http;
pub mod loopback;
pub mod process;
pub mod proxy;
pub mod s3;
pub mod search_server;
pub mod tls;
pub mod traffic;

use std::ops::{Deref, DerefMut};
use std::path::PathBuf;
use std::process::Child;

/// A binary of this package (`svcdir`, `svcdir-search`), as cargo built it for the tests:
/// beside the `deps/` folder that holds the running test executable.
pub fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    let dir = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps/<test>");
    let path = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(path.is_file(), "{} is not built (cargo builds the binaries before the tests)", path.display());
    path
}

/// A child process that is killed and reaped when dropped, unless it already exited: a test
/// or benchmark that fails half-way leaves no server behind.
#[derive(Debug)]
pub struct KillOnDrop(pub Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

impl Deref for KillOnDrop {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl DerefMut for KillOnDrop {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

/// Sends `request` on a fresh HTTP/1.1 connection to `address` (`HOST:PORT`) and returns
/// the response, its body still to be read.
pub async fn one_request<B>(address: &str, request: hyper::Request<B>) -> hyper::Response<hyper::body::Incoming>
where
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    try_one_request(address, request).await.unwrap_or_else(|e| panic!("{address}: {e}"))
}

/// [`one_request`], its failure (no connection, no answer) returned.
pub async fn try_one_request<B>(
    address: &str,
    request: hyper::Request<B>,
) -> Result<hyper::Response<hyper::body::Incoming>, Box<dyn std::error::Error + Send + Sync>>
where
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let stream = tokio::net::TcpStream::connect(address).await?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    Ok(sender.send_request(request).await?)
}
