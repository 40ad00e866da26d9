//! The tabular form of the profile: one table per schema of the profile (`schema/*.json`),
//! its columns the schema's scalar properties in their order, and the Frictionless
//! `datapackage.json` that describes them. Rows come from the same views as the documents,
//! so a value left out of a document is an empty cell here.

use serde_json::{Value, json};

use crate::views::Publication;

/// A column's type in Table Schema terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Text.
    Text,
    /// A UUID (`format: uuid`).
    Uuid,
    /// An email address.
    Email,
    /// A URI.
    Uri,
    /// A number.
    Number,
    /// An RFC 3339 moment (`format: date-time`).
    DateTime,
}

/// One column.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// Property name.
    pub name: &'static str,
    /// Type.
    pub kind: Kind,
    /// Whether the profile requires it (`required`, or `tabular_required`).
    pub required: bool,
    /// The allowed values, if the profile lists them.
    pub values: Option<&'static [&'static str]>,
}

const fn col(name: &'static str, kind: Kind) -> Column {
    Column { name, kind, required: false, values: None }
}

const fn req(name: &'static str, kind: Kind) -> Column {
    Column { name, kind, required: true, values: None }
}

const fn one_of(name: &'static str, required: bool, values: &'static [&'static str]) -> Column {
    Column { name, kind: Kind::Text, required, values: Some(values) }
}

/// A table: the profile's schema name, its CSV file, its columns, and its foreign keys
/// (column, table, column).
#[derive(Debug, Clone, Copy)]
pub struct Table {
    /// Schema name (`service`, ...).
    pub name: &'static str,
    /// File name in the package.
    pub path: &'static str,
    /// Columns in the profile's order.
    pub columns: &'static [Column],
    /// Foreign keys.
    pub foreign_keys: &'static [(&'static str, &'static str)],
}

use Kind::{DateTime, Email, Number, Text, Uri, Uuid};

const LOCATION_TYPES: &[&str] = &["physical", "postal", "virtual"];

/// Every table of the profile, in the profile's `datapackage_metadata.order`.
pub const TABLES: &[Table] = &[
    Table {
        name: "organization",
        path: "organizations.csv",
        columns: &[
            req("id", Uuid),
            req("name", Text),
            req("description", Text),
            col("email", Email),
            col("website", Uri),
            col("logo", Text),
            col("uri", Uri),
            col("parent_organization_id", Uuid),
        ],
        foreign_keys: &[],
    },
    Table {
        name: "service",
        path: "services.csv",
        columns: &[
            req("id", Uuid),
            req("organization_id", Uuid),
            req("name", Text),
            col("description", Text),
            col("url", Uri),
            col("email", Email),
            one_of("status", true, &["active", "inactive", "defunct", "temporarily closed"]),
            col("fees", Text),
            col("accreditations", Text),
            col("minimum_age", Number),
            col("maximum_age", Number),
            col("assured_date", Text),
            col("assurer_email", Email),
            col("alert", Text),
            col("last_modified", DateTime),
        ],
        foreign_keys: &[("organization_id", "organization")],
    },
    Table {
        name: "attribute",
        path: "attribute.csv",
        columns: &[req("id", Uuid), req("link_id", Uuid), req("taxonomy_term_id", Uuid), col("link_type", Text)],
        foreign_keys: &[("taxonomy_term_id", "taxonomy_term")],
    },
    Table {
        name: "service_at_location",
        path: "service_at_location.csv",
        columns: &[req("id", Uuid), req("service_id", Uuid), req("location_id", Uuid)],
        foreign_keys: &[("service_id", "service"), ("location_id", "location")],
    },
    Table {
        name: "location",
        path: "locations.csv",
        columns: &[
            req("id", Uuid),
            one_of("location_type", true, LOCATION_TYPES),
            col("name", Text),
            col("description", Text),
            col("latitude", Number),
            col("longitude", Number),
            col("external_identifier", Text),
            col("external_identifier_type", Text),
        ],
        foreign_keys: &[],
    },
    Table {
        name: "phone",
        path: "phones.csv",
        columns: &[req("id", Uuid), col("contact_id", Uuid), req("number", Text), col("description", Text)],
        foreign_keys: &[("contact_id", "contact")],
    },
    Table {
        name: "contact",
        path: "contacts.csv",
        columns: &[req("id", Uuid), col("service_id", Uuid), col("name", Text), col("title", Text)],
        foreign_keys: &[("service_id", "service")],
    },
    Table {
        name: "address",
        path: "address.csv",
        columns: &[
            req("id", Uuid),
            col("location_id", Uuid),
            col("attention", Text),
            req("address_1", Text),
            req("city", Text),
            col("region", Text),
            req("state_province", Text),
            req("postal_code", Text),
            req("country", Text),
            one_of("address_type", true, LOCATION_TYPES),
        ],
        foreign_keys: &[("location_id", "location")],
    },
    Table {
        name: "schedule",
        path: "schedule.csv",
        columns: &[
            req("id", Uuid),
            col("service_id", Uuid),
            col("service_at_location_id", Uuid),
            col("valid_from", Text),
            col("valid_to", Text),
            col("dtstart", Text),
            one_of("freq", false, &["WEEKLY", "MONTHLY"]),
            col("interval", Number),
            col("byday", Text),
            col("bymonthday", Text),
            col("description", Text),
            col("opens_at", Text),
            col("closes_at", Text),
            col("schedule_link", Uri),
            col("attending_type", Text),
            col("notes", Text),
        ],
        foreign_keys: &[],
    },
    Table {
        name: "funding",
        path: "funding.csv",
        columns: &[req("id", Uuid), col("service_id", Uuid), col("source", Text)],
        foreign_keys: &[],
    },
    Table {
        name: "service_area",
        path: "service_areas.csv",
        columns: &[
            req("id", Uuid),
            col("service_id", Uuid),
            col("name", Text),
            col("extent", Text),
            col("extent_type", Text),
            col("uri", Text),
            col("service_area", Text),
        ],
        foreign_keys: &[("service_id", "service")],
    },
    Table {
        name: "language",
        path: "languages.csv",
        columns: &[req("id", Uuid), col("service_id", Uuid), col("phone_id", Uuid)],
        foreign_keys: &[],
    },
    Table {
        name: "accessibility",
        path: "accessibility.csv",
        columns: &[
            req("id", Uuid),
            col("location_id", Uuid),
            col("description", Text),
            col("details", Text),
            col("url", Uri),
            col("accessibility", Text),
        ],
        foreign_keys: &[],
    },
    Table {
        name: "taxonomy_term",
        path: "taxonomy_terms.csv",
        columns: &[
            req("id", Uuid),
            req("name", Text),
            req("description", Text),
            col("parent_id", Uuid),
            col("taxonomy", Text),
            col("taxonomy_id", Uuid),
            col("term_uri", Uri),
            col("term", Text),
        ],
        foreign_keys: &[("parent_id", "taxonomy_term"), ("taxonomy_id", "taxonomy")],
    },
    Table {
        name: "cost_option",
        path: "cost_options.csv",
        columns: &[
            req("id", Uuid),
            req("service_id", Uuid),
            col("valid_from", Text),
            col("valid_to", Text),
            col("option", Text),
            col("amount", Number),
            col("amount_description", Text),
        ],
        foreign_keys: &[],
    },
    Table {
        name: "organization_identifier",
        path: "organization_identifiers.csv",
        columns: &[
            req("id", Uuid),
            req("organization_id", Uuid),
            col("identifier_scheme", Text),
            req("identifier_type", Text),
            req("identifier", Text),
        ],
        foreign_keys: &[],
    },
    Table {
        name: "taxonomy",
        path: "taxonomies.csv",
        columns: &[req("id", Uuid), req("name", Text), req("description", Text), col("uri", Uri), col("version", Text)],
        foreign_keys: &[],
    },
];

impl Table {
    /// The Table Schema of this table.
    pub fn schema(&self) -> Value {
        let fields: Vec<Value> = self
            .columns
            .iter()
            .map(|c| {
                let (ty, format) = match c.kind {
                    Text => ("string", None),
                    Uuid => ("string", Some("uuid")),
                    Email => ("string", Some("email")),
                    Uri => ("string", Some("uri")),
                    Number => ("number", None),
                    DateTime => ("datetime", None),
                };
                let mut field = json!({ "name": c.name, "type": ty });
                if let Some(format) = format {
                    field["format"] = format.into();
                }
                let mut constraints = serde_json::Map::new();
                if c.required {
                    constraints.insert("required".into(), true.into());
                }
                if c.name == "id" {
                    constraints.insert("unique".into(), true.into());
                }
                if let Some(values) = c.values {
                    constraints.insert("enum".into(), json!(values));
                }
                if !constraints.is_empty() {
                    field["constraints"] = Value::Object(constraints);
                }
                field
            })
            .collect();
        let foreign_keys: Vec<Value> = self
            .foreign_keys
            .iter()
            .map(|(column, table)| {
                // A key into the same table names no resource (Table Schema).
                let resource = if *table == self.name { "" } else { table };
                json!({ "fields": column, "reference": { "resource": resource, "fields": "id" } })
            })
            .collect();
        let mut schema = json!({ "fields": fields, "primaryKey": ["id"] });
        if !foreign_keys.is_empty() {
            schema["foreignKeys"] = Value::Array(foreign_keys);
        }
        schema
    }
}

/// `datapackage.json`.
pub fn datapackage(publication: &Publication) -> Value {
    let resources: Vec<Value> = TABLES
        .iter()
        .map(|t| {
            json!({
                "name": t.name, "path": t.path, "profile": "tabular-data-resource", "format": "csv",
                "mediatype": "text/csv", "encoding": "utf-8", "schema": t.schema(),
            })
        })
        .collect();
    json!({
        "profile": "tabular-data-package",
        "name": "openreferral-uk",
        "title": "The directory in the Open Referral UK profile of HSDS 3.0",
        "description": NEUTRAL_NOTE,
        "homepage": format!("{}/openreferral/", publication.base_url),
        "licenses": [{ "name": "CC-BY-4.0", "path": publication.licence, "title": "Creative Commons Attribution 4.0" }],
        "sources": publication.attribution.iter().map(|a| json!({ "title": a.text, "path": a.url })).collect::<Vec<_>>(),
        "resources": resources,
    })
}

/// What [`datapackage`] says of the cells neutralised against formulas (see `rows.rs`).
pub const NEUTRAL_NOTE: &str = "Text and email cells whose value starts with =, +, -, @, a tab or a carriage return \
    begin with one added single quote ('), so that a spreadsheet shows them as text and never runs them as a \
    formula (OWASP, CSV injection); drop that first quote to get the value the API publishes. Numbers, \
    identifiers, dates and web addresses are as published.";
