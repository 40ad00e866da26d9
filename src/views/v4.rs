//! v4 and v4.1 shapes: envelopes, services, organisations, categories, service areas.

use serde::Serialize;
use uuid::Uuid;

use super::{
    AreaTypeForm, AreaView, CategoryRef, LocationView, Meta, Publication, ServiceText, area_views, category_refs,
    location_views,
};
use crate::model::{CategoryIx, Directory, Organisation, Service};

/// `{meta, data}`.
#[derive(Debug, Serialize)]
pub(crate) struct Envelope<'a, T> {
    /// Licence and attribution.
    pub meta: Meta<'a>,
    /// The resource or list.
    pub data: T,
}

/// `{meta, count, next, previous, data}`: search pages and import pages.
#[derive(Debug, Serialize)]
pub(crate) struct PagedEnvelope<'a, T> {
    /// Licence and attribution.
    pub meta: Meta<'a>,
    /// Total number of results over all pages.
    pub count: usize,
    /// Absolute URL of the next page.
    pub next: Option<String>,
    /// Absolute URL of the previous page.
    pub previous: Option<String>,
    /// This page's results.
    pub data: T,
}

/// Where a service is shown, which decides two forms (behaviour.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceContext {
    /// Search and import: `+00:00` timestamps, area type names.
    List,
    /// The single-service response: `Z` timestamps, numeric area types.
    Single,
}

/// The organisation embedded in a v4 service.
#[derive(Debug, Serialize)]
pub struct OrganisationRef<'a> {
    /// Identifier.
    pub id: Uuid,
    /// Name.
    pub name: &'a str,
    /// Human-facing page.
    pub directory_url: String,
    /// Permanent address.
    pub permalink: String,
    /// Claimed by a representative.
    pub is_claimed: bool,
    /// Slug.
    pub slug: &'a str,
}

impl<'a> OrganisationRef<'a> {
    /// The reference to `org`.
    pub fn of(publication: &Publication, org: &'a Organisation) -> Self {
        OrganisationRef {
            id: org.id,
            name: &org.name,
            directory_url: publication.organisation_url(&org.slug),
            permalink: publication.organisation_url(&org.id.to_string()),
            is_claimed: org.is_claimed,
            slug: &org.slug,
        }
    }
}

/// A v4 service (with `locations`, as v4.1 serves it).
#[derive(Debug, Serialize)]
pub struct ServiceView<'a> {
    /// Identifier.
    pub id: Uuid,
    /// Name and contact fields.
    #[serde(flatten)]
    pub text: ServiceText<'a>,
    /// Tagged categories.
    pub categories: Vec<CategoryRef<'a>>,
    /// Service areas.
    pub service_areas: Vec<AreaView<'a>>,
    /// Who runs it.
    pub organisation: OrganisationRef<'a>,
    /// Slug.
    pub slug: &'a str,
    /// Human-facing page.
    pub directory_url: String,
    /// Permanent address.
    pub permalink: String,
    /// Last edit, in the context's form.
    pub last_updated: String,
    /// Where it is delivered.
    pub locations: Vec<LocationView<'a>>,
}

impl<'a> ServiceView<'a> {
    /// Views a service in a context.
    pub fn new(dir: &'a Directory, publication: &Publication, service: &'a Service, context: ServiceContext) -> Self {
        let org = dir.organisation_of(service);
        let (form, last_updated) = match context {
            ServiceContext::List => (AreaTypeForm::Name, service.last_updated.list_form()),
            ServiceContext::Single => (AreaTypeForm::Numeric, service.last_updated.single_form()),
        };
        ServiceView {
            id: service.id,
            text: ServiceText::of(service),
            categories: category_refs(dir, &service.categories),
            service_areas: area_views(dir, &service.service_areas, form),
            organisation: OrganisationRef::of(publication, org),
            slug: &service.slug,
            directory_url: publication.service_url(&service.slug),
            permalink: publication.service_url(&service.id.to_string()),
            last_updated,
            locations: location_views(dir, &service.locations),
        }
    }
}

/// A service inside the single-organisation response.
#[derive(Debug, Serialize)]
pub(crate) struct ServiceSummary<'a> {
    /// Identifier.
    pub id: Uuid,
    /// Name and contact fields.
    #[serde(flatten)]
    pub text: ServiceText<'a>,
    /// Tagged categories.
    pub categories: Vec<CategoryRef<'a>>,
    /// Service areas, numeric types.
    pub service_areas: Vec<AreaView<'a>>,
}

/// The single-organisation response's `data`.
#[derive(Debug, Serialize)]
pub(crate) struct OrganisationView<'a> {
    /// Id, name, links, claim and slug, as a service embeds them.
    #[serde(flatten)]
    pub reference: OrganisationRef<'a>,
    /// Description.
    pub description: &'a str,
    /// Social page.
    pub facebook: &'a str,
    /// Social handle.
    pub twitter: &'a str,
    /// Web site.
    pub url: &'a str,
    /// Telephone.
    pub phone: &'a str,
    /// Email.
    pub email: &'a str,
    /// Last edit, `Z` form.
    pub last_edited: String,
    /// Its services.
    pub services: Vec<ServiceSummary<'a>>,
    /// Its locations (behaviour.md).
    pub locations: Vec<LocationView<'a>>,
}

impl<'a> OrganisationView<'a> {
    /// Views an organisation.
    pub(crate) fn new(dir: &'a Directory, publication: &Publication, org: &'a Organisation) -> Self {
        OrganisationView {
            reference: OrganisationRef::of(publication, org),
            description: &org.description,
            facebook: &org.facebook,
            twitter: &org.twitter,
            url: &org.contact.url,
            phone: &org.contact.phone,
            email: &org.contact.email,
            last_edited: org.last_edited.single_form(),
            services: org
                .services
                .iter()
                .map(|&ix| {
                    let s = &dir.services[ix];
                    ServiceSummary {
                        id: s.id,
                        text: ServiceText::of(s),
                        categories: category_refs(dir, &s.categories),
                        service_areas: area_views(dir, &s.service_areas, AreaTypeForm::Numeric),
                    }
                })
                .collect(),
            locations: location_views(dir, &org.locations),
        }
    }
}

/// A node of the v4 category tree.
#[derive(Debug, Serialize)]
pub(crate) struct CategoryNode<'a> {
    /// Name.
    pub name: &'a str,
    /// Slug.
    pub slug: &'a str,
    /// Children, empty for a leaf.
    pub sub_categories: Vec<CategoryNode<'a>>,
}

/// The v4 category tree, top level first.
pub(crate) fn category_tree(dir: &Directory) -> Vec<CategoryNode<'_>> {
    fn node(dir: &Directory, ix: CategoryIx) -> CategoryNode<'_> {
        let n = &dir.categories.nodes[ix as usize];
        CategoryNode {
            name: &n.name,
            slug: &n.slug,
            sub_categories: n.children.iter().map(|&c| node(dir, c)).collect(),
        }
    }
    dir.categories.roots.iter().map(|&ix| node(dir, ix)).collect()
}

/// The v4 service-area list: type names.
pub fn service_areas(dir: &Directory) -> Vec<AreaView<'_>> {
    dir.service_areas.iter().map(|a| AreaView::new(a, AreaTypeForm::Name)).collect()
}
