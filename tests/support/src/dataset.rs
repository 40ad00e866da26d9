//! Datasets and built trees: the repository's fixtures, `../shared/data` when present, the
//! real `svcdir` binary run on them, and the files of a build read back.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (this crate is `tests/support` in it).
pub fn repo() -> PathBuf {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    root.canonicalize().unwrap_or(root)
}

/// A fixture dataset under `tests/fixtures/`.
pub fn fixture(name: &str) -> PathBuf {
    repo().join("tests/fixtures").join(name)
}

/// `../shared/data` beside the repository, when present (tests using it skip otherwise).
pub fn shared_data() -> Option<PathBuf> {
    let dir = repo().join("../shared/data");
    if dir.is_dir() {
        Some(dir)
    } else {
        svcdir::test_support::skipped("../shared/data is absent");
        None
    }
}

/// Runs the real `svcdir` binary.
pub fn svcdir(args: &[&str]) -> Output {
    Command::new(crate::bin("svcdir")).args(args).env_remove("SVCDIR_BASE_URL").output().expect("svcdir runs")
}

/// Base URL used by every test build.
pub const BASE_URL: &str = "https://api.example.org";

/// The arguments of `svcdir build` from `input` into `<work>/public` and `<work>/search.idx`,
/// at [`BASE_URL`], then `extra`.
pub fn build_args(input: &Path, work: &Path, extra: &[&str]) -> Vec<String> {
    let path = |p: &Path| p.to_str().expect("a UTF-8 path").to_owned();
    let mut args: Vec<String> = vec![
        "build".into(),
        "--input".into(),
        path(input),
        "--output".into(),
        path(&work.join("public")),
        "--index".into(),
        path(&work.join("search.idx")),
        "--base-url".into(),
        BASE_URL.into(),
    ];
    args.extend(extra.iter().map(|&a| a.to_owned()));
    args
}

/// Builds `input` into `<work>/public` and `<work>/search.idx` quietly; returns the output.
pub fn build(input: &Path, work: &Path, extra: &[&str]) -> Output {
    let args = build_args(input, work, &[&["--quiet"], extra].concat());
    svcdir(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// Asserts success, printing stderr otherwise.
pub fn assert_ok(output: &Output) {
    assert!(
        output.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Every file under `root`: relative path → bytes.
pub fn read_tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.expect("walk"))
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            (rel, fs::read(e.path()).unwrap())
        })
        .collect()
}

/// Copies a directory tree.
pub fn copy_dir(src: &Path, dst: &Path) {
    for entry in walkdir::WalkDir::new(src) {
        let entry = entry.unwrap();
        let target = dst.join(entry.path().strip_prefix(src).unwrap());
        if entry.file_type().is_dir() {
            fs::create_dir_all(&target).unwrap();
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Parses a JSON file of a built tree.
pub fn json(root: &Path, rel: &str) -> serde_json::Value {
    let bytes = fs::read(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{rel}: {e}"))
}
