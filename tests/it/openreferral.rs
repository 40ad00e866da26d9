//! The Open Referral UK form (issue 17): every document of a fixture build validates, with
//! format checks on, against the profile's own schemas read from
//! `../shared/reference/openreferral-uk` (skipped with a message when absent).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{self, BASE_URL, assert_ok, fixture, read_tree};

/// The profile's folder, when present.
pub fn profile() -> Option<PathBuf> {
    let dir = common::repo().join("../shared/reference/openreferral-uk");
    if dir.join("schema/compiled/service.json").is_file() {
        Some(dir)
    } else {
        svcdir::test_support::skipped("../shared/reference/openreferral-uk is absent");
        None
    }
}

/// A schema of the profile with every relative `$ref` (`"taxonomy_term.json"`) inlined.
fn load_schema(profile: &Path, rel: &str) -> Value {
    fn inline(value: &mut Value, dir: &Path) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(target)) = map.get("$ref")
                    && !target.contains(':')
                    && !target.starts_with('#')
                {
                    let mut loaded: Value = serde_json::from_slice(&std::fs::read(dir.join(target)).unwrap()).unwrap();
                    inline(&mut loaded, dir);
                    *value = loaded;
                    return;
                }
                map.values_mut().for_each(|v| inline(v, dir));
            }
            Value::Array(items) => items.iter_mut().for_each(|v| inline(v, dir)),
            _ => {}
        }
    }
    let path = profile.join("schema").join(rel);
    let mut schema: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    inline(&mut schema, path.parent().unwrap());
    schema
}

