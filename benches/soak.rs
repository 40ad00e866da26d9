//! Soak benchmark of `svcdir-search` (`make bench-soak`, or `cargo bench --bench soak`;
//! issue 6).
//!
//! Generates a sample dataset of 10,000 services (`svcdir::sample::generate`, seed 2024;
//! `SOAK_SERVICES` to change), builds and writes the search index, starts the real
//! `svcdir-search` binary on a free loopback port and drives it with the mixed query file of
//! `search_load` (the same generator, copied here: postcodes at various radii and pages, with
//! `q`, `category`, `location_type`, v4 and v3) from 64 keep-alive HTTP/1.1 connections on a
//! 2-thread tokio runtime for `SOAK_SECONDS` (default 600). Every 10 s
//! (`SOAK_INTERVAL_SECONDS`) it samples the server's resident set (VmRSS from
//! `/proc/PID/status`) and the latencies of the requests completed in that interval, and at
//! the end prints a Markdown table: time, requests in the interval, requests/s, p50, p99,
//! max, RSS; then the peak RSS (VmHWM) and the totals.
//!
//! Run without `--bench` (as `cargo test --all-targets` does) it only makes a 2-second smoke
//! run on 300 services, sampling every 0.5 s.
//!
//! It fails (exit 1) on any 5xx answer, failed request, or a server that does not exit 0 on
//! SIGTERM. Traffic goes to 127.0.0.1 only; the load is bounded in time.
// A test crate's modules share items as `pub`; the lint is for the library's API (Cargo.toml).
#![allow(unreachable_pub)]

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use svcdir::index::SearchIndex;
use svcdir::views::Publication;

mod support;
use support::{CLIENT_THREADS, CONNECTIONS, Server, percentile, queries};
/// What the connections share: the latencies since the last sample, and counters.
struct Shared {
    started: Instant,
    latencies_us: Mutex<Vec<u32>>,
    statuses: [AtomicU64; 6],
    errors: AtomicU64,
    /// The first failures, each with its time since the start, to find in the server log.
    failures: Mutex<Vec<String>>,
}

impl Shared {
    fn new() -> Shared {
        Shared {
            started: Instant::now(),
            latencies_us: Mutex::default(),
            statuses: Default::default(),
            errors: AtomicU64::new(0),
            failures: Mutex::default(),
        }
    }

    fn fail(&self, what: &str, error: impl std::fmt::Display) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        let mut failures = self.failures.lock().expect("lock");
        if failures.len() < 20 {
            failures.push(format!("at {:.3} s, {what}: {error}", self.started.elapsed().as_secs_f64()));
        }
    }
}

