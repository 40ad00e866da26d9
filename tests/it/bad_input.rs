//! Bad datasets (input-format.md): every kind of rule break stops `svcdir build` with exit 1,
//! a message naming the file, the line (for `.jsonl` and `.csv`), the field and the value,
//! and leaves the previous output and search index exactly as they were. `svcdir validate`
//! reports the same errors.
//!
//! Each case copies `tests/fixtures/small`, builds it, applies one mutation and builds again
//! into the same output. The cases run in parallel; every failing case is reported at once.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use rayon::prelude::*;
use serde_json::{Map, Value, json};

use crate::common::{self, assert_ok, fixture, read_tree};

// Files of the dataset.
const CATEGORIES: &str = "categories.json";
const SERVICE_AREAS: &str = "service_areas.json";
const ORGANISATIONS: &str = "organisations.jsonl";
const LOCATIONS: &str = "locations.jsonl";
const SERVICES: &str = "services.jsonl";
const POSTCODE_CSV: &str = "postcodes/small.csv";
const ALIASES: &str = "area_code_aliases.csv";

// Records of the fixture (tests/fixtures/small).
const ORG_CAFE: &str = "0a1b2c3d-0000-4000-8000-000000000001"; // organisations.jsonl:3, slug cafe-comhla
const LOC_1: &str = "9a000000-0000-4000-8000-000000000001"; // Glasgow org
const SVC_2: &str = "5e000000-0000-4000-8000-000000000002"; // slug befriending-line
const NOWHERE: &str = "0a1b2c3d-0000-4000-8000-0000000000ff"; // names no record

/// Lines of the fixture files, as the line numbers of the case table assume.
const FIXTURE_LINES: [(&str, usize); 4] = [(ORGANISATIONS, 4), (LOCATIONS, 4), (SERVICES, 8), (POSTCODE_CSV, 3)];
// A record appended to a fixture file lands on the line after the last one.
const NEW_ORG_LINE: usize = 5;
const NEW_LOCATION_LINE: usize = 5;
const NEW_SERVICE_LINE: usize = 9;

/// A valid new record of each kind, appended (then broken) by the cases below.
fn new_organisation() -> Value {
    json!({"id": "0a1b2c3d-0000-4000-8000-000000000009", "name": "New Org", "last_edited": "2024-01-01T00:00:00Z"})
}
fn new_location() -> Value {
    json!({"id": "9a000000-0000-4000-8000-000000000009", "organisation_id": ORG_CAFE,
           "street_address": "1 New Street", "locality": "Aberdeen", "postal_code": "AB11 6BA",
           "latitude": 57.1, "longitude": -2.1})
}
fn new_service() -> Value {
    json!({"id": "5e000000-0000-4000-8000-000000000009", "organisation_id": ORG_CAFE,
           "name": "New Service", "categories": ["money"], "last_updated": "2024-01-01T00:00:00Z"})
}

// ---------------------------------------------------------------------------------------
// Mutations

fn path(dir: &Path, rel: &str) -> PathBuf {
    dir.join(rel)
}

