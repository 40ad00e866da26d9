//! Load benchmark of `svcdir-search` against nginx (`make bench-search`, or
//! `cargo bench --bench search_load`).
//!
//! For each size (default 10,000 and 100,000 services; `SVCDIR_BENCH_SIZES=10000` to
//! choose): generates a sample dataset (`svcdir::sample::generate`, seed 2024), loads and
//! validates it, builds and writes the search index, times reading the index back, and
//! writes a mixed query file (`target/bench-search/queries-N.txt`, derived deterministically
//! from the dataset's postcodes, words and categories; pages 2 and 3 that do not exist are
//! turned into page 1 but for a few, [`PAST_THE_END_EVERY`], so the 404s are a known share).
//!
//! The load is `wrk` (issue 24: a C load generator whose own cost is small; `apt-get install
//! wrk`, or `SVCDIR_WRK=/path/to/wrk`), 2 threads and 64 keep-alive connections, every
//! request taken in turn from a query file by `benches/support/rotate.lua`, and the targets
//! driven in turn, [`ROUNDS`] rounds of `SVCDIR_BENCH_SECONDS` (default 10) ÷ ROUNDS each
//! (whole seconds, wrk's unit) after a 1-second warm-up, so that whatever else the machine
//! does weighs on all alike (`SVCDIR_BENCH_KEEP=1` also keeps each index as
//! `target/bench-search/search-N.idx`, to profile the server on it). The targets:
//! 1. the real `svcdir-search` binary on a free loopback port, access log on (to a file, its
//!    default): the time from spawning it to its first accepted connection, requests/s,
//!    latency percentiles, the share of answers that are not 2xx, and its RssAnon and VmHWM
//!    after the run;
//! 2. the same with its access log off: what the log costs;
//! 3. nginx (`apt-get install nginx-light`) serving one file of the mean size of the
//!    search's 2xx answers to the query file, with `access_log off`: the HTTP ceiling, the
//!    ratio's reference;
//! 4. the same nginx with its access log on (to a file): the second row, both logs on;
//! 5. nginx with `access_log off` serving the search's 2xx answers to the query file, each
//!    as a static file of its own (`target/bench-search/answers-N.txt` lists their paths in
//!    the query file's order): what files of the answers' own sizes cost, which the mean
//!    size does not tell, as a large answer costs more than its share of bytes;
//! 6. the generated nginx configuration (`svcdir nginx-config`, search cache on) in front of
//!    the first target: in each round a new nginx, every query of the file asked once to
//!    fill its cache, then the measured pass, all hits, against the third target's
//!    requests/s and p99 (issue 24's reference), and the fifth's;
//! 7. nginx with `access_log off` serving as many files as the fifth, each of the mean size
//!    (`target/bench-search/distinct-N.txt`): the third target's bytes, but not one file
//!    that stays in the processor's caches. Between the third, this and the fifth, the
//!    "References" table shows what one file of the mean size leaves out: the cost of
//!    reading many answers from memory, and that of their spread of sizes.
//!
//! Before the load, the in-process hyper client of the earlier bench drives the first
//! target for 2 s: its latencies are reported as a latency probe only (its own cost caps
//! what it can measure; it once was the load of the ratio and flattered it).
//!
//! Run without `--bench` (as `cargo test --all-targets` does) it only makes a short smoke
//! run on 300 services. Reports Markdown tables on stdout.
//!
//! Traffic goes to 127.0.0.1 only; every loop is bounded in time and every server is
//! stopped at the end of each size.
// A test crate's modules share items as `pub`; the lint is for the library's API (Cargo.toml).
#![allow(unreachable_pub)]

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use svcdir::index::SearchIndex;
use svcdir::search::{ApiVersion, Deadline, RawQuery};
use svcdir::views::Publication;

