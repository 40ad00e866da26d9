//! `kill -9` at random moments of `svcdir build`: the published output stays complete and
//! unchanged, the index is never torn, and the next build gives what a fresh build gives.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use svcdir::write::{FileEntry, MANIFEST, Manifest, is_manifest_path};

use crate::common::{BASE_URL, assert_ok, read_tree};

/// Services of each generated dataset: about 1,000 files, so that a debug build takes
/// a second or two, so kills land in every stage.
const SERVICES: usize = 150;
const KILLS: usize = 15;
/// A complete build after every this many kills: the "next build" check.
const COMPLETE_EVERY: usize = 5;

fn build_args(input: &Path, work: &Path) -> Vec<String> {
    let arg = |p: PathBuf| p.to_str().expect("UTF-8 temp path").to_owned();
    vec![
        "build".into(),
        "--input".into(),
        arg(input.to_owned()),
        "--output".into(),
        arg(work.join("public")),
        "--index".into(),
        arg(work.join("search.idx")),
        "--base-url".into(),
        BASE_URL.into(),
        "--quiet".into(),
    ]
}

fn complete_build(input: &Path, work: &Path) {
    let output = Command::new(env!("CARGO_BIN_EXE_svcdir"))
        .args(build_args(input, work))
        .env_remove("SVCDIR_BASE_URL")
        .output()
        .expect("svcdir runs");
    assert_ok(&output);
}

/// What a published output is: its files (read through the `public` link) and its index.
/// Compared without the change record (`changes/`, issue 17), which is the history of the
/// builds of one output, so an output switched back and forth has more entries than a fresh
/// build; `raw` is every file, for the manifest check.
struct Published {
    raw: BTreeMap<String, Vec<u8>>,
    tree: BTreeMap<String, Vec<u8>>,
    index: Vec<u8>,
}

impl PartialEq for Published {
    fn eq(&self, other: &Self) -> bool {
        self.tree == other.tree && self.index == other.index
    }
}

fn published(work: &Path) -> Published {
    let raw = read_tree(&work.join("public"));
    let mut tree = raw.clone();
    tree.retain(|path, _| !path.starts_with("changes/") && !is_manifest_path(path));
    // The manifest's entries stand in for its files (whose shards hold changes/ too).
    if let Some(mut manifest) = Manifest::read(&work.join("public")) {
        manifest.files.retain(|path, _| !path.starts_with("changes/"));
        tree.insert(MANIFEST.to_owned(), serde_json::to_vec(&manifest.files).expect("manifest"));
    }
    Published { raw, tree, index: fs::read(work.join("search.idx")).expect("index") }
}

/// The manifest lists exactly the other files of the tree, with their hashes and sizes.
fn check_manifest(public: &Path, tree: &BTreeMap<String, Vec<u8>>, when: &str) {
    let manifest = Manifest::read(public).unwrap_or_else(|| panic!("{when}: no whole manifest"));
    let files: BTreeMap<&String, FileEntry> = tree
        .iter()
        .filter(|(path, _)| !is_manifest_path(path))
        .map(|(path, bytes)| (path, FileEntry::of(bytes)))
        .collect();
    assert_eq!(files.len(), manifest.files.len(), "{when}: manifest and tree list different files");
    for (path, entry) in &manifest.files {
        assert_eq!(files.get(path), Some(entry), "{when}: {path} does not match the manifest");
    }
}

