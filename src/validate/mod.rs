//! Validation: the rules between records (input-format.md), checked all at once, and the
//! resolution of a valid dataset into the immutable [`Directory`].
//!
//! Every break of a rule is collected with its file, line, field and value; only a
//! dataset without any becomes a `Directory`.

mod records;
mod reference;
mod resolve;

use std::collections::HashMap;

use crate::input::{DataError, DataErrors, Dataset};
use crate::model::{AreaIx, CategoryIx, Directory};
use records::{Refs, check_locations, check_organisations, check_services};
pub use reference::BUILT_IN_ALIASES;
use reference::{alias_table, check_categories, check_service_areas, resolve_postcodes};
use resolve::resolve;

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
    let postcodes = resolve_postcodes(&dataset, &aliases, &mut errors);
    // A dataset with unreadable lines is never resolved: a reference to a dropped record is
    // not reported (its file's own error is), and resolving it would find nothing. The load
    // errors come with it from `input::load_partial`.
    if !errors.is_empty() || !dataset.incomplete.is_empty() {
        return Err(errors);
    }
    Ok(resolve(dataset, orgs, locations, services, categories, service_areas, postcodes))
}

/// Reports a required text field that is empty after trimming.
pub(super) fn require_text(
    errors: &mut DataErrors,
    file: &str,
    line: Option<usize>,
    field: impl Into<String>,
    value: &str,
) {
    if value.trim().is_empty() {
        errors.push(DataError::at(file, line, field, value, "must not be empty"));
    }
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
