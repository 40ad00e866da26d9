//! Slugs (input-format.md, Slugs), read back from the built JSON: generated slugs have the
//! documented form, stay the same when other records are added, and given slugs are
//! never rewritten.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use crate::common::{self, assert_ok, fixture};

const ORG_CAFE: &str = "0a1b2c3d-0000-4000-8000-000000000001";
const ORG_GLASGOW: &str = "2c5f3b8e-1d44-4c1a-9f0e-6a7b8c9d0e1f";
const MAX_LEN: usize = 120;

/// One published record as the built API shows it.
#[derive(Debug, Clone, PartialEq)]
struct Built {
    name: String,
    slug: String,
}

/// `api/v4/{kind}/<id>/index.json` of every published record: id → name and slug. Checks
/// that the slug's own page holds the same record.
fn built(public: &Path, kind: &str) -> BTreeMap<String, Built> {
    let root = public.join("api/v4").join(kind);
    let mut records = BTreeMap::new();
    for entry in fs::read_dir(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display())) {
        let key = entry.unwrap().file_name().to_string_lossy().into_owned();
        if uuid::Uuid::try_parse(&key).is_err() {
            continue;
        }
        let value = common::json(public, &format!("api/v4/{kind}/{key}/index.json"));
        let data = &value["data"];
        assert_eq!(data["id"], json!(key), "{kind}/{key}: id");
        let slug = data["slug"].as_str().unwrap_or_else(|| panic!("{kind}/{key}: no slug")).to_owned();
        let by_slug = common::json(public, &format!("api/v4/{kind}/{slug}/index.json"));
        assert_eq!(by_slug["data"]["id"], json!(key), "{kind}/{slug}/ shows another record than {kind}/{key}/");
        records.insert(key, Built { name: data["name"].as_str().unwrap().to_owned(), slug });
    }
    assert!(!records.is_empty(), "no {kind} under {}", root.display());
    records
}

/// Why `slug` breaks the rule of input-format.md, if it does.
fn rule_broken(slug: &str) -> Option<&'static str> {
    if slug.is_empty() || slug.len() > MAX_LEN {
        return Some("not 1 to 120 characters");
    }
    if !slug.split('-').all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())) {
        return Some("not lower-case ASCII letters and digits joined by single hyphens");
    }
    let hex: String = slug.chars().filter(|c| *c != '-').collect();
    if uuid::Uuid::try_parse(slug).is_ok() || (hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit())) {
        return Some("shaped like a UUID");
    }
    None
}

/// The name folded to ASCII, lower-cased, every run of other characters one hyphen, no
/// hyphen at either end (the part of a generated slug before it is cut to fit).
fn folded(name: &str) -> String {
    let mut base = String::new();
    for c in deunicode::deunicode(name).to_ascii_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            base.push(c);
        } else if !base.is_empty() && !base.ends_with('-') {
            base.push('-');
        }
    }
    base.trim_end_matches('-').to_owned()
}

/// Checks a generated slug: the folded name cut to fit, a hyphen, a number.
fn check_generated(what: &str, name: &str, slug: &str) -> Result<(), String> {
    if let Some(problem) = rule_broken(slug) {
        return Err(format!("{what}: slug {slug:?} is {problem}"));
    }
    let (base, number) = slug.rsplit_once('-').ok_or_else(|| format!("{what}: slug {slug:?} has no `-<number>`"))?;
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{what}: slug {slug:?} does not end in `-<number>`"));
    }
    let full = folded(name);
    if full.is_empty() {
        // No letter or digit to keep: any valid stand-in will do.
        return Ok(());
    }
    let room = MAX_LEN - 1 - number.len();
    let cut = full[..full.len().min(room)].trim_end_matches('-');
    if base != cut {
        return Err(format!("{what}: slug {slug:?} of name {name:?}: expected {cut:?} before the number"));
    }
    Ok(())
}