fn read(dir: &Path, rel: &str) -> String {
    fs::read_to_string(path(dir, rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

fn write(dir: &Path, rel: &str, text: &str) {
    fs::write(path(dir, rel), text).unwrap_or_else(|e| panic!("write {rel}: {e}"));
}

fn remove(dir: &Path, rel: &str) {
    fs::remove_file(path(dir, rel)).unwrap_or_else(|e| panic!("remove {rel}: {e}"));
}

/// Replaces line `line` (1-based) of a text file.
fn replace_line(dir: &Path, rel: &str, line: usize, text: &str) {
    let old = read(dir, rel);
    let mut lines: Vec<&str> = old.lines().collect();
    assert!(line >= 1 && line <= lines.len(), "{rel} has no line {line}");
    lines[line - 1] = text;
    write(dir, rel, &(lines.join("\n") + "\n"));
}

/// Appends one line to a text file.
fn append_line(dir: &Path, rel: &str, text: &str) {
    let mut old = read(dir, rel);
    if !old.is_empty() && !old.ends_with('\n') {
        old.push('\n');
    }
    write(dir, rel, &format!("{old}{text}\n"));
}

/// Edits the JSON object on line `line` of a `.jsonl` file.
fn edit_line(dir: &Path, rel: &str, line: usize, edit: impl FnOnce(&mut Map<String, Value>)) {
    let old = read(dir, rel);
    let raw = old.lines().nth(line - 1).unwrap_or_else(|| panic!("{rel} has no line {line}"));
    let mut value: Value = serde_json::from_str(raw).unwrap_or_else(|e| panic!("{rel}:{line}: {e}"));
    edit(value.as_object_mut().unwrap_or_else(|| panic!("{rel}:{line} is no object")));
    replace_line(dir, rel, line, &value.to_string());
}

/// Appends `record`, edited, to a `.jsonl` file.
fn append_record(dir: &Path, rel: &str, mut record: Value, edit: impl FnOnce(&mut Map<String, Value>)) {
    edit(record.as_object_mut().unwrap());
    append_line(dir, rel, &record.to_string());
}

/// Edits a `.json` file as a whole.
fn edit_json(dir: &Path, rel: &str, edit: impl FnOnce(&mut Value)) {
    let mut value: Value = serde_json::from_str(&read(dir, rel)).unwrap();
    edit(&mut value);
    write(dir, rel, &serde_json::to_string_pretty(&value).unwrap());
}

fn set(obj: &mut Map<String, Value>, key: &str, value: Value) {
    obj.insert(key.to_owned(), value);
}

fn unset(obj: &mut Map<String, Value>, key: &str) {
    assert!(obj.remove(key).is_some(), "the record has no `{key}` to remove");
}

// ---------------------------------------------------------------------------------------
// The case table

/// One error the run must report, as `svcdir` prints it (`DataError`'s display):
/// `file[:line][: field `f`][, value "v"]: message`.
#[derive(Debug, Clone, Copy)]
struct Want {
    file: &'static str,
    line: Option<usize>,
    field: Option<&'static str>,
    /// The offending value, as stored (it is printed quoted with `{:?}`).
    value: Option<&'static str>,
}

/// An error about `field` on `line` of a `.jsonl` or `.csv` file.
const fn at(file: &'static str, line: usize, field: &'static str) -> Want {
    Want { file, line: Some(line), field: Some(field), value: None }
}
/// An error about a whole line (it could not be parsed into fields).
const fn on_line(file: &'static str, line: usize) -> Want {
    Want { file, line: Some(line), field: None, value: None }
}
/// An error about `field` of a `.json` file (no lines there: the path names the node).
const fn in_json(file: &'static str, field: &'static str) -> Want {
    Want { file, line: None, field: Some(field), value: None }
}
/// An error about a whole file or folder.
const fn whole(file: &'static str) -> Want {
    Want { file, line: None, field: None, value: None }
}

impl Want {
    const fn value(mut self, value: &'static str) -> Want {
        self.value = Some(value);
        self
    }

    fn prefix(&self) -> String {
        let mut prefix = self.file.to_owned();
        if let Some(line) = self.line {
            prefix.push_str(&format!(":{line}"));
        }
        match self.field {
            Some(field) => prefix.push_str(&format!(": field `{field}`")),
            None => prefix.push_str(": "),
        }
        prefix
    }

    fn matches(&self, reported: &str) -> bool {
        let Some(rest) = reported.strip_prefix(&self.prefix()) else {
            return false;
        };
        // `services.jsonl:9: ` must not match `services.jsonl:9: field ...` of another error.
        if self.field.is_none() && rest.starts_with("field `") {
            return false;
        }
        match self.value {
            Some(value) => reported.contains(&format!(", value {value:?}")),
            None => true,
        }
    }
}

pub(crate) type Mutation = fn(&Path);

/// One bad dataset (also read by `schema.rs`, which checks the per-record ones).
pub(crate) struct Case {
    pub(crate) name: &'static str,
    pub(crate) mutate: Mutation,
    /// Exactly the errors the run reports (no more: a rule break must not cascade).
    want: &'static [Want],
}

#[rustfmt::skip]
pub(crate) const CASES: &[Case] = &[
    // --- lines that are not records -------------------------------------------------
    Case { name: "invalid JSON on a line",
        mutate: |d| append_line(d, SERVICES, r#"{"id": "5e000000-0000-4000-8000-000000000009", "name": "Broken"#),
        want: &[on_line(SERVICES, NEW_SERVICE_LINE)] },
    Case { name: "a line that is a JSON array",
        mutate: |d| append_line(d, SERVICES, r#"["5e000000-0000-4000-8000-000000000009", "Array"]"#),
        want: &[on_line(SERVICES, NEW_SERVICE_LINE)] },
    Case { name: "a line that is not UTF-8 (a Latin-1 é)",
        mutate: |d| {
            let mut bytes = fs::read(path(d, SERVICES)).unwrap();
            bytes.extend_from_slice(b"{\"id\": \"5e000000-0000-4000-8000-000000000009\", \"name\": \"Caf\xe9\"}\n");
            fs::write(path(d, SERVICES), bytes).unwrap();
        },
        want: &[on_line(SERVICES, NEW_SERVICE_LINE)] },
    Case { name: "a line that is not UTF-8 does not hide the lines after it",
        mutate: |d| {
            edit_line(d, SERVICES, 8, |o| set(o, "categories", json!(["no-such-category"])));
            let text = read(d, SERVICES);
            let mut bytes = Vec::new();
            for (ix, line) in text.lines().enumerate() {
                match ix + 1 {
                    7 => bytes.extend_from_slice(b"{\"id\": \"5e000000-0000-4000-8000-000000000007\", \"name\": \"Caf\xe9\"}"),
                    _ => bytes.extend_from_slice(line.as_bytes()),
                }
                bytes.push(b'\n');
            }
            fs::write(path(d, SERVICES), bytes).unwrap();
        },
        want: &[on_line(SERVICES, 7), at(SERVICES, 8, "categories[0]").value("no-such-category")] },
    Case { name: "a line that is a JSON string",
        mutate: |d| append_line(d, ORGANISATIONS, r#""just a string""#),
        want: &[on_line(ORGANISATIONS, NEW_ORG_LINE)] },
    // --- fields ---------------------------------------------------------------------
    Case { name: "unknown field in a service (not x_)",
        mutate: |d| edit_line(d, SERVICES, 1, |o| set(o, "catgories", json!(["foodbank"]))),
        want: &[at(SERVICES, 1, "catgories")] },
    Case { name: "unknown field in an organisation (not x_)",
        mutate: |d| edit_line(d, ORGANISATIONS, 3, |o| set(o, "websit", json!("https://example.org"))),
        want: &[at(ORGANISATIONS, 3, "websit")] },
    Case { name: "unknown field in a location, differing from a known one by case",
        mutate: |d| edit_line(d, LOCATIONS, 2, |o| set(o, "Locality", json!("Glasgow"))),
        want: &[at(LOCATIONS, 2, "Locality")] },
    Case { name: "service without last_updated",
        mutate: |d| append_record(d, SERVICES, new_service(), |o| unset(o, "last_updated")),
        want: &[at(SERVICES, NEW_SERVICE_LINE, "last_updated")] },
    Case { name: "service without organisation_id",
        mutate: |d| append_record(d, SERVICES, new_service(), |o| unset(o, "organisation_id")),
        want: &[at(SERVICES, NEW_SERVICE_LINE, "organisation_id")] },
    Case { name: "service without name",
        mutate: |d| append_record(d, SERVICES, new_service(), |o| unset(o, "name")),
        want: &[at(SERVICES, NEW_SERVICE_LINE, "name")] },
    Case { name: "organisation without last_edited",
        mutate: |d| append_record(d, ORGANISATIONS, new_organisation(), |o| unset(o, "last_edited")),
        want: &[at(ORGANISATIONS, NEW_ORG_LINE, "last_edited")] },
    Case { name: "organisation without id",
        mutate: |d| append_record(d, ORGANISATIONS, new_organisation(), |o| unset(o, "id")),
        want: &[at(ORGANISATIONS, NEW_ORG_LINE, "id")] },
    Case { name: "location without street_address",
        mutate: |d| append_record(d, LOCATIONS, new_location(), |o| unset(o, "street_address")),
        want: &[at(LOCATIONS, NEW_LOCATION_LINE, "street_address")] },
    Case { name: "location without latitude",
        mutate: |d| append_record(d, LOCATIONS, new_location(), |o| unset(o, "latitude")),
        want: &[at(LOCATIONS, NEW_LOCATION_LINE, "latitude")] },
    Case { name: "is_claimed is a string",
        mutate: |d| append_record(d, ORGANISATIONS, new_organisation(), |o| set(o, "is_claimed", json!("yes"))),
        want: &[at(ORGANISATIONS, NEW_ORG_LINE, "is_claimed").value("yes")] },
    Case { name: "published is a number",
        mutate: |d| append_record(d, SERVICES, new_service(), |o| set(o, "published", json!(1))),
        want: &[at(SERVICES, NEW_SERVICE_LINE, "published").value("1")] },
    Case { name: "latitude is a string",
        mutate: |d| append_record(d, LOCATIONS, new_location(), |o| set(o, "latitude", json!("57.1"))),
        want: &[at(LOCATIONS, NEW_LOCATION_LINE, "latitude").value("57.1")] },
    Case { name: "categories is a string, not an array",
        mutate: |d| edit_line(d, SERVICES, 2, |o| set(o, "categories", json!("mental-health"))),
        want: &[at(SERVICES, 2, "categories")] },
    Case { name: "description is null",
        mutate: |d| edit_line(d, SERVICES, 4, |o| set(o, "description", Value::Null)),
        want: &[at(SERVICES, 4, "description")] },
    Case { name: "invalid UUID as a service id",
        mutate: |d| append_record(d, SERVICES, new_service(), |o| set(o, "id", json!("5e000000-0000-4000-8000-00000000000g"))),
        want: &[at(SERVICES, NEW_SERVICE_LINE, "id").value("5e000000-0000-4000-8000-00000000000g")] },
    Case { name: "invalid UUID in location_ids",
        mutate: |d| edit_line(d, SERVICES, 1, |o| set(o, "location_ids", json!([LOC_1, "9a000000-0000-4000-8000"]))),
        want: &[at(SERVICES, 1, "location_ids[1]")] },
    Case { name: "invalid UUID as a location's organisation_id",
        mutate: |d| append_record(d, LOCATIONS, new_location(), |o| set(o, "organisation_id", json!("cafe"))),
        want: &[at(LOCATIONS, NEW_LOCATION_LINE, "organisation_id")] },
    // --- identity and references ----------------------------------------------------
    Case { name: "duplicate service id",
        mutate: |d| append_record(d, SERVICES, new_service(), |o| set(o, "id", json!(SVC_2))),
        want: &[at(SERVICES, NEW_SERVICE_LINE, "id").value(SVC_2)] },
    Case { name: "duplicate organisation id",
        mutate: |d| append_record(d, ORGANISATIONS, new_organisation(), |o| set(o, "id", json!(ORG_CAFE))),
        want: &[at(ORGANISATIONS, NEW_ORG_LINE, "id").value(ORG_CAFE)] },
    Case { name: "duplicate location id",
        mutate: |d| append_record(d, LOCATIONS, new_location(), |o| set(o, "id", json!("9a000000-0000-4000-8000-000000000003"))),
        want: &[at(LOCATIONS, NEW_LOCATION_LINE, "id")] },
    Case { name: "service organisation_id names no organisation",
        mutate: |d| edit_line(d, SERVICES, 8, |o| set(o, "organisation_id", json!(NOWHERE))),
        want: &[at(SERVICES, 8, "organisation_id").value(NOWHERE)] },
    Case { name: "location organisation_id names no organisation",
        mutate: |d| edit_line(d, LOCATIONS, 3, |o| set(o, "organisation_id", json!(NOWHERE))),
        want: &[at(LOCATIONS, 3, "organisation_id").value(NOWHERE)] },
    Case { name: "location_ids names no location",
        mutate: |d| edit_line(d, SERVICES, 1, |o| set(o, "location_ids", json!([LOC_1, "9a000000-0000-4000-8000-0000000000ff"]))),
        want: &[at(SERVICES, 1, "location_ids[1]").value("9a000000-0000-4000-8000-0000000000ff")] },
    Case { name: "location_ids names a location of another organisation",
        mutate: |d| edit_line(d, SERVICES, 4, |o| set(o, "location_ids", json!([LOC_1]))),
        want: &[at(SERVICES, 4, "location_ids[0]").value(LOC_1)] },
    Case { name: "unknown category slug",
        mutate: |d| edit_line(d, SERVICES, 3, |o| set(o, "categories", json!(["community-caff"]))),
        want: &[at(SERVICES, 3, "categories[0]").value("community-caff")] },
    Case { name: "category given by name instead of slug",
        mutate: |d| edit_line(d, SERVICES, 2, |o| set(o, "categories", json!(["Mental Health Issues"]))),
        want: &[at(SERVICES, 2, "categories[0]").value("Mental Health Issues")] },
    Case { name: "unknown service-area code (a postcode-file code, not a list code)",
        mutate: |d| edit_line(d, SERVICES, 2, |o| set(o, "service_areas", json!(["S12000046", "S37000034"]))),
        want: &[at(SERVICES, 2, "service_areas[1]").value("S37000034")] },
    Case { name: "a category listed twice by one service",
        mutate: |d| edit_line(d, SERVICES, 1, |o| set(o, "categories", json!(["foodbank", "food-nutrition", "foodbank"]))),
        want: &[at(SERVICES, 1, "categories[2]").value("foodbank")] },
    Case { name: "a service area listed twice by one service",
        mutate: |d| edit_line(d, SERVICES, 4, |o| set(o, "service_areas", json!(["XS", "XB", "XS"]))),
        want: &[at(SERVICES, 4, "service_areas[2]").value("XS")] },
    Case { name: "a location listed twice by one service",
        mutate: |d| edit_line(d, SERVICES, 3, |o| set(o, "location_ids", json!(["9a000000-0000-4000-8000-000000000002", "9a000000-0000-4000-8000-000000000002"]))),
        want: &[at(SERVICES, 3, "location_ids[1]")] },
    // --- slugs ----------------------------------------------------------------------
    Case { name: "given service slug in upper case",
        mutate: |d| edit_line(d, SERVICES, 1, |o| set(o, "slug", json!("City-Centre-Foodbank"))),
        want: &[at(SERVICES, 1, "slug").value("City-Centre-Foodbank")] },
    Case { name: "given organisation slug with a double hyphen",
        mutate: |d| edit_line(d, ORGANISATIONS, 3, |o| set(o, "slug", json!("cafe--comhla"))),
        want: &[at(ORGANISATIONS, 3, "slug").value("cafe--comhla")] },
    Case { name: "given slug with a leading hyphen",
        mutate: |d| edit_line(d, SERVICES, 8, |o| set(o, "slug", json!("-online"))),
        want: &[at(SERVICES, 8, "slug").value("-online")] },
    Case { name: "given slug with a non-ASCII letter",
        mutate: |d| edit_line(d, SERVICES, 5, |o| set(o, "slug", json!("café"))),
        want: &[at(SERVICES, 5, "slug").value("café")] },
    Case { name: "given slug that is empty",
        mutate: |d| edit_line(d, ORGANISATIONS, 1, |o| set(o, "slug", json!(""))),
        want: &[at(ORGANISATIONS, 1, "slug")] },
    Case { name: "given slug of 121 characters",
        mutate: |d| edit_line(d, SERVICES, 4, |o| set(o, "slug", json!("a".repeat(121)))),
        want: &[at(SERVICES, 4, "slug")] },
    Case { name: "given slug shaped like a UUID (hyphenated)",
        mutate: |d| edit_line(d, SERVICES, 4, |o| set(o, "slug", json!("5e000000-0000-4000-8000-000000000004"))),
        want: &[at(SERVICES, 4, "slug").value("5e000000-0000-4000-8000-000000000004")] },
    Case { name: "given slug shaped like a UUID (32 hex digits)",
        mutate: |d| edit_line(d, ORGANISATIONS, 1, |o| set(o, "slug", json!("2c5f3b8e1d444c1a9f0e6a7b8c9d0e1f"))),
        want: &[at(ORGANISATIONS, 1, "slug").value("2c5f3b8e1d444c1a9f0e6a7b8c9d0e1f")] },
    Case { name: "duplicate given slug among services",
        mutate: |d| edit_line(d, SERVICES, 8, |o| set(o, "slug", json!("befriending-line"))),
        want: &[at(SERVICES, 8, "slug").value("befriending-line")] },
    Case { name: "given service slug equal to another service's generated slug",
        mutate: |d| edit_line(d, SERVICES, 8, |o| set(o, "slug", json!("city-centre-foodbank-7696557795707446728"))),
        want: &[at(SERVICES, 8, "slug").value("city-centre-foodbank-7696557795707446728")] },
    Case { name: "duplicate given slug among organisations",
        mutate: |d| edit_line(d, ORGANISATIONS, 1, |o| set(o, "slug", json!("cafe-comhla"))),
        want: &[at(ORGANISATIONS, 3, "slug").value("cafe-comhla")] },
    // --- values ---------------------------------------------------------------------
    Case { name: "empty service name",
        mutate: |d| edit_line(d, SERVICES, 6, |o| set(o, "name", json!(""))),
        want: &[at(SERVICES, 6, "name")] },
    Case { name: "whitespace-only organisation name",
        mutate: |d| edit_line(d, ORGANISATIONS, 1, |o| set(o, "name", json!(" \t "))),
        want: &[at(ORGANISATIONS, 1, "name")] },
    Case { name: "timestamp on a day that does not exist",
        mutate: |d| edit_line(d, SERVICES, 4, |o| set(o, "last_updated", json!("2021-02-29T10:00:00Z"))),
        want: &[at(SERVICES, 4, "last_updated").value("2021-02-29T10:00:00Z")] },
    Case { name: "timestamp without a time zone",
        mutate: |d| edit_line(d, ORGANISATIONS, 1, |o| set(o, "last_edited", json!("2024-03-01 11:15:30"))),
        want: &[at(ORGANISATIONS, 1, "last_edited").value("2024-03-01 11:15:30")] },
    Case { name: "latitude out of range",
        mutate: |d| edit_line(d, LOCATIONS, 2, |o| set(o, "latitude", json!(95.5))),
        want: &[at(LOCATIONS, 2, "latitude").value("95.5")] },
    Case { name: "longitude out of range",
        mutate: |d| edit_line(d, LOCATIONS, 1, |o| set(o, "longitude", json!(-180.5))),
        want: &[at(LOCATIONS, 1, "longitude").value("-180.5")] },
    Case { name: "country not two letters",
        mutate: |d| edit_line(d, LOCATIONS, 1, |o| set(o, "country", json!("GBR"))),
        want: &[at(LOCATIONS, 1, "country").value("GBR")] },
    Case { name: "empty locality",
        mutate: |d| edit_line(d, LOCATIONS, 3, |o| set(o, "locality", json!(""))),
        want: &[at(LOCATIONS, 3, "locality")] },
    // --- categories.json and service_areas.json -------------------------------------
    Case { name: "categories.json: a slug used twice in the tree",
        mutate: |d| edit_json(d, CATEGORIES, |v| {
            v[2]["sub_categories"] = json!([{"name": "Food banks", "slug": "foodbank", "sub_categories": []}]);
        }),
        want: &[in_json(CATEGORIES, "[2].sub_categories[0].slug").value("foodbank")] },
    Case { name: "categories.json: not valid JSON",
        mutate: |d| write(d, CATEGORIES, "[\n  {\"name\": \"Money\", \"slug\": \"money\", \"sub_categories\": []},\n]\n"),
        want: &[on_line(CATEGORIES, 3)] },
    Case { name: "categories.json: unknown field",
        mutate: |d| edit_json(d, CATEGORIES, |v| v[2]["parent"] = json!("conditions")),
        want: &[Want { file: CATEGORIES, line: None, field: Some("[2].parent"), value: None }] },
    Case { name: "categories.json: invalid slug (of a category no service uses)",
        mutate: |d| edit_json(d, CATEGORIES, |v| v[1]["slug"] = json!("Conditions")),
        want: &[in_json(CATEGORIES, "[1].slug").value("Conditions")] },
    Case { name: "categories.json: empty name",
        mutate: |d| edit_json(d, CATEGORIES, |v| v[2]["name"] = json!(" ")),
        want: &[in_json(CATEGORIES, "[2].name")] },
    Case { name: "categories.json: an id used twice",
        mutate: |d| edit_json(d, CATEGORIES, |v| v[2]["id"] = json!(3)),
        want: &[in_json(CATEGORIES, "[2].id").value("3")] },
    Case { name: "service_areas.json: a type that is not one of the five",
        mutate: |d| edit_json(d, SERVICE_AREAS, |v| v[0]["type"] = json!("County")),
        want: &[in_json(SERVICE_AREAS, "[0].type").value("County")] },
    Case { name: "service_areas.json: a bad type on an area that services use",
        // The code is in the file: only its type is wrong, so services naming it must not
        // be told that it is "no code of service_areas.json".
        mutate: |d| edit_json(d, SERVICE_AREAS, |v| v[5]["type"] = json!("Nation")),
        want: &[in_json(SERVICE_AREAS, "[5].type").value("Nation")] },
    Case { name: "service_areas.json: type is a number",
        mutate: |d| edit_json(d, SERVICE_AREAS, |v| v[0]["type"] = json!(2)),
        want: &[in_json(SERVICE_AREAS, "[0].type")] },
    Case { name: "service_areas.json: a code listed twice",
        mutate: |d| edit_json(d, SERVICE_AREAS, |v| {
            v.as_array_mut().unwrap().push(json!({"code": "S12000033", "type": "Local Authority", "name": "Aberdeen"}));
        }),
        want: &[in_json(SERVICE_AREAS, "[6].code").value("S12000033")] },
    // --- files ----------------------------------------------------------------------
    Case { name: "services.jsonl is missing",
        mutate: |d| remove(d, SERVICES),
        want: &[whole(SERVICES)] },
    Case { name: "service_areas.json is missing",
        mutate: |d| remove(d, SERVICE_AREAS),
        want: &[whole(SERVICE_AREAS)] },
    Case { name: "postcodes folder with no .csv file",
        mutate: |d| {
            remove(d, POSTCODE_CSV);
            write(d, "postcodes/README.txt", "extracts go here\n");
        },
        want: &[whole("postcodes")] },
    Case { name: "postcodes folder is missing",
        mutate: |d| fs::remove_dir_all(d.join("postcodes")).unwrap(),
        want: &[whole("postcodes")] },
    // --- postcode extracts ----------------------------------------------------------
    Case { name: "postcode CSV: latitude that is not a number on line 3",
        mutate: |d| {
            let text = read(d, POSTCODE_CSV).replace(",57.14560000,", ",north,");
            write(d, POSTCODE_CSV, &text);
        },
        want: &[at(POSTCODE_CSV, 3, "Latitude").value("north")] },
    Case { name: "postcode CSV: latitude out of range on an added line 4",
        mutate: |d| append_line(d, POSTCODE_CSV,
            r#""G3 7AA","G3","G3 7",1/8/1973 00:00:00,,"258000","666000",95.5,-4.27,"N","S12000049","S14000029","S17000017","S16000117","S13002976","S08000031","S08000007","09","S37000034","S00116592""#),
        want: &[at(POSTCODE_CSV, 4, "Latitude").value("95.5")] },
    Case { name: "postcode CSV: a postcode that is not one",
        mutate: |d| {
            let text = read(d, POSTCODE_CSV).replace("\"G2 1AL\",\"G2\"", "\"G2 1A-L\",\"G2\"");
            write(d, POSTCODE_CSV, &text);
        },
        want: &[at(POSTCODE_CSV, 1, "Postcode").value("G2 1A-L")] },
    Case { name: "postcode CSV: a postcode listed again in a later file at other coordinates",
        mutate: |d| write(d, "postcodes/zz.csv", &read(d, POSTCODE_CSV).lines().next().unwrap().replace(",55.86045205,", ",55.90000000,")),
        want: &[at("postcodes/zz.csv", 1, "Postcode").value("G2 1AL")] },
    Case { name: "postcode CSV: a short row",
        mutate: |d| append_line(d, POSTCODE_CSV, r#""G3 7AA","G3","G3 7""#),
        want: &[at(POSTCODE_CSV, 4, "DateOfDeletion")] },
    Case { name: "postcode CSV: first row in neither NRS layout",
        mutate: |d| write(d, "postcodes/other.csv", "G3 7AA,55.86,-4.27\n"),
        want: &[on_line("postcodes/other.csv", 1)] },
    // --- area_code_aliases.csv ------------------------------------------------------
    Case { name: "area_code_aliases.csv: to_code not in service_areas.json",
        mutate: |d| write(d, ALIASES, "from_code,to_code\nS12000099,S12000033\nS12000036,S12000036\n"),
        want: &[at(ALIASES, 3, "to_code").value("S12000036")] },
    Case { name: "area_code_aliases.csv: a line with three codes",
        mutate: |d| write(d, ALIASES, "S12000099,S12000033,S12000046\n"),
        want: &[at(ALIASES, 1, "from_code,to_code")] },
    Case { name: "area_code_aliases.csv: a from_code aliased twice",
        mutate: |d| write(d, ALIASES, "from_code,to_code\nS12000099,S12000033\nS12000099,S12000046\n"),
        want: &[at(ALIASES, 3, "from_code").value("S12000099")] },
    // --- several errors in several files, all reported by one run -------------------
    Case { name: "several parse errors in several files",
        mutate: |d| {
            append_line(d, SERVICES, "{not json");
            edit_line(d, ORGANISATIONS, 1, |o| set(o, "websit", json!("x")));
            append_record(d, LOCATIONS, new_location(), |o| set(o, "latitude", json!("57.1")));
            let text = read(d, POSTCODE_CSV).replace(",57.14560000,", ",north,");
            write(d, POSTCODE_CSV, &text);
            write(d, ALIASES, "S12000099\n");
        },
        want: &[
            on_line(SERVICES, NEW_SERVICE_LINE),
            at(ORGANISATIONS, 1, "websit"),
            at(LOCATIONS, NEW_LOCATION_LINE, "latitude"),
            at(POSTCODE_CSV, 3, "Latitude"),
            at(ALIASES, 1, "from_code,to_code"),
        ] },
    Case { name: "several rule breaks in several files",
        mutate: |d| {
            edit_line(d, SERVICES, 3, |o| set(o, "categories", json!(["community-caff"])));
            edit_line(d, SERVICES, 8, |o| set(o, "slug", json!("befriending-line")));
            append_record(d, ORGANISATIONS, new_organisation(), |o| set(o, "id", json!(ORG_CAFE)));
            edit_line(d, LOCATIONS, 2, |o| set(o, "latitude", json!(95.5)));
            edit_json(d, SERVICE_AREAS, |v| v[0]["type"] = json!("County"));
            edit_json(d, CATEGORIES, |v| v[2]["sub_categories"] = json!([{"name": "x", "slug": "foodbank"}]));
            write(d, ALIASES, "S12000099,S12000036\n");
        },
        want: &[
            at(SERVICES, 3, "categories[0]"),
            at(SERVICES, 8, "slug"),
            at(ORGANISATIONS, NEW_ORG_LINE, "id"),
            at(LOCATIONS, 2, "latitude"),
            in_json(SERVICE_AREAS, "[0].type"),
            in_json(CATEGORIES, "[2].sub_categories[0].slug"),
            at(ALIASES, 1, "to_code"),
        ] },
    Case { name: "parse errors and rule breaks together",
        mutate: |d| {
            append_line(d, SERVICES, "{not json");
            edit_line(d, SERVICES, 3, |o| set(o, "categories", json!(["community-caff"])));
            edit_line(d, LOCATIONS, 2, |o| set(o, "latitude", json!(95.5)));
            edit_line(d, ORGANISATIONS, 1, |o| set(o, "name", json!("  ")));
        },
        want: &[
            on_line(SERVICES, NEW_SERVICE_LINE),
            at(SERVICES, 3, "categories[0]"),
            at(LOCATIONS, 2, "latitude"),
            at(ORGANISATIONS, 1, "name"),
        ] },
    // --- size limits (issue 15 item 7): located errors, not huge outputs ---------------
    Case { name: "a line over 1 MiB (a 3 MB description) names the field being read",
        mutate: |d| append_record(d, SERVICES, new_service(), |o| set(o, "description", json!("x".repeat(3 << 20)))),
        want: &[at(SERVICES, NEW_SERVICE_LINE, "description")] },
    Case { name: "a text over 64 KiB",
        mutate: |d| append_record(d, SERVICES, new_service(), |o| set(o, "description", json!("x".repeat(65 << 10)))),
        want: &[at(SERVICES, NEW_SERVICE_LINE, "description")] },
    Case { name: "a text over 64 KiB inside a list",
        mutate: |d| append_record(d, ORGANISATIONS, new_organisation(), |o| set(o, "x_tags", json!(["a", "y".repeat(65 << 10)]))),
        want: &[at(ORGANISATIONS, NEW_ORG_LINE, "x_tags[1]")] },
    Case { name: "categories.json over 16 MiB",
        mutate: |d| write(d, CATEGORIES, &(read(d, CATEGORIES) + &" ".repeat(16 << 20))),
        want: &[whole(CATEGORIES)] },
    Case { name: "a postcode CSV row over 64 KiB",
        mutate: |d| append_line(d, POSTCODE_CSV, &format!("\"AB11 6BB\",\"{}\",\"AB11 6\"", "A".repeat(65 << 10))),
        want: &[at(POSTCODE_CSV, 4, "column 2")] },
];

// ---------------------------------------------------------------------------------------
// Running a case

/// The error lines of a failed run (`  file:line: ...` under `error: the dataset has N errors:`),
/// and N.
fn reported(stderr: &str) -> (Vec<String>, Option<usize>) {
    let total = stderr.lines().find_map(|l| {
        let rest = l.split_once("the dataset has ")?.1;
        rest.split_whitespace().next()?.parse().ok()
    });
    let lines = stderr.lines().filter(|l| l.starts_with("  ")).map(|l| l.trim().to_owned()).collect();
    (lines, total)
}

fn text(output: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Checks that a failed run reports exactly `want`; returns the reported error lines.
fn check_errors(what: &str, output: &Output, want: &[Want]) -> Result<Vec<String>, String> {
    if output.status.code() != Some(1) {
        return Err(format!("{what}: expected exit code 1 (bad data), got:\n{}", text(output)));
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stderr.contains("panicked") {
        return Err(format!("{what}: panicked:\n{}", text(output)));
    }
    let (lines, total) = reported(&stderr);
    let mut unmatched: Vec<&String> = lines.iter().collect();
    let mut missing = Vec::new();
    for w in want {
        match unmatched.iter().position(|l| w.matches(l)) {
            Some(ix) => {
                unmatched.remove(ix);
            }
            None => missing.push(match w.value {
                Some(v) => format!("{}…, value {v:?}", w.prefix()),
                None => format!("{}…", w.prefix()),
            }),
        }
    }
    if !missing.is_empty() || !unmatched.is_empty() || total != Some(want.len()) {
        let list = |items: Vec<&str>| {
            if items.is_empty() { "(none)".to_owned() } else { items.join("\n    ") }
        };
        return Err(format!(
            "{what}: expected exactly {} error(s), the run reports {total:?}\n  missing:\n    {}\n  unexpected:\n    {}\n{}",
            want.len(),
            list(missing.iter().map(String::as_str).collect()),
            list(unmatched.iter().map(|s| s.as_str()).collect()),
            text(output)
        ));
    }
    Ok(lines)
}

/// Entries of `work` besides the input, the output, its published generation and the
/// index (a second generation, a temporary link or a half-written index left behind by a
/// build that failed on its data would show here).
fn leftovers(work: &Path) -> Vec<String> {
    let published = fs::read_link(work.join("public")).unwrap_or_default();
    let mut names: Vec<String> = fs::read_dir(work)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        // The output's layout: the link, its generations, its lock file, and the index.
        .filter(|n| !matches!(n.as_str(), "input" | "public" | "search.idx" | ".public.gens" | ".public.lock"))
        .collect();
    if let Ok(generations) = fs::read_dir(work.join(".public.gens")) {
        names.extend(
            generations
                .map(|e| format!(".public.gens/{}", e.unwrap().file_name().to_string_lossy()))
                .filter(|n| Path::new(n) != published),
        );
    }
    names.sort();
    names
}

struct Built {
    tree: BTreeMap<String, Vec<u8>>,
    index: Option<Vec<u8>>,
}

fn snapshot(work: &Path) -> Built {
    Built { tree: read_tree(&work.join("public")), index: fs::read(work.join("search.idx")).ok() }
}

fn run_case(case: &Case) -> Result<(), String> {
    let name = case.name;
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let input = work.path().join("input");
    common::copy_dir(&fixture("small"), &input);

    let first = common::build(&input, work.path(), &[]);
    if !first.status.success() {
        return Err(format!("[{name}] the valid fixture does not build:\n{}", text(&first)));
    }
    let before = snapshot(work.path());
    if before.tree.is_empty() {
        return Err(format!("[{name}] the valid build wrote nothing"));
    }

    (case.mutate)(&input);

    let failed = common::build(&input, work.path(), &[]);
    let build_lines = check_errors(&format!("[{name}] svcdir build"), &failed, case.want)?;

    let after = snapshot(work.path());
    if after.tree != before.tree {
        let changed: Vec<&String> =
            before.tree.keys().chain(after.tree.keys()).filter(|k| before.tree.get(*k) != after.tree.get(*k)).collect();
        return Err(format!("[{name}] the failed build changed the output: {changed:?}"));
    }
    if after.index != before.index {
        return Err(format!("[{name}] the failed build changed the search index"));
    }
    let left = leftovers(work.path());
    if !left.is_empty() {
        return Err(format!("[{name}] the failed build left {left:?} beside the output"));
    }

    let validate = common::svcdir(&["validate", "--input", input.to_str().unwrap()]);
    let validate_lines = check_errors(&format!("[{name}] svcdir validate"), &validate, case.want)?;
    if validate_lines != build_lines {
        return Err(format!(
            "[{name}] validate and build report different errors:\n  build:\n    {}\n  validate:\n    {}",
            build_lines.join("\n    "),
            validate_lines.join("\n    ")
        ));
    }
    Ok(())
}

fn line_count(rel: &str) -> usize {
    fs::read_to_string(fixture("small").join(rel)).unwrap().lines().count()
}

#[test]
fn the_fixture_has_the_lines_the_cases_assume() {
    for (rel, lines) in FIXTURE_LINES {
        assert_eq!(line_count(rel), lines, "tests/fixtures/small/{rel} changed: update the case table of bad_input.rs");
    }
    assert_eq!(NEW_ORG_LINE, line_count(ORGANISATIONS) + 1);
    assert_eq!(NEW_LOCATION_LINE, line_count(LOCATIONS) + 1);
    assert_eq!(NEW_SERVICE_LINE, line_count(SERVICES) + 1);
    assert!(!fixture("small").join(ALIASES).exists(), "the cases write {ALIASES} from scratch");
}

#[test]
fn every_bad_dataset_fails_with_located_errors_and_changes_nothing() {
    assert!(CASES.len() >= 24, "{} cases", CASES.len());
    let names: std::collections::HashSet<&str> = CASES.iter().map(|c| c.name).collect();
    assert_eq!(names.len(), CASES.len(), "case names must be unique");
    let failures: Vec<String> = CASES.par_iter().filter_map(|case| run_case(case).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} bad-input cases failed:\n\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n\n")
    );
}

/// The records the cases append are valid on their own, as are the things the format
/// allows (`x_` fields, blank lines, CRLF line ends, a postcode file with a header row),
/// so that every error above comes from its mutation alone.
#[test]
fn valid_variants_build() {
    type Variant = (&'static str, Mutation);
    let variants: &[Variant] = &[
        ("the new organisation", |d| append_record(d, ORGANISATIONS, new_organisation(), |_| {})),
        ("the new location", |d| append_record(d, LOCATIONS, new_location(), |_| {})),
        ("the new service", |d| append_record(d, SERVICES, new_service(), |_| {})),
        ("x_ fields anywhere", |d| {
            edit_line(d, SERVICES, 1, |o| set(o, "x_whatever", json!({"nested": [1, 2]})));
            edit_line(d, LOCATIONS, 1, |o| set(o, "x_source", json!(null)));
        }),
        ("blank and white-space lines", |d| {
            append_line(d, SERVICES, "");
            append_line(d, SERVICES, "   \t");
        }),
        ("a UTF-8 byte-order mark at the start of each JSON file", |d| {
            for rel in [SERVICES, ORGANISATIONS, CATEGORIES, SERVICE_AREAS] {
                let text = read(d, rel);
                write(d, rel, &format!("\u{feff}{text}"));
            }
        }),
        ("CRLF line ends", |d| {
            let text = read(d, SERVICES).replace('\n', "\r\n");
            write(d, SERVICES, &text);
        }),
        ("an alias file extending the table", |d| write(d, ALIASES, "from_code,to_code\nS12000099,S12000033\n")),
        ("a category tree without ids", |d| {
            edit_json(d, CATEGORIES, |v| {
                v[0].as_object_mut().unwrap().remove("id");
            })
        }),
    ];
    let failures: Vec<String> = variants
        .par_iter()
        .filter_map(|(name, mutate)| {
            let work = tempfile::tempdir().unwrap();
            let input = work.path().join("input");
            common::copy_dir(&fixture("small"), &input);
            mutate(&input);
            let output = common::build(&input, work.path(), &[]);
            (!output.status.success()).then(|| format!("[{name}] does not build:\n{}", text(&output)))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_valid_dataset_validates() {
    let output = common::svcdir(&["validate", "--input", fixture("small").to_str().unwrap()]);
    assert_ok(&output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    for part in ["6 published services", "2 organisations", "3 locations", "2 live postcodes"] {
        assert!(stdout.contains(part), "validate's summary lacks {part:?}:\n{stdout}");
    }
    assert!(output.stderr.is_empty(), "no errors expected:\n{}", String::from_utf8_lossy(&output.stderr));
}

#[test]
fn a_missing_input_directory_fails_cleanly() {
    let work = tempfile::tempdir().unwrap();
    let missing = work.path().join("no-such-dir");
    let output = common::svcdir(&["validate", "--input", missing.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no-such-dir"), "{}", text(&output));
    let output = common::build(&missing, work.path(), &[]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    assert!(!work.path().join("public").exists(), "a failed first build must not create the output");
    assert!(!work.path().join(".public.lock").exists(), "nor leave its lock file");
    assert_eq!(leftovers(work.path()), Vec::<String>::new());
}
