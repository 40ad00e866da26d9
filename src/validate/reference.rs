//! The reference files of a dataset: the fixed list of service areas, the category tree,
//! the area-code aliases (built in and `area_code_aliases.csv`) and the postcodes mapped
//! through them.

use std::collections::{HashMap, HashSet};

use super::require_text;
use crate::input::records::CategoryRecord;
use crate::input::{DataError, DataErrors, Dataset, PostcodeRow, files};
use crate::model::category::CategoryInput;
use crate::model::slug::slug_problem;
use crate::model::{AreaIx, AreaKind, CategoryTree, Point, Postcode, PostcodeDirectory, ServiceArea};

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

pub(super) fn check_service_areas(dataset: &Dataset, errors: &mut DataErrors) -> Vec<ServiceArea> {
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
                format!("must be one of {}", AreaKind::ALL.map(AreaKind::name).join(", ")),
            )),
        }
    }
    areas
}

pub(super) fn check_categories(records: &[CategoryRecord], errors: &mut DataErrors) -> CategoryTree {
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

/// Built-in aliases extended (or overridden) by `area_code_aliases.csv`.
pub(super) fn alias_table(
    dataset: &Dataset,
    area_ix: &HashMap<&str, AreaIx>,
    errors: &mut DataErrors,
) -> HashMap<String, String> {
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

/// Live postcodes with their area codes mapped. A postcode listed more than once (extracts
/// overlap; a split postcode lists each part) is kept once, the first row in file-name order.
/// Listed again at other coordinates, and not as parts of a split, it is an error at the
/// later row naming the first: which place is right cannot be told, and either would move
/// every search from that postcode.
pub(super) fn resolve_postcodes(
    dataset: &Dataset,
    aliases: &HashMap<String, String>,
    errors: &mut DataErrors,
) -> PostcodeDirectory {
    let mut seen: HashMap<&str, &PostcodeRow> = HashMap::with_capacity(dataset.postcodes.len());
    let mut postcodes: Vec<Postcode> = Vec::with_capacity(dataset.postcodes.len());
    for row in &dataset.postcodes {
        if let Some(first) = seen.get(row.code.as_str()) {
            let split = first.split_part && row.split_part;
            if !split && (first.latitude, first.longitude) != (row.latitude, row.longitude) {
                errors.push(DataError::at(
                    &row.file,
                    Some(row.line),
                    "Postcode",
                    &row.code,
                    format!(
                        "is listed at {}:{} too, at other coordinates ({}, {} there; {}, {} here)",
                        first.file, first.line, first.latitude, first.longitude, row.latitude, row.longitude
                    ),
                ));
            }
            continue;
        }
        seen.insert(row.code.as_str(), row);
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
