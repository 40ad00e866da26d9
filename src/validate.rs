//! Validation: the rules between records (input-format.md), checked all at once, and the
//! resolution of a valid dataset into the immutable [`Directory`].
//!
//! Every break of a rule is collected with its file, line, field and value; only a
//! dataset without any becomes a `Directory`.

use std::collections::{HashMap, HashSet};

use uuid::Uuid;

use crate::input::records::{CategoryRecord, LocationRecord, OrganisationRecord, ServiceRecord};
use crate::input::{DataError, DataErrors, Dataset, Line, files};
use crate::model::category::CategoryInput;
use crate::model::slug::{generate_slug, slug_problem};
use crate::model::{
    AreaIx, AreaKind, CategoryIx, CategoryTree, Directory, Location, LocationIx, OrgIx, Organisation, Point, Postcode,
    PostcodeDirectory, Service, ServiceArea, Timestamp,
};

/// Area-code aliases built in (behaviour.md, Search 2): the codes postcode files of later
/// years use → the codes of the fixed list of service areas.
pub const BUILT_IN_ALIASES: [(&str, &str); 12] = [
    ("S12000049", "S12000046"),
    ("S12000050", "S12000044"),
    ("S12000047", "S12000015"),
    ("S12000048", "S12000024"),
    ("S08000029", "S08000018"),
    ("S08000030", "S08000027"),
    ("S08000031", "S08000021"),
    ("S08000032", "S08000023"),
    ("S37000032", "S37000014"),
    ("S37000033", "S37000023"),
    ("S37000034", "S37000015"),
    ("S37000035", "S37000021"),
];

/// Checks every rule and resolves the dataset into a [`Directory`] of published records.
pub fn validate(dataset: Dataset) -> Result<Directory, DataErrors> {
    let mut errors = DataErrors::default();
    let service_areas = check_service_areas(&dataset, &mut errors);
    let categories = check_categories(&dataset.categories, &mut errors);
    let area_ix: HashMap<&str, AreaIx> =
        service_areas.iter().enumerate().map(|(ix, a)| (a.code.as_str(), ix as AreaIx)).collect();
    let category_ix: HashMap<&str, CategoryIx> =
        categories.nodes.iter().enumerate().map(|(ix, n)| (n.slug.as_str(), ix as CategoryIx)).collect();

    let orgs = check_organisations(&dataset.organisations, &mut errors);
    let refs = Refs { orgs: &orgs, categories: &category_ix, areas: &area_ix, incomplete: &dataset.incomplete };
    let locations = check_locations(&dataset.locations, &refs, &mut errors);
    let services = check_services(&dataset.services, &refs, &locations, &mut errors);
    let aliases = alias_table(&dataset, &area_ix, &mut errors);
    let postcodes = resolve_postcodes(&dataset, &aliases);
    // A dataset with unreadable lines is never resolved: a reference to a dropped record is
    // not reported (its file's own error is), and resolving it would find nothing. The load
    // errors come with it from `input::load_partial`.
    if !errors.is_empty() || !dataset.incomplete.is_empty() {
        return Err(errors);
    }
    Ok(resolve(dataset, orgs, locations, services, categories, service_areas, postcodes))
}

fn check_service_areas(dataset: &Dataset, errors: &mut DataErrors) -> Vec<ServiceArea> {
    let file = files::SERVICE_AREAS;
    let mut seen = HashSet::new();
    let mut areas = Vec::new();
    for (ix, record) in dataset.service_areas.iter().enumerate() {
        require_text(errors, file, None, format!("[{ix}].code"), &record.code);
        if !record.code.trim().is_empty() && !seen.insert(record.code.as_str()) {
            errors.push(DataError::at(file, None, format!("[{ix}].code"), &record.code, "is listed twice"));
        }
        require_text(errors, file, None, format!("[{ix}].name"), &record.name);
        let kind = AreaKind::from_name(&record.kind);
        // Keep the code even when its type is wrong (the build fails anyway), so that
        // services naming it are not told it is missing.
        areas.push(ServiceArea {
            code: record.code.clone(),
            kind: kind.unwrap_or(AreaKind::Country),
            name: record.name.clone(),
        });
        match kind {
            Some(_) => {}
            None => errors.push(DataError::at(
                file,
                None,
                format!("[{ix}].type"),
                &record.kind,
                "must be one of Country, Region, Local Authority, Health Board, Integration Authority (HSCP)",
            )),
        }
    }
    areas
}

