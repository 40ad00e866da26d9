//! JSON Schemas (draft 2020-12) of the dataset files (input-format.md), for `svcdir schema`.
//!
//! One schema per file, and one per JSONL line kind, written by hand next to nothing else so
//! that every rule the loader checks on a single record is stated once here; the tests in
//! `tests/it/schema.rs` hold them to the loader (the embedded dataset validates, every
//! per-record bad-dataset case is rejected). Rules between records or files cannot be said
//! in a schema and are listed in each schema's `description` (`CROSS_FILE_RULES`).

use serde_json::{Value, json};

use crate::model::AreaKind;

/// The `$schema` of every document.
pub(crate) const DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";

/// What the loader checks beyond one record, so beyond any schema.
pub(crate) const CROSS_FILE_RULES: &str = "Not expressible in this schema, checked by `svcdir validate`: \
ids unique within their file; slugs unique among services, among organisations and in the \
category tree; organisation_id naming an organisation; location_ids naming locations of the \
same organisation; categories naming slugs of categories.json; service_areas naming codes of \
service_areas.json; category ids and area codes unique; postcode files and \
area_code_aliases.csv (CSV).";

/// A slug: lower-case ASCII letters and digits joined by single hyphens, 1 to 120 characters.
pub(crate) const SLUG_PATTERN: &str = "^[a-z0-9]+(-[a-z0-9]+)*$";

/// The UUID forms the loader reads (hyphenated, simple, braced, `urn:uuid:`), any case.
pub(crate) const UUID_PATTERN: &str = "^(urn:uuid:)?([0-9a-fA-F]{32}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|\\{[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\\})$";

/// A slug must not read as a UUID (it would be taken for an id in a URL).
const UUID_LIKE_SLUG: &str = "^([0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$";

/// RFC 3339 with a time zone; `format: date-time` adds the calendar check where a
/// validator asserts formats.
const RFC3339_PATTERN: &str =
    "^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$";

/// File names of the schemas `svcdir schema --out DIR` writes, with their documents.
pub fn all() -> Vec<(&'static str, Value)> {
    vec![
        ("categories.schema.json", categories()),
        ("service_areas.schema.json", service_areas()),
        ("organisations.schema.json", organisation()),
        ("locations.schema.json", location()),
        ("services.schema.json", service()),
    ]
}

fn uuid() -> Value {
    json!({ "type": "string", "pattern": UUID_PATTERN })
}

fn slug() -> Value {
    json!({
        "type": "string", "minLength": 1, "maxLength": 120, "pattern": SLUG_PATTERN,
        "not": { "pattern": UUID_LIKE_SLUG },
    })
}

/// A string that is not empty after trimming.
fn text() -> Value {
    json!({ "type": "string", "pattern": "\\S" })
}

fn optional_text() -> Value {
    json!({ "type": "string", "default": "" })
}

fn timestamp() -> Value {
    json!({ "type": "string", "format": "date-time", "pattern": RFC3339_PATTERN })
}

/// The fields organisations and services share after their ids, in the files' order: the
/// name, the optional slug and the four free-text contact fields.
fn named_and_contact() -> [(&'static str, Value); 6] {
    [
        ("name", text()),
        ("slug", slug()),
        ("description", optional_text()),
        ("url", optional_text()),
        ("phone", optional_text()),
        ("email", optional_text()),
    ]
}

/// A JSON object of `fields`, in their order.
fn properties(fields: impl IntoIterator<Item = (&'static str, Value)>) -> Value {
    Value::Object(fields.into_iter().map(|(name, value)| (name.to_owned(), value)).collect())
}

/// A JSONL line: an object with exactly the given fields, plus `x_` extension fields.
fn record(title: &str, file: &str, properties: Value, required: &[&str]) -> Value {
    json!({
        "$schema": DRAFT,
        "$id": format!("https://svcdir.example/schema/{file}.schema.json"),
        "title": title,
        "description": format!("One line of {file}.jsonl (input-format.md). Fields whose names start with x_ are allowed and kept out of every output. {CROSS_FILE_RULES}"),
        "type": "object",
        "properties": properties,
        "patternProperties": { "^x_": {} },
        "additionalProperties": false,
        "required": required,
    })
}

/// One line of `organisations.jsonl`.
pub fn organisation() -> Value {
    record(
        "Organisation",
        "organisations",
        properties([("id", uuid())].into_iter().chain(named_and_contact()).chain([
            ("facebook", optional_text()),
            ("twitter", optional_text()),
            ("is_claimed", json!({ "type": "boolean", "default": false })),
            ("published", json!({ "type": "boolean", "default": true })),
            ("last_edited", timestamp()),
        ])),
        &["id", "name", "last_edited"],
    )
}

/// One line of `locations.jsonl`.
pub fn location() -> Value {
    record(
        "Location",
        "locations",
        json!({
            "id": uuid(),
            "organisation_id": uuid(),
            "name": optional_text(),
            "description": optional_text(),
            "street_address": text(),
            "locality": text(),
            "region": optional_text(),
            "state": optional_text(),
            "postal_code": text(),
            "country": { "type": "string", "pattern": "^[A-Z]{2}$", "default": "GB" },
            "latitude": { "type": "number", "minimum": -90, "maximum": 90 },
            "longitude": { "type": "number", "minimum": -180, "maximum": 180 },
        }),
        &["id", "organisation_id", "street_address", "locality", "postal_code", "latitude", "longitude"],
    )
}

/// One line of `services.jsonl`.
pub fn service() -> Value {
    record(
        "Service",
        "services",
        properties([("id", uuid()), ("organisation_id", uuid())].into_iter().chain(named_and_contact()).chain([
            ("categories", json!({ "type": "array", "items": slug(), "uniqueItems": true, "default": [] })),
            ("service_areas", json!({ "type": "array", "items": text(), "uniqueItems": true, "default": [] })),
            ("location_ids", json!({ "type": "array", "items": uuid(), "uniqueItems": true, "default": [] })),
            ("published", json!({ "type": "boolean", "default": true })),
            ("last_updated", timestamp()),
        ])),
        &["id", "organisation_id", "name", "last_updated"],
    )
}

/// `categories.json`: the category tree.
pub fn categories() -> Value {
    json!({
        "$schema": DRAFT,
        "$id": "https://svcdir.example/schema/categories.schema.json",
        "title": "Category tree",
        "description": format!("categories.json (input-format.md): the v4 category tree; `id` is the optional v3 id. {CROSS_FILE_RULES}"),
        "type": "array",
        "items": { "$ref": "#/$defs/category" },
        "$defs": {
            "category": {
                "type": "object",
                "properties": {
                    "id": { "type": "integer", "minimum": 1, "maximum": u32::MAX },
                    "name": text(),
                    "slug": slug(),
                    "sub_categories": { "type": "array", "items": { "$ref": "#/$defs/category" }, "default": [] },
                },
                "additionalProperties": false,
                "required": ["name", "slug"],
            }
        },
    })
}

/// `service_areas.json`: the fixed list of service areas.
pub fn service_areas() -> Value {
    json!({
        "$schema": DRAFT,
        "$id": "https://svcdir.example/schema/service_areas.schema.json",
        "title": "Service areas",
        "description": format!("service_areas.json (input-format.md). {CROSS_FILE_RULES}"),
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "code": text(),
                "type": { "enum": AreaKind::ALL.map(AreaKind::name) },
                "name": text(),
            },
            "additionalProperties": false,
            "required": ["code", "type", "name"],
        },
    })
}
