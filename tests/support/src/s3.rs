//! A real S3-compatible server for the tests: `moto_server` (PyPI `moto[server]`, installed
//! by `.ci/run` into `target/s3-venv`), started on loopback port 0 (over HTTP, or HTTPS with
//! a test certificate from [`crate::tls`]), with helpers to
//! make buckets, run `svcdir publish` against it and read back what a bucket holds.
//! Used by the `publish` and `e2e` test targets.

use std::collections::BTreeMap;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use object_store::aws::AmazonS3Builder;
use object_store::path::Path as StorePath;
use object_store::{Attribute, Certificate, ClientOptions, ObjectStore, ObjectStoreExt};

/// Where `moto_server` is: `$SVCDIR_MOTO_SERVER`, else `target/s3-venv/bin/moto_server`.
pub fn moto_binary() -> Option<PathBuf> {
    let candidate = std::env::var_os("SVCDIR_MOTO_SERVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::dataset::repo().join("target/s3-venv/bin/moto_server"));
    candidate.is_file().then_some(candidate)
}

/// A running `moto_server`, stopped on drop.
#[derive(Debug)]
pub struct S3Server {
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Killed when the server is dropped.
    _child: crate::KillOnDrop,
    /// Its output, removed with it.
    _log: tempfile::NamedTempFile,
    /// The CA that signed its certificate, when it answers HTTPS.
    ca: Option<PathBuf>,
}

/// The access key every test uses (moto accepts any unless it checks credentials).
pub const ACCESS_KEY: &str = "svcdir-test-key";
/// The secret that goes with it.
pub const SECRET_KEY: &str = "svcdir-test-secret-never-printed";

impl S3Server {
    /// A server shared by the tests running at the same time; `None` (after saying so)
    /// when moto is not installed.
    pub fn shared() -> Option<Arc<S3Server>> {
        static SHARED: Mutex<Weak<S3Server>> = Mutex::new(Weak::new());
        let binary = moto_binary().or_else(|| {
            svcdir::test_support::skipped(
                "moto_server is not installed (.ci/run installs moto[server] into target/s3-venv)",
            );
            None
        })?;
        let mut guard = SHARED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(live) = guard.upgrade() {
            return Some(live);
        }
        let server = Arc::new(S3Server::start(&binary, &[]));
        *guard = Arc::downgrade(&server);
        Some(server)
    }

    /// A server of its own, with extra environment (e.g. moto's credential checks).
    pub fn start(binary: &Path, env: &[(&str, &str)]) -> S3Server {
        S3Server::spawn(binary, env, &[], None, 0)
    }

    /// [`S3Server::start`] on a given port: a server started again where one was stopped
    /// (moto starts empty), so that clients configured with its endpoint find it again.
    pub fn start_on(binary: &Path, port: u16, env: &[(&str, &str)]) -> S3Server {
        S3Server::spawn(binary, env, &[], None, port)
    }

    /// A server of its own answering HTTPS only, with `tls`'s certificate for 127.0.0.1.
    pub fn start_https(binary: &Path, tls: &crate::tls::TestCertificate) -> S3Server {
        let args = ["--ssl-cert".as_ref(), tls.cert.as_os_str(), "--ssl-key".as_ref(), tls.key.as_os_str()];
        S3Server::spawn(binary, &[], &args, Some(tls.ca.clone()), 0)
    }

    /// Starts moto on `port` (0: any; the port it got is read back from its log, werkzeug's
    /// "Running on http://127.0.0.1:PORT", so no port is picked and released first).
    fn spawn(
        binary: &Path,
        env: &[(&str, &str)],
        args: &[&std::ffi::OsStr],
        ca: Option<PathBuf>,
        port: u16,
    ) -> S3Server {
        let log = tempfile::NamedTempFile::new().expect("log file");
        let child = Command::new(binary)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(log.reopen().expect("log"))
            .stderr(log.reopen().expect("log"))
            .spawn()
            .expect("start moto_server");
        let mut child = crate::KillOnDrop(child);
        let scheme = if ca.is_some() { "https" } else { "http" };
        let running_on = format!("Running on {scheme}://127.0.0.1:");
        let deadline = Instant::now() + Duration::from_secs(60);
        let port = loop {
            let text = std::fs::read_to_string(log.path()).unwrap_or_default();
            let port = text.lines().find_map(|line| line.split_once(&running_on)?.1.trim().parse::<u16>().ok());
            if let Some(port) = port
                && TcpStream::connect(("127.0.0.1", port)).is_ok()
            {
                break port;
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("moto_server exited with {status}: {text}");
            }
            assert!(Instant::now() < deadline, "moto_server does not listen after 60 s: {text}");
            std::thread::sleep(Duration::from_millis(50));
        };
        S3Server { port, _child: child, _log: log, ca }
    }

    /// `http://127.0.0.1:PORT` (`https://` for [`S3Server::start_https`]).
    pub fn endpoint(&self) -> String {
        let scheme = if self.ca.is_some() { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}", self.port)
    }

    /// Makes a bucket (a fresh name each time, so tests sharing the server never meet).
    pub fn bucket(&self, label: &str) -> String {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("{label}-{}-{n}", std::process::id());
        self.create_bucket(&name);
        name
    }

    /// Makes the bucket `name`.
    pub fn create_bucket(&self, name: &str) {
        let status = match &self.ca {
            None => send(self.port, "PUT", &format!("/{name}")),
            Some(ca) => send_https(&self.endpoint(), ca, "PUT", &format!("/{name}")),
        };
        assert_eq!(status, 200, "cannot create bucket {name}");
    }

    /// Lets anyone read the objects of `bucket` without signing (a bucket policy granting
    /// `s3:GetObject` to every principal), as a static origin behind a CDN is readable.
    /// moto answers an unsigned GET 403 without it, and honours the policy.
    pub fn allow_public_read(&self, bucket: &str) {
        let policy = serde_json::json!({
            "Version": "2012-10-17",
            "Statement": [{
                "Effect": "Allow",
                "Principal": "*",
                "Action": "s3:GetObject",
                "Resource": format!("arn:aws:s3:::{bucket}/*"),
            }],
        });
        let status = send_body(self.port, "PUT", &format!("/{bucket}?policy"), policy.to_string().into_bytes());
        assert!((200..300).contains(&status), "cannot set the policy of {bucket}: {status}");
    }

    /// The AWS_* environment that points `svcdir publish` at `endpoint`.
    pub fn env_for(endpoint: &str) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY.to_owned()),
            ("AWS_SECRET_ACCESS_KEY", SECRET_KEY.to_owned()),
            ("AWS_REGION", "us-east-1".to_owned()),
            ("AWS_ENDPOINT_URL", endpoint.to_owned()),
            ("AWS_ALLOW_HTTP", "true".to_owned()),
        ]
    }

    /// Every object under `bucket/prefix`, by path relative to the prefix.
    pub fn objects(&self, bucket: &str, prefix: &str) -> BTreeMap<String, StoredObject> {
        read_objects_trusting(&self.endpoint(), bucket, prefix, self.ca.as_deref())
    }
}

