//! The API root (`/`, `/api`, `/api/`): `{meta, data}`, `data` a flat object of absolute
//! URLs (behaviour.md, "Import and lists"). No URL templates: the listings by category and
//! by service area are reached from the categories and the service areas.

use serde::Serialize;

use crate::urls::{self as paths, SEARCH_V3 as V3_PATH, SEARCH_V4 as V4_PATH};

/// `data` of the API root: where each part of the API is, from the configured base URL.
/// Every URL answers 200 to a GET except the two searches, which need a postcode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct RootLinks {
    /// The v4 search.
    pub search: String,
    /// The v4 category tree.
    pub categories: String,
    /// The v4 service areas.
    pub service_areas: String,
    /// The import, page 1.
    pub import: String,
    /// The v3 search.
    pub search_v3: String,
    /// The v3 categories.
    pub categories_v3: String,
    /// The v3 service areas.
    pub service_areas_v3: String,
    /// The OpenAPI document.
    pub openapi: String,
    /// Its HTML reference page.
    pub openapi_reference: String,
    /// The root of the Open Referral UK API.
    pub openreferral: String,
    /// Every published service, gzipped NDJSON.
    pub services_download: String,
    /// The Open Referral UK tabular data package.
    pub openreferral_download: String,
    /// Every location of a published service, as GeoJSON (the map file).
    pub locations_download: String,
}

impl RootLinks {
    /// The links under `base_url` (without a trailing slash).
    pub(crate) fn new(base_url: &str) -> RootLinks {
        let folder = |folder: &str| format!("{base_url}/{folder}/");
        let file = |file: &str| format!("{base_url}/{file}");
        RootLinks {
            search: format!("{base_url}{V4_PATH}"),
            categories: folder(paths::CATEGORIES_V4),
            service_areas: folder(paths::SERVICE_AREAS_V4),
            import: folder(paths::IMPORT),
            search_v3: format!("{base_url}{V3_PATH}"),
            categories_v3: folder(paths::CATEGORIES_V3),
            service_areas_v3: folder(paths::SERVICE_AREAS_V3),
            openapi: file(paths::OPENAPI_FILE),
            // The reference page is the HTML view of the document's endpoint.
            openapi_reference: format!("{}?format=api", folder(paths::OPENAPI)),
            openreferral: folder(crate::urls::openreferral::ROOT),
            services_download: file(paths::SERVICES_NDJSON_GZ),
            openreferral_download: file(paths::OPENREFERRAL_ZIP),
            locations_download: file(paths::LOCATIONS_GEOJSON),
        }
    }

    /// Each link with what it is, in the order of `data`, for the front page.
    pub(crate) fn described(&self) -> [(&str, &'static str); 13] {
        [
            (&self.search, "Search services around a postcode (v4)"),
            (&self.categories, "Categories, as a tree (v4)"),
            (&self.service_areas, "Service areas (v4)"),
            (&self.import, "Every published service, in pages (v4.1 import)"),
            (&self.search_v3, "Search services around a postcode (v3)"),
            (&self.categories_v3, "Categories, as a flat list (v3)"),
            (&self.service_areas_v3, "Service areas (v3)"),
            (&self.openapi, "The OpenAPI document"),
            (&self.openapi_reference, "The API reference (the OpenAPI document as a page)"),
            (&self.openreferral, "The directory as an Open Referral UK API"),
            (&self.services_download, "Download: every service, one JSON object a line (gzip)"),
            (&self.openreferral_download, "Download: the Open Referral UK tabular data package (zip)"),
            (&self.locations_download, "Download: every location of a service, for maps (GeoJSON)"),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_link_is_absolute_and_has_no_template() {
        let links = RootLinks::new("https://api.example.org");
        let json = serde_json::to_value(&links).unwrap();
        let map = json.as_object().unwrap();
        assert_eq!(map.len(), links.described().len());
        for ((key, value), (url, _)) in map.iter().zip(links.described()) {
            let value = value.as_str().unwrap();
            assert_eq!(value, url, "{key}: in the order of data");
            assert!(value.starts_with("https://api.example.org/"), "{key}: {value}");
            assert!(!value.contains(['{', '}']), "{key}: {value}");
        }
        assert_eq!(links.search, "https://api.example.org/api/v4/services/");
        assert_eq!(links.openapi_reference, "https://api.example.org/api/openapi/?format=api");
    }
}