/// Validators of the profile's schemas, format checks on.
struct Schemas(BTreeMap<&'static str, jsonschema::Validator>);

impl Schemas {
    fn load(profile: &Path) -> Schemas {
        let mut map = BTreeMap::new();
        for (name, rel) in [
            ("service", "compiled/service.json"),
            ("service_list", "compiled/service_list.json"),
            ("service_at_location", "compiled/service_at_location.json"),
            ("service_at_location_list", "compiled/service_at_location_list.json"),
            ("organization", "compiled/organization.json"),
            ("organization_list", "compiled/organization_list.json"),
            ("taxonomy", "taxonomy.json"),
            ("taxonomy_term", "taxonomy_term.json"),
        ] {
            let schema = load_schema(profile, rel);
            let validator = jsonschema::draft202012::options()
                .should_validate_formats(true)
                .build(&schema)
                .unwrap_or_else(|e| panic!("{rel}: {e}"));
            map.insert(name, validator);
        }
        Schemas(map)
    }

    fn check(&self, name: &str, value: &Value) -> Result<(), String> {
        let errors: Vec<String> =
            self.0[name].iter_errors(value).map(|e| format!("{e} at {}", e.instance_path())).collect();
        if errors.is_empty() { Ok(()) } else { Err(errors.join("; ")) }
    }
}

/// The profile's `Page` block: its fields and types, and `contents` items of `item`.
fn check_page(schemas: &Schemas, item: &str, page: &Value) -> Result<usize, String> {
    for (field, ty) in [
        ("total_items", "integer"),
        ("total_pages", "integer"),
        ("page_number", "integer"),
        ("size", "integer"),
        ("first_page", "boolean"),
        ("last_page", "boolean"),
        ("empty", "boolean"),
    ] {
        let ok = match ty {
            "integer" => page[field].is_u64(),
            _ => page[field].is_boolean(),
        };
        if !ok {
            return Err(format!("Page.{field} is not {ty}: {}", page[field]));
        }
    }
    let contents = page["contents"].as_array().ok_or("no contents")?;
    if page["size"].as_u64() != Some(contents.len() as u64) {
        return Err("size is not the number of contents".into());
    }
    for (i, entry) in contents.iter().enumerate() {
        schemas.check(item, entry).map_err(|e| format!("contents[{i}]: {e}"))?;
    }
    Ok(contents.len())
}

fn built(work: &Path) -> BTreeMap<String, Vec<u8>> {
    assert_ok(&common::build(&fixture("small"), work, &["--import-page-size", "4"]));
    read_tree(&work.join("public"))
}

#[test]
fn every_document_validates_against_the_profile_with_formats() {
    let Some(profile) = profile() else { return };
    let schemas = Schemas::load(&profile);
    // The validators check formats: an empty email and a malformed URL are refused.
    let bad =
        serde_json::json!({"id": "5e000000-0000-4000-8000-000000000001", "name": "x", "status": "active", "email": ""});
    assert!(schemas.check("service", &bad).is_err(), "format checks are on");
    let bad = serde_json::json!({"id": "not-a-uuid", "name": "x", "status": "active"});
    assert!(schemas.check("service", &bad).is_err(), "uuid format is checked");

    let work = tempfile::tempdir().unwrap();
    let tree = built(work.path());
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for (path, bytes) in &tree {
        let Some(rest) = path.strip_prefix("openreferral/") else { continue };
        let Some(folder) = rest.strip_suffix("index.json").map(|f| f.trim_end_matches('/')) else { continue };
        let body: Value = serde_json::from_slice(bytes).unwrap();
        let segments: Vec<&str> = folder.split('/').collect();
        let list_item = |list: &str| match list {
            "services" => Some("service_list"),
            "service_at_locations" => Some("service_at_location_list"),
            "organizations" => Some("organization_list"),
            "taxonomies" => Some("taxonomy"),
            "taxonomy_terms" => Some("taxonomy_term"),
            _ => None,
        };
        let object = |list: &str| match list {
            "services" => Some("service"),
            "service_at_locations" => Some("service_at_location"),
            "organizations" => Some("organization"),
            "taxonomies" => Some("taxonomy"),
            "taxonomy_terms" => Some("taxonomy_term"),
            _ => None,
        };
        let result = match segments.as_slice() {
            [""] => {
                assert_eq!(body["version"], "HSDS-UK-3.0");
                assert_eq!(body["profile"], "https://github.com/OpenReferralUK/uk-profile");
                assert_eq!(body["openapi_url"], format!("{BASE_URL}/openreferral/openapi.json"));
                Ok(())
            }
            ["openapi"] => continue,
            [list] | [list, "page", _] => match list_item(list) {
                // Page 1 is also the list's own folder, the last page also `page/last`:
                // validated, counted once.
                Some(item) => check_page(&schemas, item, &body).map(|n| {
                    if segments.len() == 3 && segments[2] != "last" {
                        *counts.entry(item).or_default() += n;
                    }
                }),
                None => Err(format!("unexpected list {list}")),
            },
            [list, id] => match object(list) {
                Some(name) => {
                    assert_eq!(body["id"], *id, "{path}");
                    *counts.entry(name).or_default() += 1;
                    schemas.check(name, &body)
                }
                None => Err(format!("unexpected folder {folder}")),
            },
            _ => Err(format!("unexpected folder {folder}")),
        };
        if let Err(e) = result {
            failures.push(format!("{path}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every kind was seen, and each list holds every object once.
    let services = tree.keys().filter(|p| p.starts_with("api/v4/services/5e") && p.ends_with("index.json")).count();
    assert_eq!(counts["service"], services, "{counts:?}");
    assert_eq!(counts["service_list"], services, "{counts:?}");
    assert_eq!(counts["service_at_location_list"], counts["service_at_location"], "{counts:?}");
    assert_eq!(counts["organization_list"], counts["organization"], "{counts:?}");
    for kind in ["service_at_location", "service_at_location_list", "organization", "organization_list", "taxonomy"] {
        assert!(counts.get(kind).copied().unwrap_or(0) > 0, "{kind}: {counts:?}");
    }
    assert!(counts["taxonomy_term"] > 1, "{counts:?}");
}

#[test]
fn a_service_document_maps_the_directory_fields() {
    let work = tempfile::tempdir().unwrap();
    let tree = built(work.path());
    let doc = |rel: &str| -> Value { serde_json::from_slice(&tree[rel]).unwrap() };
    let v4 = doc("api/v4/services/5e000000-0000-4000-8000-000000000001/index.json");
    let oruk = doc("openreferral/services/5e000000-0000-4000-8000-000000000001/index.json");
    insta::assert_json_snapshot!("openreferral_service", oruk);
    let data = &v4["data"];
    assert_eq!(oruk["name"], data["name"]);
    assert_eq!(oruk["organization"]["id"], data["organisation"]["id"]);
    assert_eq!(oruk["contacts"][0]["phones"][0]["number"], data["phone"]);
    let locations: Vec<&Value> = data["locations"].as_array().unwrap().iter().map(|l| &l["id"]).collect();
    let at: Vec<&Value> = oruk["service_at_locations"].as_array().unwrap().iter().map(|s| &s["location_id"]).collect();
    assert_eq!(locations, at);
    let categories: Vec<&Value> = data["categories"].as_array().unwrap().iter().map(|c| &c["slug"]).collect();
    let terms: Vec<&Value> =
        oruk["attributes"].as_array().unwrap().iter().map(|a| &a["taxonomy_term"]["term"]).collect();
    assert_eq!(categories, terms);
    // Each derived id names its own document.
    for sal in oruk["service_at_locations"].as_array().unwrap() {
        let rel = format!("openreferral/service_at_locations/{}/index.json", sal["id"].as_str().unwrap());
        assert_eq!(doc(&rel)["service"]["id"], oruk["id"], "{rel}");
    }
    for attribute in oruk["attributes"].as_array().unwrap() {
        let rel = format!("openreferral/taxonomy_terms/{}/index.json", attribute["taxonomy_term_id"].as_str().unwrap());
        assert_eq!(doc(&rel), attribute["taxonomy_term"], "{rel}");
    }
    // Nothing is written as an empty string anywhere in the tree.
    for (path, bytes) in tree.iter().filter(|(p, _)| p.starts_with("openreferral/") && p.ends_with(".json")) {
        assert!(!String::from_utf8_lossy(bytes).contains(":\"\""), "{path} holds an empty string");
    }
}
