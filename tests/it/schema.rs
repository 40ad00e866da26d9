//! `svcdir schema` against the loader: the embedded dataset validates line by line, and
//! every bad-dataset case of `bad_input.rs` that breaks a rule of one record is rejected.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::bad_input::CASES;
use crate::common::{self, assert_ok, fixture, repo};

/// The bad-dataset cases a schema can see: one record's fields, types and forms. The others
/// (references, uniqueness across lines, CSV files, missing files, unparseable JSON) are
/// the cross-file rules listed in each schema's description.
const PER_RECORD_CASES: &[&str] = &[
    "a line that is a JSON array",
    "a line that is a JSON string",
    "unknown field in a service (not x_)",
    "unknown field in an organisation (not x_)",
    "unknown field in a location, differing from a known one by case",
    "service without last_updated",
    "service without organisation_id",
    "service without name",
    "organisation without last_edited",
    "organisation without id",
    "location without street_address",
    "location without latitude",
    "is_claimed is a string",
    "published is a number",
    "latitude is a string",
    "categories is a string, not an array",
    "description is null",
    "invalid UUID as a service id",
    "invalid UUID in location_ids",
    "invalid UUID as a location's organisation_id",
    "a category listed twice by one service",
    "a service area listed twice by one service",
    "a location listed twice by one service",
    "given service slug in upper case",
    "given organisation slug with a double hyphen",
    "given slug with a leading hyphen",
    "given slug with a non-ASCII letter",
    "given slug that is empty",
    "given slug of 121 characters",
    "given slug shaped like a UUID (hyphenated)",
    "given slug shaped like a UUID (32 hex digits)",
    "empty service name",
    "whitespace-only organisation name",
    "timestamp on a day that does not exist",
    "timestamp without a time zone",
    "latitude out of range",
    "longitude out of range",
    "country not two letters",
    "empty locality",
    "categories.json: unknown field",
    "categories.json: invalid slug (of a category no service uses)",
    "categories.json: empty name",
    "service_areas.json: a type that is not one of the five",
    "service_areas.json: a bad type on an area that services use",
    "service_areas.json: type is a number",
    "several parse errors in several files",
    "several rule breaks in several files",
    "parse errors and rule breaks together",
];

/// The schemas as `svcdir schema --out` writes them, compiled with format assertion on
/// (`date-time` is part of the contract, as the loader parses the calendar date).
fn schemas() -> Vec<(String, jsonschema::Validator)> {
    let out = tempfile::tempdir().unwrap();
    assert_ok(&common::svcdir(&["schema", "--out", out.path().to_str().unwrap()]));
    let mut names: Vec<String> =
        fs::read_dir(out.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "categories.schema.json",
            "locations.schema.json",
            "organisations.schema.json",
            "service_areas.schema.json",
            "services.schema.json"
        ]
    );
    names
        .into_iter()
        .map(|name| {
            let schema: Value = serde_json::from_slice(&fs::read(out.path().join(&name)).unwrap()).unwrap();
            assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
            let validator = jsonschema::draft202012::options()
                .should_validate_formats(true)
                .build(&schema)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, validator)
        })
        .collect()
}

/// Every schema violation of a dataset directory, as `file[:line]: message`; lines that are
/// not JSON are left to the loader (a schema validates JSON values, not text).
fn violations(dir: &Path, schemas: &[(String, jsonschema::Validator)]) -> Vec<String> {
    let mut found = Vec::new();
    for (name, validator) in schemas {
        let stem = name.trim_end_matches(".schema.json");
        let json = dir.join(format!("{stem}.json"));
        let jsonl = dir.join(format!("{stem}.jsonl"));
        let (file, lines): (String, Vec<(Option<usize>, String)>) = if json.exists() {
            (format!("{stem}.json"), vec![(None, read_text(&json))])
        } else if jsonl.exists() {
            let text = read_text(&jsonl);
            (format!("{stem}.jsonl"), text.lines().enumerate().map(|(ix, l)| (Some(ix + 1), l.to_owned())).collect())
        } else {
            continue;
        };
        for (line, text) in lines {
            if text.trim().is_empty() {
                continue;
            }
            let Ok(value) = serde_json::from_str::<Value>(&text) else { continue };
            for error in validator.iter_errors(&value) {
                let at = line.map(|l| format!(":{l}")).unwrap_or_default();
                found.push(format!("{file}{at}: {} at {}", error, error.instance_path()));
            }
        }
    }
    found
}

/// The file as text, without a byte-order mark; invalid UTF-8 is the loader's matter.
fn read_text(path: &Path) -> String {
    let bytes = fs::read(path).unwrap();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    text.strip_prefix('\u{feff}').map(str::to_owned).unwrap_or(text)
}

#[test]
fn the_embedded_dataset_and_the_fixture_validate_against_the_schemas() {
    let schemas = schemas();
    for dir in [repo().join("input"), fixture("small")] {
        let found = violations(&dir, &schemas);
        assert!(found.is_empty(), "{}:\n{}", dir.display(), found.join("\n"));
    }
}

#[test]
fn every_per_record_bad_dataset_is_rejected_by_the_schemas() {
    let schemas = schemas();
    let mut failures = Vec::new();
    for name in PER_RECORD_CASES {
        let case = CASES.iter().find(|c| c.name == *name).unwrap_or_else(|| panic!("no bad_input case {name:?}"));
        let work = tempfile::tempdir().unwrap();
        common::copy_dir(&fixture("small"), work.path());
        (case.mutate)(work.path());
        if violations(work.path(), &schemas).is_empty() {
            failures.push(*name);
        }
    }
    assert!(failures.is_empty(), "the schemas accept these bad datasets: {failures:#?}");
}

#[test]
fn schema_without_out_prints_every_schema() {
    let output = common::svcdir(&["schema"]);
    assert_ok(&output);
    let all: Value = serde_json::from_slice(&output.stdout).unwrap();
    let names: Vec<&String> = all.as_object().unwrap().keys().collect();
    assert_eq!(names.len(), 5, "{names:?}");
    assert_eq!(all["services.schema.json"], svcdir::schema::service());
}
