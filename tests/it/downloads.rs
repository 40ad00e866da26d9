//! The bulk downloads (issue 17): `services.ndjson.gz` holds each published service's v4
//! single-service object, one a line; `openreferral-uk.zip` is a tabular data package that
//! `frictionless validate` accepts (PyPI `frictionless`, installed by `.ci/run` into
//! `target/frictionless-venv`; skipped with a message when absent); both are deterministic,
//! and `--precompress` leaves them alone.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::{self, assert_ok, fixture, read_tree};

fn built(extra: &[&str]) -> (tempfile::TempDir, BTreeMap<String, Vec<u8>>) {
    let work = tempfile::tempdir().unwrap();
    let mut args = vec!["--import-page-size", "4"];
    args.extend_from_slice(extra);
    assert_ok(&common::build(&fixture("small"), work.path(), &args));
    let tree = read_tree(&work.path().join("public"));
    (work, tree)
}

fn unzip(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    (0..archive.len())
        .map(|i| {
            let mut file = archive.by_index(i).unwrap();
            let mut content = Vec::new();
            file.read_to_end(&mut content).unwrap();
            (file.name().unwrap().into_owned(), content)
        })
        .collect()
}

/// The `frictionless` command: `$FRICTIONLESS`, else the venv `.ci/run` makes, else `PATH`.
fn frictionless() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("FRICTIONLESS").map(PathBuf::from),
        Some(common::repo().join("target/frictionless-venv/bin/frictionless")),
    ];
    if let Some(found) = candidates.into_iter().flatten().find(|p| p.is_file()) {
        return Some(found);
    }
    match Command::new("frictionless").arg("--version").output() {
        Ok(out) if out.status.success() => Some(PathBuf::from("frictionless")),
        _ => {
            svcdir::test_support::skipped(
                "frictionless is not installed (.ci/run installs it into target/frictionless-venv)",
            );
            None
        }
    }
}

