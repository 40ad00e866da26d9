//! `make bench-build`: the cost of `svcdir build` measured against the floor, the cost of
//! creating the same files with the same bytes and no rendering at all.
//!
//! For each dataset size it times, each on a freshly made ext4 file system (a loop-mounted
//! image, so that the time of deleting an earlier tree does not leak into the figure):
//! a full build, a no-op rebuild, a rebuild after one service changed (the first one also
//! fills the second generation with hard links; the second is the steady state), and the
//! floor written single-threaded and with every core. Each timed run starts after a `sync`
//! with the page cache warm (see `WarmMemory`). Without root or `mkfs.ext4` it falls back to
//! a plain directory and says so.
//!
//! Environment: `BENCH_SIZES` (comma-separated service counts, default `10000,100000`;
//! `BENCH_LARGE=1` adds 1,000,000), `BENCH_DIR` (work folder, default `target/bench`),
//! `BENCH_OUT` (Markdown results, default `target/bench/publish.md`), `BENCH_SVCDIR` (the
//! `svcdir` binary to measure, default the one built with the benchmark).

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
    /// Bytes the process caused to be written to storage (`ru_oublock`, 512-byte units).
    written_bytes: u64,
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
    let run = Run {
        wall,
        cpu: secs(usage.ru_utime) + secs(usage.ru_stime),
        max_rss_mb: usage.ru_maxrss as f64 / 1024.0,
        written_bytes: usage.ru_oublock as u64 * 512,
    };
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

/// Every file of a tree (relative path and size), in path order.
fn list_tree(root: &Path) -> Vec<(String, u64)> {
    let mut files: Vec<(String, u64)> = walkdir::WalkDir::new(root)
        .follow_root_links(true)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().strip_prefix(root).unwrap().to_string_lossy().into_owned(), e.metadata().unwrap().len()))
        .collect();
    files.sort();
    files
}

/// The memory the kernel says is available (`MemAvailable`), in bytes; 0 when unknown.
fn mem_available() -> u64 {
    fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|line| line.strip_prefix("MemAvailable:"))
                .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// The bytes of the tree the floor may hold at once: half the available memory (at least
/// 1 GiB). A tree that fits is read whole before the clock starts, as the floor's
/// definition asks; a larger one is written in batches, and the floor then says so.
fn floor_batch() -> u64 {
    (mem_available() / 2).max(1 << 30)
}

/// `sync(2)`: nothing of earlier work left for the kernel to write out on a run's clock.
fn sync() {
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe { libc::sync() };
}

/// A page cache filled with a sparse file's zeros, read back and kept there until dropped
/// (the file is then removed).
///
/// On this machine kind (a VM whose guest returns memory it does not use to the host: DAMON
/// pages out cold memory, the balloon reports free pages), the first write to a page the
/// host took back costs a fault in the host, about 6 µs a page: reading 18 GB of zeros into
/// the page cache took 28 s. A run that starts with the free memory so returned pays that on
/// every new page of the page cache, in its own system time (the full build at 100,000
/// services: 121.1 s, 103.3 s of it in the kernel; 68.3 s, 49.1 s, with the memory warm).
/// The floor, which reads the tree into memory before its clock starts, would take its pages
/// warm from that read's page cache. So each timed run starts with the same warm cache, which
/// its own writes reclaim.
struct WarmMemory {
    path: PathBuf,
}

impl WarmMemory {
    /// Fills the page cache with what is available less 3 GiB (nothing when that is none).
    fn fill(work: &Path) -> WarmMemory {
        use std::io::Read;
        let path = work.join("warm-memory.bin");
        let bytes = mem_available().saturating_sub(3 << 30);
        let file = fs::File::create(&path).unwrap();
        file.set_len(bytes).unwrap();
        let mut reader = fs::File::open(&path).unwrap();
        let mut buffer = vec![0u8; 8 << 20];
        while reader.read(&mut buffer).unwrap() > 0 {}
        eprintln!("page cache warmed with {:.1} GB", bytes as f64 / 1e9);
        WarmMemory { path }
    }
}

