//! `make bench-build`: the cost of `svcdir build` measured against the floor, the cost of
//! creating the same files with the same bytes and no rendering at all.
//!
//! For each dataset size it times, each on a freshly made ext4 file system (a loop-mounted
//! image, so that the time of deleting an earlier tree does not leak into the figure):
//! a full build, a no-op rebuild, a rebuild after one service changed (the first one also
//! fills the second generation with hard links; the second is the steady state), and the
//! floor written single-threaded and with every core. Without root or `mkfs.ext4` it falls
//! back to a plain directory and says so.
//!
//! Environment: `BENCH_SIZES` (comma-separated service counts, default `10000,100000`;
//! `BENCH_LARGE=1` adds 1,000,000), `BENCH_DIR` (work folder, default `target/bench`),
//! `BENCH_OUT` (Markdown results, default `target/bench/publish.md`).

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use rayon::prelude::*;

/// Wall, CPU and memory of one child process.
#[derive(Debug, Clone, Copy, Default)]
struct Run {
    wall: f64,
    cpu: f64,
    max_rss_mb: f64,
}

/// Runs a command to completion and measures it with `wait4`.
fn measure(cmd: &mut Command) -> Run {
    measure_output(cmd).0
}

/// Like [`measure`], and gives what the command printed when its stdout is piped (the
/// one-line summary fits in the pipe's buffer, so the child never blocks on it).
// The child is reaped by `wait4`, which also gives its resource usage.
#[allow(clippy::zombie_processes)]
fn measure_output(cmd: &mut Command) -> (Run, String) {
    use std::io::Read;
    let started = Instant::now();
    let mut child = cmd.spawn().expect("spawn");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own child, status and usage are valid for writes.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4");
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "{cmd:?} failed");
    let wall = started.elapsed().as_secs_f64();
    let mut stdout = String::new();
    if let Some(mut pipe) = child.stdout.take() {
        let _ = pipe.read_to_string(&mut stdout);
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let run =
        Run { wall, cpu: secs(usage.ru_utime) + secs(usage.ru_stime), max_rss_mb: usage.ru_maxrss as f64 / 1024.0 };
    (run, stdout)
}

/// A freshly made file system mounted at `mount`, unmounted and deleted on drop.
struct FreshFs {
    image: PathBuf,
    mount: PathBuf,
    mounted: bool,
}

impl FreshFs {
    fn new(work: &Path, name: &str, size_gb: u64) -> FreshFs {
        let image = work.join(format!("{name}.img"));
        let mount = work.join(name);
        let _ = Command::new("umount").arg(&mount).output();
        let _ = fs::remove_file(&image);
        let _ = fs::remove_dir_all(&mount);
        fs::create_dir_all(&mount).unwrap();
        let made = Command::new("truncate").arg("-s").arg(format!("{size_gb}G")).arg(&image).status().is_ok_and(|s| s.success())
            // Like the machine's own file system: ext4 without a journal; 4 KiB per inode,
            // since the output is many small files.
            && Command::new("mkfs.ext4").args(["-q", "-F", "-O", "^has_journal", "-i", "4096"]).arg(&image).status().is_ok_and(|s| s.success())
            && Command::new("mount").args(["-o", "loop"]).arg(&image).arg(&mount).status().is_ok_and(|s| s.success());
        if !made {
            eprintln!(
                "warning: no fresh file system (needs root, mkfs.ext4, loop devices); timing in {}",
                mount.display()
            );
            let _ = fs::remove_file(&image);
        }
        FreshFs { image, mount, mounted: made }
    }
}

impl Drop for FreshFs {
    fn drop(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg(&self.mount).status();
        } else {
            let _ = fs::remove_dir_all(&self.mount);
        }
        let _ = fs::remove_file(&self.image);
    }
}

/// Every file of a tree, relative path and bytes, in path order.
fn load_tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = walkdir::WalkDir::new(root)
        .follow_root_links(true)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().strip_prefix(root).unwrap().to_string_lossy().into_owned(), fs::read(e.path()).unwrap()))
        .collect();
    files.sort();
    files
}

/// The floor: create the directories (each once), then the files, nothing else.
fn write_floor(root: &Path, files: &[(String, Vec<u8>)], parallel: bool) -> f64 {
    let started = Instant::now();
    let mut dirs: Vec<&str> = files.iter().filter_map(|(rel, _)| rel.rsplit_once('/').map(|(d, _)| d)).collect();
    dirs.dedup();
    let mkdir = |dir: &&str| fs::create_dir_all(root.join(dir)).unwrap();
    let write = |(rel, bytes): &(String, Vec<u8>)| fs::write(root.join(rel), bytes).unwrap();
    // Folders first, in sorted order (parents before children), then the files.
    if parallel {
        dirs.par_iter().for_each(mkdir);
        files.par_iter().for_each(write);
    } else {
        dirs.iter().for_each(mkdir);
        files.iter().for_each(write);
    }
    started.elapsed().as_secs_f64()
}

/// Changes one published service's description in `services.jsonl`.
fn change_one_service(input: &Path, round: usize) {
    let path = input.join("services.jsonl");
    let text = fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let line = lines.iter().position(|l| !l.contains("\"published\":false")).unwrap();
    let mut record: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&lines[line]).unwrap();
    // Unique to this run: the input folder is reused between runs.
    let run = std::process::id();
    record.insert("description".into(), format!("Changed for the benchmark, run {run}, round {round}.").into());
    lines[line] = serde_json::to_string(&record).unwrap();
    fs::write(&path, lines.join("\n") + "\n").unwrap();
}

