//! The exact key set and JSON type of every object kind, per version, as api-spec.md and
//! behaviour.md define them, checked on every file of a fixture build.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::common::{self, assert_ok, fixture, json};

/// The JSON type a field must have.
#[derive(Clone, Copy, Debug)]
enum Ty {
    Str,
    Uuid,
    Bool,
    Int,
    Num,
    UrlOrNull,
    /// `...123456+00:00`
    TimeList,
    /// `...123456Z`
    TimeSingle,
    AreaTypeName,
    AreaTypeNumeric,
    /// Checked by the caller (nested objects and arrays).
    Nested,
    IntOrNull,
}

/// Fields that are all strings.
fn strings<'a>(names: &[&'a str]) -> Vec<(&'a str, Ty)> {
    names.iter().map(|name| (*name, Ty::Str)).collect()
}

fn check(value: &Value, what: &str, fields: &[(&str, Ty)]) {
    let obj = value.as_object().unwrap_or_else(|| panic!("{what}: not an object: {value}"));
    let got: BTreeSet<&str> = obj.keys().map(String::as_str).collect();
    let want: BTreeSet<&str> = fields.iter().map(|(k, _)| *k).collect();
    assert_eq!(got, want, "{what}: key set");
    for (key, ty) in fields {
        let v = &obj[*key];
        let ok = match ty {
            Ty::Str => v.is_string(),
            Ty::Uuid => v.as_str().is_some_and(|s| uuid::Uuid::try_parse(s).is_ok() && s.len() == 36),
            Ty::Bool => v.is_boolean(),
            Ty::Int => v.is_u64(),
            Ty::Num => v.is_f64() || v.is_i64() || v.is_u64(),
            Ty::UrlOrNull => v.is_null() || v.as_str().is_some_and(|s| s.starts_with(common::BASE_URL)),
            Ty::TimeList => v.as_str().is_some_and(|s| is_time(s, "+00:00")),
            Ty::TimeSingle => v.as_str().is_some_and(|s| is_time(s, "Z")),
            Ty::AreaTypeName => v.as_str().is_some_and(|s| {
                ["Country", "Region", "Local Authority", "Health Board", "Integration Authority (HSCP)"].contains(&s)
            }),
            Ty::AreaTypeNumeric => v.as_str().is_some_and(|s| ["0", "1", "2", "3", "4"].contains(&s)),
            Ty::Nested => v.is_object() || v.is_array(),
            Ty::IntOrNull => v.is_null() || v.is_u64(),
        };
        assert!(ok, "{what}.{key}: {v} is not {ty:?}");
    }
}

/// `2024-03-01T10:15:30.123456` then the offset form.
fn is_time(s: &str, offset: &str) -> bool {
    let Some(stamp) = s.strip_suffix(offset) else {
        return false;
    };
    stamp.len() == 26
        && chrono::NaiveDateTime::parse_from_str(stamp, "%Y-%m-%dT%H:%M:%S%.6f").is_ok()
        && stamp.as_bytes()[19] == b'.'
}

fn array<'a>(value: &'a Value, what: &str) -> &'a Vec<Value> {
    value.as_array().unwrap_or_else(|| panic!("{what}: not an array"))
}

fn check_meta(meta: &Value, entries: usize) {
    check(meta, "meta", &[("licence", Ty::Str), ("attribution", Ty::Nested)]);
    let list = array(&meta["attribution"], "meta.attribution");
    assert_eq!(list.len(), entries, "attribution entries");
    for entry in list {
        check(entry, "attribution", &[("text", Ty::Str), ("url", Ty::Str)]);
    }
}

fn check_area(area: &Value, ty: Ty) {
    check(area, "service area", &[("code", Ty::Str), ("type", ty), ("name", Ty::Str)]);
}

fn check_category_ref(cat: &Value) {
    check(cat, "category ref", &[("name", Ty::Str), ("slug", Ty::Str)]);
}

fn check_location(loc: &Value) {
    check(
        loc,
        "location",
        &[
            &[("id", Ty::Uuid)],
            strings(&[
                "formatted_address",
                "name",
                "description",
                "street_address",
                "locality",
                "region",
                "state",
                "postal_code",
                "country",
            ])
            .as_slice(),
            &[("latitude", Ty::Num), ("longitude", Ty::Num)],
        ]
        .concat(),
    );
}

/// The fields of an organisation embedded in a v4 service, which the single organisation
/// starts with too.
const ORGANISATION_REF: [(&str, Ty); 6] = [
    ("id", Ty::Uuid),
    ("name", Ty::Str),
    ("directory_url", Ty::UrlOrNull),
    ("permalink", Ty::UrlOrNull),
    ("is_claimed", Ty::Bool),
    ("slug", Ty::Str),
];

/// The fields a v4 service and a service summary (in an organisation) share, in order.
const SERVICE_CORE: [(&str, Ty); 8] = [
    ("id", Ty::Uuid),
    ("name", Ty::Str),
    ("description", Ty::Str),
    ("url", Ty::Str),
    ("phone", Ty::Str),
    ("email", Ty::Str),
    ("categories", Ty::Nested),
    ("service_areas", Ty::Nested),
];

