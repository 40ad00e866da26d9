//! Where the Open Referral UK API's files live under the output directory.

/// The folder of the ORUK API under the output directory, and its URL prefix.
pub(crate) const FOLDER: &str = "openreferral";

/// The lists of the API, each paged like the import.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum List {
    /// `/services`.
    Services,
    /// `/service_at_locations`.
    ServiceAtLocations,
    /// `/organizations`.
    Organizations,
    /// `/taxonomies`.
    Taxonomies,
    /// `/taxonomy_terms`.
    TaxonomyTerms,
}

impl List {
    /// Every list.
    pub(crate) const ALL: [List; 5] =
        [List::Services, List::ServiceAtLocations, List::Organizations, List::Taxonomies, List::TaxonomyTerms];

    /// The path segment after `/openreferral/`.
    pub fn name(self) -> &'static str {
        match self {
            List::Services => "services",
            List::ServiceAtLocations => "service_at_locations",
            List::Organizations => "organizations",
            List::Taxonomies => "taxonomies",
            List::TaxonomyTerms => "taxonomy_terms",
        }
    }
}

/// The root document's folder.
pub(crate) const ROOT: &str = FOLDER;
/// The profile's OpenAPI document, also at `/openreferral/openapi.json`.
pub(crate) const OPENAPI: &str = "openreferral/openapi";
/// The OpenAPI document under its well-known name.
pub(crate) const OPENAPI_FILE: &str = "openreferral/openapi.json";

/// Folder of a list's page 1 (also its `?page=1`).
pub(crate) fn list(list: List) -> String {
    format!("{FOLDER}/{}", list.name())
}

/// Folder of page `n` of a list.
pub(crate) fn list_page(list: List, n: usize) -> String {
    format!("{FOLDER}/{}/page/{n}", list.name())
}

/// Folder of a named page of a list (`last`).
pub(crate) fn list_page_named(list: List, name: &str) -> String {
    format!("{FOLDER}/{}/page/{name}", list.name())
}

/// Folder of one object of a list's kind, by id.
pub(crate) fn object(list: List, id: &str) -> String {
    format!("{FOLDER}/{}/{id}", list.name())
}
