//! The deployments the suite runs against, the builds they serve, and a plain HTTP client.
//!
//! A deployment is a set of real processes on free loopback ports: nginx with the
//! configuration printed by `svcdir nginx-config` plus `svcdir-search`, or `svcdir serve`.
//! Tests share a deployment while any of them holds it (`Arc`, kept in a `Weak`), and the
//! last one to let go stops its processes in `Drop`, so nothing outlives the test binary.

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, Weak};

// Moved to svcdir-testkit (issue 23); re-exported so the suite's calls stay as they were.
pub use svcdir_testkit::http::{Response, request, try_request};
pub use svcdir_testkit::process::{Process, free_port, nginx_binary, retry_port};

/// Origin of every absolute URL in the shared build: links are followed by replacing it with
/// the deployment's origin (and the test checks it never comes from the Host header).
pub const BASE_URL: &str = "https://api.example.org";

/// Import page size of the shared build: several pages from the small fixture.
pub const IMPORT_PAGE_SIZE: &str = "2";

pub use svcdir_testkit::dataset::repo;

/// A build of a fixture by the real `svcdir build`, in a temporary directory.
#[derive(Debug)]
pub struct Build {
    dir: tempfile::TempDir,
    /// The output directory.
    pub public: PathBuf,
    /// The search index.
    pub index: PathBuf,
}

impl Build {
    /// Builds `tests/fixtures/<fixture>` with `base_url`.
    pub fn new(fixture: &str, base_url: &str) -> Build {
        let dir = tempfile::Builder::new().prefix("svcdir-e2e-").tempdir().expect("temp dir");
        // nginx's workers run as `nobody` when the tests run as root (CI): they must be able
        // to read the build.
        open_to_all(dir.path());
        let public = dir.path().join("public");
        let index = dir.path().join("search.idx");
        let build = Build { dir, public, index };
        build.rebuild(fixture, base_url);
        build
    }

    /// Runs `svcdir build` of `tests/fixtures/<fixture>` again into the same output and index.
    pub fn rebuild(&self, fixture: &str, base_url: &str) {
        self.rebuild_from(&repo().join("tests/fixtures").join(fixture), base_url);
    }

    /// Runs `svcdir build` of the dataset folder `input` into the same output and index.
    pub fn rebuild_from(&self, input: &Path, base_url: &str) {
        let output = Command::new(env!("CARGO_BIN_EXE_svcdir"))
            .args(["build", "--quiet", "--import-page-size", IMPORT_PAGE_SIZE, "--base-url", base_url])
            .arg("--input")
            .arg(input)
            .arg("--output")
            .arg(&self.public)
            .arg("--index")
            .arg(&self.index)
            .env_remove("SVCDIR_BASE_URL")
            .output()
            .expect("svcdir build runs");
        assert!(output.status.success(), "svcdir build failed:\n{}", String::from_utf8_lossy(&output.stderr));
    }