fn validate(frictionless: &Path, package: &Path) -> (bool, String) {
    let out = Command::new(frictionless)
        .args(["validate", "--json"])
        .arg(package)
        .current_dir(package.parent().unwrap())
        .output()
        .expect("frictionless runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_str(&String::from_utf8_lossy(&out.stdout)).unwrap_or(Value::Null);
    (out.status.success() && report["valid"] == true, text)
}

/// The package's files written into `dir` and checked by `frictionless validate`, which must
/// pass; the command and the folder, or `None` (after saying so) without frictionless.
fn unpacked_and_valid(entries: &[(String, Vec<u8>)], dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let frictionless = frictionless()?;
    std::fs::create_dir_all(dir).unwrap();
    for (name, bytes) in entries {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    let (valid, report) = validate(&frictionless, &dir.join("datapackage.json"));
    assert!(valid, "{report}");
    Some((frictionless, dir.to_owned()))
}

#[test]
fn the_ndjson_has_one_line_per_published_service_with_its_v4_object() {
    let (_work, tree) = built(&[]);
    let mut text = String::new();
    flate2::read::GzDecoder::new(&tree["downloads/services.ndjson.gz"][..]).read_to_string(&mut text).unwrap();
    assert!(text.ends_with('\n'));
    let lines: Vec<&str> = text.lines().collect();
    let import: Value = serde_json::from_slice(&tree["api/v4/import/index.json"]).unwrap();
    assert_eq!(lines.len() as u64, import["count"].as_u64().unwrap(), "one line per published service");
    let mut ids = Vec::new();
    for line in lines {
        let object: Value = serde_json::from_str(line).unwrap();
        let id = object["id"].as_str().unwrap().to_owned();
        let single: Value = serde_json::from_slice(&tree[&format!("api/v4/services/{id}/index.json")]).unwrap();
        assert_eq!(object, single["data"], "{id}: the single-service object");
        ids.push(id);
    }
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted, "in id order");
    assert!(!text.contains("5e000000-0000-4000-8000-000000000006"), "no unpublished service (Retired Service)");
}

#[test]
fn the_data_package_passes_frictionless_validate() {
    let (work, tree) = built(&[]);
    let entries = unzip(&tree["downloads/openreferral-uk.zip"]);
    assert_eq!(entries[0].0, "datapackage.json", "the descriptor first, at the root");
    let package: Value = serde_json::from_slice(&entries[0].1).unwrap();
    let paths: Vec<&str> =
        package["resources"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap()).collect();
    let names: Vec<&str> = entries[1..].iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(paths, names, "one CSV per resource");
    let services = String::from_utf8(entries.iter().find(|(n, _)| n == "services.csv").unwrap().1.clone()).unwrap();
    let import: Value = serde_json::from_slice(&tree["api/v4/import/index.json"]).unwrap();
    let rows = csv::Reader::from_reader(services.as_bytes()).records().count();
    assert_eq!(rows as u64, import["count"].as_u64().unwrap());

    let Some((frictionless, dir)) = unpacked_and_valid(&entries, &work.path().join("package")) else { return };
    // The check can fail: a malformed uuid and a dangling organisation are refused.
    let broken = services.replacen("5e000000-0000-4000-8000-000000000001", "not-a-uuid", 1);
    std::fs::write(dir.join("services.csv"), broken).unwrap();
    let (valid, report) = validate(&frictionless, &dir.join("datapackage.json"));
    assert!(!valid, "{report}");
}

#[test]
fn the_tables_are_the_profiles() {
    let Some(profile) = crate::openreferral::profile() else { return };
    for table in svcdir::openreferral::tables::TABLES {
        let schema: Value =
            serde_json::from_slice(&std::fs::read(profile.join(format!("schema/{}.json", table.name))).unwrap())
                .unwrap();
        assert_eq!(schema["path"], table.path, "{}", table.name);
        let scalar: Vec<(&String, &Value)> = schema["properties"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(_, p)| p["type"].is_string() && p["type"] != "array" && p["type"] != "object")
            .collect();
        let names: Vec<&str> = scalar.iter().map(|(n, _)| n.as_str()).collect();
        let ours: Vec<&str> = table.columns.iter().map(|c| c.name).collect();
        assert_eq!(ours, names, "{}: columns", table.name);
        let required: Vec<&Value> = schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .chain(schema["tabular_required"].as_array().into_iter().flatten())
            .collect();
        for (column, (name, property)) in table.columns.iter().zip(&scalar) {
            use svcdir::openreferral::tables::Kind;
            let expected = match (property["type"].as_str(), property["format"].as_str()) {
                (Some("number"), _) => Kind::Number,
                (_, Some("uuid")) => Kind::Uuid,
                (_, Some("email")) => Kind::Email,
                (_, Some("uri")) => Kind::Uri,
                (_, Some("date-time")) => Kind::DateTime,
                _ => Kind::Text,
            };
            assert_eq!(column.kind, expected, "{}.{name}", table.name);
            assert_eq!(column.required, required.iter().any(|r| *r == *name), "{}.{name} required", table.name);
            let values: Option<Vec<&str>> =
                property["enum"].as_array().map(|v| v.iter().map(|s| s.as_str().unwrap()).collect());
            assert_eq!(column.values.map(<[&str]>::to_vec), values, "{}.{name} values", table.name);
        }
    }
}

#[test]
fn precompress_leaves_the_downloads_alone() {
    let (_work, tree) = built(&["--precompress"]);
    let downloads: Vec<&String> = tree.keys().filter(|p| p.starts_with("downloads/")).collect();
    assert_eq!(
        downloads,
        ["downloads/locations.geojson", "downloads/openreferral-uk.zip", "downloads/services.ndjson.gz"]
    );
    assert!(tree.contains_key("openreferral/services/index.json.gz"), "ORUK documents are precompressed");
}

/// Text that a spreadsheet would run as a formula (OWASP, "CSV Injection") is neutralised
/// in the tables of the data package: a single quote before it, said in the package's
/// description; numbers (negative longitudes) stay numbers, and frictionless still
/// validates the package (issue 28).
#[test]
fn formula_cells_are_neutralised_in_the_tables() {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("input");
    common::copy_dir(&fixture("small"), &input);
    let formulas = [
        ("services.jsonl", "description", "=HYPERLINK(\"https://evil.example/\",\"Click\")"),
        ("services.jsonl", "name", "@SUM(1+1)"),
        ("organisations.jsonl", "description", "-2+3"),
        ("locations.jsonl", "name", "+cmd|' /C calc'!A0"),
        ("services.jsonl", "email", "=cmd@example.org"),
    ];
    for (file, field, value) in formulas {
        let path = input.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let mut first: Value = serde_json::from_str(&lines[0]).unwrap();
        first[field] = value.into();
        lines[0] = first.to_string();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    }
    assert_ok(&common::build(&input, work.path(), &[]));
    let zip = std::fs::read(work.path().join("public/downloads/openreferral-uk.zip")).unwrap();
    let entries = unzip(&zip);
    let package: Value = serde_json::from_slice(&entries[0].1).unwrap();
    let description = &package["description"];
    assert!(description.as_str().is_some_and(|d| d.contains("single quote")), "{description}");
    let mut seen = Vec::new();
    let mut negative_numbers = 0;
    for resource in package["resources"].as_array().unwrap() {
        let name = resource["path"].as_str().unwrap();
        let (_, bytes) = entries.iter().find(|(n, _)| n == name).unwrap();
        let fields = resource["schema"]["fields"].as_array().unwrap();
        for record in csv::Reader::from_reader(&bytes[..]).records() {
            for (field, cell) in fields.iter().zip(record.unwrap().iter()) {
                let text = field["type"] == "string" && (field["format"].is_null() || field["format"] == "email");
                if text {
                    assert!(!cell.starts_with(['=', '+', '-', '@', '\t', '\r']), "{name} {}: {cell:?}", field["name"]);
                    if let Some(value) = cell.strip_prefix('\'') {
                        seen.push(value.to_owned());
                    }
                } else if field["type"] == "number" && cell.starts_with('-') {
                    cell.parse::<f64>().unwrap_or_else(|e| panic!("{name} {}: {cell:?}: {e}", field["name"]));
                    negative_numbers += 1;
                }
            }
        }
    }
    for (_, _, value) in formulas {
        assert!(seen.iter().any(|s| s == value), "{value:?} is not in the tables, quoted: {seen:?}");
    }
    assert!(negative_numbers > 0, "the fixture's negative longitudes stay numbers");

    unpacked_and_valid(&entries, &work.path().join("package"));
}

/// The GeoJSON Schema of a FeatureCollection, from the npm package `geojson-schema` (the
/// geojson/schema project's build), which `.ci/run` installs into target/geojson-schema-npm;
/// `None`, saying so, without it.
fn geojson_schema() -> Option<Value> {
    let path = common::repo().join("target/geojson-schema-npm/node_modules/geojson-schema/FeatureCollection.json");
    match std::fs::read(&path) {
        Ok(bytes) => Some(serde_json::from_slice(&bytes).expect("the schema is JSON")),
        Err(_) => {
            svcdir::test_support::skipped(
                "the npm package geojson-schema is not installed (.ci/run installs it into target/geojson-schema-npm)",
            );
            None
        }
    }
}

/// The map file (issue 25): valid against the GeoJSON JSON Schema, and one Point feature per
/// location of a published service (by location id, each naming the published services at
/// it as the import does), none of a location only an unpublished service has.
#[test]
fn locations_geojson_is_valid_geojson_of_the_published_services_locations() {
    let (_work, tree) = built(&[]);
    let bytes = tree.get("downloads/locations.geojson").expect("the map file is built");
    let geojson: Value = serde_json::from_slice(bytes).unwrap();
    if let Some(schema) = geojson_schema() {
        let validator = jsonschema::draft7::new(&schema).expect("the GeoJSON schema compiles");
        let errors: Vec<String> =
            validator.iter_errors(&geojson).map(|e| format!("{e} at {}", e.instance_path())).collect();
        assert!(errors.is_empty(), "{errors:#?}");
        // The schema can fail: a feature without its geometry is refused.
        let mut broken = geojson.clone();
        broken["features"][0].as_object_mut().unwrap().remove("geometry");
        assert!(!validator.is_valid(&broken));
    }
    // The published services, as the import has them, and their locations.
    let mut services: BTreeMap<String, Value> = BTreeMap::new();
    let mut page = 1;
    while let Some(bytes) = tree.get(&format!("api/v4/import/page/{page}/index.json")) {
        let json: Value = serde_json::from_slice(bytes).unwrap();
        for s in json["data"].as_array().unwrap() {
            services.insert(s["id"].as_str().unwrap().to_owned(), s.clone());
        }
        page += 1;
    }
    let mut want: BTreeMap<String, (Value, Vec<Value>)> = BTreeMap::new();
    for s in services.values() {
        for location in s["locations"].as_array().unwrap() {
            let entry =
                want.entry(location["id"].as_str().unwrap().to_owned()).or_insert((location.clone(), Vec::new()));
            entry.1.push(serde_json::json!({"id": s["id"], "name": s["name"], "slug": s["slug"]}));
        }
    }
    let features = geojson["features"].as_array().unwrap();
    assert_eq!(geojson["type"], "FeatureCollection");
    let ids: Vec<&str> = features.iter().map(|f| f["properties"]["id"].as_str().unwrap()).collect();
    assert_eq!(ids, want.keys().map(String::as_str).collect::<Vec<_>>(), "one feature per location, by id");
    for feature in features {
        let (location, services) = &want[feature["properties"]["id"].as_str().unwrap()];
        assert_eq!(feature["type"], "Feature");
        assert_eq!(feature["geometry"]["type"], "Point");
        assert_eq!(
            feature["geometry"]["coordinates"],
            serde_json::json!([location["longitude"], location["latitude"]])
        );
        for field in ["name", "formatted_address", "postal_code"] {
            assert_eq!(feature["properties"][field], location[field], "{field}");
        }
        assert_eq!(&feature["properties"]["services"], &Value::Array(services.clone()));
    }
    // The fixture's hidden organisation has a location of its own: it is not on the map.
    assert!(!ids.contains(&"9a000000-0000-4000-8000-000000000004"));
    assert!(ids.len() >= 3, "{ids:?}");
}
