//! Tests of the sample generator: determinism, and that what it writes is a valid dataset
//! with the intended mix.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::Path;

use uuid::Uuid;

use super::draw::{given_slug, letters};
use super::towns::towns;
use super::*;
use crate::input::records::{CategoryRecord, LocationRecord, OrganisationRecord, ServiceAreaRecord, ServiceRecord};

fn run(dir: &Path, services: usize, seed: u64) -> SampleSummary {
    let cfg = SampleConfig { services, seed, out: dir.to_path_buf() };
    match generate(&cfg) {
        Ok(summary) => summary,
        Err(e) => panic!("generate failed: {e}"),
    }
}

const FILES: &[&str] = &[
    "categories.json",
    "service_areas.json",
    "organisations.jsonl",
    "locations.jsonl",
    "services.jsonl",
    "postcodes/sample-smalluser.csv",
];

fn read(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

fn lines<T: serde::de::DeserializeOwned>(path: &Path) -> Vec<T> {
    let text = String::from_utf8(read(path)).expect("utf-8");
    text.lines()
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}:{}: {e}: {l}", path.display(), i + 1)))
        .collect()
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let a = tempfile::tempdir().expect("tempdir");
    let b = tempfile::tempdir().expect("tempdir");
    let c = tempfile::tempdir().expect("tempdir");
    run(a.path(), 300, 7);
    run(b.path(), 300, 7);
    run(c.path(), 300, 8);
    for f in FILES {
        assert_eq!(read(&a.path().join(f)), read(&b.path().join(f)), "{f}");
    }
    for f in &FILES[2..] {
        assert_ne!(read(&a.path().join(f)), read(&c.path().join(f)), "{f}");
    }
}

#[test]
fn rerun_overwrites_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    run(dir.path(), 500, 3);
    let big = read(&dir.path().join("services.jsonl"));
    run(dir.path(), 20, 3);
    let small = read(&dir.path().join("services.jsonl"));
    assert!(small.len() < big.len());
    assert_eq!(String::from_utf8(small).expect("utf-8").lines().count(), 20);
}

#[test]
fn zero_services_is_a_valid_empty_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let summary = run(&dir.path().join("nested/out"), 0, 1);
    assert_eq!(summary.services, 0);
    assert_eq!(summary.organisations, 0);
    assert!(summary.postcodes >= 200);
    assert!(dir.path().join("nested/out/services.jsonl").exists());
}

#[test]
fn reference_files_are_copied_verbatim() {
    let dir = tempfile::tempdir().expect("tempdir");
    run(dir.path(), 10, 1);
    assert_eq!(read(&dir.path().join("categories.json")), CATEGORIES_JSON.as_bytes());
    assert_eq!(read(&dir.path().join("service_areas.json")), SERVICE_AREAS_JSON.as_bytes());
}

fn is_valid_slug(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 120
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
        && !s.contains("--")
        && Uuid::parse_str(s).is_err()
}

fn is_normalised_postcode(s: &str) -> bool {
    let Some((outward, inward)) = s.split_once(' ') else {
        return false;
    };
    (2..=4).contains(&outward.len())
        && inward.len() == 3
        && s.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b' ')
        && inward.as_bytes()[0].is_ascii_digit()
}

fn category_slugs(nodes: &[CategoryRecord], out: &mut HashSet<String>) {
    for n in nodes {
        out.insert(n.slug.clone());
        category_slugs(&n.sub_categories, out);
    }
}

/// Distance in metres, equirectangular: plenty for a few hundred metres.
fn metres(a: (f64, f64), b: (f64, f64)) -> f64 {
    let x = (b.1 - a.1).to_radians() * ((a.0 + b.0) / 2.0).to_radians().cos();
    let y = (b.0 - a.0).to_radians();
    (x * x + y * y).sqrt() * 6_371_000.0
}

