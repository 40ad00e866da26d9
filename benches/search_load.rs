//! Load benchmark of `svcdir-search` (`make bench-search`, or
//! `cargo bench --bench search_load`).
//!
//! For each size (default 10,000 and 100,000 services; `SVCDIR_BENCH_SIZES=10000` to
//! choose): generates a sample dataset (`svcdir::sample::generate`, seed 2024), loads and
//! validates it, builds and writes the search index, times reading the index back, starts
//! the real `svcdir-search` binary on a free loopback port, and drives it with a mixed query
//! file (written to `target/bench-search/queries-N.txt`, derived deterministically from the
//! dataset's postcodes, words and categories) from 64 keep-alive HTTP/1.1 connections on a
//! 2-thread tokio runtime, for `SVCDIR_BENCH_SECONDS` (default 10) after a 2 s warm-up.
//! Run without `--bench` (as `cargo test --all-targets` does) it only makes a 1-second smoke
//! run on 300 services.
//! Reports requests/s, p50/p99/max latency, the index load time and the server's peak RSS
//! (VmHWM), as a Markdown table on stdout.
//!
//! Traffic goes to 127.0.0.1 only; every loop is bounded in time and the server is stopped
//! (SIGTERM) at the end of each size.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use svcdir::index::SearchIndex;
use svcdir::views::Publication;

mod support;
use support::{CLIENT_THREADS, CONNECTIONS, Server, percentile, queries};

#[derive(Default)]
struct Load {
    latencies_us: Vec<u32>,
    statuses: [u64; 6],
    bytes: u64,
    errors: u64,
    /// The first failure's message, for the report.
    first_error: Option<String>,
}

impl Load {
    fn fail(&mut self, what: &str, error: impl std::fmt::Display) {
        self.errors += 1;
        self.first_error.get_or_insert_with(|| format!("{what}: {error}"));
    }
}

/// One keep-alive connection sending the queries in turn until `stop`.
async fn connection(address: String, queries: Arc<Vec<String>>, start: usize, stop: Arc<AtomicBool>) -> Load {
    let mut load = Load::default();
    let mut n = start;
    'reconnect: while !stop.load(Ordering::Relaxed) {
        let mut sender = match support::connect(&address).await {
            Ok(sender) => sender,
            Err((what, e)) => {
                load.fail(what, e);
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        while !stop.load(Ordering::Relaxed) {
            let target = &queries[n % queries.len()];
            n += 1;
            match support::get(&mut sender, target).await {
                Ok(answer) => {
                    load.latencies_us.push(answer.micros);
                    load.statuses[(answer.status / 100).min(5) as usize] += 1;
                    load.bytes += answer.bytes as u64;
                }
                Err(e) => {
                    load.fail(target, e);
                    continue 'reconnect;
                }
            }
        }
    }
    load
}

/// Runs the connections for `duration`, after a warm-up whose results are dropped.
fn drive(address: &str, queries: Arc<Vec<String>>, warm_up: Duration, duration: Duration) -> (Load, Duration) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(CLIENT_THREADS)
        .enable_all()
        .build()
        .expect("client runtime");
    runtime.block_on(async {
        let run = |length: Duration| {
            let stop = Arc::new(AtomicBool::new(false));
            let tasks: Vec<_> = (0..CONNECTIONS)
                .map(|c| {
                    tokio::spawn(connection(
                        address.to_owned(),
                        queries.clone(),
                        c * queries.len() / CONNECTIONS,
                        stop.clone(),
                    ))
                })
                .collect();
            let stopper = stop.clone();
            async move {
                let started = Instant::now();
                tokio::time::sleep(length).await;
                stopper.store(true, Ordering::Relaxed);
                let mut total = Load::default();
                for task in tasks {
                    let load = task.await.expect("connection task");
                    total.latencies_us.extend(load.latencies_us);
                    for (t, s) in total.statuses.iter_mut().zip(load.statuses) {
                        *t += s;
                    }
                    total.bytes += load.bytes;
                    total.errors += load.errors;
                    if total.first_error.is_none() {
                        total.first_error = load.first_error;
                    }
                }
                (total, started.elapsed())
            }
        };
        let _ = run(warm_up).await;
        run(duration).await
    })
}

struct Row {
    services: usize,
    postcodes: usize,
    index_mb: f64,
    build_s: f64,
    load_ms: f64,
    server_load_ms: String,
    rps: f64,
    p50: f64,
    p99: f64,
    max: f64,
    rss_mb: f64,
    statuses: String,
    exit: Option<i32>,
    /// What went wrong, if anything: a server error, a failed request, a bad exit.
    problems: Vec<String>,
}

