//! No id or slug can make the build write outside (or change anything inside) the output
//! directory: hostile values are rejected by the loader with located errors, exit 1.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use crate::common::{assert_ok, build, copy_dir, fixture, read_tree};

/// Path tricks as slugs and ids: traversal, separators, encodings, NUL, overlong names,
/// and Unicode characters that look like `/` or `.`.
fn hostile() -> Vec<String> {
    let mut values: Vec<String> = [
        "..",
        ".",
        "../../escaped",
        "a/../../escaped",
        "/tmp/escaped",
        "a/b",
        "..\\..\\escaped",
        "a\\b",
        "%2e%2e",
        "%2e%2e%2fescaped",
        "..%2f..%2fescaped",
        "a\0b",
        "\0",
        "a\u{2215}b",                      // DIVISION SLASH
        "\u{ff0e}\u{ff0e}",                // FULLWIDTH FULL STOP
        "\u{ff0e}\u{ff0e}\u{ff0f}escaped", // fullwidth ../
        "\u{2024}\u{2024}",                // ONE DOT LEADER
        "a\u{200b}b",                      // ZERO WIDTH SPACE
        "_manifest.json",
        "index.json",
        "",
        " ",
    ]
    .map(str::to_owned)
    .to_vec();
    values.push("a".repeat(121));
    values.push("a".repeat(4096));
    values
}

/// Everything under `root` but the input: relative path → bytes (links read through).
fn everything_but_input(root: &Path) -> BTreeMap<String, Vec<u8>> {
    read_tree(root).into_iter().filter(|(path, _)| !path.starts_with("in/")).collect()
}

fn edit_first_line(input: &Path, file: &str, field: &str, value: &str) {
    let path = input.join(file);
    let text = fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut record: Value = serde_json::from_str(&lines[0]).unwrap();
    record[field] = json!(value);
    lines[0] = serde_json::to_string(&record).unwrap();
    fs::write(&path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn hostile_ids_and_slugs_are_rejected_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let input = root.join("in");
    let work = root.join("work");
    copy_dir(&fixture("small"), &input);
    assert_ok(&build(&input, &work, &[]));
    let pristine = fs::read_dir(&input)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| (p.clone(), fs::read(&p).unwrap()))
        .collect::<Vec<_>>();
    let before = everything_but_input(root);
    let published = read_tree(&work.join("public"));
    assert!(!published.is_empty());

    let mut cases = 0;
    for file in ["services.jsonl", "organisations.jsonl", "locations.jsonl"] {
        let fields: &[&str] = if file == "locations.jsonl" { &["id"] } else { &["slug", "id"] };
        for field in fields {
            for value in hostile() {
                for (path, bytes) in &pristine {
                    fs::write(path, bytes).unwrap();
                }
                edit_first_line(&input, file, field, &value);
                let output = build(&input, &work, &[]);
                let stderr = String::from_utf8_lossy(&output.stderr);
                let what = format!("{file} {field} = {value:?}");
                assert_eq!(output.status.code(), Some(1), "{what}: expected exit 1, stderr:\n{stderr}");
                // Located: the file and line of the bad record.
                assert!(stderr.contains(&format!("{file}:1")), "{what}: error not located:\n{stderr}");
                assert!(everything_but_input(root) == before, "{what}: something outside the input changed");
                cases += 1;
            }
        }
    }
    assert!(cases >= 5 * hostile().len());
    assert!(read_tree(&work.join("public")) == published);
}

/// A location line whose id does not parse is dropped by the loader, which marks
/// `locations.jsonl` incomplete so that services naming it report no dangling reference;
/// `validate` once went on to resolve the model and panicked on the missing location
/// (exit 101). It must be the located error of the bad line.
#[test]
fn a_bad_location_id_is_a_located_error() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    copy_dir(&fixture("small"), &input);
    edit_first_line(&input, "locations.jsonl", "id", "..");
    let output = build(&input, &tmp.path().join("work"), &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("locations.jsonl:1"), "{stderr}");
}
