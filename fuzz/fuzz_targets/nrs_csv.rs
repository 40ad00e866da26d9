//! Any bytes as an NRS postcode extract: the reader must give live postcodes or located
//! errors, never panic (the proptest beside `src/input/postcodes.rs` runs the same
//! property in `make test`).

#![no_main]

use std::path::PathBuf;
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use svcdir::input::DataErrors;
use svcdir::input::postcodes::read_postcode_file;

static FILE: LazyLock<(tempfile::TempDir, PathBuf)> = LazyLock::new(|| {
    let temp = tempfile::tempdir().expect("temp dir");
    let path = temp.path().join("x.csv");
    (temp, path)
});

fuzz_target!(|data: &[u8]| {
    let path = &FILE.1;
    std::fs::write(path, data).expect("write");
    let mut errors = DataErrors::default();
    let rows = read_postcode_file(path, "postcodes/x.csv", &mut errors);
    let lines = data.split(|&b| b == b'\n').count();
    assert!(rows.len() <= lines);
    for error in &errors.errors {
        assert!(error.line.is_none_or(|line| (1..=lines).contains(&line)), "{error}");
    }
});
