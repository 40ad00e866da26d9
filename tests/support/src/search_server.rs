//! The real `svcdir-search` binary as a test fixture: started on a free loopback port, its
//! log (JSON lines) collected, signalled, asked over HTTP, and killed on drop if the test did
//! not stop it.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// A running server.
pub struct Server {
    /// The process.
    pub child: crate::KillOnDrop,
    /// `HOST:PORT` it listens on.
    pub address: String,
    log: Arc<Mutex<Vec<String>>>,
    /// Set once the whole of stderr is read (the process has closed it).
    drained: Arc<AtomicBool>,
}

impl Server {
    /// Starts the binary on `index` with extra arguments, its log in JSON lines; waits (at
    /// most 20 s) for its listening event.
    pub fn start(index: &Path, extra: &[&str]) -> Server {
        Server::start_with_env(index, extra, &[])
    }

    /// [`Server::start`] with extra environment variables (e.g. `RUST_LOG`).
    pub fn start_with_env(index: &Path, extra: &[&str], env: &[(&str, &str)]) -> Server {
        let mut args = vec!["--index", index.to_str().expect("utf-8 path")];
        args.extend_from_slice(extra);
        Server::start_args(&args, env)
    }

    /// Starts the binary with these arguments (`--index FILE` or `--from SOURCE` among
    /// them) on a free port, its log in JSON lines.
    pub fn start_args(args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut child = Command::new(crate::bin("svcdir-search"))
            .envs(env.iter().copied())
            .args(["--listen", "127.0.0.1:0", "--log-format", "json"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("svcdir-search starts");
        let stderr = child.stderr.take().expect("stderr");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let lines = log.clone();
        let drained = Arc::new(AtomicBool::new(false));
        let at_end = drained.clone();
        // Drain stderr for the server's whole life, so that its log never blocks it.
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let event: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
                if let Some(address) = event["message"].as_str().and_then(|m| m.strip_prefix("listening on http://")) {
                    let _ = tx.send(address.to_owned());
                }
                lines.lock().expect("log lock").push(line);
            }
            at_end.store(true, Ordering::Release);
        });
        let mut server = Server { child: crate::KillOnDrop(child), address: String::new(), log, drained };
        server.address = rx
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("no listening line; stderr: {:?}", server.log()));
        server
    }

    /// Every log line so far.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().expect("log lock").clone()
    }

    /// Every log event so far, parsed (a line that is not JSON fails the test).
    pub fn events(&self) -> Vec<serde_json::Value> {
        self.log()
            .iter()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON log line ({e}): {line}")))
            .collect()
    }

    /// Waits (at most 20 s) until `count` events, counting from event `from`, have the
    /// message `message`; returns the last of them.
    pub fn wait_for_events(&self, from: usize, message: &str, count: usize) -> serde_json::Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let found: Vec<_> = self.events().into_iter().skip(from).filter(|e| e["message"] == message).collect();
            if found.len() >= count {
                return found[count - 1].clone();
            }
            assert!(Instant::now() < deadline, "not {count} events {message:?}: {:?}", self.log());
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// `GET /healthz`, parsed.
    pub fn health(&self) -> serde_json::Value {
        let (status, content_type, body) = self.get("/healthz");
        assert_eq!((status, content_type.as_str()), (200, "application/json"));
        serde_json::from_slice(&body).expect("healthz is JSON")
    }

    /// `GET /healthz`: its status and its body, parsed (200 or 503).
    pub fn health_status(&self) -> (u16, serde_json::Value) {
        let (status, _, body) = self.get("/healthz");
        (status, serde_json::from_slice(&body).expect("healthz is JSON"))
    }

    /// `GET /metrics`, read by a Prometheus text-format parser.
    pub fn scrape(&self) -> Metrics {
        let (status, content_type, body) = self.get("/metrics");
        assert_eq!(status, 200);
        assert_eq!(content_type, "text/plain; version=0.0.4; charset=utf-8");
        let text = String::from_utf8(body).expect("UTF-8");
        let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).expect("parses");
        Metrics { samples: scrape.samples, text }
    }

    /// GET `target` on a fresh connection: status, `Content-Type`, body.
    pub fn get(&self, target: &str) -> (u16, String, Vec<u8>) {
        use http_body_util::BodyExt;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        runtime.block_on(async {
            let request = hyper::Request::builder()
                .uri(target)
                .header("host", "x")
                .body(http_body_util::Empty::<hyper::body::Bytes>::new())
                .expect("request");
            let response = tokio::time::timeout(Duration::from_secs(20), crate::one_request(&self.address, request))
                .await
                .expect("answered in time");
            let status = response.status().as_u16();
            let content_type =
                response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
            let body = response.into_body().collect().await.expect("body").to_bytes().to_vec();
            (status, content_type, body)
        })
    }

    /// Sends a signal by name, e.g. `-TERM` or `-HUP`.
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill").args([name, &self.child.id().to_string()]).status().expect("kill runs");
        assert!(status.success());
    }

    /// Waits (at most 20 s) until a log line contains `needle`, counting from line `from`.
    pub fn wait_for_log(&self, from: usize, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(line) = self.log().into_iter().skip(from).find(|l| l.contains(needle)) {
                return line;
            }
            assert!(Instant::now() < deadline, "no log line with {needle:?}: {:?}", self.log());
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits (at most 20 s) for the process to exit and its log to be read to the end: the
    /// lines it wrote last (`stopped`) may still be in the pipe when it has exited.
    pub fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            assert!(Instant::now() < deadline, "did not stop: {:?}", self.log());
            std::thread::sleep(Duration::from_millis(10));
        };
        while !self.drained.load(Ordering::Acquire) {
            assert!(Instant::now() < deadline, "stderr still open after the exit: {:?}", self.log());
            std::thread::sleep(Duration::from_millis(10));
        }
        status
    }

    /// SIGTERM, then the exit status.
    pub fn terminate(&mut self) -> ExitStatus {
        self.signal("-TERM");
        self.wait_exit()
    }
}

/// One scrape of `/metrics`.
pub struct Metrics {
    /// The samples, as the parser grouped them (a histogram's buckets are one sample).
    pub samples: Vec<prometheus_parse::Sample>,
    /// The text served.
    pub text: String,
}

impl Metrics {
    /// The samples of `metric` whose labels include `labels`.
    pub fn find(&self, metric: &str, labels: &[(&str, &str)]) -> Vec<&prometheus_parse::Sample> {
        self.samples
            .iter()
            .filter(|s| s.metric == metric && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
            .collect()
    }

    /// The value of the one counter, gauge or untyped sample of `metric` with `labels`
    /// (0 when there is none: a counter not yet incremented is absent).
    pub fn value(&self, metric: &str, labels: &[(&str, &str)]) -> f64 {
        match self.find(metric, labels).as_slice() {
            [] => 0.0,
            [one] => match one.value {
                prometheus_parse::Value::Counter(v)
                | prometheus_parse::Value::Gauge(v)
                | prometheus_parse::Value::Untyped(v) => v,
                ref other => panic!("{metric} is not a single value: {other:?}"),
            },
            many => panic!("{} samples of {metric} {labels:?}", many.len()),
        }
    }
}
