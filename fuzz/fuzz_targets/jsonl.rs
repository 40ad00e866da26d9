//! Any bytes as `services.jsonl` beside a valid rest of the dataset: the loader must give
//! records or located errors, never panic (the proptest beside `src/input/mod.rs` runs the
//! same property in `make test`).

#![no_main]

use std::path::PathBuf;
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use svcdir::input::{files, load_partial};

/// A dataset directory whose other files are present but empty, made once: the reader of
/// `services.jsonl` is the target, and small neighbours keep the runs per second high.
static DIR: LazyLock<(tempfile::TempDir, PathBuf)> = LazyLock::new(|| {
    let temp = tempfile::tempdir().expect("temp dir");
    for (name, text) in
        [(files::CATEGORIES, "[]"), (files::SERVICE_AREAS, "[]"), (files::ORGANISATIONS, ""), (files::LOCATIONS, "")]
    {
        std::fs::write(temp.path().join(name), text).expect("write");
    }
    std::fs::create_dir(temp.path().join(files::POSTCODES)).expect("postcodes dir");
    let path = temp.path().to_owned();
    (temp, path)
});

fuzz_target!(|data: &[u8]| {
    let dir = &DIR.1;
    std::fs::write(dir.join(files::SERVICES), data).expect("write");
    let (dataset, errors) = load_partial(dir);
    let lines = data.split(|&b| b == b'\n').count();
    for record in &dataset.services {
        assert!((1..=lines).contains(&record.line));
    }
    for error in errors.errors.iter().filter(|e| e.file == files::SERVICES) {
        assert!(error.line.is_some_and(|line| (1..=lines).contains(&line)), "{error}");
    }
});