/// Slugs given in the input files: id → slug.
fn given_slugs(input: &Path, file: &str) -> BTreeMap<String, String> {
    fs::read_to_string(input.join(file))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            Some((v["id"].as_str()?.to_owned(), v.get("slug")?.as_str()?.to_owned()))
        })
        .collect()
}

fn append(input: &Path, file: &str, records: &[Value]) {
    let mut text = fs::read_to_string(input.join(file)).unwrap();
    for record in records {
        text.push_str(&record.to_string());
        text.push('\n');
    }
    fs::write(input.join(file), text).unwrap();
}

fn prepend(input: &Path, file: &str, records: &[Value]) {
    let old = fs::read_to_string(input.join(file)).unwrap();
    let mut text: String = records.iter().map(|r| format!("{r}\n")).collect();
    text.push_str(&old);
    fs::write(input.join(file), text).unwrap();
}

fn org(id: &str, name: &str) -> Value {
    json!({"id": id, "name": name, "last_edited": "2024-01-01T00:00:00Z"})
}

fn service(id: &str, org: &str, name: &str) -> Value {
    json!({"id": id, "organisation_id": org, "name": name, "last_updated": "2024-01-01T00:00:00Z"})
}

fn with_slug(mut record: Value, slug: &str) -> Value {
    record["slug"] = json!(slug);
    record
}

fn copy_fixture(work: &Path) -> std::path::PathBuf {
    let input = work.join("input");
    common::copy_dir(&fixture("small"), &input);
    input
}

/// Names that exercise folding, cutting and the stand-in for names without letters.
fn awkward_names() -> Vec<String> {
    vec![
        "Ōban Ćafé & Bàr — “Tèa” Rooms".to_owned(),
        "Straße der Ĳssel".to_owned(),
        "日本語 Support".to_owned(),
        "Emoji 🙂 Club".to_owned(),
        "!!! ??? ***".to_owned(),
        "  Leading and trailing  ".to_owned(),
        "123 Numbers 456".to_owned(),
        "5e000000-0000-4000-8000-000000000001".to_owned(),
        "0a1b2c3d000040008000000000000000".to_owned(),
        "Word ".repeat(60),
        "x".repeat(300),
        format!("{} tail", "ab-".repeat(50)),
    ]
}

#[test]
fn generated_slugs_have_the_documented_form() {
    let work = tempfile::tempdir().unwrap();
    let input = copy_fixture(work.path());
    let names = awkward_names();
    let orgs: Vec<Value> =
        names.iter().enumerate().map(|(i, n)| org(&format!("0b000000-0000-4000-8000-{i:012}"), n)).collect();
    let services: Vec<Value> = names
        .iter()
        .enumerate()
        .map(|(i, n)| service(&format!("5f000000-0000-4000-8000-{i:012}"), ORG_CAFE, n))
        .collect();
    append(&input, "organisations.jsonl", &orgs);
    append(&input, "services.jsonl", &services);
    assert_ok(&common::build(&input, work.path(), &[]));
    let public = work.path().join("public");

    let mut problems = Vec::new();
    let mut checked = 0;
    for (kind, file) in [("services", "services.jsonl"), ("organisations", "organisations.jsonl")] {
        let given = given_slugs(&input, file);
        let records = built(&public, kind);
        let mut seen = BTreeSet::new();
        for (id, record) in &records {
            let what = format!("{kind}/{id}");
            if !seen.insert(record.slug.clone()) {
                problems.push(format!("{what}: slug {:?} is used twice", record.slug));
            }
            let result = match given.get(id) {
                Some(slug) if *slug == record.slug => Ok(()),
                Some(slug) => Err(format!("{what}: given slug {slug:?} became {:?}", record.slug)),
                None => check_generated(&what, &record.name, &record.slug),
            };
            problems.extend(result.err());
            checked += 1;
        }
    }
    assert_eq!(checked, 2 * names.len() + 6 + 2, "published services and organisations checked");
    assert!(problems.is_empty(), "{} slug problem(s):\n  {}", problems.len(), problems.join("\n  "));
}

