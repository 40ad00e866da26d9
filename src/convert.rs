//! `svcdir convert --from-import FILE...`: saved pages of an existing deployment's
//! `/api/v4/import/` (v4.1 JSON) → an `input/` directory.
//!
//! Services come over whole; organisations and locations are derived from the objects
//! embedded in them; categories and service areas are the fixed lists (or files given).
//! What the import does not hold is reported, never invented silently: see [`Report`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use uuid::Uuid;

use crate::input::records::{LocationRecord, OrganisationRecord, ServiceRecord};

/// What to convert.
#[derive(Debug, Clone)]
pub struct ConvertConfig {
    /// Saved import pages (`{meta, count, next, previous, data}`), in any order; a service
    /// on several pages is taken once.
    pub pages: Vec<PathBuf>,
    /// The dataset directory to write; created when missing, its dataset files overwritten.
    pub out: PathBuf,
    /// `categories.json` to copy; the fixed list when absent.
    pub categories: Option<PathBuf>,
    /// `service_areas.json` to copy; the fixed list when absent.
    pub service_areas: Option<PathBuf>,
    /// A folder of NRS postcode CSV files to copy into `postcodes/`.
    pub postcodes: Option<PathBuf>,
}

/// Why a conversion failed.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A page is not an import page.
    #[error("{path}: not a v4.1 import page: {source}")]
    Page {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: serde_json::Error,
    },
    /// A page's `next` or `previous` link does not say which page it is.
    #[error("{path}: cannot tell which import page this is from its next and previous links")]
    PageNumber {
        /// The file.
        path: PathBuf,
    },
    /// The pages are of different imports (their `count` differs).
    #[error("{path}: this page counts {count} services, an earlier page {earlier}: pages of two different exports?")]
    CountMismatch {
        /// The file.
        path: PathBuf,
        /// Its count.
        count: usize,
        /// The earlier pages' count.
        earlier: usize,
    },
    /// A page of the import was not given.
    #[error(
        "the import is incomplete: page {page} of {pages} is missing (the pages count {count} services); save /api/v4/import/?format=json&page={page} and give it with --from-import"
    )]
    MissingPage {
        /// The first missing page.
        page: u64,
        /// How many pages the import has.
        pages: u64,
        /// Services the import counts.
        count: usize,
    },
    /// Every page is there but the services do not add up to the count.
    #[error("the import is incomplete: its pages hold {found} different services, but count {count}")]
    Shortfall {
        /// Services found.
        found: usize,
        /// Services the import counts.
        count: usize,
    },
    /// Two pages disagree about one record.
    #[error("{path}: {what} {id} differs from the same record on an earlier page")]
    Conflict {
        /// The file.
        path: PathBuf,
        /// `service`, `organisation` or `location`.
        what: &'static str,
        /// Its id.
        id: Uuid,
    },
}

/// What was written, and what the import could not carry over.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Services written.
    pub services: usize,
    /// Organisations written.
    pub organisations: usize,
    /// Locations written.
    pub locations: usize,
    /// Things not carried over, one sentence each.
    pub not_carried: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct Page {
    count: usize,
    next: Option<String>,
    previous: Option<String>,
    data: Vec<ImportService>,
}