/// One object as stored: bytes and the headers the store will send with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredObject {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// `Content-Type`.
    pub content_type: Option<String>,
    /// `Cache-Control`.
    pub cache_control: Option<String>,
    /// `Content-Encoding`.
    pub content_encoding: Option<String>,
    /// ETag.
    pub e_tag: Option<String>,
}

/// Reads back a bucket through the S3 API (object_store, the same client as the publish,
/// but only its read side).
pub fn read_objects(endpoint: &str, bucket: &str, prefix: &str) -> BTreeMap<String, StoredObject> {
    read_objects_trusting(endpoint, bucket, prefix, None)
}

/// A client of `bucket` at `endpoint` with the test's credentials.
fn test_client(endpoint: &str, bucket: &str, options: ClientOptions) -> object_store::aws::AmazonS3 {
    AmazonS3Builder::new()
        .with_client_options(options)
        .with_bucket_name(bucket)
        .with_endpoint(endpoint)
        .with_allow_http(true)
        .with_region("us-east-1")
        .with_access_key_id(ACCESS_KEY)
        .with_secret_access_key(SECRET_KEY)
        .build()
        .expect("S3 client")
}

/// Deletes these objects of `bucket` (keys), as the test's credentials (behind a publish's back).
pub fn delete_objects(endpoint: &str, bucket: &str, keys: &[&str]) {
    svcdir::tls::install_crypto_provider();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let store = test_client(endpoint, bucket, ClientOptions::new());
        for key in keys {
            store.delete(&StorePath::parse(key).expect("a key")).await.expect("delete the object");
        }
    });
}