fn check_categories(records: &[CategoryRecord], errors: &mut DataErrors) -> CategoryTree {
    fn walk(
        records: &[CategoryRecord],
        path: &str,
        slugs: &mut HashSet<String>,
        ids: &mut HashSet<u32>,
        errors: &mut DataErrors,
    ) -> Vec<CategoryInput> {
        let file = files::CATEGORIES;
        records
            .iter()
            .enumerate()
            .map(|(ix, record)| {
                let here = format!("{path}[{ix}]");
                if let Some(problem) = slug_problem(&record.slug) {
                    errors.push(DataError::at(file, None, format!("{here}.slug"), &record.slug, problem));
                } else if !slugs.insert(record.slug.clone()) {
                    errors.push(DataError::at(file, None, format!("{here}.slug"), &record.slug, "is used twice"));
                }
                require_text(errors, file, None, format!("{here}.name"), &record.name);
                if let Some(id) = record.id {
                    if id == 0 {
                        errors.push(DataError::at(file, None, format!("{here}.id"), id, "must be 1 or more"));
                    } else if !ids.insert(id) {
                        errors.push(DataError::at(file, None, format!("{here}.id"), id, "is used twice"));
                    }
                }
                CategoryInput {
                    id: record.id,
                    name: record.name.clone(),
                    slug: record.slug.clone(),
                    children: walk(&record.sub_categories, &format!("{here}.sub_categories"), slugs, ids, errors),
                }
            })
            .collect()
    }
    let inputs = walk(records, "", &mut HashSet::new(), &mut HashSet::new(), errors);
    CategoryTree::build(&inputs)
}

/// Reports a required text field that is empty after trimming.
fn require_text(errors: &mut DataErrors, file: &str, line: Option<usize>, field: impl Into<String>, value: &str) {
    if value.trim().is_empty() {
        errors.push(DataError::at(file, line, field, value, "must not be empty"));
    }
}

/// What validation learnt of an organisation, by input position.
struct OrgCheck {
    slug: String,
    last_edited: Option<Timestamp>,
}

/// Organisations by id: input position and check results.
struct Orgs {
    by_id: HashMap<Uuid, usize>,
    checks: Vec<OrgCheck>,
}

fn timestamp(file: &str, line: usize, field: &str, text: &str, errors: &mut DataErrors) -> Option<Timestamp> {
    let parsed = Timestamp::parse_rfc3339(text);
    if parsed.is_none() {
        errors.push(DataError::at(
            file,
            Some(line),
            field,
            text,
            "must be an RFC 3339 timestamp, e.g. 2024-03-01T10:15:30.123456Z",
        ));
    }
    parsed
}

/// The given slug, checked, or a generated one; uniqueness is checked by the caller.
fn slug_of(
    file: &str,
    line: usize,
    given: Option<&str>,
    name: &str,
    id: &Uuid,
    fallback: &str,
    errors: &mut DataErrors,
) -> String {
    match given {
        Some(slug) => {
            if let Some(problem) = slug_problem(slug) {
                errors.push(DataError::at(file, Some(line), "slug", slug, problem));
            }
            slug.to_owned()
        }
        None => generate_slug(name, id, fallback),
    }
}

fn check_unique_slugs(file: &str, lines: &[usize], slugs: &[String], errors: &mut DataErrors) {
    let mut first: HashMap<&str, usize> = HashMap::new();
    for (line, slug) in lines.iter().zip(slugs) {
        if let Some(other) = first.insert(slug.as_str(), *line) {
            errors.push(DataError::at(
                file,
                Some(*line),
                "slug",
                slug,
                format!("is the slug of line {other} too (given, or generated from the name)"),
            ));
            first.insert(slug.as_str(), other);
        }
    }
}

fn check_unique_id(
    file: &str,
    line: usize,
    id: Uuid,
    seen: &mut HashMap<Uuid, usize>,
    errors: &mut DataErrors,
) -> bool {
    match seen.get(&id) {
        Some(other) => {
            errors.push(DataError::at(file, Some(line), "id", id, format!("is the id of line {other} too")));
            false
        }
        None => {
            seen.insert(id, line);
            true
        }
    }
}

