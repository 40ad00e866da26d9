//! The URL space of the published tree: where every static answer lives under the output
//! directory, as folders with `index.json` and `index.html` (so a static server maps `/x/`
//! and `/x` alike). A leaf: the renderers write to these paths, and the contract (`api`),
//! the generators (nginx, the Worker) and the preview route to them.

pub(crate) mod openreferral;
pub(crate) mod search;

/// Endpoint folder of a service, by id or slug.
pub(crate) fn service(key: &str) -> String {
    format!("api/v4/services/{key}")
}
/// Endpoint folder of an organisation, by id or slug.
pub(crate) fn organisation(key: &str) -> String {
    format!("api/v4/organisations/{key}")
}
/// Endpoint folder of import page `n` (a number, or `last`); page 1 is also
/// `api/v4/import`.
pub(crate) fn import_page(n: &str) -> String {
    format!("api/v4/import/page/{n}")
}
/// Endpoint folder of the listing of a category's services (behaviour.md, "Import and
/// lists"), paged as the import: page 1 in the folder, the others in `<folder>/page/<n>`.
pub(crate) fn category_services(slug: &str) -> String {
    format!("{CATEGORIES_V4}/{slug}/{LISTING}")
}
/// Endpoint folder of the listing of a service area's services, paged as the import.
pub(crate) fn area_services(code: &str) -> String {
    format!("{SERVICE_AREAS_V4}/{code}/{LISTING}")
}
/// The last segment of a listing's folder.
pub(crate) const LISTING: &str = "services";
/// The import's first page, as `/api/v4/import/` without query.
pub(crate) const IMPORT: &str = "api/v4/import";
/// v4 categories.
pub(crate) const CATEGORIES_V4: &str = "api/v4/categories";
/// v4 service areas.
pub(crate) const SERVICE_AREAS_V4: &str = "api/v4/service-areas";
/// v3 categories.
pub(crate) const CATEGORIES_V3: &str = "api/v3/categories";
/// v3 service areas.
pub(crate) const SERVICE_AREAS_V3: &str = "api/v3/service-areas";
/// Endpoint folder of the API root, answered at `/`, `/api` and `/api/` (behaviour.md,
/// "Import and lists").
pub(crate) const ROOT: &str = "api";
/// Canonical path of the v4 search (answered by the search server, not a file).
pub(crate) const SEARCH_V4: &str = "/api/v4/services/";
/// Canonical path of the v3 search (answered by the search server, not a file).
pub(crate) const SEARCH_V3: &str = "/api/v3/search/";
/// Folder of error bodies (`404.json`, `404.html`).
pub(crate) const ERRORS: &str = "_errors";
/// Endpoint folder of the OpenAPI document and its HTML reference page.
pub(crate) const OPENAPI: &str = "api/openapi";
/// The OpenAPI document under its well-known name.
pub(crate) const OPENAPI_FILE: &str = "api/openapi.json";
/// Every service as JSON lines, gzipped.
pub(crate) const SERVICES_NDJSON_GZ: &str = "downloads/services.ndjson.gz";
/// Every location of a published service as GeoJSON (behaviour.md, "The map file").
pub(crate) const LOCATIONS_GEOJSON: &str = "downloads/locations.geojson";
/// The Open Referral UK tabular data package, zipped.
pub(crate) const OPENREFERRAL_ZIP: &str = "downloads/openreferral-uk.zip";
/// The folder of the change record.
pub(crate) const CHANGES: &str = "changes";
/// The change record's state, read back by the next build.
pub(crate) const CHANGES_STATE: &str = "changes/state.json";