fn bench(size: usize, seconds: u64, warm_up: Duration, out: &Path) -> Row {
    let work = tempfile::tempdir().expect("temp dir");
    let input = work.path().join("input");
    let cfg = svcdir::sample::SampleConfig { services: size, seed: 2024, out: input.clone() };
    svcdir::sample::generate(&cfg).expect("sample dataset");
    let dir = svcdir::validate::load_directory(&input).unwrap_or_else(|e| panic!("dataset loads: {e:?}"));
    let publication = Publication::with_defaults("http://127.0.0.1:8081".into(), "http://127.0.0.1:8080".into());

    let started = Instant::now();
    let index = SearchIndex::build(&dir, &publication);
    let index_path = work.path().join("search.idx");
    index.write(&index_path).expect("index written");
    let build_s = started.elapsed().as_secs_f64();
    drop(index);
    let index_mb = std::fs::metadata(&index_path).map(|m| m.len() as f64 / 1e6).unwrap_or(f64::NAN);

    // Index load: best of 5 reads (file in the page cache, as after any restart).
    let load_ms = (0..5)
        .map(|_| {
            let started = Instant::now();
            let index = SearchIndex::read(&index_path).expect("index reads");
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            drop(index);
            ms
        })
        .fold(f64::INFINITY, f64::min);

    let queries = queries(&dir, 7);
    let query_file = out.join(format!("queries-{size}.txt"));
    let mut file = std::fs::File::create(&query_file).expect("query file");
    for q in &queries {
        writeln!(file, "{q}").expect("write query");
    }
    let postcodes = dir.postcodes.postcodes.len();
    drop(dir);

    let server = Server::start(&index_path, work.path().join("server.log"));
    let server_load_ms =
        server.log_text().split(" in ").nth(1).and_then(|rest| rest.split(" ms").next()).unwrap_or("?").to_owned();
    let (load, elapsed) = drive(&server.address, Arc::new(queries), warm_up, Duration::from_secs(seconds));
    let rss_mb = server.peak_rss_mb();
    let exit = server.stop();

    let mut latencies = load.latencies_us;
    latencies.sort_unstable();
    let mut problems = Vec::new();
    if load.statuses[5] > 0 || load.errors > 0 {
        problems.push(format!(
            "{size} services: {} 5xx responses, {} failed requests (first: {})",
            load.statuses[5],
            load.errors,
            load.first_error.as_deref().unwrap_or("-")
        ));
    }
    if load.statuses[2] == 0 {
        problems.push(format!("{size} services: no successful response"));
    }
    if exit != Some(0) {
        problems.push(format!("{size} services: server exit {exit:?} after SIGTERM"));
    }
    let statuses = format!(
        "2xx {} / 4xx {} / 5xx {} / errors {}",
        load.statuses[2], load.statuses[4], load.statuses[5], load.errors
    );
    Row {
        services: size,
        postcodes,
        index_mb,
        build_s,
        load_ms,
        server_load_ms,
        rps: latencies.len() as f64 / elapsed.as_secs_f64(),
        p50: percentile(&latencies, 50.0),
        p99: percentile(&latencies, 99.0),
        max: percentile(&latencies, 100.0),
        rss_mb,
        statuses,
        exit,
        problems,
    }
}

fn main() {
    // `cargo bench` passes `--bench`. Without it (`cargo test --all-targets` runs every bench
    // target once, unoptimised) only a smoke run: a small dataset for one second, which
    // still checks that the whole harness works.
    let benching = std::env::args().any(|a| a == "--bench");
    let (default_sizes, default_seconds) = if benching { ("10000,100000", 10) } else { ("300", 1) };
    let sizes: Vec<usize> = std::env::var("SVCDIR_BENCH_SIZES")
        .ok()
        .filter(|_| benching)
        .unwrap_or_else(|| default_sizes.into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let seconds: u64 = std::env::var("SVCDIR_BENCH_SECONDS")
        .ok()
        .filter(|_| benching)
        .and_then(|s| s.parse().ok())
        .unwrap_or(default_seconds);
    let warm_up = if benching { Duration::from_secs(2) } else { Duration::from_millis(200) };
    if !benching {
        eprintln!("search_load: smoke run (300 services, 1 s); `cargo bench --bench search_load` for figures");
    }
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-search");
    std::fs::create_dir_all(&out).expect("output directory");

    let mut table = String::from(
        "| services | postcodes | index file | build+write | index load (bench / server) | requests/s | p50 | p99 | max | server peak RSS | responses | exit |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n",
    );
    let mut problems = Vec::new();
    for size in sizes {
        eprintln!("search_load: {size} services ...");
        let row = bench(size, seconds, warm_up, &out);
        problems.extend(row.problems.iter().cloned());
        let _ = writeln!(
            table,
            "| {} | {} | {:.1} MB | {:.1} s | {:.0} ms / {} ms | {:.0} | {:.2} ms | {:.2} ms | {:.1} ms | {:.0} MB | {} | {} |",
            row.services,
            row.postcodes,
            row.index_mb,
            row.build_s,
            row.load_ms,
            row.server_load_ms,
            row.rps,
            row.p50,
            row.p99,
            row.max,
            row.rss_mb,
            row.statuses,
            row.exit.map(|c| c.to_string()).unwrap_or_else(|| "none".into()),
        );
    }
    println!(
        "\n{CONNECTIONS} connections, {CLIENT_THREADS} client threads, {seconds} s after a {:.1} s warm-up\n",
        warm_up.as_secs_f64()
    );
    println!("{table}");
    for problem in &problems {
        eprintln!("search_load: FAILED: {problem}");
    }
    // The plain closing line test runners' summaries are read for.
    println!("search_load: {} passed, {} failed", usize::from(problems.is_empty()), usize::from(!problems.is_empty()));
    if !problems.is_empty() {
        std::process::exit(1);
    }
}