    /// Bytes of a file of the build.
    pub fn file(&self, rel: &str) -> Vec<u8> {
        fs::read(self.public.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    /// A JSON file of the build.
    pub fn json(&self, rel: &str) -> serde_json::Value {
        serde_json::from_slice(&self.file(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    /// The folder of the build's temporary directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

/// Makes a directory readable and traversable by every user.
pub fn open_to_all(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The small fixture built once for every test that runs at the same time.
pub fn small_build() -> Arc<Build> {
    static SHARED: Mutex<Weak<Build>> = Mutex::new(Weak::new());
    shared(&SHARED, || Build::new("small", BASE_URL))
}

fn shared<T>(slot: &Mutex<Weak<T>>, make: impl FnOnce() -> T) -> Arc<T> {
    let mut guard = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(live) = guard.upgrade() {
        return live;
    }
    let fresh = Arc::new(make());
    *guard = Arc::downgrade(&fresh);
    fresh
}

/// Which deployment a test runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// nginx with the generated configuration, plus svcdir-search.
    Nginx,
    /// `svcdir serve`.
    Preview,
    /// The Cloudflare Worker of `svcdir cdn-config cloudflare` in workerd, reading the
    /// objects `svcdir publish` put in an S3 bucket, plus svcdir-search.
    Worker,
}

/// Real processes answering HTTP on `port`.
#[derive(Debug)]
pub struct Deployment {
    /// Which one.
    pub kind: Kind,
    /// The port on 127.0.0.1.
    pub port: u16,
    // Fields drop in order: the processes (nginx or the preview before the search server),
    // then their files.
    processes: Vec<Process>,
    _prefix: Option<tempfile::TempDir>,
    /// The S3 server holding the Worker's objects.
    s3: Option<Arc<svcdir_testkit::s3::S3Server>>,
    /// The service behind the Worker's Cache API (workerd's `cacheApiOutbound`).
    pub search_cache: Option<svcdir_testkit::cache::CacheService>,
    /// The build it serves.
    pub build: Arc<Build>,
}

impl Deployment {
    /// `http://127.0.0.1:PORT`.
    pub fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// GET `target` (path and query, sent as written).
    pub fn get(&self, target: &str) -> Response {
        request(self.port, "GET", target, &[])
    }

    /// A request with any method and headers.
    pub fn send(&self, method: &str, target: &str, headers: &[(&str, &str)]) -> Response {
        request(self.port, method, target, headers)
    }

    /// SIGHUP to the svcdir processes (svcdir-search, or `svcdir serve`): each reads its
    /// search index again, as after a rebuild (README, "Deploying").
    pub fn reload_search(&self) {
        for process in self.processes.iter().filter(|p| p.name != "nginx") {
            let pid = rustix::process::Pid::from_child(&process.child);
            rustix::process::kill_process(pid, rustix::process::Signal::HUP).expect("SIGHUP sent");
        }
    }

    /// The port of the svcdir-search behind nginx or the Worker, to ask it directly (the
    /// uncached answer); `None` for the preview, which answers searches itself.
    pub fn search_port(&self) -> Option<u16> {
        self.processes.iter().find(|p| p.name == "svcdir-search").map(|p| p.port)
    }

    /// The log (stdout and stderr) of the svcdir process: svcdir-search, or `svcdir serve`.
    pub fn svcdir_log(&self) -> String {
        self.processes.iter().filter(|p| p.name != "nginx").map(Process::log_text).collect()
    }

    /// nginx's error log (`error.log` of its prefix); "" for the other deployments.
    pub fn nginx_error_log(&self) -> String {
        match (&self.kind, &self._prefix) {
            (Kind::Nginx, Some(prefix)) => fs::read_to_string(prefix.path().join("error.log")).unwrap_or_default(),
            _ => String::new(),
        }
    }

    /// GET an absolute URL of the build: its origin must be [`BASE_URL`]; the path and query
    /// are asked of this deployment.
    pub fn follow(&self, url: &str) -> Response {
        let target = url
            .strip_prefix(BASE_URL)
            .unwrap_or_else(|| panic!("{url} does not start with the configured base URL {BASE_URL}"));
        self.get(target)
    }
}

/// `svcdir serve` over the shared small build.
pub fn preview() -> Arc<Deployment> {
    static SHARED: Mutex<Weak<Deployment>> = Mutex::new(Weak::new());
    shared(&SHARED, || start_preview(small_build()))
}

/// svcdir-search over `build`'s index, on port 0 (the port read back from its log).
fn search_process(build: &Build) -> Process {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut command = Command::new(env!("CARGO_BIN_EXE_svcdir-search"));
    command.arg("--index").arg(&build.index).args(["--listen", "127.0.0.1:0"]);
    Process::spawn_on_port_0("svcdir-search", command, build.dir().join(format!("search-{n}.log")))
}

/// Starts `svcdir serve` over `build` on port 0 (the port read back from its log).
pub fn start_preview(build: Arc<Build>) -> Deployment {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut command = Command::new(env!("CARGO_BIN_EXE_svcdir"));
    command.arg("serve").arg("--public").arg(&build.public).arg("--index").arg(&build.index);
    command.args(["--listen", "127.0.0.1:0"]);
    let process = Process::spawn_on_port_0("svcdir serve", command, build.dir().join(format!("serve-any-{n}.log")));
    Deployment {
        kind: Kind::Preview,
        port: process.port,
        build,
        processes: vec![process],
        _prefix: None,
        s3: None,
        search_cache: None,
    }
}

/// Starts `svcdir serve` over `build` on `port` (for a build made for that port); the error
/// says why it did not listen (for [`retry_port`]).
pub fn start_preview_on(build: Arc<Build>, port: u16) -> Result<Deployment, String> {
    let process = preview_process(&build, port)?;
    Ok(Deployment {
        kind: Kind::Preview,
        port,
        build,
        processes: vec![process],
        _prefix: None,
        s3: None,
        search_cache: None,
    })
}

fn preview_process(build: &Build, port: u16) -> Result<Process, String> {
    let log = build.dir().join(format!("serve-{port}.log"));
    let mut command = Command::new(env!("CARGO_BIN_EXE_svcdir"));
    command
        .arg("serve")
        .arg("--public")
        .arg(&build.public)
        .arg("--index")
        .arg(&build.index)
        .arg("--listen")
        .arg(format!("127.0.0.1:{port}"));
    Process::spawn("svcdir serve", command, log, port)
}

/// nginx + svcdir-search over the shared small build; `None` (after saying so) when nginx
/// is not installed.
pub fn nginx() -> Option<Arc<Deployment>> {
    static SHARED: Mutex<Weak<Deployment>> = Mutex::new(Weak::new());
    let Some(binary) = nginx_binary() else {
        svcdir::test_support::skipped("nginx is not installed (.ci/run installs it)");
        return None;
    };
    Some(shared(&SHARED, || start_nginx(&binary, small_build(), true, &[])))
}

/// A prefix directory for nginx with the configuration that `svcdir nginx-config` prints
/// for `build`, listening on `port`, with `search` as the search servers.
pub fn nginx_prefix(build: &Build, port: u16, search: &[String]) -> (tempfile::TempDir, PathBuf) {
    let prefix = tempfile::Builder::new().prefix("svcdir-nginx-").tempdir().expect("temp dir");
    open_to_all(prefix.path());
    let mut command = Command::new(env!("CARGO_BIN_EXE_svcdir"));
    command.arg("nginx-config").arg("--public").arg(&build.public).arg("--listen").arg(format!("127.0.0.1:{port}"));
    for server in search {
        command.arg("--search").arg(server);
    }
    let output = command.output().expect("svcdir nginx-config runs");
    assert!(output.status.success(), "svcdir nginx-config failed:\n{}", String::from_utf8_lossy(&output.stderr));
    let conf = prefix.path().join("nginx.conf");
    fs::write(&conf, &output.stdout).expect("write nginx.conf");
    (prefix, conf)
}

/// Starts nginx over `build`, its search servers being `extra` followed, when
/// `start_search`, by a svcdir-search started here.
pub fn start_nginx(binary: &Path, build: Arc<Build>, start_search: bool, extra: &[String]) -> Deployment {
    let mut processes = Vec::new();
    let mut search = extra.to_vec();
    if start_search {
        let process = search_process(&build);
        search.push(format!("127.0.0.1:{}", process.port));
        processes.push(process);
    }
    let mut prefix = None;
    let nginx = retry_port(|port| {
        let (dir, conf) = nginx_prefix(&build, port, &search);
        let mut command = Command::new(binary);
        command.arg("-p").arg(dir.path()).arg("-c").arg(&conf).args(["-g", "daemon off;"]);
        let log = dir.path().join("stderr.log");
        let process = Process::spawn("nginx", command, log, port);
        prefix = Some(dir);
        process
    });
    let port = nginx.port;
    // nginx first in the list: it is stopped before the server it proxies to.
    processes.insert(0, nginx);
    Deployment { kind: Kind::Nginx, port, build, processes, _prefix: prefix, s3: None, search_cache: None }
}

/// Where workerd is: `$SVCDIR_WORKERD`, else the npm package `.ci/run` installs under
/// `target/workerd-npm`.
pub fn workerd_binary() -> Option<PathBuf> {
    let candidate = std::env::var_os("SVCDIR_WORKERD")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target/workerd-npm/node_modules/.bin/workerd"));
    candidate.is_file().then_some(candidate)
}

/// The Worker in workerd over the shared small build, published to a bucket of a local S3
/// server; `None` (after saying so) when workerd or the S3 server is not installed.
pub fn worker() -> Option<Arc<Deployment>> {
    static SHARED: Mutex<Weak<Deployment>> = Mutex::new(Weak::new());
    let Some(binary) = workerd_binary() else {
        svcdir::test_support::skipped(
            "workerd is not installed (.ci/run installs the npm package into target/workerd-npm)",
        );
        return None;
    };
    let s3 = svcdir_testkit::s3::S3Server::shared()?;
    Some(shared(&SHARED, || start_worker(&binary, s3, small_build())))
}

/// Publishes `build` to a fresh bucket, starts svcdir-search and the Worker in workerd, its
/// Cache API on a cache service of the test's own (search answers cached, as on Cloudflare).
pub fn start_worker(binary: &Path, s3: Arc<svcdir_testkit::s3::S3Server>, build: Arc<Build>) -> Deployment {
    let bucket = s3.bucket("edge");
    // As behind a CDN: anyone may read the objects, unsigned (README, "On a CDN").
    s3.allow_public_read(&bucket);
    let env = svcdir_testkit::s3::S3Server::env_for(&s3.endpoint());
    let output = svcdir_testkit::s3::publish(&build.public, &format!("s3://{bucket}/site"), &env, &[]);
    assert!(output.status.success(), "svcdir publish failed:\n{}", String::from_utf8_lossy(&output.stderr));
    let search = search_process(&build);
    let cache = svcdir_testkit::cache::CacheService::start();
    let mut dir = None;
    let worker = retry_port(|port| {
        let config = tempfile::Builder::new().prefix("svcdir-worker-").tempdir().expect("temp dir");
        let output = Command::new(env!("CARGO_BIN_EXE_svcdir"))
            .args(["cdn-config", "cloudflare", "--static-origin"])
            .arg(format!("{}/{bucket}/site", s3.endpoint()))
            .arg("--search-origin")
            .arg(format!("http://127.0.0.1:{}", search.port))
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"))
            .arg("--cache-service")
            .arg(cache.address())
            .arg("--output")
            .arg(config.path())
            .output()
            .expect("svcdir cdn-config runs");
        assert!(output.status.success(), "svcdir cdn-config failed:\n{}", String::from_utf8_lossy(&output.stderr));
        let mut command = Command::new(binary);
        command.arg("serve").arg(config.path().join("workerd.capnp"));
        let log = config.path().join("workerd.log");
        let process = Process::spawn("workerd", command, log, port);
        dir = Some(config);
        process
    });
    let port = worker.port;
    Deployment {
        kind: Kind::Worker,
        port,
        build,
        processes: vec![worker, search],
        _prefix: dir,
        s3: Some(s3),
        search_cache: Some(cache),
    }
}
