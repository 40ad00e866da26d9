//! The listings without a postcode (issue 25) of a 10,000-service sample, built by the real
//! `svcdir build`: for every category (itself and everything below it) and every service
//! area, the listing's `count` and ids, page after page as its `next` links lead, equal a
//! brute-force filter of the published services of the input files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

use crate::common::{self, assert_ok};

/// Each JSON line of an input file.
fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every slug of the input's category tree with the slugs of its subtree (itself included).
fn subtrees(nodes: &[Value], out: &mut BTreeMap<String, BTreeSet<String>>) -> BTreeSet<String> {
    let mut all = BTreeSet::new();
    for node in nodes {
        let slug = node["slug"].as_str().unwrap().to_owned();
        let mut below = subtrees(node["sub_categories"].as_array().map_or(&[][..], Vec::as_slice), out);
        below.insert(slug.clone());
        out.insert(slug, below.clone());
        all.extend(below);
    }
    all
}

/// The count and the ids of a listing, read page by page from the built tree as its `next`
/// links lead (each `next` is the folder's next page).
fn listing(public: &Path, folder: &str, page_size: usize) -> (u64, Vec<String>) {
    let first = common::json(public, &format!("{folder}/index.json"));
    let count = first["count"].as_u64().unwrap();
    let mut ids = Vec::new();
    let mut page = first;
    let mut n = 1;
    loop {
        let data = page["data"].as_array().unwrap();
        assert!(data.len() <= page_size, "{folder} page {n}");
        ids.extend(data.iter().map(|s| s["id"].as_str().unwrap().to_owned()));
        let Some(next) = page["next"].as_str() else { break };
        n += 1;
        assert_eq!(next, format!("{}/{folder}/?format=json&page={n}", common::BASE_URL));
        page = common::json(public, &format!("{folder}/page/{n}/index.json"));
    }
    assert_eq!(common::json(public, &format!("{folder}/page/last/index.json")), page, "{folder}: page=last");
    assert!(!public.join(format!("{folder}/page/{}/index.json", n + 1)).exists(), "{folder}: no page past the end");
    (count, ids)
}

#[test]
fn every_listing_of_a_10000_service_sample_is_a_filter_of_the_published_services() {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("input");
    let input_arg = input.to_str().unwrap();
    assert_ok(&common::svcdir(&["sample", "--output", input_arg, "--services", "10000", "--seed", "25"]));
    let page_size = 100;
    assert_ok(&common::build(&input, work.path(), &["--import-page-size", &page_size.to_string()]));
    let public = work.path().join("public");

    let hidden: BTreeSet<String> = lines(&input.join("organisations.jsonl"))
        .into_iter()
        .filter(|o| o["published"] == false)
        .map(|o| o["id"].as_str().unwrap().to_owned())
        .collect();
    let mut services: Vec<Value> = lines(&input.join("services.jsonl"))
        .into_iter()
        .filter(|s| s["published"] != false && !hidden.contains(s["organisation_id"].as_str().unwrap()))
        .collect();
    services.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    assert!(services.len() > 9000 && services.len() < 10_000, "published: {}", services.len());
    let list = |s: &Value, field: &str| -> Vec<String> {
        s[field].as_array().map_or(vec![], |a| a.iter().map(|v| v.as_str().unwrap().to_owned()).collect())
    };

    let mut categories = BTreeMap::new();
    let tree: Value = serde_json::from_slice(&std::fs::read(input.join("categories.json")).unwrap()).unwrap();
    subtrees(tree.as_array().unwrap(), &mut categories);
    let (mut long, mut empty) = (0, 0);
    for (slug, subtree) in &categories {
        let want: Vec<String> = services
            .iter()
            .filter(|s| list(s, "categories").iter().any(|c| subtree.contains(c)))
            .map(|s| s["id"].as_str().unwrap().to_owned())
            .collect();
        let got = listing(&public, &format!("api/v4/categories/{slug}/services"), page_size);
        assert_eq!(got, (want.len() as u64, want.clone()), "category {slug}");
        long += usize::from(want.len() > 2 * page_size);
        empty += usize::from(want.is_empty());
    }
    let areas: Value = serde_json::from_slice(&std::fs::read(input.join("service_areas.json")).unwrap()).unwrap();
    for area in areas.as_array().unwrap() {
        let code = area["code"].as_str().unwrap();
        let want: Vec<String> = services
            .iter()
            .filter(|s| list(s, "service_areas").iter().any(|c| c == code))
            .map(|s| s["id"].as_str().unwrap().to_owned())
            .collect();
        let got = listing(&public, &format!("api/v4/service-areas/{code}/services"), page_size);
        assert_eq!(got, (want.len() as u64, want.clone()), "area {code}");
        long += usize::from(want.len() > 2 * page_size);
        empty += usize::from(want.is_empty());
    }
    eprintln!(
        "{} categories, {} areas: {long} listings of 3 pages or more, {empty} empty",
        categories.len(),
        areas.as_array().unwrap().len()
    );
    assert!(long > 10, "long listings: {long}");
}