impl Page {
    /// This page's number, read from its links: `next` names page N+1, `previous` page N-1
    /// (or page 1 by having no `page`); a page with neither is the only one.
    fn number(&self) -> Option<u64> {
        let page_of = |url: &str| -> Option<Option<u64>> {
            let query = url.split_once('?').map_or("", |(_, q)| q);
            match form_urlencoded::parse(query.as_bytes()).filter(|(k, _)| k == "page").last() {
                None => Some(None),
                Some((_, v)) => v.trim().parse::<u64>().ok().map(Some),
            }
        };
        match (&self.next, &self.previous) {
            (Some(next), _) => page_of(next)?.and_then(|n| n.checked_sub(1)).filter(|n| *n >= 1),
            (None, Some(previous)) => Some(page_of(previous)?.unwrap_or(1) + 1),
            (None, None) => Some(1),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct ImportService {
    id: Uuid,
    name: String,
    description: String,
    url: String,
    phone: String,
    email: String,
    categories: Vec<Slugged>,
    service_areas: Vec<Coded>,
    organisation: ImportOrganisation,
    slug: String,
    last_updated: String,
    locations: Vec<ImportLocation>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct Slugged {
    slug: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct Coded {
    code: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct ImportOrganisation {
    id: Uuid,
    name: String,
    is_claimed: bool,
    slug: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct ImportLocation {
    id: Uuid,
    name: String,
    description: String,
    street_address: String,
    locality: String,
    region: String,
    state: String,
    postal_code: String,
    country: String,
    latitude: f64,
    longitude: f64,
}

/// Every page of the import is there and the services add up to its `count`. The number of
/// pages is the last page's (the one without `next`), or, when that page is missing, what
/// the size of the full pages gives.
fn check_complete(
    count: usize,
    numbers: &BTreeSet<u64>,
    last_page: u64,
    page_size: usize,
    found: usize,
) -> Result<(), ConvertError> {
    let pages = if last_page > 0 { last_page } else { count.div_ceil(page_size.max(1)).max(1) as u64 };
    if let Some(page) = (1..=pages).find(|n| !numbers.contains(n)) {
        return Err(ConvertError::MissingPage { page, pages, count });
    }
    if found != count {
        return Err(ConvertError::Shortfall { found, count });
    }
    Ok(())
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ConvertError + '_ {
    move |source| ConvertError::Io { path: path.to_owned(), source }
}

/// Converts the pages into a dataset directory.
pub fn convert(cfg: &ConvertConfig) -> Result<Report, ConvertError> {
    let mut services: BTreeMap<Uuid, ImportService> = BTreeMap::new();
    let mut count = None;
    let mut numbers = BTreeSet::new();
    let mut last_page = 0;
    let mut page_size = 0;
    for path in &cfg.pages {
        let bytes = std::fs::read(path).map_err(io(path))?;
        let page: Page =
            serde_json::from_slice(&bytes).map_err(|source| ConvertError::Page { path: path.clone(), source })?;
        let number = page.number().ok_or_else(|| ConvertError::PageNumber { path: path.clone() })?;
        match count {
            Some(earlier) if earlier != page.count => {
                return Err(ConvertError::CountMismatch { path: path.clone(), count: page.count, earlier });
            }
            _ => count = Some(page.count),
        }
        // The last page is the one without `next`; full pages tell the page size.
        if page.next.is_none() {
            last_page = last_page.max(number);
        } else {
            page_size = page_size.max(page.data.len());
        }
        numbers.insert(number);
        for service in page.data {
            match services.get(&service.id) {
                Some(seen) if *seen != service => {
                    return Err(ConvertError::Conflict { path: path.clone(), what: "service", id: service.id });
                }
                _ => {
                    services.insert(service.id, service);
                }
            }
        }
    }
    check_complete(count.unwrap_or(0), &numbers, last_page, page_size, services.len())?;

    let mut organisations: BTreeMap<Uuid, (ImportOrganisation, String)> = BTreeMap::new();
    let mut locations: BTreeMap<Uuid, LocationRecord> = BTreeMap::new();
    let mut service_lines = Vec::with_capacity(services.len());
    for service in services.values() {
        let org = &service.organisation;
        match organisations.get_mut(&org.id) {
            Some((seen, _)) if seen != org => {
                return Err(ConvertError::Conflict { path: cfg.out.clone(), what: "organisation", id: org.id });
            }
            // The import holds no last_edited: the organisation's latest service edit
            // stands in for it (reported).
            Some((_, latest)) => {
                if later(&service.last_updated, latest) {
                    latest.clone_from(&service.last_updated);
                }
            }
            None => {
                organisations.insert(org.id, (org.clone(), service.last_updated.clone()));
            }
        }
        for loc in &service.locations {
            let record = LocationRecord {
                id: loc.id,
                organisation_id: org.id,
                name: loc.name.clone(),
                description: loc.description.clone(),
                street_address: loc.street_address.clone(),
                locality: loc.locality.clone(),
                region: loc.region.clone(),
                state: loc.state.clone(),
                postal_code: loc.postal_code.clone(),
                country: loc.country.clone(),
                latitude: loc.latitude,
                longitude: loc.longitude,
                extra: Default::default(),
            };
            match locations.get(&loc.id) {
                Some(seen) if *seen != record => {
                    return Err(ConvertError::Conflict { path: cfg.out.clone(), what: "location", id: loc.id });
                }
                _ => {
                    locations.insert(loc.id, record);
                }
            }
        }
        service_lines.push(ServiceRecord {
            id: service.id,
            organisation_id: org.id,
            name: service.name.clone(),
            slug: Some(service.slug.clone()),
            description: service.description.clone(),
            url: service.url.clone(),
            phone: service.phone.clone(),
            email: service.email.clone(),
            categories: service.categories.iter().map(|c| c.slug.clone()).collect(),
            service_areas: service.service_areas.iter().map(|a| a.code.clone()).collect(),
            location_ids: service.locations.iter().map(|l| l.id).collect(),
            published: true,
            last_updated: service.last_updated.clone(),
            extra: Default::default(),
        });
    }
    let org_lines: Vec<OrganisationRecord> = organisations
        .values()
        .map(|(org, latest)| OrganisationRecord {
            id: org.id,
            name: org.name.clone(),
            slug: Some(org.slug.clone()),
            description: String::new(),
            url: String::new(),
            phone: String::new(),
            email: String::new(),
            facebook: String::new(),
            twitter: String::new(),
            is_claimed: org.is_claimed,
            published: true,
            last_edited: latest.clone(),
            extra: Default::default(),
        })
        .collect();

    std::fs::create_dir_all(&cfg.out).map_err(io(&cfg.out))?;
    write_jsonl(&cfg.out.join("organisations.jsonl"), &org_lines)?;
    write_jsonl(&cfg.out.join("locations.jsonl"), &locations.values().collect::<Vec<_>>())?;
    write_jsonl(&cfg.out.join("services.jsonl"), &service_lines)?;
    copy_or_write(cfg.categories.as_deref(), crate::sample::CATEGORIES_JSON, &cfg.out.join("categories.json"))?;
    copy_or_write(
        cfg.service_areas.as_deref(),
        crate::sample::SERVICE_AREAS_JSON,
        &cfg.out.join("service_areas.json"),
    )?;

    let mut not_carried = vec![
        format!(
            "organisations ({}): description, url, phone, email, facebook and twitter are not in the import (left empty); last_edited is the latest last_updated of their services",
            org_lines.len()
        ),
        "locations: only those of published services are in the import; formatted_address is derived again".to_owned(),
        "unpublished services and organisations are not in the import".to_owned(),
    ];
    match &cfg.postcodes {
        Some(dir) => copy_postcodes(dir, &cfg.out.join("postcodes"))?,
        None => not_carried.push(
            "postcodes: not in the import; put NRS postcode extracts into postcodes/ (or pass --postcodes DIR)"
                .to_owned(),
        ),
    }
    if cfg.categories.is_none() || cfg.service_areas.is_none() {
        let used: BTreeSet<&str> =
            services.values().flat_map(|s| s.categories.iter().map(|c| c.slug.as_str())).collect();
        not_carried.push(format!(
            "categories.json and service_areas.json are the fixed lists (the import holds only the {} category slugs its services use); pass --categories / --service-areas to use others",
            used.len()
        ));
    }
    Ok(Report {
        services: service_lines.len(),
        organisations: org_lines.len(),
        locations: locations.len(),
        not_carried,
    })
}

/// Whether RFC 3339 timestamp `a` is later than `b` (unparseable ones never are).
fn later(a: &str, b: &str) -> bool {
    match (chrono::DateTime::parse_from_rfc3339(a), chrono::DateTime::parse_from_rfc3339(b)) {
        (Ok(a), Ok(b)) => a > b,
        _ => false,
    }
}

fn write_jsonl<T: serde::Serialize>(path: &Path, records: &[T]) -> Result<(), ConvertError> {
    let mut text = String::new();
    for record in records {
        text.push_str(&serde_json::to_string(record).expect("records serialise"));
        text.push('\n');
    }
    std::fs::write(path, text).map_err(io(path))
}

fn copy_or_write(from: Option<&Path>, fixed: &str, to: &Path) -> Result<(), ConvertError> {
    match from {
        Some(from) => std::fs::copy(from, to).map(|_| ()).map_err(io(from)),
        None => std::fs::write(to, fixed).map_err(io(to)),
    }
}

fn copy_postcodes(from: &Path, to: &Path) -> Result<(), ConvertError> {
    std::fs::create_dir_all(to).map_err(io(to))?;
    for entry in std::fs::read_dir(from).map_err(io(from))? {
        let path = entry.map_err(io(from))?.path();
        if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv")) {
            let target = to.join(path.file_name().unwrap_or_default());
            std::fs::copy(&path, &target).map_err(io(&path))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod completeness_tests {
    use super::*;

    fn page(next: Option<&str>, previous: Option<&str>) -> Page {
        Page { count: 0, next: next.map(str::to_owned), previous: previous.map(str::to_owned), data: vec![] }
    }

    #[test]
    fn page_numbers_from_links() {
        let base = "https://x.example/api/v4/import/?format=json";
        assert_eq!(page(None, None).number(), Some(1));
        assert_eq!(page(Some(&format!("{base}&page=2")), None).number(), Some(1));
        assert_eq!(page(Some(&format!("{base}&page=4")), Some(&format!("{base}&page=2"))).number(), Some(3));
        assert_eq!(page(None, Some(&format!("{base}&page=6"))).number(), Some(7));
        assert_eq!(page(None, Some(base)).number(), Some(2), "page 2's previous may omit page");
        assert_eq!(page(Some(&format!("{base}&page=x")), None).number(), None);
        assert_eq!(page(Some(&format!("{base}&page=1")), None).number(), None);
    }

    #[test]
    fn missing_pages_are_named() {
        let set = |n: &[u64]| n.iter().copied().collect::<BTreeSet<u64>>();
        assert!(check_complete(5, &set(&[1, 2, 3]), 3, 2, 5).is_ok());
        assert!(check_complete(0, &set(&[1]), 1, 0, 0).is_ok(), "an empty import");
        let err = check_complete(5, &set(&[1, 3]), 3, 2, 3).unwrap_err();
        assert!(matches!(err, ConvertError::MissingPage { page: 2, pages: 3, count: 5 }), "{err}");
        assert!(err.to_string().contains("page=2"), "{err}");
        // The last page itself missing: the full pages' size tells how many there are.
        let err = check_complete(5, &set(&[1, 2]), 0, 2, 4).unwrap_err();
        assert!(matches!(err, ConvertError::MissingPage { page: 3, pages: 3, .. }), "{err}");
        assert!(matches!(
            check_complete(6, &set(&[1, 2]), 2, 3, 5),
            Err(ConvertError::Shortfall { found: 5, count: 6 })
        ));
    }
}