/// [`read_objects`] over HTTPS, trusting the CA certificate (PEM) `ca` when given.
pub fn read_objects_trusting(
    endpoint: &str,
    bucket: &str,
    prefix: &str,
    ca: Option<&Path>,
) -> BTreeMap<String, StoredObject> {
    svcdir::tls::install_crypto_provider();
    let mut options = ClientOptions::new();
    if let Some(ca) = ca {
        let pem = std::fs::read(ca).expect("read the CA certificate");
        options = options.with_root_certificate(Certificate::from_pem(&pem).expect("a PEM certificate"));
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let store = test_client(endpoint, bucket, options);
        let root = StorePath::parse(prefix).expect("prefix");
        let listing: Vec<_> = futures::TryStreamExt::try_collect(store.list(Some(&root))).await.expect("list bucket");
        let mut objects = BTreeMap::new();
        for meta in listing {
            let result = store.get(&meta.location).await.expect("get object");
            let attr = |a: Attribute| result.attributes.get(&a).map(|v| v.to_string());
            let (content_type, cache_control, content_encoding) =
                (attr(Attribute::ContentType), attr(Attribute::CacheControl), attr(Attribute::ContentEncoding));
            let bytes = result.bytes().await.expect("object bytes").to_vec();
            let rel: Vec<_> =
                meta.location.prefix_match(&root).expect("under prefix").map(|p| p.as_ref().to_owned()).collect();
            objects.insert(
                rel.join("/"),
                StoredObject { bytes, content_type, cache_control, content_encoding, e_tag: meta.e_tag },
            );
        }
        objects
    })
}

/// Runs `svcdir publish --public PUBLIC --to URL ARGS... --json` with `env`.
pub fn publish(public: &Path, to: &str, env: &[(&'static str, String)], args: &[&str]) -> Output {
    publish_command(public, to, env, args).output().expect("svcdir publish runs")
}

/// The command of [`publish`], to spawn.
pub fn publish_command(public: &Path, to: &str, env: &[(&'static str, String)], args: &[&str]) -> Command {
    let mut command = Command::new(crate::bin("svcdir"));
    command.arg("publish").arg("--public").arg(public).args(["--to", to, "--json"]).args(args);
    for key in ["AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION"] {
        command.env_remove(key);
    }
    command.envs(env.iter().map(|(k, v)| (k, v)));
    command
}

/// The JSON object a `--json` publish printed.
pub fn summary(output: &Output) -> serde_json::Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!("not one JSON object ({e}):\n{stdout}\nstderr:\n{}", String::from_utf8_lossy(&output.stderr))
    })
}

/// Sends one request without a body or credentials to 127.0.0.1:`port`; the status.
pub fn send(port: u16, method: &str, target: &str) -> u16 {
    send_body(port, method, target, Vec::new())
}

/// Sends one request with `body` and without credentials to 127.0.0.1:`port`; the status.
pub fn send_body(port: u16, method: &str, target: &str, body: Vec<u8>) -> u16 {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let request = hyper::Request::builder()
            .method(method)
            .uri(target)
            .header("host", format!("127.0.0.1:{port}"))
            .body(http_body_util::Full::new(hyper::body::Bytes::from(body)))
            .expect("request");
        crate::one_request(&format!("127.0.0.1:{port}"), request).await.status().as_u16()
    })
}

/// Sends one request without a body or credentials to an HTTPS `origin` whose certificate
/// `ca` (PEM) signed, through reqwest (object_store's client); the status.
pub fn send_https(origin: &str, ca: &Path, method: &str, target: &str) -> u16 {
    svcdir::tls::install_crypto_provider();
    let pem = std::fs::read(ca).expect("read the CA certificate");
    let ca = reqwest::Certificate::from_pem(&pem).expect("a PEM certificate");
    let client = reqwest::Client::builder().tls_certs_only([ca]).build().expect("HTTPS client");
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("a method");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        client.request(method, format!("{origin}{target}")).send().await.expect("a response").status().as_u16()
    })
}
