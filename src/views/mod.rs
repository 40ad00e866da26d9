//! Response shapes per API version, as borrowed `Serialize` views over the model.
//!
//! Every JSON body the project serves, static or searched, is one of these views
//! serialised with serde_json, so the build and the search server cannot disagree on a
//! shape. The views own no logic beyond choosing fields and their forms (api-spec.md,
//! behaviour.md "Timestamps and shapes").

pub(crate) mod root;
pub mod v3;
pub mod v4;

use serde::{Deserialize, Serialize};

use crate::model::{AreaKind, Directory, Location, Service, ServiceArea};

/// A credit statement for a data source (`meta.attribution`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attribution {
    /// Credit statement.
    pub text: String,
    /// Link to the source.
    pub url: String,
}

/// Where and under which terms the responses are published: build configuration,
/// recorded in the search index so that search answers say the same as the files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Publication {
    /// Public origin of the API, without a trailing slash.
    pub base_url: String,
    /// Origin of the directory site used in `directory_url` and `permalink`.
    pub site_url: String,
    /// `meta.licence`.
    pub licence: String,
    /// The four attribution entries (behaviour.md, Attribution), in order. Service areas
    /// carry the first two, categories none.
    pub attribution: Vec<Attribution>,
}

impl Publication {
    /// The default licence and attribution entries of behaviour.md.
    pub fn with_defaults(base_url: String, site_url: String) -> Publication {
        let entry = |text: &str, url: &str| Attribution { text: text.to_owned(), url: url.to_owned() };
        Publication {
            base_url,
            site_url,
            licence: "https://creativecommons.org/licenses/by/4.0/".to_owned(),
            attribution: vec![
                entry(
                    "Contains National Statistics data © Crown copyright and database right 2018",
                    "http://geoportal.statistics.gov.uk/datasets/local-authority-districts-december-2016-generalised-clipped-boundaries-in-the-uk/",
                ),
                entry(
                    "Contains information from the Scottish Charity Register supplied by the Office of the Scottish Charity Regulator and licensed under the Open Government Licence v2.0",
                    "https://www.oscr.org.uk/about-charities/search-the-register/charity-register-download",
                ),
                entry(
                    "Contains National Records of Scotland data licensed under the Open Government Licence v3.0",
                    "https://www.nrscotland.gov.uk/statistics-and-data/geography/nrs-postcode-extract",
                ),
                entry("Contains contributions from ALISS users", "https://www.aliss.org/terms-and-conditions"),
            ],
        }
    }

    /// `meta` with every attribution entry (search, services, organisations, import).
    pub(crate) fn meta_full(&self) -> Meta<'_> {
        Meta { licence: &self.licence, attribution: &self.attribution }
    }

    /// `meta` of the service-areas list: the first two entries.
    pub(crate) fn meta_areas(&self) -> Meta<'_> {
        Meta { licence: &self.licence, attribution: &self.attribution[..self.attribution.len().min(2)] }
    }

    /// `meta` of the categories list: no attribution.
    pub(crate) fn meta_none(&self) -> Meta<'_> {
        Meta { licence: &self.licence, attribution: &[] }
    }

    /// `{site_url}/services/{key}/`.
    pub fn service_url(&self, key: &str) -> String {
        format!("{}/services/{key}/", self.site_url)
    }

    /// `{site_url}/organisations/{key}/`.
    pub(crate) fn organisation_url(&self, key: &str) -> String {
        format!("{}/organisations/{key}/", self.site_url)
    }
}

/// The `meta` block.
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct Meta<'a> {
    /// Licence URL.
    pub licence: &'a str,
    /// Attribution entries.
    pub attribution: &'a [Attribution],
}

/// How a service area's `type` is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AreaTypeForm {
    /// `Local Authority`, ...: v4 lists and search results.
    Name,
    /// `2`, ...: v3, single service, an organisation's services.
    Numeric,
}

