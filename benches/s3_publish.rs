//! `make bench-s3-publish`: `svcdir publish` of a 10,000-service build to a local
//! S3-compatible server (moto), a full publish into an empty bucket and a no-op publish
//! right after, against `aws s3 sync` of the same tree to another bucket of the same server
//! in the same run (issue 13, item 5); then, counted at a proxy in front of the same
//! server, what a no-op publish and a publish after one changed service move (issue 27,
//! item 2: `svcdir_testkit::traffic`; the run fails if the second put other objects than
//! those whose bytes changed, read other manifest shards than those that changed, or listed
//! the store).
//!
//! Both tools come from `target/s3-venv` (`.ci/run` installs `moto[server]` and `awscli`
//! there); without them the benchmark says so and exits 0. The dataset and the build live
//! under `BENCH_DIR` (default `target/bench-s3`), deleted at the end.
//!
//! Run without `--bench` (as `cargo test --all-targets` does) it is a smoke run of 50
//! services, under `target/bench-s3-smoke`.
//!
//! Environment: `BENCH_SERVICES` (default 10000), `BENCH_DIR`, `BENCH_OUT` (Markdown
//! results, default `target/bench-s3-publish.md`), `BENCH_AWS=0` (no `aws s3 sync`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use svcdir_testkit::traffic::{Sample, Traffic};

const ACCESS_KEY: &str = "bench-key";
const SECRET_KEY: &str = "bench-secret";

/// Runs `cmd` to completion; its wall time and stdout. Panics when it fails.
fn timed(cmd: &mut Command) -> (f64, String) {
    let started = Instant::now();
    let output = cmd.stderr(Stdio::inherit()).output().expect("spawn");
    let wall = started.elapsed().as_secs_f64();
    assert!(output.status.success(), "{cmd:?} failed");
    (wall, String::from_utf8_lossy(&output.stdout).into_owned())
}

fn count_files(dir: &Path) -> (usize, u64) {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.expect("walk"))
        .filter(|e| e.file_type().is_file())
        .fold((0, 0), |(n, bytes), e| (n + 1, bytes + e.metadata().expect("metadata").len()))
}

