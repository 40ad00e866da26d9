//! The directory as one immutable, resolved model: the single source for every renderer
//! and for the search index.
//!
//! Built by [`crate::validate`] from a loaded dataset; holds only published records,
//! sorted by id, with references resolved to indices. It owns no I/O and no output shapes
//! (those are in `views`).

pub(crate) mod category;
pub(crate) mod geo;
mod ix;
pub(crate) mod slug;
pub(crate) mod timestamp;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

pub use category::Category;
pub(crate) use category::CategoryTree;
pub use geo::{Point, Postcode, PostcodeDirectory};
pub use ix::{LocationIx, OrgIx, ServiceIx};
pub use timestamp::Timestamp;

/// Index of a category in [`CategoryTree::nodes`].
pub(crate) type CategoryIx = u16;
/// Index of a service area in [`Directory::service_areas`].
pub(crate) type AreaIx = u16;

/// The whole published directory. Not serialisable: outputs go through `views`, and the
/// search index stores its own types (`index/stored.rs`).
#[derive(Debug, Clone)]
pub struct Directory {
    /// Published organisations, sorted by id.
    pub organisations: Vec<Organisation>,
    /// Published services of published organisations, sorted by id.
    pub services: Vec<Service>,
    /// Locations of published organisations, sorted by id.
    pub locations: Vec<Location>,
    /// The category tree.
    pub categories: CategoryTree,
    /// The fixed list of service areas, in input order.
    pub service_areas: Vec<ServiceArea>,
    /// Every live postcode, for search.
    pub postcodes: PostcodeDirectory,
}

/// An organisation that runs services.
#[derive(Debug, Clone, Default)]
pub struct Organisation {
    /// Identifier.
    pub id: Uuid,
    /// Display name.
    pub name: String,
    /// Given or generated slug.
    pub slug: String,
    /// Free text.
    pub description: String,
    /// How to reach it.
    pub contact: Contact,
    /// Social page, or empty.
    pub facebook: String,
    /// Social handle, or empty.
    pub twitter: String,
    /// Claimed by a representative.
    pub is_claimed: bool,
    /// Last edit.
    pub last_edited: Timestamp,
    /// Its published services, in id order.
    pub services: Vec<ServiceIx>,
    /// Its locations, in id order.
    pub locations: Vec<LocationIx>,
}

/// How to reach an organisation or a service: each as given, or empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Contact {
    /// Web site, or empty.
    pub url: String,
    /// Telephone, or empty.
    pub phone: String,
    /// Email, or empty.
    pub email: String,
}

impl Contact {
    /// The contact of a record's three fields.
    pub fn of(url: &str, phone: &str, email: &str) -> Contact {
        Contact { url: url.to_owned(), phone: phone.to_owned(), email: email.to_owned() }
    }
}

/// A published service.
#[derive(Debug, Clone)]
pub struct Service {
    /// Identifier.
    pub id: Uuid,
    /// The organisation that runs it.
    pub organisation: OrgIx,
    /// Display name.
    pub name: String,
    /// Given or generated slug.
    pub slug: String,
    /// Free text, may hold CR LF.
    pub description: String,
    /// How to reach it.
    pub contact: Contact,
    /// Tagged categories, in input order.
    pub categories: Vec<CategoryIx>,
    /// Service areas, in input order.
    pub service_areas: Vec<AreaIx>,
    /// Locations, in input order.
    pub locations: Vec<LocationIx>,
    /// Last edit.
    pub last_updated: Timestamp,
}

/// A place where services are delivered, owned by an organisation.
#[derive(Debug, Clone)]
pub struct Location {
    /// Identifier.
    pub id: Uuid,
    /// Owner.
    pub organisation: OrgIx,
    /// Name, or empty.
    pub name: String,
    /// Description, or empty.
    pub description: String,
    /// Street address.
    pub street_address: String,
    /// Town or city.
    pub locality: String,
    /// Region, or empty.
    pub region: String,
    /// State, or empty.
    pub state: String,
    /// Postcode as given.
    pub postal_code: String,
    /// Two-letter country code.
    pub country: String,
    /// Where it is.
    pub point: Point,
}

impl Location {
    /// Name, street address, locality, postal code and state: the non-empty ones, joined
    /// by `", "` (input-format.md; derived, never read).
    pub fn formatted_address(&self) -> String {
        [&self.name, &self.street_address, &self.locality, &self.postal_code, &self.state]
            .iter()
            .filter(|part| !part.is_empty())
            .map(|part| part.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One entry of the fixed list of service areas.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceArea {
    /// Area code.
    pub code: String,
    /// Kind of area.
    pub kind: AreaKind,
    /// Display name.
    pub name: String,
}

/// Kinds of service area, in the order of their numeric v3 codes `0`..`4`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AreaKind {
    /// `0`.
    Country,
    /// `1`.
    Region,
    /// `2`.
    LocalAuthority,
    /// `3`.
    HealthBoard,
    /// `4`.
    IntegrationAuthority,
}

impl AreaKind {
    /// Every kind, in numeric-code order.
    pub(crate) const ALL: [AreaKind; 5] = [
        AreaKind::Country,
        AreaKind::Region,
        AreaKind::LocalAuthority,
        AreaKind::HealthBoard,
        AreaKind::IntegrationAuthority,
    ];

    /// The name used in v4 lists and search results.
    pub fn name(self) -> &'static str {
        match self {
            AreaKind::Country => "Country",
            AreaKind::Region => "Region",
            AreaKind::LocalAuthority => "Local Authority",
            AreaKind::HealthBoard => "Health Board",
            AreaKind::IntegrationAuthority => "Integration Authority (HSCP)",
        }
    }

    /// The numeric string used in v3 and in single-resource responses.
    pub fn numeric(self) -> &'static str {
        match self {
            AreaKind::Country => "0",
            AreaKind::Region => "1",
            AreaKind::LocalAuthority => "2",
            AreaKind::HealthBoard => "3",
            AreaKind::IntegrationAuthority => "4",
        }
    }

    /// Parses the name form.
    pub(crate) fn from_name(name: &str) -> Option<AreaKind> {
        AreaKind::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// Country and Region areas make a service "national" (behaviour.md, Search 6).
    pub(crate) fn is_national(self) -> bool {
        matches!(self, AreaKind::Country | AreaKind::Region)
    }
}

impl Directory {
    /// The organisation that runs `service`.
    pub fn organisation_of(&self, service: &Service) -> &Organisation {
        &self.organisations[service.organisation]
    }
}
