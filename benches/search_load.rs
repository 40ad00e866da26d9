//! Load benchmark of `svcdir-search` against nginx (`make bench-search`, or
//! `cargo bench --bench search_load`).
//!
//! For each size (default 10,000 and 100,000 services; `SVCDIR_BENCH_SIZES=10000` to
//! choose): generates a sample dataset (`svcdir::sample::generate`, seed 2024), loads and
//! validates it, builds and writes the search index, times reading the index back, and
//! writes a mixed query file (`target/bench-search/queries-N.txt`, derived deterministically
//! from the dataset's postcodes, words and categories). Then it starts three targets and
//! drives them in turn, three rounds of a third of `SVCDIR_BENCH_SECONDS` (default 10) each,
//! after a warm-up (2 s in all), from 64 keep-alive HTTP/1.1 connections on a 2-thread tokio
//! runtime, so that whatever else the machine does weighs on the three alike
//! (`SVCDIR_BENCH_KEEP=1` also keeps each index as `target/bench-search/search-N.idx`, to
//! profile the server on it):
//! 1. the real `svcdir-search` binary on a free loopback port, access log on (to a file):
//!    the time from spawning it to its first accepted connection, requests/s, latency
//!    percentiles, and its RssAnon and VmHWM after the run;
//! 2. the same with its stderr (the access log) on /dev/null: what the log costs;
//! 3. nginx (if installed: `apt-get install nginx-light`) serving one file of the mean
//!    size of the search's 2xx answers (from a first warm-up run of 1.), with its access log
//!    on: the reference the targets of issue 12 are relative to.
//!
//! Run without `--bench` (as `cargo test --all-targets` does) it only makes a 1-second smoke
//! run on 300 services. Reports two Markdown tables on stdout.
//!
//! Traffic goes to 127.0.0.1 only; every loop is bounded in time and every server is
//! stopped at the end of each size.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use svcdir::index::SearchIndex;
use svcdir::views::Publication;

mod support;
use support::{CLIENT_THREADS, CONNECTIONS, Nginx, Server, percentile, queries};
use svcdir_testkit::process::nginx_binary;

#[derive(Default)]
struct Load {
    latencies_us: Vec<u32>,
    statuses: [u64; 6],
    bytes: u64,
    /// Body bytes of the 2xx answers.
    ok_bytes: u64,
    errors: u64,
    /// The first failure's message, for the report.
    first_error: Option<String>,
}

impl Load {
    /// Adds another run's figures to these.
    fn merge(&mut self, other: Load) {
        self.latencies_us.extend(other.latencies_us);
        for (t, s) in self.statuses.iter_mut().zip(other.statuses) {
            *t += s;
        }
        self.bytes += other.bytes;
        self.ok_bytes += other.ok_bytes;
        self.errors += other.errors;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
    }

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
                    if answer.status / 100 == 2 {
                        load.ok_bytes += answer.bytes as u64;
                    }
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
/// Rounds of the three targets' runs (see [`bench`]).
const ROUNDS: u32 = 3;

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
                // Deliberate: the load runs for its set length.
                tokio::time::sleep(length).await;
                stopper.store(true, Ordering::Relaxed);
                let mut total = Load::default();
                for task in tasks {
                    total.merge(task.await.expect("connection task"));
                }
                (total, started.elapsed())
            }
        };
        let _ = run(warm_up).await;
        run(duration).await
    })
}

/// Requests/s and latency percentiles of one measured run.
#[derive(Default, Clone, Copy)]
struct Figures {
    rps: f64,
    p50: f64,
    p99: f64,
    max: f64,
}

impl Figures {
    fn of(load: &Load, elapsed: Duration) -> Figures {
        let mut latencies = load.latencies_us.clone();
        latencies.sort_unstable();
        Figures {
            rps: latencies.len() as f64 / elapsed.as_secs_f64(),
            p50: percentile(&latencies, 50.0),
            p99: percentile(&latencies, 99.0),
            max: percentile(&latencies, 100.0),
        }
    }
}

