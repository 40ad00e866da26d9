//! Every text field of every record carries markup, template syntax and awkward Unicode:
//! every HTML view shows it as text, and every JSON file gives back the same strings.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::common::{build, copy_dir, fixture, read_tree};

/// Markup that would run, template syntax that would be evaluated, direction overrides,
/// zero-width and non-characters.
const PAYLOAD: &str =
    "<script>alert(1)</script>\"><img src=x onerror=alert(1)>{{ 7*7 }}{% raw %}\u{202e}\u{200b}\u{ffff}'&amp;";
const URL_PAYLOAD: &str = "javascript:alert(1)//<script>";
/// Fields that are references or structured values, not free text.
const NOT_TEXT: &[&str] =
    &["id", "slug", "organisation_id", "location_ids", "categories", "service_areas", "last_updated", "last_edited"];

fn poison(input: &Path, file: &str, keep: &[String]) {
    let text = fs::read_to_string(input.join(file)).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let Ok(Value::Object(mut record)) = serde_json::from_str::<Value>(line) else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        for (key, value) in record.iter_mut() {
            if value.is_string() && !NOT_TEXT.contains(&key.as_str()) && !keep.contains(key) {
                let payload = if key == "url" || key == "facebook" { URL_PAYLOAD } else { PAYLOAD };
                *value = Value::String(payload.to_owned());
            }
        }
        out.push_str(&serde_json::to_string(&record).unwrap());
        out.push('\n');
    }
    fs::write(input.join(file), out).unwrap();
}

/// The field of every located error of `file` in a failed build's stderr.
fn rejected(stderr: &str, file: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix(&format!("{file}:")))
        .filter_map(|rest| {
            let (_line, rest) = rest.split_once(": field `")?;
            let (field, _) = rest.split_once('`')?;
            Some(field.to_owned())
        })
        .collect()
}

fn strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

#[test]
fn hostile_text_is_shown_as_text_and_round_trips_through_json() {
    let tmp = tempfile::tempdir().unwrap();
    let clean = tmp.path().join("clean");
    let input = tmp.path().join("in");
    copy_dir(&fixture("small"), &clean);
    let files = ["services.jsonl", "organisations.jsonl", "locations.jsonl"];
    // Fields the loader validates (country, e-mail, URLs...) are put back when it rejects
    // the payload there: such a value never reaches the output at all.
    let mut keep: Vec<Vec<String>> = vec![Vec::new(); files.len()];
    let work = tmp.path().join("work");
    let mut built = false;
    let mut last_error = String::new();
    for _attempt in 0..10 {
        copy_dir(&clean, &input);
        for (file, keep) in files.iter().zip(&keep) {
            poison(&input, file, keep);
        }
        let output = build(&input, &work, &[]);
        if output.status.success() {
            built = true;
            break;
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        last_error = stderr.to_string();
        for (file, keep) in files.iter().zip(keep.iter_mut()) {
            keep.extend(rejected(&stderr, file));
        }
    }
    assert!(built, "the poisoned dataset never built:\n{last_error}");

    let tree = read_tree(&work.join("public"));
    let (mut html_with_payload, mut json_with_payload) = (0, 0);
    for (path, bytes) in &tree {
        if path.ends_with(".html") {
            let html = String::from_utf8(bytes.clone()).unwrap_or_else(|_| panic!("{path}: not UTF-8"));
            // A `javascript:` URL from the data must never become a link.
            assert!(!html.to_ascii_lowercase().contains("href=\"javascript:"), "{path}: javascript: link");
            for raw in ["<script>alert", "<img src=x", "onerror=alert(1)>", "\"><img"] {
                assert!(!html.contains(raw), "{path}: data shown as markup ({raw:?})");
            }
            if html.contains("&lt;script&gt;alert(1)&lt;") {
                html_with_payload += 1;
                assert!(html.contains("{{ 7*7 }}"), "{path}: template syntax evaluated or lost");
                assert!(!html.contains(">49<"), "{path}: template syntax evaluated");
            }
        } else if path.ends_with(".json") {
            let value: Value = serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("{path}: invalid JSON: {e}"));
            let mut all = Vec::new();
            strings(&value, &mut all);
            if all.contains(&PAYLOAD) {
                json_with_payload += 1;
            }
            for s in all {
                // Any string carrying the payload carries all of it, unchanged.
                if s.contains("<script>alert(1)</script>\"") {
                    assert!(s.contains(PAYLOAD), "{path}: payload altered: {s:?}");
                }
            }
        }
    }
    assert!(html_with_payload > 0, "no HTML view shows the payload");
    assert!(json_with_payload > 0, "no JSON file holds the payload");
}