/// A service area.
#[derive(Debug, Clone, Serialize)]
pub struct AreaView<'a> {
    /// Code.
    pub code: &'a str,
    /// Type, as a name or a numeric string.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Name.
    pub name: &'a str,
}

impl<'a> AreaView<'a> {
    /// Views an area with its type in the given form.
    pub fn new(area: &'a ServiceArea, form: AreaTypeForm) -> AreaView<'a> {
        AreaView { code: &area.code, kind: kind_form(area.kind, form), name: &area.name }
    }
}

fn kind_form(kind: AreaKind, form: AreaTypeForm) -> &'static str {
    match form {
        AreaTypeForm::Name => kind.name(),
        AreaTypeForm::Numeric => kind.numeric(),
    }
}

/// The name and free-text contact fields of a service, in the order every version writes
/// them; flattened into each version's service shape.
#[derive(Debug, Clone, Serialize)]
pub struct ServiceText<'a> {
    /// Name.
    pub name: &'a str,
    /// Description.
    pub description: &'a str,
    /// Web site.
    pub url: &'a str,
    /// Telephone.
    pub phone: &'a str,
    /// Email.
    pub email: &'a str,
}

impl<'a> ServiceText<'a> {
    /// The fields of `service`.
    pub fn of(service: &'a Service) -> Self {
        ServiceText {
            name: &service.name,
            description: &service.description,
            url: &service.contact.url,
            phone: &service.contact.phone,
            email: &service.contact.email,
        }
    }
}

/// A location (same shape in every version).
#[derive(Debug, Clone, Serialize)]
pub struct LocationView<'a> {
    /// Identifier.
    pub id: uuid::Uuid,
    /// Derived address line.
    pub formatted_address: String,
    /// Name, or empty.
    pub name: &'a str,
    /// Description, or empty.
    pub description: &'a str,
    /// Street address.
    pub street_address: &'a str,
    /// Town.
    pub locality: &'a str,
    /// Region, or empty.
    pub region: &'a str,
    /// State, or empty.
    pub state: &'a str,
    /// Postcode.
    pub postal_code: &'a str,
    /// Country code.
    pub country: &'a str,
    /// Latitude.
    pub latitude: f64,
    /// Longitude.
    pub longitude: f64,
}

impl<'a> LocationView<'a> {
    /// Views a location.
    pub fn new(location: &'a Location) -> LocationView<'a> {
        LocationView {
            id: location.id,
            formatted_address: location.formatted_address(),
            name: &location.name,
            description: &location.description,
            street_address: &location.street_address,
            locality: &location.locality,
            region: &location.region,
            state: &location.state,
            postal_code: &location.postal_code,
            country: &location.country,
            latitude: location.point.lat,
            longitude: location.point.lon,
        }
    }
}

/// `{name, slug}` of a category a service is tagged with.
#[derive(Debug, Clone, Serialize)]
pub struct CategoryRef<'a> {
    /// Name.
    pub name: &'a str,
    /// Slug.
    pub slug: &'a str,
}

pub(crate) fn category_refs<'a>(dir: &'a Directory, ixs: &[crate::model::CategoryIx]) -> Vec<CategoryRef<'a>> {
    ixs.iter()
        .map(|&ix| {
            let node = &dir.categories.nodes[ix as usize];
            CategoryRef { name: &node.name, slug: &node.slug }
        })
        .collect()
}

pub(crate) fn area_views<'a>(
    dir: &'a Directory,
    ixs: &[crate::model::AreaIx],
    form: AreaTypeForm,
) -> Vec<AreaView<'a>> {
    ixs.iter().map(|&ix| AreaView::new(&dir.service_areas[ix as usize], form)).collect()
}

pub(crate) fn location_views<'a>(dir: &'a Directory, ixs: &[crate::model::LocationIx]) -> Vec<LocationView<'a>> {
    ixs.iter().map(|&ix| LocationView::new(&dir.locations[ix])).collect()
}
