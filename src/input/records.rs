//! Serde mirrors of the dataset files, one struct per line kind (input-format.md).
//!
//! No logic lives here: unknown fields are rejected by `deny_unknown_fields`, except the
//! `x_` extension fields, which are collected into `extra` and never reach any output.
//! The same structs are serialised by `svcdir sample`, so the generator and the loader
//! cannot disagree on the format.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Fields whose names start with `x_`: kept out of every output.
pub(crate) type Extensions = BTreeMap<String, serde_json::Value>;

/// One line of `organisations.jsonl`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OrganisationRecord {
    /// Identifier.
    pub id: Uuid,
    /// Display name; not empty after trimming.
    pub name: String,
    /// Optional given slug; generated from the name when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slug: Option<String>,
    /// Free text, may hold CR LF.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Web site.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub url: String,
    /// Telephone, free format.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub phone: String,
    /// Email address.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub email: String,
    /// Social page URL.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub facebook: String,
    /// Social handle or URL.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub twitter: String,
    /// Claimed by a representative of the organisation.
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_claimed: bool,
    /// Unpublished organisations and all their services appear in no output.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub published: bool,
    /// RFC 3339 timestamp of the last edit.
    pub last_edited: String,
    /// `x_` extension fields.
    #[serde(flatten, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: Extensions,
}

/// One line of `locations.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocationRecord {
    /// Identifier.
    pub id: Uuid,
    /// The organisation that owns the location.
    pub organisation_id: Uuid,
    /// Optional name of the place.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Optional description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Street address.
    pub street_address: String,
    /// Town or city.
    pub locality: String,
    /// Optional region.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub region: String,
    /// Optional state.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub state: String,
    /// Postcode as written by the editor.
    pub postal_code: String,
    /// Two-letter country code, default `GB`.
    #[serde(default = "default_country")]
    pub country: String,
    /// Decimal degrees.
    pub latitude: f64,
    /// Decimal degrees.
    pub longitude: f64,
    /// `x_` extension fields.
    #[serde(flatten, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: Extensions,
}

/// One line of `services.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServiceRecord {
    /// Identifier.
    pub id: Uuid,
    /// The organisation that runs the service.
    pub organisation_id: Uuid,
    /// Display name; not empty.
    pub name: String,
    /// Optional given slug; generated from the name when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slug: Option<String>,
    /// Free text, may hold CR LF.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Web site.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub url: String,
    /// Telephone, free format.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub phone: String,
    /// Email address.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub email: String,
    /// Category slugs, at any level of the tree.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    /// Service-area codes from `service_areas.json`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub service_areas: Vec<String>,
    /// Locations of the same organisation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub location_ids: Vec<Uuid>,
    /// Unpublished services appear in no output.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub published: bool,
    /// RFC 3339 timestamp of the last edit.
    pub last_updated: String,
    /// `x_` extension fields.
    #[serde(flatten, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: Extensions,
}

/// One node of `categories.json` (the v4 tree shape, plus an optional v3 `id`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CategoryRecord {
    /// The v3 integer id; assigned when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u32>,
    /// Human-readable name.
    pub name: String,
    /// Slug, unique in the tree.
    pub slug: String,
    /// Children, possibly empty.
    #[serde(default)]
    pub sub_categories: Vec<CategoryRecord>,
}

/// One entry of `service_areas.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceAreaRecord {
    /// Area code, e.g. `S12000033` or `XS`.
    pub code: String,
    /// One of the names of [`crate::model::AreaKind`] (`Country`, `Local Authority`, ...).
    #[serde(rename = "type")]
    pub kind: String,
    /// Display name.
    pub name: String,
}

fn yes() -> bool {
    true
}
fn is_true(b: &bool) -> bool {
    *b
}
fn is_false(b: &bool) -> bool {
    !*b
}
fn default_country() -> String {
    "GB".to_owned()
}
