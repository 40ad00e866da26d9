//! The rules between the records of the `.jsonl` files: unique ids and slugs, references
//! to organisations, locations, categories and areas that exist, timestamps, required text.

use std::collections::{HashMap, HashSet};

use uuid::Uuid;

use super::require_text;
use crate::input::records::{LocationRecord, OrganisationRecord, ServiceRecord};
use crate::input::{DataError, DataErrors, Line, files};
use crate::model::slug::{generate_slug, slug_problem};
use crate::model::{AreaIx, CategoryIx, Timestamp};

/// What validation learnt of an organisation, by input position.
pub(super) struct OrgCheck {
    pub(super) slug: String,
    pub(super) last_edited: Option<Timestamp>,
}

/// Organisations by id: input position and check results.
pub(super) struct Orgs {
    pub(super) by_id: HashMap<Uuid, usize>,
    pub(super) checks: Vec<OrgCheck>,
}

pub(super) fn timestamp(
    file: &str,
    line: usize,
    field: &str,
    text: &str,
    errors: &mut DataErrors,
) -> Option<Timestamp> {
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
pub(super) fn slug_of(
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

pub(super) fn check_unique_slugs(file: &str, lines: &[usize], slugs: &[String], errors: &mut DataErrors) {
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

pub(super) fn check_unique_id(
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

pub(super) fn check_organisations(lines: &[Line<OrganisationRecord>], errors: &mut DataErrors) -> Orgs {
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
pub(super) struct Refs<'a> {
    pub(super) orgs: &'a Orgs,
    pub(super) categories: &'a HashMap<&'a str, CategoryIx>,
    pub(super) areas: &'a HashMap<&'a str, AreaIx>,
    pub(super) incomplete: &'a std::collections::BTreeSet<&'static str>,
}

impl Refs<'_> {
    /// Resolves a list of names (category slugs, area codes) through `map`: a name that is
    /// missing is reported at `field[i]` (unless the target file is incomplete), a name
    /// listed twice too.
    pub(super) fn named<T: Copy>(
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
    pub(super) fn dangling(&self, target: &str, errors: &mut DataErrors, error: DataError) {
        if !self.incomplete.contains(target) {
            errors.push(error);
        }
    }
}

pub(super) fn org_ref(file: &str, line: usize, id: &Uuid, refs: &Refs<'_>, errors: &mut DataErrors) -> Option<usize> {
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
pub(super) struct Locations {
    pub(super) by_id: HashMap<Uuid, (usize, Option<usize>)>,
}

pub(super) fn check_locations(lines: &[Line<LocationRecord>], refs: &Refs<'_>, errors: &mut DataErrors) -> Locations {
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

pub(super) fn no_repeats<T: std::hash::Hash + Eq + std::fmt::Display>(
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

/// A category slug that names nothing: the file it should be in, and the message.
const NO_CATEGORY: (&str, &str) = (files::CATEGORIES, "is no category slug of categories.json");
/// An area code that names nothing: the file it should be in, and the message.
const NO_AREA: (&str, &str) = (files::SERVICE_AREAS, "is no code of service_areas.json");

/// Service check results, by input position.
pub(super) struct ServiceCheck {
    pub(super) slug: String,
    pub(super) last_updated: Option<Timestamp>,
    pub(super) categories: Vec<CategoryIx>,
    pub(super) areas: Vec<AreaIx>,
}

pub(super) fn check_services(
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
        let categories = refs.named(at("categories"), &record.categories, refs.categories, NO_CATEGORY, errors);
        let areas = refs.named(at("service_areas"), &record.service_areas, refs.areas, NO_AREA, errors);
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