#[test]
fn slugs_stay_the_same_when_records_are_added() {
    let work = tempfile::tempdir().unwrap();
    let input = copy_fixture(work.path());
    assert_ok(&common::build(&input, work.path(), &[]));
    let public = work.path().join("public");
    let before_services = built(&public, "services");
    let before_orgs = built(&public, "organisations");

    // Same names as existing records, ids sorting before and after theirs, records put at
    // the top of the files (every line number moves) and at the bottom.
    let new_orgs_top = [
        org("00000000-0000-4000-8000-000000000001", "Glasgow Foodbank Network"),
        org("ffffffff-0000-4000-8000-000000000001", "Café Còmhla & Friends"),
    ];
    let new_orgs_bottom = [
        org("2c5f3b8e-1d44-4c1a-9f0e-6a7b8c9d0e20", "Glasgow Foodbank Network"),
        org("0b000000-0000-4000-8000-000000000001", "Hidden Org"),
    ];
    let new_services_top = [
        service("00000000-0000-4000-8000-0000000000a1", ORG_GLASGOW, "City Centre Foodbank"),
        service("5e000000-0000-4000-8000-000000000000", "00000000-0000-4000-8000-000000000001", "City Centre Foodbank"),
        service("5e000000-0000-4000-8000-000000000009", ORG_CAFE, "Café Còmhla — “drop-in” <b>café</b>"),
    ];
    let new_services_bottom = [
        service("ffffffff-0000-4000-8000-0000000000a1", ORG_GLASGOW, "Argyle St Lunch Club"),
        service("5e000000-0000-4000-8000-00000000000a", ORG_CAFE, "Online Peer Support"),
        service("5e000000-0000-4000-8000-00000000000b", ORG_CAFE, "Scotland-wide Money Helpline"),
        service(
            "5e000000-0000-4000-8000-00000000000c",
            "0b000000-0000-4000-8000-000000000001",
            "Glasgow Befriending Line",
        ),
    ];
    prepend(&input, "organisations.jsonl", &new_orgs_top);
    append(&input, "organisations.jsonl", &new_orgs_bottom);
    prepend(&input, "services.jsonl", &new_services_top);
    append(&input, "services.jsonl", &new_services_bottom);
    let out = common::build(&input, work.path(), &[]);
    assert_ok(&out);
    let after_services = built(&public, "services");
    let after_orgs = built(&public, "organisations");

    for (kind, before, after, added) in [
        ("services", &before_services, &after_services, new_services_top.len() + new_services_bottom.len()),
        ("organisations", &before_orgs, &after_orgs, new_orgs_top.len() + new_orgs_bottom.len()),
    ] {
        assert_eq!(after.len(), before.len() + added, "{kind}: every new record is published");
        let changed: Vec<String> = before
            .iter()
            .filter(|(id, b)| after.get(*id).map(|a| &a.slug) != Some(&b.slug))
            .map(|(id, b)| format!("{id}: {:?} → {:?}", b.slug, after.get(id).map(|a| &a.slug)))
            .collect();
        assert!(changed.is_empty(), "{kind}: slugs of existing records changed:\n  {}", changed.join("\n  "));
        let slugs: BTreeSet<&str> = after.values().map(|r| r.slug.as_str()).collect();
        assert_eq!(slugs.len(), after.len(), "{kind}: slugs are unique");
        // New records named like old ones get slugs of their own, of the documented form.
        for (id, record) in after.iter().filter(|(id, _)| !before.contains_key(*id)) {
            check_generated(&format!("{kind}/{id}"), &record.name, &record.slug).unwrap();
            for (old_id, old) in before.iter().filter(|(_, old)| old.name == record.name) {
                assert_ne!(record.slug, old.slug, "{kind}/{id} took the slug of {old_id}, which has the same name");
            }
        }
        let namesakes =
            after.iter().filter(|(id, r)| !before.contains_key(*id) && before.values().any(|b| b.name == r.name));
        assert!(namesakes.count() >= 3, "{kind}: the test adds records named like existing ones");
    }

    // A record's slug does not depend on where its line is, either: a fresh build of the
    // same records in reverse line order gives the same slugs.
    for file in ["organisations.jsonl", "services.jsonl"] {
        let text = fs::read_to_string(input.join(file)).unwrap();
        let reversed: Vec<&str> = text.lines().rev().collect();
        fs::write(input.join(file), reversed.join("\n") + "\n").unwrap();
    }
    let other = tempfile::tempdir().unwrap();
    assert_ok(&common::build(&input, other.path(), &[]));
    assert_eq!(built(&other.path().join("public"), "services"), after_services, "services, lines reversed");
    assert_eq!(built(&other.path().join("public"), "organisations"), after_orgs, "organisations, lines reversed");
}

