//! v3 shapes: bare arrays, `results` pages, flat categories, numeric area types.

use serde::Serialize;
use uuid::Uuid;

use super::{
    AreaTypeForm, AreaView, CategoryRef, LocationView, ServiceText, area_views, category_refs, location_views,
};
use crate::model::{Directory, Service};

/// The organisation inside a v3 service.
#[derive(Debug, Serialize)]
pub struct OrganisationRefV3<'a> {
    /// Identifier.
    pub id: Uuid,
    /// Name.
    pub name: &'a str,
}

/// A v3 service.
#[derive(Debug, Serialize)]
pub struct ServiceV3<'a> {
    /// Identifier.
    pub id: Uuid,
    /// Who runs it.
    pub organisation: OrganisationRefV3<'a>,
    /// Name and contact fields.
    #[serde(flatten)]
    pub text: ServiceText<'a>,
    /// Tagged categories.
    pub categories: Vec<CategoryRef<'a>>,
    /// Where it is delivered.
    pub locations: Vec<LocationView<'a>>,
    /// Service areas, numeric types.
    pub service_areas: Vec<AreaView<'a>>,
}

impl<'a> ServiceV3<'a> {
    /// Views a service.
    pub fn new(dir: &'a Directory, service: &'a Service) -> Self {
        let org = dir.organisation_of(service);
        ServiceV3 {
            id: service.id,
            organisation: OrganisationRefV3 { id: org.id, name: &org.name },
            text: ServiceText::of(service),
            categories: category_refs(dir, &service.categories),
            locations: location_views(dir, &service.locations),
            service_areas: area_views(dir, &service.service_areas, AreaTypeForm::Numeric),
        }
    }
}

/// A v3 category.
#[derive(Debug, Serialize)]
pub struct CategoryV3<'a> {
    /// Integer id.
    pub id: u32,
    /// Name.
    pub name: &'a str,
    /// Slug.
    pub slug: &'a str,
    /// Parent's id, or null at the top level.
    pub parent: Option<u32>,
}

/// The flat v3 category list, depth-first.
pub fn categories(dir: &Directory) -> Vec<CategoryV3<'_>> {
    let nodes = &dir.categories.nodes;
    nodes
        .iter()
        .map(|n| CategoryV3 { id: n.id, name: &n.name, slug: &n.slug, parent: n.parent.map(|p| nodes[p as usize].id) })
        .collect()
}

/// The v3 service-area list: numeric types.
pub fn service_areas(dir: &Directory) -> Vec<AreaView<'_>> {
    dir.service_areas.iter().map(|a| AreaView::new(a, AreaTypeForm::Numeric)).collect()
}
