//! What the search benchmarks share: the server process they drive, the query mix, and
//! percentiles. Included by `search_load.rs` and `soak.rs` as `mod support`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use svcdir::model::Directory;

/// A keep-alive HTTP/1.1 connection to the server under load.
pub type Sender = hyper::client::conn::http1::SendRequest<Empty<Bytes>>;

/// Opens a [`Sender`] to `address` (TCP_NODELAY, its driver spawned); on failure, which
/// step failed and why.
pub async fn connect(address: &str) -> Result<Sender, (&'static str, String)> {
    let stream = tokio::net::TcpStream::connect(address).await.map_err(|e| ("connect", e.to_string()))?;
    let _ = stream.set_nodelay(true);
    let (sender, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
        .await
        .map_err(|e| ("handshake", e.to_string()))?;
    tokio::spawn(conn);
    Ok(sender)
}

/// One answer: status, body bytes, and microseconds from sending to the body's end.
pub struct Answered {
    pub status: u16,
    pub bytes: usize,
    pub micros: u32,
}

/// GETs `target` on `sender` and reads the whole body; an error means the connection is
/// unusable and the caller reconnects.
pub async fn get(sender: &mut Sender, target: &str) -> Result<Answered, String> {
    let started = Instant::now();
    let (status, body) = fetch(sender, target).await?;
    let micros = started.elapsed().as_micros().min(u128::from(u32::MAX)) as u32;
    Ok(Answered { status, bytes: body.len(), micros })
}

/// GETs `target` on `sender`: the status and the whole body.
pub async fn fetch(sender: &mut Sender, target: &str) -> Result<(u16, Bytes), String> {
    let request = hyper::Request::get(target).header("host", "127.0.0.1").body(Empty::<Bytes>::new()).expect("request");
    // The connection's driver may still be finishing the previous answer on another
    // thread: sent before it is ready, a request fails as "canceled".
    sender.ready().await.map_err(|e| e.to_string())?;
    let response = sender.send_request(request).await.map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.map_err(|e| e.to_string())?;
    Ok((status, body.to_bytes()))
}

/// Keep-alive connections of the load.
pub const CONNECTIONS: usize = 64;
/// Client threads (the server gets the rest of the 2 cores).
pub const CLIENT_THREADS: usize = 2;
/// Queries in the mix.
pub const QUERIES: usize = 5000;

/// The server process; stopped on drop.
pub struct Server {
    pub child: svcdir_testkit::KillOnDrop,
    pub address: String,
    pub log: PathBuf,
}

impl Server {
    pub fn start(index: &Path, log: PathBuf) -> Server {
        Server::start_with(index, log, true).0
    }

    /// Starts the server on a free port; with `access_log` false, with its access log turned
    /// off (`RUST_LOG=info,svcdir::access=off`). Also returns the time from
    /// spawning the process to the first accepted TCP connection.
    pub fn start_with(index: &Path, log: PathBuf, access_log: bool) -> (Server, Duration) {
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
        let address = format!("127.0.0.1:{port}");
        let stderr = Stdio::from(std::fs::File::create(&log).expect("log file"));
        // The access log is its own tracing target: off alone, the rest of the log stays.
        let filter = if access_log { "info" } else { "info,svcdir::access=off" };
        let spawned = Instant::now();
        let child = Command::new(env!("CARGO_BIN_EXE_svcdir-search"))
            .args(["--index", index.to_str().expect("utf-8 path"), "--listen", &address, "--log-format", "text"])
            .env("RUST_LOG", filter)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .expect("svcdir-search starts");
        let mut server = Server { child: svcdir_testkit::KillOnDrop(child), address: String::new(), log };
        let deadline = spawned + Duration::from_secs(60);
        loop {
            assert!(Instant::now() < deadline, "server did not start: {}", server.log_text());
            if std::net::TcpStream::connect(&address).is_ok() {
                break;
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("server exited with {status}: {}", server.log_text());
            }
            std::thread::sleep(Duration::from_micros(500));
        }
        let ready = spawned.elapsed();
        server.address = address;
        (server, ready)
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Peak resident set size in MB (VmHWM).
    pub fn peak_rss_mb(&self) -> f64 {
        self.status_mb("VmHWM:")
    }

    /// A `kB` field of `/proc/PID/status` (`VmRSS:`, `VmHWM:`), in MB.
    pub fn status_mb(&self, field: &str) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
            .unwrap_or(f64::NAN)
    }

    /// Private (anonymous) resident memory in MB (RssAnon).
    pub fn rss_anon_mb(&self) -> f64 {
        self.status_mb("RssAnon:")
    }

    pub fn stop(mut self) -> Option<i32> {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

/// nginx serving one static file, as the reference for the search server's figures (the
/// same machine, the same client, the same run).
pub struct Nginx {
    pub child: Child,
    pub address: String,
    pub dir: tempfile::TempDir,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGQUIT: graceful stop of the master and its workers.
        let _ = Command::new("kill").args(["-QUIT", &self.child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Nginx {
    /// Serves `/answer.json` (`body`) on a free loopback port with one worker per core and
    /// an access log written to a file, as a deployment would.
    pub fn start(binary: &Path, body: &[u8]) -> Nginx {
        Nginx::start_with(binary, body, true)
    }

    /// nginx with the configuration `svcdir nginx-config` generates (search cache on, access
    /// log on, as generated), proxying the search to `search` (`HOST:PORT`); its build
    /// folder is empty, as only the search paths are asked.
    pub fn start_generated(binary: &Path, search: &str) -> Nginx {
        let dir = tempfile::tempdir().expect("temp dir");
        let public = dir.path().join("public");
        std::fs::create_dir_all(&public).expect("public");
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
        let address = format!("127.0.0.1:{port}");
        let conf = svcdir::nginx::NginxConfig::new(&public, &address, &[search.to_owned()], true)
            .and_then(|c| c.render())
            .expect("nginx.conf generated");
        std::fs::write(dir.path().join("nginx.conf"), conf).expect("nginx.conf");
        Nginx::spawn(binary, dir, address)
    }

    /// [`Nginx::start`], with the access log on (to a file) or off (`access_log off`: the
    /// HTTP ceiling of issue 24's ratio).
    pub fn start_with(binary: &Path, body: &[u8], access_log: bool) -> Nginx {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("root");
        std::fs::create_dir_all(&root).expect("root");
        std::fs::write(root.join("answer.json"), body).expect("answer file");
        Nginx::serve_root(binary, dir, access_log)
    }

    /// nginx serving the files of `dir/root` as they are, configured as
    /// [`Nginx::start_with`]'s; `dir` is its prefix, removed when it stops.
    pub fn serve_root(binary: &Path, dir: tempfile::TempDir, access_log: bool) -> Nginx {
        let root = dir.path().join("root");
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
        let address = format!("127.0.0.1:{port}");
        let p = dir.path().display();
        let log = if access_log { format!("{p}/access.log") } else { "off".to_owned() };
        let conf = format!(
            "daemon off;\nworker_processes auto;\npid {p}/nginx.pid;\nerror_log {p}/error.log;\n\
             events {{ worker_connections 1024; }}\n\
             http {{\n  access_log {log};\n  client_body_temp_path {p}/tmp;\n  proxy_temp_path {p}/tmp;\n  \
             fastcgi_temp_path {p}/tmp;\n  uwsgi_temp_path {p}/tmp;\n  scgi_temp_path {p}/tmp;\n  \
             keepalive_requests 1000000;\n  types {{ application/json json; }}\n  \
             server {{ listen {address}; root {root}; }}\n}}\n",
            root = root.display()
        );
        std::fs::write(dir.path().join("nginx.conf"), conf).expect("nginx.conf");
        Nginx::spawn(binary, dir, address)
    }

    /// Runs nginx on `dir/nginx.conf` with `dir` as its prefix, and waits until it listens.
    fn spawn(binary: &Path, dir: tempfile::TempDir, address: String) -> Nginx {
        let child = Command::new(binary)
            .args(["-p", &dir.path().display().to_string(), "-c", &dir.path().join("nginx.conf").display().to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx starts");
        let nginx = Nginx { child, address: address.clone(), dir };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(&address).is_err() {
            assert!(Instant::now() < deadline, "nginx did not start");
            std::thread::sleep(Duration::from_millis(5));
        }
        nginx
    }
}

/// A deterministic mix of queries over the dataset: postcode only at various radii and
/// pages, with `q`, with `category`, with `location_type`, and combinations; v4 and v3.
pub fn queries(dir: &Directory, seed: u64) -> Vec<String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut words: Vec<String> = dir
        .services
        .iter()
        .step_by(97)
        .flat_map(|s| svcdir::index::text::words(&s.name))
        .chain(dir.categories.nodes.iter().flat_map(|n| svcdir::index::text::words(&n.name)))
        .filter(|w| w.len() >= 4)
        .collect();
    words.sort();
    words.dedup();
    let slugs: Vec<&str> = dir.categories.nodes.iter().map(|n| n.slug.as_str()).collect();
    let postcodes = &dir.postcodes.postcodes;
    (0..QUERIES)
        .map(|_| {
            let postcode = &postcodes[rng.gen_range(0..postcodes.len())].code;
            let mut q = form_urlencoded::Serializer::new(String::new());
            q.append_pair("postcode", postcode);
            let kind = rng.gen_range(0..100);
            let radius = *[1000u32, 2000, 5000, 5000, 10_000, 20_000].choose(&mut rng).expect("radii");
            if radius != 5000 {
                q.append_pair("radius", &radius.to_string());
            }
            if (40..60).contains(&kind) || kind >= 95 {
                let word = words.choose(&mut rng).expect("words");
                q.append_pair("q", word);
            }
            if (60..80).contains(&kind) || kind >= 95 {
                let n = rng.gen_range(1..3);
                let chosen: Vec<&str> = (0..n).map(|_| *slugs.choose(&mut rng).expect("slugs")).collect();
                q.append_pair("category", &chosen.join(","));
            }
            if (80..95).contains(&kind) {
                q.append_pair("location_type", if rng.gen_bool(0.5) { "local" } else { "national" });
            }
            let v3 = rng.gen_bool(0.1);
            if !v3 && rng.gen_bool(0.2) {
                q.append_pair("page_size", ["25", "50", "100"].choose(&mut rng).expect("sizes"));
            }
            let page = *[1u32, 1, 1, 1, 1, 1, 2, 2, 3].choose(&mut rng).expect("pages");
            if page > 1 {
                q.append_pair("page", &page.to_string());
            }
            let path = if v3 { "/api/v3/search/" } else { "/api/v4/services/" };
            format!("{path}?{}", q.finish())
        })
        .collect()
}

/// The `p`-th percentile of sorted latencies.
pub fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1] as f64 / 1000.0
}

/// The figures of one `wrk` run, from the line `rotate.lua`'s `done` prints.
#[derive(Debug, Default, Clone, Copy)]
pub struct WrkRun {
    pub requests: u64,
    pub seconds: f64,
    pub bytes: u64,
    /// Answers with a status of 400 or more (wrk's "Non-2xx or 3xx responses").
    pub non2xx: u64,
    /// Socket errors: connect, read, write and timeout together.
    pub socket_errors: u64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl WrkRun {
    pub fn rps(&self) -> f64 {
        self.requests as f64 / self.seconds
    }

    /// Share of the answers that were not 2xx or 3xx, in per cent.
    pub fn non2xx_percent(&self) -> f64 {
        100.0 * self.non2xx as f64 / self.requests.max(1) as f64
    }
}

/// Where `wrk` is: `SVCDIR_WRK`, else `wrk` on the PATH; `None` (with how to install it)
/// when absent.
pub fn wrk_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("SVCDIR_WRK") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join("wrk")).find(|p| p.is_file())
}

/// The Lua script every wrk run uses (written beside the query files).
pub const ROTATE_LUA: &str = include_str!("rotate.lua");

/// Runs `wrk -t THREADS -c CONNECTIONS --latency` for `duration` against `address`, its
/// requests rotating through the lines of `queries` (`script`: [`ROTATE_LUA`] on disk).
pub fn wrk(binary: &Path, script: &Path, address: &str, queries: &Path, duration: Duration) -> Result<WrkRun, String> {
    let output = Command::new(binary)
        .args(["-t", &CLIENT_THREADS.to_string(), "-c", &CONNECTIONS.to_string(), "--latency", "--timeout", "5s"])
        .arg("-d")
        // wrk takes whole seconds (its time units are s, m and h).
        .arg(format!("{}s", duration.as_secs().max(1)))
        .arg("-s")
        .arg(script)
        .arg(format!("http://{address}"))
        .arg("--")
        .arg(queries)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("wrk did not run: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().find_map(|l| l.strip_prefix("svcdir-wrk ")).ok_or_else(|| {
        format!("wrk printed no figures ({}): {stdout} {}", output.status, String::from_utf8_lossy(&output.stderr))
    })?;
    let field = |name: &str| -> Result<u64, String> {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("wrk figure {name} missing in {line:?}"))
    };
    let ms = |name: &str| field(name).map(|us| us as f64 / 1000.0);
    Ok(WrkRun {
        requests: field("requests")?,
        seconds: field("duration_us")? as f64 / 1e6,
        bytes: field("bytes")?,
        non2xx: field("non2xx")?,
        socket_errors: field("connect")? + field("read")? + field("write")? + field("timeout")?,
        p50_ms: ms("p50_us")?,
        p90_ms: ms("p90_us")?,
        p99_ms: ms("p99_us")?,
        max_ms: ms("max_us")?,
    })
}