fn main() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let venv = repo.join("target/s3-venv/bin");
    let (moto_bin, aws_bin) = (venv.join("moto_server"), venv.join("aws"));
    // `cargo bench` passes `--bench`; without it (`cargo test --all-targets`) a smoke run.
    let benching = std::env::args().any(|a| a == "--bench");
    if !moto_bin.is_file() || !aws_bin.is_file() {
        let reason = "moto_server and aws are not installed (.ci/run installs them into target/s3-venv)";
        if benching {
            eprintln!("skipped: {reason}");
        } else {
            svcdir::test_support::skipped(reason);
        }
        return;
    }
    let (services, dir, out) = if benching {
        (
            std::env::var("BENCH_SERVICES").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000),
            std::env::var_os("BENCH_DIR").map_or_else(|| repo.join("target/bench-s3"), PathBuf::from),
            std::env::var_os("BENCH_OUT").map_or_else(|| repo.join("target/bench-s3-publish.md"), PathBuf::from),
        )
    } else {
        (50, repo.join("target/bench-s3-smoke"), repo.join("target/bench-s3-smoke.md"))
    };
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("bench dir");
    let svcdir = env!("CARGO_BIN_EXE_svcdir");
    // `aws s3 sync` beside each publish; BENCH_AWS=0 leaves it out (at 100,000 services it
    // would double the run for a comparison already made at 10,000).
    let against_aws = std::env::var("BENCH_AWS").map_or(true, |v| v != "0");

    // The tree: `svcdir sample` then `svcdir build` (no precompression: one object per file).
    let sample = Sample::generate(&dir, services, 42);
    let built = sample.build();
    let public = sample.public.clone();
    let (files, bytes) = count_files(&public);
    eprintln!("{services} services: {files} files, {:.1} MB", bytes as f64 / 1e6);

    // On port 0, the port read back from its log; stopped on drop (svcdir-testkit's).
    let moto = svcdir_testkit::s3::S3Server::start(&moto_bin, &[]);
    let endpoint = moto.endpoint();
    let env = [
        ("AWS_ACCESS_KEY_ID", ACCESS_KEY),
        ("AWS_SECRET_ACCESS_KEY", SECRET_KEY),
        ("AWS_REGION", "us-east-1"),
        ("AWS_DEFAULT_REGION", "us-east-1"),
        ("AWS_ENDPOINT_URL", endpoint.as_str()),
        ("AWS_ALLOW_HTTP", "true"),
    ];
    let aws = |args: &[&str]| {
        let mut cmd = Command::new(&aws_bin);
        cmd.args(args).args(["--endpoint-url", &endpoint]).envs(env).stdout(Stdio::null());
        cmd
    };
    for bucket in ["bench-svcdir", "bench-awscli"] {
        timed(&mut aws(&["s3api", "create-bucket", "--bucket", bucket]));
    }
    let publish = || {
        let mut cmd = Command::new(svcdir);
        cmd.arg("publish").arg("--public").arg(&public).args(["--to", "s3://bench-svcdir/site", "--json"]).envs(env);
        cmd
    };
    let public_arg = public.to_str().expect("UTF-8 path");
    let sync = || aws(&["s3", "sync", public_arg, "s3://bench-awscli/site", "--only-show-errors"]);

    // The same run, the same server: alternate the tools so neither meets a warmer server.
    let (svcdir_full, summary) = timed(&mut publish());
    let summary: serde_json::Value = serde_json::from_str(summary.trim()).expect("--json summary");
    assert_eq!(summary["uploaded"].as_u64(), Some(files as u64), "{summary}");
    let aws_full = against_aws.then(|| timed(&mut sync()).0);
    let (svcdir_noop, summary) = timed(&mut publish());
    let summary: serde_json::Value = serde_json::from_str(summary.trim()).expect("--json summary");
    assert_eq!(summary["uploaded"].as_u64(), Some(0), "{summary}");
    let aws_noop = against_aws.then(|| timed(&mut sync()).0);

    // Issue 27, item 2: what a no-op publish and one after a single changed service move,
    // counted at a proxy in front of the same server.
    let started = Instant::now();
    let traffic = Traffic::count(&sample, &built, &moto, "bench-svcdir");
    let traffic_wall = started.elapsed().as_secs_f64();
    traffic.assert_only_what_changed_moved();

    let mut md = String::new();
    let _ =
        writeln!(md, "{services} services, {files} files, {:.1} MB, to moto_server on 127.0.0.1\n", bytes as f64 / 1e6);
    let _ = writeln!(md, "| run | svcdir publish (s) | aws s3 sync (s) | svcdir / aws |");
    let _ = writeln!(md, "|---|---:|---:|---:|");
    for (run, ours, theirs) in [("full (empty bucket)", svcdir_full, aws_full), ("no-op", svcdir_noop, aws_noop)] {
        match theirs {
            Some(theirs) => _ = writeln!(md, "| {run} | {ours:.2} | {theirs:.2} | {:.2} |", ours / theirs),
            None => _ = writeln!(md, "| {run} | {ours:.2} | (BENCH_AWS=0) | |"),
        }
    }
    let mb = |bytes: u64| bytes as f64 / 1e6;
    let _ = writeln!(
        md,
        "\nCounted at a proxy in front of moto (bodies, both ways; {traffic_wall:.0} s with the rebuild):\n"
    );
    let _ = writeln!(md, "| publish | requests | figure |");
    let _ = writeln!(md, "|---|---:|---|");
    let _ = writeln!(
        md,
        "| nothing to do | {} | {:.3} MB moved (root manifest {:.3} MB) |",
        traffic.noop.len(),
        mb(traffic.noop_bytes()),
        mb(traffic.root_bytes)
    );
    let _ = writeln!(
        md,
        "| one service changed | {} | {} objects uploaded ({:.1} MB) = the {} files whose bytes changed; {} of {} manifest shards read and {} written; {} listings; other traffic {:.3} MB |",
        traffic.after_change.len(),
        traffic.uploaded().len(),
        mb(traffic.uploaded_bytes()),
        traffic.changed.len(),
        traffic.shard_reads().len(),
        built.0.shards.len(),
        traffic.new_shards.len(),
        traffic.listings(),
        mb(traffic.other_bytes()),
    );
    println!("{md}");
    std::fs::write(&out, &md).expect("write results");
    drop(moto);
    let _ = std::fs::remove_dir_all(&dir);
}