#[test]
fn kill_9_during_a_build_leaves_the_published_output_intact() {
    let tmp = tempfile::tempdir().unwrap();
    let inputs = [tmp.path().join("in-a"), tmp.path().join("in-b")];
    for (seed, input) in inputs.iter().enumerate() {
        svcdir::sample::generate(&svcdir::sample::SampleConfig {
            services: SERVICES,
            seed: seed as u64 + 1,
            out: input.clone(),
        })
        .unwrap();
    }
    // What fresh builds of each input publish.
    let mut fresh = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let work = tmp.path().join(format!("fresh-{i}"));
        complete_build(input, &work);
        let out = published(&work);
        check_manifest(&work.join("public"), &out.raw, "fresh build");
        fresh.push(out);
    }
    assert!(fresh[0].tree != fresh[1].tree, "the two inputs must publish different trees");

    // The output under test starts with input a published. The builds killed below switch
    // it between a and b, which writes only what differs: time those, not fresh builds
    // (which write everything, and are slower), so that the kills land within a build.
    let work = tmp.path().join("work");
    complete_build(&inputs[0], &work);
    let mut durations = Vec::new();
    for input in [&inputs[1], &inputs[0], &inputs[1], &inputs[0]] {
        let started = Instant::now();
        complete_build(input, &work);
        durations.push(started.elapsed());
    }
    let duration = durations.into_iter().min().unwrap();
    let mut current = 0;
    assert!(published(&work) == fresh[0]);

    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let mut killed = 0;
    for round in 0..KILLS {
        let next = 1 - current;
        // Offsets spread over the whole build: one slot of the duration per round, a
        // random moment within it.
        let slot = duration.as_secs_f64() / KILLS as f64;
        let offset = Duration::from_secs_f64(slot * (round as f64 + rng.gen_range(0.0..1.0)));
        let mut child = Command::new(env!("CARGO_BIN_EXE_svcdir"))
            .args(build_args(&inputs[next], &work))
            .env_remove("SVCDIR_BASE_URL")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("svcdir starts");
        // Deliberate: the kill lands at a random moment of the build.
        std::thread::sleep(offset);
        // `Child::kill` is SIGKILL on Unix; the build may have finished just before it.
        let _ = child.kill();
        let status = child.wait().expect("wait");
        let when = format!("round {round}, killed after {offset:?}");
        let now = published(&work);
        check_manifest(&work.join("public"), &now.raw, &when);
        assert!(now.index == fresh[0].index || now.index == fresh[1].index, "{when}: torn search index");
        // A kill can land after the link moved but before the process exits: then the
        // new output is published whole. Anything else than one whole output is a failure.
        if now.tree == fresh[next].tree {
            current = next;
        } else {
            assert!(!status.success(), "{when}: a finished build published something else");
            assert!(now.tree == fresh[current].tree, "{when}: the published tree changed");
            killed += 1;
        }
        if (round + 1) % COMPLETE_EVERY == 0 {
            let next = 1 - current;
            complete_build(&inputs[next], &work);
            assert!(published(&work) == fresh[next], "{when}: the next build differs from a fresh build");
            current = next;
        }
    }
    eprintln!("crash: {killed} of {KILLS} builds killed before they finished (build time {duration:?})");
    assert!(killed >= KILLS / 3, "only {killed} of {KILLS} builds were killed before they finished");
    // A build killed while writing the index leaves its temporary; the next build removes it.
    let temporaries: Vec<String> = fs::read_dir(&work)
        .expect("work dir")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(".tmp-"))
        .collect();
    assert!(temporaries.is_empty(), "left behind after the last build: {temporaries:?}");
}

/// Two builds of one output at once would write into the same inactive generation: the
/// second is refused at once, saying why, and the published output is untouched.
#[test]
fn a_second_build_of_the_same_output_is_refused_while_one_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    svcdir::sample::generate(&svcdir::sample::SampleConfig { services: 20, seed: 3, out: input.clone() }).unwrap();
    let work = tmp.path().join("work");
    complete_build(&input, &work);
    let before = published(&work);

    // What a running build holds: an exclusive lock on `.public.lock` beside the output.
    let lock = fs::OpenOptions::new().write(true).open(work.join(".public.lock")).expect("the lock file exists");
    lock.try_lock().expect("no build is running");
    let output = Command::new(env!("CARGO_BIN_EXE_svcdir"))
        .args(build_args(&input, &work))
        .env_remove("SVCDIR_BASE_URL")
        .output()
        .expect("svcdir runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("another svcdir build is writing"), "{stderr}");
    assert!(published(&work) == before, "the refused build changed the output");

    drop(lock);
    complete_build(&input, &work);
}