struct Row {
    services: usize,
    files: usize,
    mb: f64,
    full: Run,
    noop: Run,
    first_change: Run,
    change: Run,
    change_summary: String,
    floor_single: Option<f64>,
    floor_parallel: Option<f64>,
}

fn bench_size(services: usize, work: &Path) -> Row {
    let svcdir = env!("CARGO_BIN_EXE_svcdir");
    let input = work.join(format!("input-{services}"));
    if !input.join("services.jsonl").exists() {
        eprintln!("generating {services} services...");
        svcdir::sample::generate(&svcdir::sample::SampleConfig { services, seed: 42, out: input.clone() }).unwrap();
    }
    let size_gb = (services as u64 * 90 / 1_000_000).max(4) * 2;
    let target = FreshFs::new(work, "fs-build", size_gb);
    let output = target.mount.join("public");
    let index = target.mount.join("search.idx");
    let build = || {
        let mut cmd = Command::new(svcdir);
        cmd.args(["build", "--base-url", "https://directory.example.org", "--input"])
            .arg(&input)
            .arg("--output")
            .arg(&output)
            .arg("--index")
            .arg(&index);
        cmd
    };
    eprintln!("{services}: full build...");
    let full = measure(build().stdout(std::process::Stdio::null()));
    let manifest: serde_json::Value =
        serde_json::from_slice(&fs::read(output.join("_manifest.json")).unwrap()).unwrap();
    let entries = manifest["files"].as_object().unwrap();
    let files = entries.len();
    let mb = entries.values().map(|e| e["size"].as_u64().unwrap()).sum::<u64>() as f64 / 1e6;
    eprintln!("{services}: no-op rebuild...");
    let noop = measure(build().stdout(std::process::Stdio::null()));
    eprintln!("{services}: one service changed (fills the second generation)...");
    change_one_service(&input, 1);
    let first_change = measure(build().stdout(std::process::Stdio::null()));
    eprintln!("{services}: one service changed again (steady state)...");
    change_one_service(&input, 2);
    let mut steady = build();
    steady.stdout(std::process::Stdio::piped());
    let (change, stdout) = measure_output(&mut steady);
    let change_summary = stdout.trim().to_owned();

    // The floor: same paths, same bytes, on fresh file systems; skipped where the bytes
    // would not fit in memory.
    let (floor_single, floor_parallel) = if mb < 8_000.0 {
        let bytes = load_tree(&output);
        drop(target);
        let single = {
            let fs = FreshFs::new(work, "fs-floor", size_gb);
            eprintln!("{services}: floor, one thread...");
            write_floor(&fs.mount.join("public"), &bytes, false)
        };
        let parallel = {
            let fs = FreshFs::new(work, "fs-floor", size_gb);
            eprintln!("{services}: floor, {} threads...", rayon::current_num_threads());
            write_floor(&fs.mount.join("public"), &bytes, true)
        };
        (Some(single), Some(parallel))
    } else {
        (None, None)
    };
    Row { services, files, mb, full, noop, first_change, change, change_summary, floor_single, floor_parallel }
}

fn main() {
    // `cargo test --all-targets` runs bench targets without `--bench`: a smoke check only.
    if !std::env::args().any(|a| a == "--bench") {
        println!("publish: a benchmark; run it with `make bench-build`");
        return;
    }
    let mut sizes: Vec<usize> = std::env::var("BENCH_SIZES")
        .unwrap_or_else(|_| "10000,100000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("BENCH_SIZES: numbers"))
        .collect();
    if std::env::var("BENCH_LARGE").is_ok_and(|v| v == "1") {
        sizes.push(1_000_000);
    }
    let work = PathBuf::from(std::env::var("BENCH_DIR").unwrap_or_else(|_| "target/bench".into()));
    fs::create_dir_all(&work).unwrap();
    let rows: Vec<Row> = sizes.iter().map(|&n| bench_size(n, &work)).collect();

    let mut md = String::new();
    writeln!(md, "| services | files | MB | full build s (CPU s) | files/s | MB/s | peak RSS MB | floor 1 thread s | floor {} threads s | build ÷ floor | no-op s | 1 change, first s | 1 change, steady s |", rayon::current_num_threads()).unwrap();
    writeln!(md, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|").unwrap();
    for r in &rows {
        let opt = |v: Option<f64>| v.map_or("n/a".to_owned(), |v| format!("{v:.1}"));
        let ratio = r.floor_parallel.map_or("n/a".to_owned(), |f| format!("{:.2}", r.full.wall / f));
        writeln!(
            md,
            "| {} | {} | {:.0} | {:.1} ({:.1}) | {:.0} | {:.0} | {:.0} | {} | {} | {} | {:.2} | {:.1} | {:.1} |",
            r.services,
            r.files,
            r.mb,
            r.full.wall,
            r.full.cpu,
            r.files as f64 / r.full.wall,
            r.mb / r.full.wall,
            r.full.max_rss_mb,
            opt(r.floor_single),
            opt(r.floor_parallel),
            ratio,
            r.noop.wall,
            r.first_change.wall,
            r.change.wall,
        )
        .unwrap();
        eprintln!("{}: {}", r.services, r.change_summary);
    }
    print!("{md}");
    let out = std::env::var("BENCH_OUT").map(PathBuf::from).unwrap_or_else(|_| work.join("publish.md"));
    fs::write(&out, &md).unwrap();
    eprintln!("results in {}", out.display());
}
