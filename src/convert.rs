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

use crate::input::files;
use crate::input::records::{LocationRecord, OrganisationRecord, ServiceRecord};
use crate::input::writer::{CATEGORIES_JSON, JsonLines, SERVICE_AREAS_JSON, WriteError};

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
    /// A page cannot tell which page of the import it is.
    #[error("{path}: cannot tell which import page this is from its `next` and `previous` links")]
    PageNumber {
        /// The file.
        path: PathBuf,
    },
    /// Writing the dataset failed.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// The pages given are not the whole import.
    #[error("the import pages given are incomplete: {0}")]
    Incomplete(String),
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
    /// This page's number, read from its links: page 1 has no `previous`; otherwise the
    /// `previous` link names page N-1, or the `next` link page N+1.
    fn number(&self) -> Option<usize> {
        let Some(previous) = &self.previous else { return Some(1) };
        match page_param(previous) {
            Some(n) => Some(n + 1),
            // The first page's link may carry no `page` at all.
            None if self.next.as_deref().and_then(page_param).is_none() => Some(2),
            None => self.next.as_deref().and_then(page_param).and_then(|n| n.checked_sub(1)),
        }
    }
}

/// The `page` query parameter of a link (1 when it has a query but no `page`).
fn page_param(link: &str) -> Option<usize> {
    let query = link.split_once('?')?.1;
    form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == "page").map_or(Some(1), |(_, v)| v.parse().ok())
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

/// What the pages given say about the whole import, to tell a partial dump from a whole one.
#[derive(Debug, Default)]
struct DumpShape {
    /// The `count` every page states, and the first file stating it.
    count: Option<(usize, PathBuf)>,
    /// Page numbers seen.
    pages: BTreeSet<usize>,
    /// The number of the page with no `next` link (the last one), when given.
    last: Option<usize>,
}

impl DumpShape {
    fn add(&mut self, path: &Path, number: usize, page: &Page) -> Result<(), ConvertError> {
        match &self.count {
            Some((count, first)) if *count != page.count => {
                return Err(ConvertError::Incomplete(format!(
                    "{} says the import holds {} services but {} says {count}: pages of different exports?",
                    path.display(),
                    page.count,
                    first.display()
                )));
            }
            Some(_) => {}
            None => self.count = Some((page.count, path.to_owned())),
        }
        self.pages.insert(number);
        if page.next.is_none() {
            self.last = Some(number);
        }
        Ok(())
    }

    /// Every page from 1 to the last is present and the services add up to `count`.
    fn check_complete(&self, services: usize) -> Result<(), ConvertError> {
        let Some((count, _)) = &self.count else { return Ok(()) };
        let seen_last = self.pages.last().copied().unwrap_or(1);
        let Some(last) = self.last else {
            return Err(ConvertError::Incomplete(format!(
                "page {} is missing (page {seen_last}, the last one given, links to a next page)",
                seen_last + 1
            )));
        };
        let missing: Vec<String> = (1..=last).filter(|n| !self.pages.contains(n)).map(|n| n.to_string()).collect();
        if let Some(first) = missing.first() {
            let which = if missing.len() == 1 {
                format!("page {first} is missing")
            } else {
                format!("pages {} are missing", missing.join(", "))
            };
            return Err(ConvertError::Incomplete(format!("{which} (the import has {last} pages)")));
        }
        if services != *count {
            return Err(ConvertError::Incomplete(format!(
                "the pages hold {services} different services but the import's count is {count}"
            )));
        }
        Ok(())
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ConvertError + '_ {
    move |source| ConvertError::Io { path: path.to_owned(), source }
}

/// Converts the pages into a dataset directory.
pub fn convert(cfg: &ConvertConfig) -> Result<Report, ConvertError> {
    let mut services: BTreeMap<Uuid, ImportService> = BTreeMap::new();
    let mut dump = DumpShape::default();
    for path in &cfg.pages {
        let bytes = std::fs::read(path).map_err(io(path))?;
        let page: Page =
            serde_json::from_slice(&bytes).map_err(|source| ConvertError::Page { path: path.clone(), source })?;
        let number = page.number().ok_or_else(|| ConvertError::PageNumber { path: path.clone() })?;
        dump.add(path, number, &page)?;
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

    dump.check_complete(services.len())?;

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
            is_claimed: org.is_claimed,
            published: true,
            last_edited: latest.clone(),
            // The import carries no description, url, phone, email or social links.
            ..OrganisationRecord::default()
        })
        .collect();

    std::fs::create_dir_all(&cfg.out).map_err(io(&cfg.out))?;
    JsonLines::write_all(cfg.out.join(files::ORGANISATIONS), &org_lines)?;
    JsonLines::write_all(cfg.out.join(files::LOCATIONS), locations.values())?;
    JsonLines::write_all(cfg.out.join(files::SERVICES), &service_lines)?;
    copy_or_write(cfg.categories.as_deref(), CATEGORIES_JSON, &cfg.out.join(files::CATEGORIES))?;
    copy_or_write(cfg.service_areas.as_deref(), SERVICE_AREAS_JSON, &cfg.out.join(files::SERVICE_AREAS))?;

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
