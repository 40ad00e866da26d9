//! The core section's own serialised shape: what the file stores, apart from the model and
//! the views, so that a field added to [`crate::model`] or [`Publication`] cannot change the
//! file format unnoticed (issue 22). Every struct here is written with postcard, field by
//! field in declaration order: changing one changes the bytes, and [`super::FORMAT_VERSION`]
//! goes up with it (the test `the_stored_shape_is_pinned_to_the_format_version` says when).

use serde::de::{Error as _, IgnoredAny};
use serde::ser::SerializeSeq as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::LocationNo;
use super::csr::Csr;
use super::postcodes::PostcodeTable;
use super::text::TextIndex;
use crate::model::{AreaIx, AreaKind, Category, CategoryIx, CategoryTree, Directory, Point, ServiceArea};
use crate::views::{Attribution, Publication};

/// The core section: what is decoded at start-up. Flat tables only (no vector or string
/// per record), so that decoding it is a few large copies.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Core {
    pub(super) publication: StoredPublication,
    pub(super) reference: StoredReference,
    pub(super) postcodes: PostcodeTable,
    pub(super) text: TextIndex,
    pub(super) services: StoredServices,
    #[serde(with = "super::packed")]
    pub(super) location_points: Vec<Point>,
    /// The postcodes' districts and sectors ([`PostcodeTable::outcodes`]).
    pub(super) outcodes: PostcodeTable,
}

/// What the index keeps of the services besides their rendered results, one table per
/// field (service `ix` is key `ix` of each).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct StoredServices {
    pub(super) areas: Csr<AreaIx>,
    pub(super) categories: Csr<CategoryIx>,
    pub(super) locations: Csr<LocationNo>,
    /// Position in (name, id) order: the last two keys of Search 7 as one integer.
    #[serde(with = "super::packed")]
    pub(super) name_rank: Vec<u32>,
}

impl StoredServices {
    /// Number of services.
    pub(super) fn len(&self) -> usize {
        self.name_rank.len()
    }
}

/// [`Publication`] as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct StoredPublication {
    base_url: String,
    site_url: String,
    licence: String,
    attribution: Vec<(String, String)>,
}

impl StoredPublication {
    pub(super) fn of(publication: &Publication) -> StoredPublication {
        let Publication { base_url, site_url, licence, attribution } = publication.clone();
        let attribution = attribution.into_iter().map(|a| (a.text, a.url)).collect();
        StoredPublication { base_url, site_url, licence, attribution }
    }

    pub(super) fn into_publication(self) -> Publication {
        let StoredPublication { base_url, site_url, licence, attribution } = self;
        let attribution = attribution.into_iter().map(|(text, url)| Attribution { text, url }).collect();
        Publication { base_url, site_url, licence, attribution }
    }
}

/// What requests are checked against: the category tree and the service areas. Format 4
/// wrote the model's `Directory` here with its records emptied, and these bytes are that
/// format's: the three empty lists before the categories (organisations, services,
/// locations) and the one after the areas (postcodes) are written as such.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct StoredReference {
    organisations: NoRecords,
    services: NoRecords,
    locations: NoRecords,
    pub(super) categories: Vec<StoredCategory>,
    pub(super) roots: Vec<CategoryIx>,
    pub(super) areas: Vec<StoredArea>,
    postcodes: NoRecords,
}

/// One node of the category tree as stored (the model's [`Category`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct StoredCategory {
    id: u32,
    name: String,
    slug: String,
    pub(super) parent: Option<CategoryIx>,
    pub(super) children: Vec<CategoryIx>,
    pub(super) subtree_end: CategoryIx,
}

/// A service area as stored: its kind as the number of [`AreaKind::ALL`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct StoredArea {
    code: String,
    pub(super) kind: u8,
    name: String,
}

impl StoredReference {
    pub(super) fn of(dir: &Directory) -> StoredReference {
        let node = |c: &Category| StoredCategory {
            id: c.id,
            name: c.name.clone(),
            slug: c.slug.clone(),
            parent: c.parent,
            children: c.children.clone(),
            subtree_end: c.subtree_end,
        };
        let area = |a: &ServiceArea| StoredArea {
            code: a.code.clone(),
            kind: AreaKind::ALL.iter().position(|&k| k == a.kind).expect("every kind is in ALL") as u8,
            name: a.name.clone(),
        };
        StoredReference {
            organisations: NoRecords,
            services: NoRecords,
            locations: NoRecords,
            categories: dir.categories.nodes.iter().map(node).collect(),
            roots: dir.categories.roots.clone(),
            areas: dir.service_areas.iter().map(area).collect(),
            postcodes: NoRecords,
        }
    }

    /// The model's tree and areas; `None` for an area kind that does not exist.
    pub(super) fn into_model(self) -> Option<(CategoryTree, Vec<ServiceArea>)> {
        let nodes = self
            .categories
            .into_iter()
            .map(|c| Category {
                id: c.id,
                name: c.name,
                slug: c.slug,
                parent: c.parent,
                children: c.children,
                subtree_end: c.subtree_end,
            })
            .collect();
        let areas = self
            .areas
            .into_iter()
            .map(|a| Some(ServiceArea { code: a.code, kind: *AreaKind::ALL.get(a.kind as usize)?, name: a.name }))
            .collect::<Option<Vec<_>>>()?;
        Some((CategoryTree { nodes, roots: self.roots }, areas))
    }
}

/// An empty list that format 4 keeps in place (see [`StoredReference`]): written as an
/// empty sequence, read back only as one.
#[derive(Debug, Clone, Copy, PartialEq)]
struct NoRecords;

impl Serialize for NoRecords {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_seq(Some(0))?.end()
    }
}

impl<'de> Deserialize<'de> for NoRecords {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<NoRecords, D::Error> {
        if Vec::<IgnoredAny>::deserialize(deserializer)?.is_empty() {
            Ok(NoRecords)
        } else {
            Err(D::Error::custom("a list the index keeps empty is not empty"))
        }
    }
}