fn check_organisations(lines: &[Line<OrganisationRecord>], errors: &mut DataErrors) -> Orgs {
    let file = files::ORGANISATIONS;
    let mut seen = HashMap::new();
    let mut by_id = HashMap::new();
    let mut checks = Vec::with_capacity(lines.len());
    for (pos, Line { line, record }) in lines.iter().enumerate() {
        if check_unique_id(file, *line, record.id, &mut seen, errors) {
            by_id.insert(record.id, pos);
        }
        require_text(errors, file, Some(*line), "name", &record.name);
        let slug = slug_of(file, *line, record.slug.as_deref(), &record.name, &record.id, "organisation", errors);
        let last_edited = timestamp(file, *line, "last_edited", &record.last_edited, errors);
        checks.push(OrgCheck { slug, last_edited });
    }
    let line_numbers: Vec<usize> = lines.iter().map(|l| l.line).collect();
    let slugs: Vec<String> = checks.iter().map(|c| c.slug.clone()).collect();
    check_unique_slugs(file, &line_numbers, &slugs, errors);
    Orgs { by_id, checks }
}

/// What records of other files can be referred to. A reference into a file that failed to
/// load is not reported when it names nothing: the record it names may be the broken line.
struct Refs<'a> {
    orgs: &'a Orgs,
    categories: &'a HashMap<&'a str, CategoryIx>,
    areas: &'a HashMap<&'a str, AreaIx>,
    incomplete: &'a std::collections::BTreeSet<&'static str>,
}

impl Refs<'_> {
    /// Resolves a list of names (category slugs, area codes) through `map`: a name that is
    /// missing is reported at `field[i]` (unless the target file is incomplete), a name
    /// listed twice too.
    fn named<T: Copy>(
        &self,
        (file, line, field): (&str, usize, &str),
        names: &[String],
        map: &HashMap<&str, T>,
        (target, message): (&str, &str),
        errors: &mut DataErrors,
    ) -> Vec<T> {
        let mut found = Vec::with_capacity(names.len());
        for (ix, name) in names.iter().enumerate() {
            match map.get(name.as_str()) {
                Some(&value) => found.push(value),
                None => self.dangling(
                    target,
                    errors,
                    DataError::at(file, Some(line), format!("{field}[{ix}]"), name, message),
                ),
            }
        }
        no_repeats(file, line, field, names, errors);
        found
    }

    /// Reports a reference that names nothing, unless its target file is incomplete.
    fn dangling(&self, target: &str, errors: &mut DataErrors, error: DataError) {
        if !self.incomplete.contains(target) {
            errors.push(error);
        }
    }
}

fn org_ref(file: &str, line: usize, id: &Uuid, refs: &Refs<'_>, errors: &mut DataErrors) -> Option<usize> {
    let found = refs.orgs.by_id.get(id).copied();
    if found.is_none() {
        refs.dangling(
            files::ORGANISATIONS,
            errors,
            DataError::at(file, Some(line), "organisation_id", id, "names no organisation in organisations.jsonl"),
        );
    }
    found
}

/// Locations by id: input position and owner's input position.
struct Locations {
    by_id: HashMap<Uuid, (usize, Option<usize>)>,
}

fn check_locations(lines: &[Line<LocationRecord>], refs: &Refs<'_>, errors: &mut DataErrors) -> Locations {
    let file = files::LOCATIONS;
    let mut seen = HashMap::new();
    let mut by_id = HashMap::new();
    for (pos, Line { line, record }) in lines.iter().enumerate() {
        let line = *line;
        let owner = org_ref(file, line, &record.organisation_id, refs, errors);
        if check_unique_id(file, line, record.id, &mut seen, errors) {
            by_id.insert(record.id, (pos, owner));
        }
        for (field, value) in [
            ("street_address", &record.street_address),
            ("locality", &record.locality),
            ("postal_code", &record.postal_code),
        ] {
            require_text(errors, file, Some(line), field, value);
        }
        if record.country.len() != 2 || !record.country.bytes().all(|b| b.is_ascii_uppercase()) {
            errors.push(DataError::at(file, Some(line), "country", &record.country, "must be two upper-case letters"));
        }
        for (field, value, limit) in [("latitude", record.latitude, 90.0), ("longitude", record.longitude, 180.0)] {
            if !value.is_finite() || value.abs() > limit {
                errors.push(DataError::at(file, Some(line), field, value, format!("must be from -{limit} to {limit}")));
            }
        }
    }
    Locations { by_id }
}

fn no_repeats<T: std::hash::Hash + Eq + std::fmt::Display>(
    file: &str,
    line: usize,
    field: &str,
    values: &[T],
    errors: &mut DataErrors,
) {
    let mut seen = HashSet::new();
    for (ix, value) in values.iter().enumerate() {
        if !seen.insert(value) {
            errors.push(DataError::at(file, Some(line), format!("{field}[{ix}]"), value, "is listed twice"));
        }
    }
}