#[test]
fn given_slugs_are_never_rewritten() {
    let work = tempfile::tempdir().unwrap();
    let input = copy_fixture(work.path());
    let long = format!("{}-9", "z".repeat(MAX_LEN - 2));
    let given_services = [
        ("5f100000-0000-4000-8000-000000000001", "Anything At All", "a"),
        ("5f100000-0000-4000-8000-000000000002", "Zebra Crossing Club", "aardvark"),
        ("5f100000-0000-4000-8000-000000000003", "City Centre Foodbank", "city-centre-foodbank"),
        ("5f100000-0000-4000-8000-000000000004", "Foodbank", "foodbank"),
        ("5f100000-0000-4000-8000-000000000005", "Year", "2024"),
        ("5f100000-0000-4000-8000-000000000006", "Long", long.as_str()),
        ("5f100000-0000-4000-8000-000000000007", "Café Còmhla & Friends", "cafe-comhla-and-friends-1"),
    ];
    let services: Vec<Value> =
        given_services.iter().map(|(id, name, slug)| with_slug(service(id, ORG_CAFE, name), slug)).collect();
    append(&input, "services.jsonl", &services);
    let given_orgs = [
        ("0b100000-0000-4000-8000-000000000001", "Glasgow Foodbank Network", "glasgow-foodbank-network"),
        ("0b100000-0000-4000-8000-000000000002", "Name That Says Nothing Of The Slug", "x1"),
    ];
    let orgs: Vec<Value> = given_orgs.iter().map(|(id, name, slug)| with_slug(org(id, name), slug)).collect();
    append(&input, "organisations.jsonl", &orgs);
    assert_ok(&common::build(&input, work.path(), &[]));
    let public = work.path().join("public");

    let services = built(&public, "services");
    for (id, _, slug) in given_services {
        assert_eq!(services[id].slug, slug, "services/{id}: given slug rewritten");
    }
    assert_eq!(services["5e000000-0000-4000-8000-000000000002"].slug, "befriending-line", "fixture's given slug");
    let orgs = built(&public, "organisations");
    for (id, _, slug) in given_orgs {
        assert_eq!(orgs[id].slug, slug, "organisations/{id}: given slug rewritten");
    }
    assert_eq!(orgs[ORG_CAFE].slug, "cafe-comhla", "fixture's given slug");

    // Renaming a record with a given slug keeps the slug.
    let text = fs::read_to_string(input.join("services.jsonl")).unwrap().replace("Zebra Crossing Club", "Renamed");
    fs::write(input.join("services.jsonl"), text).unwrap();
    assert_ok(&common::build(&input, work.path(), &[]));
    let services = built(&public, "services");
    assert_eq!(services["5f100000-0000-4000-8000-000000000002"].slug, "aardvark");
    assert_eq!(services["5f100000-0000-4000-8000-000000000002"].name, "Renamed");
}