/// One keep-alive connection sending the queries in turn until `stop`.
async fn connection(
    address: String,
    queries: Arc<Vec<String>>,
    start: usize,
    stop: Arc<AtomicBool>,
    shared: Arc<Shared>,
) {
    let mut n = start;
    'reconnect: while !stop.load(Ordering::Relaxed) {
        let mut sender = match support::connect(&address).await {
            Ok(sender) => sender,
            Err((what, e)) => {
                shared.fail(what, e);
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let mut batch = Vec::with_capacity(64);
        while !stop.load(Ordering::Relaxed) {
            let target = &queries[n % queries.len()];
            n += 1;
            let answer = match support::get(&mut sender, target).await {
                Ok(answer) => answer,
                Err(e) => {
                    shared.fail(target, e);
                    continue 'reconnect;
                }
            };
            batch.push(answer.micros);
            shared.statuses[(answer.status / 100).min(5) as usize].fetch_add(1, Ordering::Relaxed);
            // Hand latencies over in small batches: little contention, at most a few ms late.
            if batch.len() >= 16 {
                shared.latencies_us.lock().expect("lock").append(&mut batch);
            }
        }
        shared.latencies_us.lock().expect("lock").append(&mut batch);
    }
}

fn env_or<T: std::str::FromStr>(name: &str, benching: bool, default: T) -> T {
    std::env::var(name).ok().filter(|_| benching).and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn main() {
    // `cargo bench` passes `--bench`; without it (`cargo test --all-targets`) a smoke run.
    let benching = std::env::args().any(|a| a == "--bench");
    let services: usize = env_or("SOAK_SERVICES", benching, if benching { 10_000 } else { 300 });
    let seconds: f64 = env_or("SOAK_SECONDS", benching, if benching { 600.0 } else { 2.0 });
    let interval: f64 = env_or("SOAK_INTERVAL_SECONDS", benching, if benching { 10.0 } else { 0.5 });
    if !benching {
        eprintln!("soak: smoke run (300 services, 2 s); `cargo bench --bench soak` for figures");
    }

    let work = tempfile::tempdir().expect("temp dir");
    let input = work.path().join("input");
    let cfg = svcdir::sample::SampleConfig { services, seed: 2024, out: input.clone() };
    svcdir::sample::generate(&cfg).expect("sample dataset");
    let dir = svcdir::validate::load_directory(&input).unwrap_or_else(|e| panic!("dataset loads: {e:?}"));
    let publication = Publication::with_defaults("http://127.0.0.1:8081".into(), "http://127.0.0.1:8080".into());
    let index_path = work.path().join("search.idx");
    SearchIndex::build(&dir, &publication).write(&index_path).expect("index written");
    let queries = Arc::new(queries(&dir, 7));
    drop(dir);

    let server = Server::start(&index_path, work.path().join("server.log"));
    let rss_start = server.status_mb("VmRSS:");
    eprintln!("soak: {services} services, {seconds} s, sampling every {interval} s; RSS at start {rss_start:.1} MB");

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(CLIENT_THREADS)
        .enable_all()
        .build()
        .expect("client runtime");
    let shared = Arc::new(Shared::new());
    let stop = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = (0..CONNECTIONS)
        .map(|c| {
            runtime.spawn(connection(
                server.address.clone(),
                queries.clone(),
                c * queries.len() / CONNECTIONS,
                stop.clone(),
                shared.clone(),
            ))
        })
        .collect();

    let mut table = String::from(
        "| time s | requests | requests/s | p50 ms | p99 ms | max ms | RSS MB |\n|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let _ = writeln!(table, "| 0 | - | - | - | - | - | {rss_start:.1} |");
    let started = Instant::now();
    let mut last = started;
    let mut total = 0usize;
    let mut tick = 1u32;
    loop {
        let at = (f64::from(tick) * interval).min(seconds);
        let deadline = started + Duration::from_secs_f64(at);
        // Deliberate: one sample every interval.
        std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
        let now = Instant::now();
        let mut latencies = std::mem::take(&mut *shared.latencies_us.lock().expect("lock"));
        let rss = server.status_mb("VmRSS:");
        latencies.sort_unstable();
        let span = now.duration_since(last).as_secs_f64();
        last = now;
        total += latencies.len();
        let p99 = percentile(&latencies, 99.0);
        let line = format!(
            "| {:.1} | {} | {:.0} | {:.2} | {:.2} | {:.1} | {:.1} |",
            now.duration_since(started).as_secs_f64(),
            latencies.len(),
            latencies.len() as f64 / span,
            percentile(&latencies, 50.0),
            p99,
            percentile(&latencies, 100.0),
            rss
        );
        eprintln!("soak: {line}");
        let _ = writeln!(table, "{line}");
        if at >= seconds {
            break;
        }
        tick += 1;
    }
    stop.store(true, Ordering::Relaxed);
    runtime.block_on(async {
        for task in tasks {
            let _ = tokio::time::timeout(Duration::from_secs(30), task).await;
        }
    });
    let elapsed = started.elapsed().as_secs_f64();
    let rss_end = server.status_mb("VmRSS:");
    let hwm = server.status_mb("VmHWM:");
    let server_log = server.log.clone();
    let exit = server.stop();

    let statuses: Vec<u64> = shared.statuses.iter().map(|s| s.load(Ordering::Relaxed)).collect();
    let errors = shared.errors.load(Ordering::Relaxed);
    println!("\nsoak: {services} services, {CONNECTIONS} connections, {CLIENT_THREADS} client threads, {seconds} s\n");
    println!("{table}");
    println!(
        "RSS start {rss_start:.1} MB, end {rss_end:.1} MB, peak (VmHWM) {hwm:.1} MB; {total} requests in {elapsed:.0} s \
         ({:.0}/s); 2xx {} / 4xx {} / 5xx {} / errors {errors}; server exit {exit:?}",
        total as f64 / elapsed,
        statuses[2],
        statuses[4],
        statuses[5],
    );
    let mut problems = Vec::new();
    if statuses[5] > 0 || errors > 0 {
        let failures = shared.failures.lock().expect("lock").clone();
        // Keep the server's log (one line per request, and any error it reported) to read.
        let kept = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("soak-server.log");
        let kept = match std::fs::copy(&server_log, &kept) {
            Ok(_) => kept.display().to_string(),
            Err(e) => format!("(not kept: {e})"),
        };
        problems.push(format!(
            "{} 5xx, {errors} failed requests; server log {kept}; failures:\n  {}",
            statuses[5],
            failures.join("\n  ")
        ));
    }
    if statuses[2] == 0 {
        problems.push("no successful response".to_owned());
    }
    if exit != Some(0) {
        problems.push(format!("server exit {exit:?} after SIGTERM"));
    }
    for problem in &problems {
        eprintln!("soak: FAILED: {problem}");
    }
    println!("soak: {} passed, {} failed", usize::from(problems.is_empty()), usize::from(!problems.is_empty()));
    if !problems.is_empty() {
        std::process::exit(1);
    }
}