/// Service check results, by input position.
struct ServiceCheck {
    slug: String,
    last_updated: Option<Timestamp>,
    categories: Vec<CategoryIx>,
    areas: Vec<AreaIx>,
}

fn check_services(
    lines: &[Line<ServiceRecord>],
    refs: &Refs<'_>,
    locations: &Locations,
    errors: &mut DataErrors,
) -> Vec<ServiceCheck> {
    let file = files::SERVICES;
    let mut seen = HashMap::new();
    let mut checks = Vec::with_capacity(lines.len());
    for Line { line, record } in lines {
        let line = *line;
        check_unique_id(file, line, record.id, &mut seen, errors);
        let owner = org_ref(file, line, &record.organisation_id, refs, errors);
        require_text(errors, file, Some(line), "name", &record.name);
        let slug = slug_of(file, line, record.slug.as_deref(), &record.name, &record.id, "service", errors);
        let last_updated = timestamp(file, line, "last_updated", &record.last_updated, errors);
        let at = |field: &'static str| (file, line, field);
        let categories = refs.named(
            at("categories"),
            &record.categories,
            refs.categories,
            (files::CATEGORIES, "is no category slug of categories.json"),
            errors,
        );
        let areas = refs.named(
            at("service_areas"),
            &record.service_areas,
            refs.areas,
            (files::SERVICE_AREAS, "is no code of service_areas.json"),
            errors,
        );
        for (ix, id) in record.location_ids.iter().enumerate() {
            match locations.by_id.get(id) {
                None => refs.dangling(
                    files::LOCATIONS,
                    errors,
                    DataError::at(
                        file,
                        Some(line),
                        format!("location_ids[{ix}]"),
                        id,
                        "names no location in locations.jsonl",
                    ),
                ),
                Some((_, location_owner)) => {
                    if owner.is_some() && location_owner.is_some() && *location_owner != owner {
                        errors.push(DataError::at(
                            file,
                            Some(line),
                            format!("location_ids[{ix}]"),
                            id,
                            "names a location of another organisation",
                        ));
                    }
                }
            }
        }
        no_repeats(file, line, "location_ids", &record.location_ids, errors);
        checks.push(ServiceCheck { slug, last_updated, categories, areas });
    }
    let line_numbers: Vec<usize> = lines.iter().map(|l| l.line).collect();
    let slugs: Vec<String> = checks.iter().map(|c| c.slug.clone()).collect();
    check_unique_slugs(file, &line_numbers, &slugs, errors);
    checks
}

/// Built-in aliases extended (or overridden) by `area_code_aliases.csv`.
fn alias_table(dataset: &Dataset, area_ix: &HashMap<&str, AreaIx>, errors: &mut DataErrors) -> HashMap<String, String> {
    let mut table: HashMap<String, String> =
        BUILT_IN_ALIASES.iter().map(|(from, to)| ((*from).to_owned(), (*to).to_owned())).collect();
    let mut seen = HashMap::new();
    for row in &dataset.aliases {
        if let Some(other) = seen.insert(row.from.clone(), row.line) {
            errors.push(DataError::at(
                files::ALIASES,
                Some(row.line),
                "from_code",
                &row.from,
                format!("is aliased on line {other} too"),
            ));
        }
        if !area_ix.contains_key(row.to.as_str()) && !dataset.incomplete.contains(files::SERVICE_AREAS) {
            errors.push(DataError::at(
                files::ALIASES,
                Some(row.line),
                "to_code",
                &row.to,
                "is no code of service_areas.json",
            ));
        }
        table.insert(row.from.clone(), row.to.clone());
    }
    table
}

/// Live postcodes with their area codes mapped; the first row of a postcode wins when
/// several files list it (files are read in name order).
fn resolve_postcodes(dataset: &Dataset, aliases: &HashMap<String, String>) -> PostcodeDirectory {
    let mut seen = HashSet::new();
    let mut postcodes: Vec<Postcode> = Vec::with_capacity(dataset.postcodes.len());
    for row in &dataset.postcodes {
        if !seen.insert(row.code.as_str()) {
            continue;
        }
        let mut areas: Vec<String> = [&row.council, &row.health_board, &row.integration_authority]
            .into_iter()
            .filter(|code| !code.is_empty())
            .map(|code| aliases.get(code.as_str()).unwrap_or(code).clone())
            .collect();
        areas.push("XS".to_owned());
        areas.push("XB".to_owned());
        postcodes.push(Postcode {
            code: row.code.clone(),
            point: Point { lat: row.latitude, lon: row.longitude },
            areas,
        });
    }
    postcodes.sort_by(|a, b| a.code.cmp(&b.code));
    PostcodeDirectory { postcodes }
}