struct Row {
    services: usize,
    postcodes: usize,
    index_mb: f64,
    build_s: f64,
    load_ms: f64,
    server_load_ms: String,
    ready_ms: f64,
    search: Figures,
    quiet: Figures,
    nginx: Option<Figures>,
    answer_bytes: f64,
    rss_anon_mb: f64,
    peak_mb: f64,
    statuses: String,
    exit: Option<i32>,
    /// What went wrong, if anything: a server error, a failed request, a bad exit.
    problems: Vec<String>,
}

fn check(load: &Load, what: &str, problems: &mut Vec<String>) {
    if load.statuses[5] > 0 || load.errors > 0 {
        problems.push(format!(
            "{what}: {} 5xx responses, {} failed requests (first: {})",
            load.statuses[5],
            load.errors,
            load.first_error.as_deref().unwrap_or("-")
        ));
    }
    if load.statuses[2] == 0 {
        problems.push(format!("{what}: no successful response"));
    }
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
    // `SVCDIR_BENCH_KEEP=1`: keep a copy of the index beside the query file, for profiling
    // the server on exactly what was measured.
    if std::env::var_os("SVCDIR_BENCH_KEEP").is_some() {
        std::fs::copy(&index_path, out.join(format!("search-{size}.idx"))).expect("index kept");
    }
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

    let queries = Arc::new(queries(&dir, 7));
    let query_file = out.join(format!("queries-{size}.txt"));
    let mut file = std::fs::File::create(&query_file).expect("query file");
    for q in queries.iter() {
        writeln!(file, "{q}").expect("write query");
    }
    let postcodes = dir.postcodes.postcodes.len();
    drop(dir);
    let mut problems = Vec::new();

    // Three targets, all started first and then driven in turn, ROUNDS times each for a
    // third of the time: a change in what else the machine does then weighs on all three
    // alike, where three runs one after another (as before) let one drift apart by ±15 %.
    // 1. The server as deployed: access log on (to a file).
    let (server, ready) = Server::start_with(&index_path, work.path().join("server.log"), true);
    // The server's own figure, from its start-up line (once it is written, at most 10 s).
    let deadline = Instant::now() + Duration::from_secs(10);
    while !server.log_text().contains("load_ms=") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let server_load_ms = server
        .log_text()
        .split("load_ms=")
        .nth(1)
        .map(|rest| rest.chars().take_while(char::is_ascii_digit).collect::<String>())
        .unwrap_or_else(|| "?".into());
    // The mean size of a 2xx answer, for nginx's file: from a first warm-up run.
    let (probe, _) = drive(&server.address, queries.clone(), Duration::ZERO, warm_up);
    let answer_bytes = probe.ok_bytes as f64 / probe.statuses[2].max(1) as f64;
    // 2. The same without the access log (stderr to /dev/null): what the log costs.
    let (quiet_server, _) = Server::start_with(&index_path, work.path().join("server-quiet.log"), false);
    // 3. nginx serving one file of the mean answer's size, same client, same connections.
    let nginx = nginx_binary().map(|binary| Nginx::start(&binary, &vec![b'x'; answer_bytes.round() as usize]));
    if nginx.is_none() {
        eprintln!("search_load: nginx not found (apt-get install nginx-light): no reference figures");
    }
    let answer_file = Arc::new(vec!["/answer.json".to_owned()]);
    let share = Duration::from_secs(seconds) / ROUNDS;
    let mut runs: [(Load, Duration); 3] = Default::default();
    for _ in 0..ROUNDS {
        let mut targets: Vec<(&str, Arc<Vec<String>>)> =
            vec![(&server.address, queries.clone()), (&quiet_server.address, queries.clone())];
        if let Some(nginx) = &nginx {
            targets.push((&nginx.address, answer_file.clone()));
        }
        for (n, (address, targets)) in targets.into_iter().enumerate() {
            let (load, elapsed) = drive(address, targets, warm_up / ROUNDS, share);
            runs[n].0.merge(load);
            runs[n].1 += elapsed;
        }
    }
    let [(load, elapsed), (quiet_load, quiet_elapsed), (nginx_load, nginx_elapsed)] = runs;
    let (rss_anon_mb, peak_mb) = (server.rss_anon_mb(), server.peak_rss_mb());
    let exit = server.stop();
    let _ = quiet_server.stop();
    check(&load, &format!("{size} services"), &mut problems);
    if exit != Some(0) {
        problems.push(format!("{size} services: server exit {exit:?} after SIGTERM"));
    }
    check(&quiet_load, &format!("{size} services, no access log"), &mut problems);
    let search = Figures::of(&load, elapsed);
    let quiet = Figures::of(&quiet_load, quiet_elapsed);
    let nginx = nginx.map(|nginx| {
        check(&nginx_load, "nginx", &mut problems);
        drop(nginx);
        Figures::of(&nginx_load, nginx_elapsed)
    });

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
        ready_ms: ready.as_secs_f64() * 1000.0,
        search,
        quiet,
        nginx,
        answer_bytes,
        rss_anon_mb,
        peak_mb,
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
        "| services | postcodes | index file | build+write | index load (bench / server) | ready after start | requests/s | p50 | p99 | max | RssAnon after | VmHWM | responses | exit |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n",
    );
    let mut versus = String::from(
        "| services | mean 2xx answer | search req/s | search p99 | nginx req/s | nginx p99 | req/s ÷ nginx | p99 ÷ nginx | target | no access log: req/s, p99 | access log cost |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|\n",
    );
    let mut problems = Vec::new();
    for size in sizes {
        eprintln!("search_load: {size} services ...");
        let row = bench(size, seconds, warm_up, &out);
        problems.extend(row.problems.iter().cloned());
        let _ = writeln!(
            table,
            "| {} | {} | {:.1} MB | {:.1} s | {:.0} ms / {} ms | {:.0} ms | {:.0} | {:.2} ms | {:.2} ms | {:.1} ms | {:.0} MB | {:.0} MB | {} | {} |",
            row.services,
            row.postcodes,
            row.index_mb,
            row.build_s,
            row.load_ms,
            row.server_load_ms,
            row.ready_ms,
            row.search.rps,
            row.search.p50,
            row.search.p99,
            row.search.max,
            row.rss_anon_mb,
            row.peak_mb,
            row.statuses,
            row.exit.map(|c| c.to_string()).unwrap_or_else(|| "none".into()),
        );
        let (target_rps, target_p99) = if row.services >= 100_000 { (0.20, 3.0) } else { (0.30, 2.0) };
        let nginx = row.nginx.unwrap_or(Figures { rps: f64::NAN, p50: f64::NAN, p99: f64::NAN, max: f64::NAN });
        let (rps_ratio, p99_ratio) = (row.search.rps / nginx.rps, row.search.p99 / nginx.p99);
        let met = if rps_ratio >= target_rps && p99_ratio <= target_p99 { "met" } else { "NOT met" };
        let _ = writeln!(
            versus,
            "| {} | {:.1} kB | {:.0} | {:.2} ms | {:.0} | {:.2} ms | {:.2}× | {:.2}× | ≥ {target_rps}×, ≤ {target_p99}×: {met} | {:.0}, {:.2} ms | {:+.1} % |",
            row.services,
            row.answer_bytes / 1000.0,
            row.search.rps,
            row.search.p99,
            nginx.rps,
            nginx.p99,
            rps_ratio,
            p99_ratio,
            row.quiet.rps,
            row.quiet.p99,
            (row.quiet.rps / row.search.rps - 1.0) * 100.0,
        );
    }
    println!(
        "\n{CONNECTIONS} connections, {CLIENT_THREADS} client threads, {seconds} s after a {:.1} s warm-up\n",
        warm_up.as_secs_f64()
    );
    println!("{table}");
    println!("{versus}");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average at the end: {}", load.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
    for problem in &problems {
        eprintln!("search_load: FAILED: {problem}");
    }
    // The plain closing line test runners' summaries are read for.
    println!("search_load: {} passed, {} failed", usize::from(problems.is_empty()), usize::from(!problems.is_empty()));
    if !problems.is_empty() {
        std::process::exit(1);
    }
}