/// A v4 service: `single` picks the single-service forms (Z, numeric area types).
fn check_service_v4(s: &Value, single: bool) {
    let time = if single { Ty::TimeSingle } else { Ty::TimeList };
    check(
        s,
        "v4 service",
        &[
            SERVICE_CORE.as_slice(),
            &[
                ("organisation", Ty::Nested),
                ("slug", Ty::Str),
                ("directory_url", Ty::UrlOrNull),
                ("permalink", Ty::UrlOrNull),
                ("last_updated", time),
                ("locations", Ty::Nested),
            ],
        ]
        .concat(),
    );
    check(&s["organisation"], "v4 organisation ref", &ORGANISATION_REF);
    array(&s["categories"], "categories").iter().for_each(check_category_ref);
    let area_ty = if single { Ty::AreaTypeNumeric } else { Ty::AreaTypeName };
    array(&s["service_areas"], "service_areas").iter().for_each(|a| check_area(a, area_ty));
    array(&s["locations"], "locations").iter().for_each(check_location);
}

fn check_category_node(node: &Value) {
    check(node, "v4 category", &[("name", Ty::Str), ("slug", Ty::Str), ("sub_categories", Ty::Nested)]);
    array(&node["sub_categories"], "sub_categories").iter().for_each(check_category_node);
}

fn built() -> (tempfile::TempDir, std::path::PathBuf) {
    let work = tempfile::tempdir().unwrap();
    assert_ok(&common::build(&fixture("small"), work.path(), &["--import-page-size", "4"]));
    let public = work.path().join("public");
    (work, public)
}

fn endpoint_files(public: &Path, kind: &str) -> Vec<String> {
    std::fs::read_dir(public.join("api/v4").join(kind))
        .unwrap()
        .map(|e| format!("api/v4/{kind}/{}/index.json", e.unwrap().file_name().to_string_lossy()))
        .collect()
}

#[test]
fn v4_single_service() {
    let (_work, public) = built();
    let files = endpoint_files(&public, "services");
    assert!(!files.is_empty());
    for file in files {
        let body = json(&public, &file);
        check(&body, &file, &[("meta", Ty::Nested), ("data", Ty::Nested)]);
        check_meta(&body["meta"], 4);
        check_service_v4(&body["data"], true);
    }
}

#[test]
fn v4_single_organisation() {
    let (_work, public) = built();
    for file in endpoint_files(&public, "organisations") {
        let body = json(&public, &file);
        check(&body, &file, &[("meta", Ty::Nested), ("data", Ty::Nested)]);
        check_meta(&body["meta"], 4);
        let org = &body["data"];
        check(
            org,
            "organisation",
            &[
                ORGANISATION_REF.as_slice(),
                strings(&["description", "facebook", "twitter", "url", "phone", "email"]).as_slice(),
                &[("last_edited", Ty::TimeSingle), ("services", Ty::Nested), ("locations", Ty::Nested)],
            ]
            .concat(),
        );
        for s in array(&org["services"], "services") {
            check(s, "service summary", &SERVICE_CORE);
            array(&s["categories"], "categories").iter().for_each(check_category_ref);
            array(&s["service_areas"], "areas").iter().for_each(|a| check_area(a, Ty::AreaTypeNumeric));
        }
        array(&org["locations"], "locations").iter().for_each(check_location);
    }
}

#[test]
fn v4_1_import_pages() {
    let (_work, public) = built();
    let mut seen = 0;
    for page in 1..=2 {
        let file = format!("api/v4/import/page/{page}/index.json");
        let body = json(&public, &file);
        check(
            &body,
            &file,
            &[
                ("meta", Ty::Nested),
                ("count", Ty::Int),
                ("next", Ty::UrlOrNull),
                ("previous", Ty::UrlOrNull),
                ("data", Ty::Nested),
            ],
        );
        check_meta(&body["meta"], 4);
        for s in array(&body["data"], "data") {
            check_service_v4(s, false);
            seen += 1;
        }
    }
    assert_eq!(seen, 6);
    assert_eq!(json(&public, "api/v4/import/index.json"), json(&public, "api/v4/import/page/1/index.json"));
}

#[test]
fn v4_lists() {
    let (_work, public) = built();
    let cats = json(&public, "api/v4/categories/index.json");
    check(&cats, "categories", &[("meta", Ty::Nested), ("data", Ty::Nested)]);
    check_meta(&cats["meta"], 0);
    array(&cats["data"], "data").iter().for_each(check_category_node);
    let areas = json(&public, "api/v4/service-areas/index.json");
    check(&areas, "service areas", &[("meta", Ty::Nested), ("data", Ty::Nested)]);
    check_meta(&areas["meta"], 2);
    array(&areas["data"], "data").iter().for_each(|a| check_area(a, Ty::AreaTypeName));
}

#[test]
fn v3_lists() {
    let (_work, public) = built();
    let cats = json(&public, "api/v3/categories/index.json");
    let list = array(&cats, "v3 categories");
    assert_eq!(list.len(), 8);
    for c in list {
        check(c, "v3 category", &[("id", Ty::Int), ("name", Ty::Str), ("slug", Ty::Str), ("parent", Ty::IntOrNull)]);
    }
    let areas = json(&public, "api/v3/service-areas/index.json");
    array(&areas, "v3 areas").iter().for_each(|a| check_area(a, Ty::AreaTypeNumeric));
}