/// Builds the directory of a dataset that passed every check.
fn resolve(
    dataset: Dataset,
    orgs: Orgs,
    locations: Locations,
    service_checks: Vec<ServiceCheck>,
    categories: CategoryTree,
    service_areas: Vec<ServiceArea>,
    postcodes: PostcodeDirectory,
) -> Directory {
    // Published organisations, in id order.
    let mut org_positions: Vec<usize> =
        (0..dataset.organisations.len()).filter(|&p| dataset.organisations[p].record.published).collect();
    org_positions.sort_by_key(|&p| dataset.organisations[p].record.id);
    let org_ix: HashMap<Uuid, OrgIx> =
        org_positions.iter().enumerate().map(|(ix, &p)| (dataset.organisations[p].record.id, ix as OrgIx)).collect();

    let mut location_records: Vec<&LocationRecord> =
        dataset.locations.iter().map(|l| &l.record).filter(|r| org_ix.contains_key(&r.organisation_id)).collect();
    location_records.sort_by_key(|r| r.id);
    let location_ix: HashMap<Uuid, LocationIx> =
        location_records.iter().enumerate().map(|(ix, r)| (r.id, ix as LocationIx)).collect();
    let locations_model: Vec<Location> = location_records
        .iter()
        .map(|r| Location {
            id: r.id,
            organisation: org_ix[&r.organisation_id],
            name: r.name.clone(),
            description: r.description.clone(),
            street_address: r.street_address.clone(),
            locality: r.locality.clone(),
            region: r.region.clone(),
            state: r.state.clone(),
            postal_code: r.postal_code.clone(),
            country: r.country.clone(),
            point: Point { lat: r.latitude, lon: r.longitude },
        })
        .collect();
    drop(locations);

    let mut service_positions: Vec<usize> = (0..dataset.services.len())
        .filter(|&p| {
            let r = &dataset.services[p].record;
            r.published && org_ix.contains_key(&r.organisation_id)
        })
        .collect();
    service_positions.sort_by_key(|&p| dataset.services[p].record.id);
    let services: Vec<Service> = service_positions
        .iter()
        .map(|&p| {
            let r = &dataset.services[p].record;
            let check = &service_checks[p];
            Service {
                id: r.id,
                organisation: org_ix[&r.organisation_id],
                name: r.name.clone(),
                slug: check.slug.clone(),
                description: r.description.clone(),
                url: r.url.clone(),
                phone: r.phone.clone(),
                email: r.email.clone(),
                categories: check.categories.clone(),
                service_areas: check.areas.clone(),
                locations: r.location_ids.iter().map(|id| location_ix[id]).collect(),
                last_updated: check.last_updated.expect("checked"),
            }
        })
        .collect();

    let mut organisations: Vec<Organisation> = org_positions
        .iter()
        .map(|&p| {
            let r = &dataset.organisations[p].record;
            let check = &orgs.checks[p];
            Organisation {
                id: r.id,
                name: r.name.clone(),
                slug: check.slug.clone(),
                description: r.description.clone(),
                url: r.url.clone(),
                phone: r.phone.clone(),
                email: r.email.clone(),
                facebook: r.facebook.clone(),
                twitter: r.twitter.clone(),
                is_claimed: r.is_claimed,
                last_edited: check.last_edited.expect("checked"),
                services: Vec::new(),
                locations: Vec::new(),
            }
        })
        .collect();
    for (ix, service) in services.iter().enumerate() {
        organisations[service.organisation as usize].services.push(ix as u32);
    }
    for (ix, location) in locations_model.iter().enumerate() {
        organisations[location.organisation as usize].locations.push(ix as LocationIx);
    }
    Directory { organisations, services, locations: locations_model, categories, service_areas, postcodes }
}

/// Loads and validates a dataset directory in one step.
pub fn load_directory(dir: &std::path::Path) -> Result<Directory, DataErrors> {
    let (dataset, mut errors) = crate::input::load_partial(dir);
    match validate(dataset) {
        Ok(directory) => errors.into_result(directory),
        Err(more) => {
            errors.extend(more);
            Err(errors)
        }
    }
}