mod support;
use support::{CLIENT_THREADS, CONNECTIONS, Nginx, Server, WrkRun, percentile, queries, wrk};
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

    /// Counts an answer: its status class and body bytes.
    fn record(&mut self, status: u16, bytes: usize) {
        self.statuses[(status / 100).min(5) as usize] += 1;
        self.bytes += bytes as u64;
        if status / 100 == 2 {
            self.ok_bytes += bytes as u64;
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
                    load.record(answer.status, answer.bytes);
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

/// Rounds of the targets' runs (see [`bench`]): five, so that each target's figure is taken
/// at five moments of a machine whose speed drifts, not two. With two, the server without
/// its access log once came out 29 % faster than with it, for a log that costs a few per
/// cent. The rounds' own figures are printed after the tables.
const ROUNDS: u32 = 5;

/// One query in this many whose page 2 or 3 is past the end stays so (a 404): about 0.2 %
/// of the mix, the few pages past the end the non-2xx share allows.
const PAST_THE_END_EVERY: usize = 40;

/// The in-process client's runtime: [`CLIENT_THREADS`] threads.
fn client_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(CLIENT_THREADS)
        .enable_all()
        .build()
        .expect("client runtime")
}

/// Runs the connections for `duration`, after a warm-up whose results are dropped.
fn drive(address: &str, queries: Arc<Vec<String>>, warm_up: Duration, duration: Duration) -> (Load, Duration) {
    client_runtime().block_on(async {
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

/// Waits for what was written or deleted to reach the disk (`sync`), so that the kernel
/// does not do it later, inside a measured pass.
fn flush_to_disk() {
    if let Err(e) = std::process::Command::new("sync").status() {
        eprintln!("search_load: sync: {e} (the disk's work may fall in a measured pass)");
    }
}

/// The connection in `slot`, opened first when there is none; `None` (the failure counted
/// in `load`) when it cannot be.
async fn connected<'a>(
    slot: &'a mut Option<support::Sender>,
    address: &str,
    load: &mut Load,
) -> Option<&'a mut support::Sender> {
    if slot.is_none() {
        match support::connect(address).await {
            Ok(sender) => *slot = Some(sender),
            Err((what, e)) => load.fail(what, e),
        }
    }
    slot.as_mut()
}

/// Connections the cache's fill asks its queries over.
const FILL_CONNECTIONS: usize = 16;

/// Asks every query of `queries` once, over [`FILL_CONNECTIONS`] keep-alive connections.
fn ask_each_once(address: &str, queries: &[String]) -> Load {
    client_runtime().block_on(async {
        let tasks: Vec<_> = (0..FILL_CONNECTIONS)
            .map(|c| {
                let address = address.to_owned();
                let mine: Vec<String> = queries.iter().skip(c).step_by(FILL_CONNECTIONS).cloned().collect();
                tokio::spawn(async move {
                    let mut load = Load::default();
                    let mut slot = None;
                    for target in &mine {
                        // One attempt a query; a failed one's connection is replaced.
                        let Some(sender) = connected(&mut slot, &address, &mut load).await else { continue };
                        match support::get(sender, target).await {
                            Ok(answer) => load.record(answer.status, answer.bytes),
                            Err(e) => {
                                load.fail(target, e);
                                slot = None;
                            }
                        }
                    }
                    load
                })
            })
            .collect();
        let mut total = Load::default();
        for task in tasks {
            total.merge(task.await.expect("fill task"));
        }
        total
    })
}

/// Asks every query of `queries` once, in turn on one connection to the search server at
/// `address`, and writes each 2xx answer as a static file `root/a/N.json` of a new folder
/// (N: the query's line), and their paths, in the order of `queries`, to `paths`. Returns
/// the folder (for [`Nginx::serve_root`]), the mean size of the answers, and what was asked.
fn answers_as_files(address: &str, queries: &[String], paths: &Path) -> (tempfile::TempDir, f64, Load) {
    let dir = tempfile::tempdir().expect("temp dir");
    let folder = dir.path().join("root/a");
    std::fs::create_dir_all(&folder).expect("answers folder");
    let mut list = String::new();
    let mut load = Load::default();
    client_runtime().block_on(async {
        let mut slot = None;
        for (n, target) in queries.iter().enumerate() {
            let Some(sender) = connected(&mut slot, address, &mut load).await else { continue };
            match support::fetch(sender, target).await {
                Ok((status, body)) => {
                    load.record(status, body.len());
                    if status / 100 == 2 {
                        std::fs::write(folder.join(format!("{n}.json")), &body).expect("answer file");
                        let _ = writeln!(list, "/a/{n}.json");
                    }
                }
                Err(e) => {
                    load.fail(target, e);
                    slot = None;
                }
            }
        }
    });
    std::fs::write(paths, list).expect("answers' paths");
    let mean = load.ok_bytes as f64 / load.statuses[2].max(1) as f64;
    (dir, mean, load)
}

/// Writes `count` files of `bytes` bytes each as `root/m/N.json` of a new folder, and their
/// paths to `paths`: target 7 of [`bench`], the reference's size in as many files as the
/// answers are. Their bytes differ (the file's number at the start), as the answers' do.
fn mean_size_files(count: usize, bytes: usize, paths: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let folder = dir.path().join("root/m");
    std::fs::create_dir_all(&folder).expect("mean-size files' folder");
    let mut list = String::new();
    let mut body = vec![b'x'; bytes];
    for n in 0..count {
        let mark = n.to_string();
        let end = mark.len().min(bytes);
        body[..end].copy_from_slice(&mark.as_bytes()[..end]);
        std::fs::write(folder.join(format!("{n}.json")), &body).expect("mean-size file");
        let _ = writeln!(list, "/m/{n}.json");
    }
    std::fs::write(paths, list).expect("mean-size files' paths");
    dir
}

/// Requests/s and latency percentiles of one measured run of the in-process client.
#[derive(Default, Clone, Copy)]
struct Figures {
    p50: f64,
    p99: f64,
}

impl Figures {
    fn of(load: &Load) -> Figures {
        let mut latencies = load.latencies_us.clone();
        latencies.sort_unstable();
        Figures { p50: percentile(&latencies, 50.0), p99: percentile(&latencies, 99.0) }
    }
}

/// The sum of a target's rounds: requests and time added, percentiles the mean of the
/// rounds' (wrk reports percentiles, not latencies).
#[derive(Default, Clone)]
struct Rounds(Vec<WrkRun>);

impl Rounds {
    fn rps(&self) -> f64 {
        self.0.iter().map(|r| r.requests).sum::<u64>() as f64 / self.0.iter().map(|r| r.seconds).sum::<f64>()
    }
    fn mean(&self, f: impl Fn(&WrkRun) -> f64) -> f64 {
        self.0.iter().map(f).sum::<f64>() / self.0.len().max(1) as f64
    }
    fn p50(&self) -> f64 {
        self.mean(|r| r.p50_ms)
    }
    fn p99(&self) -> f64 {
        self.mean(|r| r.p99_ms)
    }
    /// "requests/s, p99" as the tables' cells print them.
    fn cell(&self) -> String {
        format!("{:.0}, {:.2} ms", self.rps(), self.p99())
    }
    fn non2xx_percent(&self) -> f64 {
        let requests: u64 = self.0.iter().map(|r| r.requests).sum();
        100.0 * self.0.iter().map(|r| r.non2xx).sum::<u64>() as f64 / requests.max(1) as f64
    }
    fn socket_errors(&self) -> u64 {
        self.0.iter().map(|r| r.socket_errors).sum()
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
    /// The in-process client's latencies (a probe, not the load).
    probe: Figures,
    search: Rounds,
    quiet: Rounds,
    nginx_off: Rounds,
    nginx_on: Rounds,
    /// nginx serving the query file's answers as static files, `access_log off`.
    answers: Rounds,
    /// The second pass through the generated nginx configuration (search cache on).
    cached: Rounds,
    /// nginx serving as many files of the mean size as there are answers, `access_log off`.
    distinct: Rounds,
    answer_bytes: f64,
    /// How many of the query file's answers are 2xx: files of targets 5 and 7.
    answer_files: usize,
    rss_anon_mb: f64,
    peak_mb: f64,
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

fn check_wrk(rounds: &Rounds, what: &str, problems: &mut Vec<String>) {
    if rounds.socket_errors() > 0 {
        problems.push(format!("{what}: {} socket errors under wrk", rounds.socket_errors()));
    }
    if rounds.0.iter().all(|r| r.requests == 0) {
        problems.push(format!("{what}: no request answered under wrk"));
    }
}

/// Turns the pages 2 and 3 of `queries` that are past the end into page 1 (the `page`
/// parameter dropped), but for one in [`PAST_THE_END_EVERY`]: the mix keeps a few 404s.
fn settle_pages(queries: Vec<String>, index: &SearchIndex) -> Vec<String> {
    let mut past = 0;
    queries
        .into_iter()
        .map(|target| {
            let (path, qs) = target.split_once('?').unwrap_or((&target, ""));
            let version = if path.starts_with("/api/v3/") { ApiVersion::V3 } else { ApiVersion::V4 };
            let raw = RawQuery::parse(qs);
            let Ok(params) = svcdir::search::params::parse(&raw, index, version) else { return target };
            if params.page == svcdir::search::PageNumber::Number(1)
                || svcdir::search::run::run(index, &params, Deadline::NONE).is_ok()
            {
                return target;
            }
            past += 1;
            if past % PAST_THE_END_EVERY == 0 {
                return target;
            }
            let kept = raw.encode_with("page", None);
            if kept.is_empty() { path.to_owned() } else { format!("{path}?{kept}") }
        })
        .collect()
}

fn bench(size: usize, rounds: u32, share: Duration, out: &Path, wrk_binary: &Path) -> Row {
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
    let index_mb = std::fs::metadata(&index_path).map(|m| m.len() as f64 / 1e6).unwrap_or(f64::NAN);

    let queries = Arc::new(settle_pages(queries(&dir, 7), &index));
    drop(index);
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

    let query_file = out.join(format!("queries-{size}.txt"));
    let mut file = std::fs::File::create(&query_file).expect("query file");
    for q in queries.iter() {
        writeln!(file, "{q}").expect("write query");
    }
    drop(file);
    let answer_file = out.join("answer-path.txt");
    std::fs::write(&answer_file, "/answer.json\n").expect("answer path file");
    let script = out.join("rotate.lua");
    std::fs::write(&script, support::ROTATE_LUA).expect("wrk script");
    let postcodes = dir.postcodes.postcodes.len();
    drop(dir);
    let mut problems = Vec::new();
    // What this bench just wrote (the dataset, an index of up to 830 MB) on its way to the
    // disk now: the kernel writes dirty pages back 30 s after they were written, which
    // would fall inside the measured passes.
    flush_to_disk();

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
    // The latency probe (the in-process client).
    let (probe, _) =
        drive(&server.address, queries.clone(), Duration::ZERO, Duration::from_secs(2).min(share * rounds));
    check(&probe, &format!("{size} services, latency probe"), &mut problems);
    // 2. The same without the access log: what the log costs.
    let (quiet_server, _) = Server::start_with(&index_path, work.path().join("server-quiet.log"), false);
    let binary = nginx_binary().expect("nginx (apt-get install nginx-light)");
    // 5. The query file's answers as static files; their mean size is nginx's file's.
    let answers_file = out.join(format!("answers-{size}.txt"));
    let (answers_dir, answer_bytes, fetched) = answers_as_files(&quiet_server.address, &queries, &answers_file);
    check(&fetched, &format!("{size} services, the answers as files"), &mut problems);
    let nginx_answers = Nginx::serve_root(&binary, answers_dir, false);
    // The reference's file size, in whole bytes (targets 3, 4 and 7).
    let mean_bytes = answer_bytes.round() as usize;
    // 7. As many files of the mean size.
    let distinct_file = out.join(format!("distinct-{size}.txt"));
    let answer_files = fetched.statuses[2] as usize;
    let distinct_dir = mean_size_files(answer_files, mean_bytes, &distinct_file);
    let nginx_distinct = Nginx::serve_root(&binary, distinct_dir, false);
    // 3. and 4. nginx serving one file of the mean answer's size, log off and on.
    let body = vec![b'x'; mean_bytes];
    let nginx_off = Nginx::start_with(&binary, &body, false);
    let nginx_on = Nginx::start_with(&binary, &body, true);
    // The answers' files on the disk before the load (as the dataset's and the index's).
    flush_to_disk();

    // In the order the rounds run them; a failure names its target as the list above does.
    let targets: [(&str, &str, &Path); 6] = [
        ("1 (svcdir-search, log on)", &server.address, &query_file),
        ("3 (nginx, `access_log off`)", &nginx_off.address, &answer_file),
        ("2 (svcdir-search, log off)", &quiet_server.address, &query_file),
        ("4 (nginx, log on)", &nginx_on.address, &answer_file),
        ("5 (nginx, the answers as files)", &nginx_answers.address, &answers_file),
        ("7 (nginx, files of the mean size)", &nginx_distinct.address, &distinct_file),
    ];
    let mut runs: [Rounds; 6] = Default::default();
    let mut cached = Rounds::default();
    let mut proxies = Vec::new();
    for _ in 0..rounds {
        for (n, (name, address, file)) in targets.iter().enumerate() {
            let warm = wrk(wrk_binary, &script, address, file, Duration::from_secs(1).min(share));
            let run = warm.and_then(|_| wrk(wrk_binary, &script, address, file, share));
            match run {
                Ok(run) => runs[n].0.push(run),
                Err(e) => problems.push(format!("{size} services, target {name}: {e}")),
            }
        }
        // 6. The generated nginx configuration in front of the search server (cache on), in
        // each round as nginx's reference is: every query of the file asked once to fill
        // the cache, then the measured pass, every answer a hit. A new nginx
        // and cache each round. With one for all the rounds, the first round's answers
        // expired together after the max-age (60 s), inside the fifth round, which measured
        // their refresh (half the hits a second right after it). With a fill of a set time,
        // a machine whose disk was slow to make the cache's files left queries out of it,
        // and the measured pass was not the second pass of the query file.
        let proxy = Nginx::start_generated(&binary, &server.address);
        let fill = ask_each_once(&proxy.address, &queries);
        check(&fill, &format!("{size} services, the cache's fill"), &mut problems);
        // The fill's files on the disk before the measured pass, not written back during it
        // or the next rounds' (the rounds got slower one after the other without it).
        flush_to_disk();
        match wrk(wrk_binary, &script, &proxy.address, &query_file, share) {
            Ok(run) => cached.0.push(run),
            Err(e) => problems.push(format!("{size} services, nginx with the cache: {e}")),
        }
        // Its cache's files are deleted once every round is measured: deleting a round's
        // 5,000 files between rounds slowed every target of the rounds after it, nginx's
        // reads of cached answers most (by hand: 68,045 hits in 3 s with the deletions
        // after the passes, 3,752-11,838 with each pass's files deleted before the next).
        proxies.push(proxy);
    }
    drop(proxies);
    flush_to_disk();
    let [search, nginx_off_runs, quiet, nginx_on_runs, answers, distinct] = runs;
    let (rss_anon_mb, peak_mb) = (server.rss_anon_mb(), server.peak_rss_mb());
    let exit = server.stop();
    let _ = quiet_server.stop();
    if exit != Some(0) {
        problems.push(format!("{size} services: server exit {exit:?} after SIGTERM"));
    }
    check_wrk(&search, &format!("{size} services"), &mut problems);
    check_wrk(&quiet, &format!("{size} services, no access log"), &mut problems);
    check_wrk(&nginx_off_runs, "nginx, access_log off", &mut problems);
    check_wrk(&nginx_on_runs, "nginx, access log on", &mut problems);
    check_wrk(&answers, "nginx, the answers as files", &mut problems);
    check_wrk(&cached, "nginx as generated, cache on", &mut problems);
    check_wrk(&distinct, "nginx, files of the mean size", &mut problems);
    drop((nginx_off, nginx_on, nginx_answers, nginx_distinct));

    Row {
        services: size,
        postcodes,
        index_mb,
        build_s,
        load_ms,
        server_load_ms,
        ready_ms: ready.as_secs_f64() * 1000.0,
        probe: Figures::of(&probe),
        search,
        quiet,
        nginx_off: nginx_off_runs,
        nginx_on: nginx_on_runs,
        answers,
        cached,
        distinct,
        answer_bytes,
        answer_files,
        rss_anon_mb,
        peak_mb,
        exit,
        problems,
    }
}

/// The targets of issue 24 at `services`: (requests/s ratio at least, p99 ratio at most).
fn targets(services: usize) -> (f64, f64) {
    if services >= 100_000 { (0.25, 2.0) } else { (0.35, 1.5) }
}

/// Largest share of non-2xx answers allowed (issue 24), in per cent.
const MAX_NON2XX_PERCENT: f64 = 0.5;

fn main() {
    // `cargo bench` passes `--bench`. Without it (`cargo test --all-targets` runs every bench
    // target once, unoptimised) only a smoke run: a small dataset for a moment, which
    // still checks that the whole harness works.
    let benching = std::env::args().any(|a| a == "--bench");
    let (default_sizes, default_seconds) = if benching { ("10000,100000", 10) } else { ("300", 2) };
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
    // wrk takes whole seconds. The smoke run takes one round.
    let rounds = if benching { ROUNDS } else { 1 };
    let share = Duration::from_secs((seconds / u64::from(rounds)).max(1));
    if !benching {
        eprintln!("search_load: smoke run (300 services, 2 s); `cargo bench --bench search_load` for figures");
    }
    let (Some(wrk_binary), Some(_)) = (support::wrk_binary(), nginx_binary()) else {
        // A skip outside CI; CI (SVCDIR_REQUIRE_ALL=1) installs both, and a skip fails there.
        eprintln!("search_load: needs wrk and nginx: apt-get install wrk nginx-light (or SVCDIR_WRK=/path/to/wrk)");
        if benching || std::env::var_os("SVCDIR_REQUIRE_ALL").is_some() {
            std::process::exit(1);
        }
        return;
    };
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-search");
    std::fs::create_dir_all(&out).expect("output directory");

    let mut table = String::from(
        "| services | postcodes | index file | build+write | index load (bench / server) | ready after start | RssAnon after | VmHWM | exit | latency probe (in-process client): p50, p99 |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut versus = String::from(
        "| services | mean 2xx answer | search req/s | p50 | p99 | non-2xx | nginx (`access_log off`) req/s | p99 | req/s ÷ nginx | p99 ÷ nginx | target |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    let mut logs = String::from(
        "| services | search req/s, p99 | nginx (access log on) req/s, p99 | req/s ÷ nginx | p99 ÷ nginx | search, access log off: req/s, p99 | search's access log costs |\n\
         |---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut cache = String::from(
        "| services | through nginx as generated, cache on (second pass): req/s | p99 | non-2xx | nginx (`access_log off`), same-size file: req/s | p99 | req/s ÷ nginx | p99 ÷ nginx | target | nginx (`access_log off`), the answers as files: req/s | p99 | req/s ÷ those | p99 ÷ those |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|\n",
    );
    let mut references = String::from(
        "| services | files | one file of the mean size: req/s, p99 | that many files of the mean size: req/s, p99 | ÷ one file | the answers as files: req/s, p99 | ÷ one file | cache on (second pass) ÷ one file |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    let mut spread = String::from(
        "| services | target | each round: req/s, p99 |\n\
         |---:|---|---|\n",
    );
    let mut problems = Vec::new();
    for size in sizes {
        eprintln!("search_load: {size} services ...");
        let row = bench(size, rounds, share, &out, &wrk_binary);
        problems.extend(row.problems.iter().cloned());
        let _ = writeln!(
            table,
            "| {} | {} | {:.1} MB | {:.1} s | {:.0} ms / {} ms | {:.0} ms | {:.0} MB | {:.0} MB | {} | {:.2} ms, {:.2} ms |",
            row.services,
            row.postcodes,
            row.index_mb,
            row.build_s,
            row.load_ms,
            row.server_load_ms,
            row.ready_ms,
            row.rss_anon_mb,
            row.peak_mb,
            row.exit.map(|c| c.to_string()).unwrap_or_else(|| "none".into()),
            row.probe.p50,
            row.probe.p99,
        );
        let (target_rps, target_p99) = targets(row.services);
        let (rps_ratio, p99_ratio) = (row.search.rps() / row.nginx_off.rps(), row.search.p99() / row.nginx_off.p99());
        let non2xx = row.search.non2xx_percent();
        let met = rps_ratio >= target_rps && p99_ratio <= target_p99 && non2xx <= MAX_NON2XX_PERCENT;
        let _ = writeln!(
            versus,
            "| {} | {:.1} kB | {:.0} | {:.2} ms | {:.2} ms | {:.2} % | {:.0} | {:.2} ms | {:.2}× | {:.2}× | ≥ {target_rps}×, ≤ {target_p99}×, ≤ {MAX_NON2XX_PERCENT} %: {} |",
            row.services,
            row.answer_bytes / 1000.0,
            row.search.rps(),
            row.search.p50(),
            row.search.p99(),
            non2xx,
            row.nginx_off.rps(),
            row.nginx_off.p99(),
            rps_ratio,
            p99_ratio,
            if met { "met" } else { "NOT met" },
        );
        let (cached_rps, cached_p99) = (row.cached.rps() / row.nginx_off.rps(), row.cached.p99() / row.nginx_off.p99());
        let _ = writeln!(
            cache,
            "| {} | {:.0} | {:.2} ms | {:.2} % | {:.0} | {:.2} ms | {:.2}× | {:.2}× | ≥ 0.8×, ≤ 1.5×: {} | {:.0} | {:.2} ms | {:.2}× | {:.2}× |",
            row.services,
            row.cached.rps(),
            row.cached.p99(),
            row.cached.non2xx_percent(),
            row.nginx_off.rps(),
            row.nginx_off.p99(),
            cached_rps,
            cached_p99,
            if cached_rps >= 0.8 && cached_p99 <= 1.5 { "met" } else { "NOT met" },
            row.answers.rps(),
            row.answers.p99(),
            row.cached.rps() / row.answers.rps(),
            row.cached.p99() / row.answers.p99(),
        );
        for (name, rounds) in [
            ("svcdir-search, log on", &row.search),
            ("nginx, `access_log off`", &row.nginx_off),
            ("svcdir-search, log off", &row.quiet),
            ("nginx, log on", &row.nginx_on),
            ("nginx, `access_log off`, the answers as files", &row.answers),
            ("nginx as generated, cache on", &row.cached),
            ("nginx, `access_log off`, files of the mean size", &row.distinct),
        ] {
            let each: Vec<String> = rounds.0.iter().map(|r| format!("{:.0}, {:.2} ms", r.rps(), r.p99_ms)).collect();
            let _ = writeln!(spread, "| {} | {name} | {} |", row.services, each.join(" · "));
        }
        let _ = writeln!(
            references,
            "| {} | {} | {} | {} | {:.2}× | {} | {:.2}× | {:.2}× |",
            row.services,
            row.answer_files,
            row.nginx_off.cell(),
            row.distinct.cell(),
            row.distinct.rps() / row.nginx_off.rps(),
            row.answers.cell(),
            row.answers.rps() / row.nginx_off.rps(),
            row.cached.rps() / row.nginx_off.rps(),
        );
        let _ = writeln!(
            logs,
            "| {} | {} | {} | {:.2}× | {:.2}× | {} | {:+.1} % |",
            row.services,
            row.search.cell(),
            row.nginx_on.cell(),
            row.search.rps() / row.nginx_on.rps(),
            row.search.p99() / row.nginx_on.p99(),
            row.quiet.cell(),
            (row.quiet.rps() / row.search.rps() - 1.0) * 100.0,
        );
    }
    println!(
        "\nwrk: {CLIENT_THREADS} threads, {CONNECTIONS} connections, {rounds} rounds of {} s per target (each after 1 s of warm-up)\n",
        share.as_secs()
    );
    println!("{table}");
    println!(
        "The ratio: svcdir-search (access log on) against nginx (`access_log off`) serving a file of the mean answer's size\n"
    );
    println!("{versus}");
    println!("Both access logs on\n");
    println!("{logs}");
    println!(
        "The search through the generated nginx configuration, its cache on: in each round, the query file to fill the cache, then measured; \
         against one file of the mean answer's size (issue 24's reference) and against the answers themselves as files\n"
    );
    println!("{cache}");
    println!(
        "References: nginx (`access_log off`) serving one file of the mean answer's size (issue 24's reference), as many files of that size \
         as there are answers (each asked in turn, as the answers are), and the answers themselves as files\n"
    );
    println!("{references}");
    println!("Each target's rounds, in the order run (the rows above are their sums and means)\n");
    println!("{spread}");
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