#[test]
fn dataset_is_valid_and_mixed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let summary = run(dir.path(), 2000, 2024);
    let d = dir.path();

    let tree: Vec<CategoryRecord> = serde_json::from_slice(&read(&d.join("categories.json"))).expect("categories");
    let mut slugs = HashSet::new();
    category_slugs(&tree, &mut slugs);
    let top_slugs: HashSet<&str> = tree.iter().map(|n| n.slug.as_str()).collect();
    let areas: Vec<ServiceAreaRecord> = serde_json::from_slice(&read(&d.join("service_areas.json"))).expect("areas");
    let area_codes: HashSet<&str> = areas.iter().map(|a| a.code.as_str()).collect();

    // Postcodes: at least 56 columns, unique, normalised; live ones with their points.
    let mut reader =
        csv::ReaderBuilder::new().has_headers(false).from_path(d.join("postcodes/sample-smalluser.csv")).expect("csv");
    let mut live: HashMap<String, (f64, f64)> = HashMap::new();
    let mut all = HashSet::new();
    let mut terminated = 0;
    let mut newer_codes = HashSet::new();
    for row in reader.records() {
        let row = row.expect("csv row");
        assert!(row.len() >= 56, "{} columns", row.len());
        let code = &row[0];
        assert!(is_normalised_postcode(code), "{code}");
        assert!(all.insert(code.to_owned()), "duplicate {code}");
        assert_eq!(&row[1], code.split(' ').next().expect("outward"));
        let lat: f64 = row[7].parse().expect("lat");
        let lon: f64 = row[8].parse().expect("lon");
        assert!((54.5..61.0).contains(&lat) && (-8.0..-0.5).contains(&lon), "{code}");
        for col in [10, 15, 18] {
            if ["S12000049", "S08000031", "S37000034", "S12000047", "S08000030"].contains(&&row[col]) {
                newer_codes.insert(row[col].to_owned());
            }
        }
        assert!(row[3].ends_with(" 00:00:00"));
        if row[4].is_empty() {
            live.insert(code.to_owned(), (lat, lon));
        } else {
            terminated += 1;
        }
    }
    assert_eq!(all.len(), summary.postcodes);
    assert!(terminated > 0);
    assert!(newer_codes.len() >= 4, "{newer_codes:?}");

    let organisations: Vec<OrganisationRecord> = lines(&d.join("organisations.jsonl"));
    let locations: Vec<LocationRecord> = lines(&d.join("locations.jsonl"));
    let services: Vec<ServiceRecord> = lines(&d.join("services.jsonl"));
    assert_eq!(organisations.len(), summary.organisations);
    assert_eq!(locations.len(), summary.locations);
    assert_eq!(services.len(), 2000);
    // About one organisation per three services.
    assert!((500..=900).contains(&organisations.len()), "{}", organisations.len());

    let mut ids = HashSet::new();
    let mut org_slugs = HashSet::new();
    for o in &organisations {
        assert!(ids.insert(o.id));
        assert!(!o.name.trim().is_empty());
        if let Some(s) = &o.slug {
            assert!(is_valid_slug(s) && org_slugs.insert(s.clone()), "{s}");
        }
        chrono::DateTime::parse_from_rfc3339(&o.last_edited).expect("last_edited");
    }
    let org_ids: HashSet<Uuid> = organisations.iter().map(|o| o.id).collect();

    let mut owner = HashMap::new();
    for l in &locations {
        assert!(ids.insert(l.id));
        assert!(org_ids.contains(&l.organisation_id));
        owner.insert(l.id, l.organisation_id);
        let point = live.get(&l.postal_code).unwrap_or_else(|| panic!("{} is not a live postcode", l.postal_code));
        let m = metres(*point, (l.latitude, l.longitude));
        assert!(m <= 300.0, "{} is {m} m from {}", l.id, l.postal_code);
        assert!(!l.street_address.is_empty() && !l.locality.is_empty());
        assert_eq!(l.country, "GB");
    }

    let mut service_slugs = HashSet::new();
    let mut uses: HashMap<Uuid, usize> = HashMap::new();
    let (mut no_locations, mut area_only, mut national, mut unpublished) = (0, 0, 0, 0);
    let (mut local_and_area, mut nowhere, mut multi_location, mut top_with_leaf) = (0, 0, 0, 0);
    let (mut crlf, mut extension, mut summer_time) = (0, 0, 0);
    for s in &services {
        assert!(ids.insert(s.id));
        assert!(org_ids.contains(&s.organisation_id));
        assert!(!s.name.trim().is_empty());
        assert!((1..=3).contains(&s.categories.len()));
        for c in &s.categories {
            assert!(slugs.contains(c), "unknown category {c}");
        }
        for a in &s.service_areas {
            assert!(area_codes.contains(a.as_str()), "unknown area {a}");
        }
        for l in &s.location_ids {
            assert_eq!(owner.get(l), Some(&s.organisation_id), "location {l}");
            *uses.entry(*l).or_default() += 1;
        }
        let unique: HashSet<&Uuid> = s.location_ids.iter().collect();
        assert_eq!(unique.len(), s.location_ids.len());
        if let Some(slug) = &s.slug {
            assert!(is_valid_slug(slug) && service_slugs.insert(slug.clone()), "{slug}");
        }
        let ts = chrono::DateTime::parse_from_rfc3339(&s.last_updated).expect("last_updated");
        assert!((2019..=2025).contains(&chrono::Datelike::year(&ts)));

        let is_national = s.service_areas.iter().any(|a| a == "XS" || a == "XB");
        no_locations += usize::from(s.location_ids.is_empty());
        area_only += usize::from(s.location_ids.is_empty() && !s.service_areas.is_empty());
        national += usize::from(is_national);
        local_and_area += usize::from(!s.location_ids.is_empty() && !s.service_areas.is_empty());
        nowhere += usize::from(s.location_ids.is_empty() && s.service_areas.is_empty());
        multi_location += usize::from(s.location_ids.len() > 1);
        unpublished += usize::from(!s.published);
        top_with_leaf +=
            usize::from(s.categories.len() > 1 && s.categories.iter().any(|c| top_slugs.contains(c.as_str())));
        crlf += usize::from(s.description.contains("\r\n"));
        extension += usize::from(s.extra.contains_key("x_source"));
        summer_time += usize::from(s.last_updated.ends_with("+01:00"));
    }
    let shared = uses.values().filter(|&&n| n > 1).count();
    for (what, n) in [
        ("no locations", no_locations),
        ("area only", area_only),
        ("national", national),
        ("locations and areas", local_and_area),
        ("nowhere", nowhere),
        ("several locations", multi_location),
        ("unpublished", unpublished),
        ("shared locations", shared),
        ("top level with another", top_with_leaf),
        ("CR LF", crlf),
        ("x_source", extension),
        ("+01:00 timestamp", summer_time),
        ("given slug", service_slugs.len()),
    ] {
        assert!(n > 0, "no service with {what}");
    }
    // Roughly the intended shares: 55 % local only, 25 % without locations.
    assert!((1000..1400).contains(&(services.len() - no_locations - local_and_area)));
    assert!((380..620).contains(&no_locations), "{no_locations}");
    assert!(organisations.iter().any(|o| !o.published));
    assert!(organisations.iter().any(|o| !o.name.is_ascii()));
}