impl Drop for WarmMemory {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// The floor: the same files with the same bytes written to `root` from memory (each folder
/// created once, then `fs::write` of each file), then `syncfs`, as the build syncs before its
/// switch. Only the writes and the sync are timed, so the bytes are read from `source`
/// first, the whole tree when it fits in [`floor_batch`]. A tree read in batches may
/// flatter the floor (while the next batch is read, untimed, the kernel's flusher writes
/// the last one out; at 100,000 services it did not measurably: 60.2 s in batches, 61.1 s
/// whole); the second value says it happened.
fn write_floor(source: &Path, files: &[(String, u64)], root: &Path, parallel: bool) -> (f64, bool) {
    let limit = floor_batch();
    let batched = files.iter().map(|(_, size)| size).sum::<u64>() > limit;
    if batched {
        eprintln!(
            "warning: the tree is larger than half the available memory; the floor is written in batches (marked in the table)"
        );
    }
    let mut elapsed = 0.0;
    let mut made: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut start = 0;
    while start < files.len() {
        let mut end = start;
        let mut size = 0;
        while end < files.len() && (end == start || size + files[end].1 <= limit) {
            size += files[end].1;
            end += 1;
        }
        let batch: Vec<(&str, Vec<u8>)> =
            files[start..end].par_iter().map(|(rel, _)| (rel.as_str(), fs::read(source.join(rel)).unwrap())).collect();
        let mut dirs: Vec<&str> = batch.iter().filter_map(|(rel, _)| rel.rsplit_once('/').map(|(d, _)| d)).collect();
        dirs.dedup();
        dirs.retain(|d| made.insert((*d).to_owned()));
        sync();
        let started = Instant::now();
        let mkdir = |dir: &&str| fs::create_dir_all(root.join(dir)).unwrap();
        let write = |(rel, bytes): &(&str, Vec<u8>)| fs::write(root.join(rel), bytes).unwrap();
        // Folders first, in sorted order (parents before children), then the files.
        if parallel {
            dirs.par_iter().for_each(mkdir);
            batch.par_iter().for_each(write);
        } else {
            dirs.iter().for_each(mkdir);
            batch.iter().for_each(write);
        }
        elapsed += started.elapsed().as_secs_f64();
        start = end;
    }
    let started = Instant::now();
    syncfs(root);
    (elapsed + started.elapsed().as_secs_f64(), batched)
}

/// `syncfs(2)` of the file system holding `dir`.
fn syncfs(dir: &Path) {
    let handle = fs::File::open(dir).unwrap();
    // SAFETY: a valid open descriptor of our own.
    let done = unsafe { libc::syncfs(std::os::fd::AsRawFd::as_raw_fd(&handle)) };
    assert_eq!(done, 0, "syncfs: {} (is the disk holding the images full?)", std::io::Error::last_os_error());
}

/// The root manifest of a tree, as read.
fn read_root(output: &Path) -> (u64, serde_json::Value) {
    let bytes = fs::read(output.join("_manifest.json")).unwrap();
    (bytes.len() as u64, serde_json::from_slice(&bytes).unwrap())
}

/// What a publish of the last build reads and writes of the manifest, with the store
/// holding the build before it: the root (read, marked, written, cleared) and the shards
/// that changed (the old ones read, the new ones written; about the same size). A manifest
/// without shards (format 1) is read and written whole.
fn manifest_traffic(output: &Path, before: &(u64, serde_json::Value)) -> String {
    let (root_len, root) = read_root(output);
    let Some(shards) = root["shards"].as_object() else {
        return format!(
            "manifest {root_len} bytes, one file: a publish reads and writes it whole, {} bytes",
            2 * root_len
        );
    };
    let old = before.1["shards"].as_object();
    let changed: Vec<&str> = shards
        .iter()
        .filter(|(prefix, hash)| old.and_then(|o| o.get(*prefix)) != Some(*hash))
        .map(|(_, hash)| hash.as_str().unwrap())
        .collect();
    let size = |hash: &str| fs::metadata(output.join(format!("_manifest/{hash}.json"))).unwrap().len();
    let changed_bytes: u64 = changed.iter().map(|h| size(h)).sum();
    let whole: u64 = shards.values().map(|h| size(h.as_str().unwrap())).sum();
    format!(
        "root {root_len} bytes, {} shards ({whole} bytes in all); one changed service changed {} shards ({changed_bytes} bytes): a no-op publish reads {root_len} bytes, this one's manifest traffic is about {} bytes",
        shards.len(),
        changed.len(),
        4 * root_len + 2 * changed_bytes
    )
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
    manifest: String,
    floor_single: Option<f64>,
    floor_parallel: Option<f64>,
    /// The tree did not fit in memory: that floor (one thread, every core) was written in
    /// batches.
    floor_batched: (bool, bool),
}

fn bench_size(services: usize, work: &Path) -> Row {
    // BENCH_SVCDIR: another build of the program (an earlier commit's, for a before/after).
    let svcdir = std::env::var("BENCH_SVCDIR").unwrap_or_else(|_| env!("CARGO_BIN_EXE_svcdir").to_owned());
    let input = work.join(format!("input-{services}"));
    if !input.join("services.jsonl").exists() {
        eprintln!("generating {services} services...");
        svcdir::sample::generate(&svcdir::sample::SampleConfig { services, seed: 42, out: input.clone() }).unwrap();
    }
    // Room for two generations (hard links), three copies of the index and the inode tables.
    let size_gb = (services as u64 * 120 / 1_000_000).max(4) * 2;
    let target = FreshFs::new(work, "fs-build", size_gb);
    let output = target.mount.join("public");
    let index = target.mount.join("search.idx");
    let build = || {
        let mut cmd = Command::new(&svcdir);
        cmd.args(["build", "--base-url", "https://directory.example.org", "--input"])
            .arg(&input)
            .arg("--output")
            .arg(&output)
            .arg("--index")
            .arg(&index);
        cmd
    };
    eprintln!("{services}: full build...");
    // As before the floor: synced, and the page cache warm.
    sync();
    let warm = WarmMemory::fill(work);
    let full = measure(build().stdout(std::process::Stdio::null()));
    drop(warm);
    eprintln!("{services}: full build {full:?}");
    // Files and bytes of the output, read from the tree itself (the manifest's form is
    // not this benchmark's business), the manifest's own files excluded.
    let tree: Vec<(String, u64)> = list_tree(&output);
    let described = || tree.iter().filter(|(rel, _)| rel != "_manifest.json" && !rel.starts_with("_manifest/"));
    let files = described().count();
    let mb = described().map(|(_, size)| size).sum::<u64>() as f64 / 1e6;
    eprintln!("{services}: no-op rebuild...");
    let noop = measure(build().stdout(std::process::Stdio::null()));
    eprintln!("{services}: no-op rebuild {noop:?}");
    eprintln!("{services}: one service changed (fills the second generation)...");
    change_one_service(&input, 1);
    let first_change = measure(build().stdout(std::process::Stdio::null()));
    eprintln!("{services}: one service changed again (steady state)...");
    change_one_service(&input, 2);
    let root_before = read_root(&output);
    let mut steady = build();
    steady.stdout(std::process::Stdio::piped());
    let (change, stdout) = measure_output(&mut steady);
    let change_summary = stdout.trim().to_owned();
    eprintln!("{services}: first change {first_change:?}, steady change {change:?}");
    let manifest = manifest_traffic(&output, &root_before);

    // The floor: same paths, same bytes (those of the tree after the last build), on fresh
    // file systems.
    let tree = list_tree(&output);
    let single = {
        let fs = FreshFs::new(work, "fs-floor", size_gb);
        let _warm = WarmMemory::fill(work);
        eprintln!("{services}: floor, one thread...");
        write_floor(&output, &tree, &fs.mount.join("public"), false)
    };
    eprintln!("{services}: floor, one thread: {:.1} s", single.0);
    let parallel = {
        let fs = FreshFs::new(work, "fs-floor", size_gb);
        let _warm = WarmMemory::fill(work);
        eprintln!("{services}: floor, {} threads...", rayon::current_num_threads());
        write_floor(&output, &tree, &fs.mount.join("public"), true)
    };
    drop(target);
    let floor_batched = (single.1, parallel.1);
    let (floor_single, floor_parallel) = (Some(single.0), Some(parallel.0));
    Row {
        services,
        files,
        mb,
        full,
        noop,
        first_change,
        change,
        change_summary,
        manifest,
        floor_single,
        floor_parallel,
        floor_batched,
    }
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
    writeln!(md, "| services | files | MB | full build s (CPU s) | files/s | MB/s | peak RSS MB | floor 1 thread s | floor {} threads s | build ÷ floor 1 thread | build ÷ floor {} threads | no-op s (% of full) | 1 change, first s | 1 change, steady s |", rayon::current_num_threads(), rayon::current_num_threads()).unwrap();
    writeln!(md, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|").unwrap();
    for r in &rows {
        // A floor written in batches is marked (see `write_floor`).
        let opt = |v: Option<f64>, batched: bool| {
            v.map_or("n/a".to_owned(), |v| format!("{v:.1}{}", if batched { " (batched)" } else { "" }))
        };
        let ratio = |floor: Option<f64>| floor.map_or("n/a".to_owned(), |f| format!("{:.2}", r.full.wall / f));
        writeln!(
            md,
            "| {} | {} | {:.0} | {:.1} ({:.1}) | {:.0} | {:.0} | {:.0} | {} | {} | {} | {} | {:.2} ({:.1} %) | {:.1} | {:.1} |",
            r.services,
            r.files,
            r.mb,
            r.full.wall,
            r.full.cpu,
            r.files as f64 / r.full.wall,
            r.mb / r.full.wall,
            r.full.max_rss_mb,
            opt(r.floor_single, r.floor_batched.0),
            opt(r.floor_parallel, r.floor_batched.1),
            ratio(r.floor_single),
            ratio(r.floor_parallel),
            r.noop.wall,
            100.0 * r.noop.wall / r.full.wall,
            r.first_change.wall,
            r.change.wall,
        )
        .unwrap();
        eprintln!("{}: {}", r.services, r.change_summary);
        eprintln!("{}: the no-op rebuild wrote {} bytes", r.services, r.noop.written_bytes);
        eprintln!("{}: {}", r.services, r.manifest);
    }
    print!("{md}");
    let out = std::env::var("BENCH_OUT").map(PathBuf::from).unwrap_or_else(|_| work.join("publish.md"));
    fs::write(&out, &md).unwrap();
    eprintln!("results in {}", out.display());
}
