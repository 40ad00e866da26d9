//! The category tree as the profile's taxonomy: the taxonomy, its terms, and the attribute
//! that links a service to a term.

use serde::Serialize;
use uuid::Uuid;

use super::super::ids;
use crate::model::{CategoryIx, Directory, Service};
use crate::views::Publication;

/// A category of a service, as an attribute linking it to a taxonomy term.
#[derive(Debug, Serialize)]
pub(crate) struct AttributeView<'a> {
    /// Derived from the service and the term.
    pub id: Uuid,
    /// The service.
    pub link_id: Uuid,
    /// HSDS core: what `link_id` names.
    pub link_entity: &'static str,
    /// The term.
    pub taxonomy_term_id: Uuid,
    /// The term.
    pub taxonomy_term: TaxonomyTermView<'a>,
}

impl<'a> AttributeView<'a> {
    pub(super) fn new(dir: &'a Directory, publication: &Publication, service: &Service, category: CategoryIx) -> Self {
        let term = TaxonomyTermView::new(dir, publication, category);
        AttributeView {
            id: ids::derived("attribute", &[&service.id.to_string(), &term.id.to_string()]),
            link_id: service.id,
            link_entity: "service",
            taxonomy_term_id: term.id,
            taxonomy_term: term,
        }
    }
}

/// The directory's category tree as one taxonomy.
#[derive(Debug, Serialize)]
pub(crate) struct TaxonomyView<'a> {
    /// [`ids::taxonomy`].
    pub id: Uuid,
    /// Name.
    pub name: &'static str,
    /// Description.
    pub description: &'static str,
    /// The v4 category tree it is.
    pub uri: String,
    /// Every term (the single-taxonomy document only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub taxonomy_terms: Option<Vec<TaxonomyTermView<'a>>>,
}

/// Name of the one taxonomy.
pub(crate) const TAXONOMY_NAME: &str = "Directory categories";

impl<'a> TaxonomyView<'a> {
    /// The taxonomy, with its terms or without.
    pub(crate) fn new(dir: &'a Directory, publication: &Publication, terms: Option<&[(Uuid, CategoryIx)]>) -> Self {
        TaxonomyView {
            id: ids::taxonomy(),
            name: TAXONOMY_NAME,
            description: "The category tree of the directory: the categories services are tagged with.",
            uri: format!("{}/api/v4/categories/", publication.base_url),
            taxonomy_terms: terms
                .map(|terms| terms.iter().map(|&(_, ix)| TaxonomyTermView::new(dir, publication, ix)).collect()),
        }
    }
}

/// A category as a taxonomy term.
#[derive(Debug, Serialize)]
pub(crate) struct TaxonomyTermView<'a> {
    /// Derived from the category's id.
    pub id: Uuid,
    /// Name.
    pub name: &'a str,
    /// The names from the top of the tree down to this one, joined by ` > `.
    pub description: String,
    /// The parent category's term.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<Uuid>,
    /// The taxonomy's name.
    pub taxonomy: &'static str,
    /// The taxonomy.
    pub taxonomy_id: Uuid,
    /// The category's slug.
    pub term: &'a str,
}

impl<'a> TaxonomyTermView<'a> {
    /// Views a category.
    pub(crate) fn new(dir: &'a Directory, _publication: &Publication, ix: CategoryIx) -> Self {
        let tree = &dir.categories;
        let node = &tree.nodes[ix as usize];
        let mut path: Vec<&str> = tree.ancestry(ix).map(|i| tree.nodes[i as usize].name.as_str()).collect();
        path.reverse();
        TaxonomyTermView {
            id: ids::taxonomy_term(node.id),
            name: &node.name,
            description: path.join(" > "),
            parent_id: node.parent.map(|p| ids::taxonomy_term(tree.nodes[p as usize].id)),
            taxonomy: TAXONOMY_NAME,
            taxonomy_id: ids::taxonomy(),
            term: &node.slug,
        }
    }
}