#[test]
fn given_slugs_are_valid_and_distinct() {
    assert_eq!(letters(0), "a");
    assert_eq!(letters(25), "z");
    assert_eq!(letters(26), "aa");
    assert_eq!(letters(27), "ab");
    let mut seen = HashSet::new();
    for key in 0..5000 {
        let slug = given_slug("Café Còmhla – St Ninian's & Friends", key);
        assert!(is_valid_slug(&slug), "{slug}");
        assert!(seen.insert(slug));
    }
    assert!(is_valid_slug(&given_slug("", 3)));
    assert!(is_valid_slug(&given_slug(&"Long Name ".repeat(40), 3)));
}

#[test]
fn every_town_maps_to_listed_areas() {
    let areas = Areas::parse().expect("areas");
    assert_eq!(areas.by_town.len(), towns().len());
    let councils: HashSet<&str> = areas.by_town.iter().map(|c| c[0].as_str()).collect();
    // Every council area of Scotland has at least one town.
    assert_eq!(councils.len(), 32);
    let mut districts = HashSet::new();
    for t in towns() {
        for d in t.districts {
            assert!(districts.insert(*d), "district {d} in two towns");
        }
    }
}

#[test]
fn postcode_count_grows_then_levels_off() {
    assert_eq!(postcodes::target_count(0), 200);
    assert_eq!(postcodes::target_count(10_000), 5_000);
    assert_eq!(postcodes::target_count(10_000_000), 250_000);
}

#[test]
fn organisation_themes_are_categories() {
    let categories = Categories::parse().expect("categories");
    for slug in text::theme_slugs() {
        assert!(categories.by_slug.contains_key(slug), "theme {slug} is not a category");
    }
}
