//! `components.schemas` of the document: one closed schema per object kind of `src/views`,
//! field for field, and the small JSON Schema builders the document's other parts use too.

use serde_json::{Value, json};

use crate::model::AreaKind;

pub(super) fn r(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

pub(super) fn string() -> Value {
    json!({ "type": "string" })
}

pub(super) fn uuid() -> Value {
    json!({ "type": "string", "format": "uuid" })
}

pub(super) fn url() -> Value {
    json!({ "type": "string", "format": "uri" })
}

pub(super) fn array(items: Value) -> Value {
    json!({ "type": "array", "items": items })
}

/// A closed object: every property required, nothing else allowed.
pub(super) fn object(properties: Value) -> Value {
    let required: Vec<String> = properties.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
    json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false })
}

/// A timestamp with microseconds and the given offset form (behaviour.md).
pub(super) fn timestamp(offset: &str) -> Value {
    json!({ "type": "string", "pattern": format!("^[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}T[0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}\\.[0-9]{{6}}{offset}$") })
}

/// `components.schemas`: one schema per object kind of `src/views`.
pub(crate) fn schemas() -> Value {
    let nullable_url = json!({ "type": ["string", "null"], "format": "uri" });
    let area = |kind: Value| object(json!({ "code": string(), "type": kind, "name": string() }));
    let service_fields = |areas: &str, last_updated: Value| {
        object(json!({
            "id": uuid(), "name": string(), "description": string(), "url": string(), "phone": string(),
            "email": string(), "categories": array(r("CategoryRef")), "service_areas": array(r(areas)),
            "organisation": r("OrganisationRef"), "slug": string(), "directory_url": url(), "permalink": url(),
            "last_updated": last_updated, "locations": array(r("Location")),
        }))
    };
    // The API root's links: one URL per field of the view.
    let root_links: serde_json::Map<String, Value> = serde_json::to_value(crate::views::root::RootLinks::new(""))
        .ok()
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default()
        .into_iter()
        .map(|(key, _)| (key, url()))
        .collect();
    json!({
        "RootResponse": object(json!({ "meta": r("Meta"), "data": object(Value::Object(root_links)) })),
        "Attribution": object(json!({ "text": string(), "url": url() })),
        "Meta": object(json!({ "licence": url(), "attribution": array(r("Attribution")) })),
        "Location": object(json!({
            "id": uuid(), "formatted_address": string(), "name": string(), "description": string(),
            "street_address": string(), "locality": string(), "region": string(), "state": string(),
            "postal_code": string(), "country": { "type": "string", "pattern": "^[A-Z]{2}$" },
            "latitude": { "type": "number", "minimum": -90, "maximum": 90 },
            "longitude": { "type": "number", "minimum": -180, "maximum": 180 },
        })),
        "CategoryRef": object(json!({ "name": string(), "slug": string() })),
        "ServiceArea": area(json!({ "enum": AreaKind::ALL.map(AreaKind::name) })),
        "ServiceAreaNumeric": area(json!({ "type": "string", "enum": ["0", "1", "2", "3", "4"] })),
        "OrganisationRef": object(json!({
            "id": uuid(), "name": string(), "directory_url": url(), "permalink": url(),
            "is_claimed": { "type": "boolean" }, "slug": string(),
        })),
        "Service": service_fields("ServiceArea", timestamp("\\+00:00")),
        "ServiceSingle": service_fields("ServiceAreaNumeric", timestamp("Z")),
        "ServiceSummary": object(json!({
            "id": uuid(), "name": string(), "description": string(), "url": string(), "phone": string(),
            "email": string(), "categories": array(r("CategoryRef")), "service_areas": array(r("ServiceAreaNumeric")),
        })),
        "Organisation": object(json!({
            "id": uuid(), "name": string(), "directory_url": url(), "permalink": url(),
            "is_claimed": { "type": "boolean" }, "slug": string(), "description": string(),
            "facebook": string(), "twitter": string(), "url": string(), "phone": string(), "email": string(),
            "last_edited": timestamp("Z"), "services": array(r("ServiceSummary")), "locations": array(r("Location")),
        })),
        "Category": object(json!({ "name": string(), "slug": string(), "sub_categories": array(r("Category")) })),
        "ServicePage": object(json!({
            "meta": r("Meta"), "count": { "type": "integer", "minimum": 0 }, "next": nullable_url,
            "previous": nullable_url, "data": array(r("Service")),
        })),
        "ServiceResponse": object(json!({ "meta": r("Meta"), "data": r("ServiceSingle") })),
        "OrganisationResponse": object(json!({ "meta": r("Meta"), "data": r("Organisation") })),
        "CategoriesResponse": object(json!({ "meta": r("Meta"), "data": array(r("Category")) })),
        "ServiceAreasResponse": object(json!({ "meta": r("Meta"), "data": array(r("ServiceArea")) })),
        "OrganisationRefV3": object(json!({ "id": uuid(), "name": string() })),
        "ServiceV3": object(json!({
            "id": uuid(), "organisation": r("OrganisationRefV3"), "name": string(), "description": string(),
            "url": string(), "phone": string(), "email": string(), "categories": array(r("CategoryRef")),
            "locations": array(r("Location")), "service_areas": array(r("ServiceAreaNumeric")),
        })),
        "SearchPageV3": object(json!({
            "count": { "type": "integer", "minimum": 0 }, "next": nullable_url, "previous": nullable_url,
            "results": array(r("ServiceV3")),
        })),
        "CategoryV3": object(json!({
            "id": { "type": "integer", "minimum": 1 }, "name": string(), "slug": string(),
            "parent": { "type": ["integer", "null"], "minimum": 1 },
        })),
        "CategoriesV3": array(r("CategoryV3")),
        "ServiceAreasV3": array(r("ServiceAreaNumeric")),
        "Detail": object(json!({ "detail": string() })),
        "ChangeDiff": object(json!({ "added": array(uuid()), "changed": array(uuid()), "removed": array(uuid()) })),
        "ChangeEntry": object(json!({
            "id": { "type": "string", "pattern": "^[0-9a-f]{32}$" },
            "previous": { "type": ["string", "null"], "pattern": "^[0-9a-f]{32}$" },
            "data_time": { "type": ["string", "null"], "format": "date-time" },
            "services": r("ChangeDiff"),
            "organisations": r("ChangeDiff"),
        })),
        "ChangesPage": object(json!({ "builds": array(r("ChangeEntry")), "next": nullable_url })),
        "ChangesState": object(json!({
            "build": { "type": ["string", "null"], "pattern": "^[0-9a-f]{32}$" },
            "services": { "type": "object", "propertyNames": { "format": "uuid" }, "additionalProperties": string() },
            "organisations": { "type": "object", "propertyNames": { "format": "uuid" }, "additionalProperties": string() },
        })),
        // The map file (behaviour.md, "The map file"): RFC 7946, closed as the views are.
        "LocationsGeoJson": locations_geojson(),
        "BadRequestBody": { "anyOf": [r("ValidationError"), r("Detail")] },
        "ValidationError": {
            "type": "object",
            "description": "Each bad query parameter mapped to its messages, e.g. {\"postcode\": [\"This field is required.\"]}.",
            "minProperties": 1,
            "additionalProperties": array(string()),
        },
    })
}

/// The map file's schema: a FeatureCollection of Points (longitude, latitude) whose
/// properties are the location's and its published services'.
fn locations_geojson() -> Value {
    // One schema for both numbers, not `prefixItems`: schemathesis (the contract test) reads
    // `prefixItems` as the old array form of `items`, which OpenAPI 3.1 refuses.
    let coordinates = json!({
        "type": "array", "minItems": 2, "maxItems": 2,
        "description": "Longitude (-180 to 180), then latitude (-90 to 90).",
        "items": { "type": "number", "minimum": -180, "maximum": 180 },
    });
    let geometry = object(json!({ "type": { "const": "Point" }, "coordinates": coordinates }));
    let service = object(json!({ "id": uuid(), "name": string(), "slug": string() }));
    let properties = object(json!({
        "id": uuid(), "name": string(), "formatted_address": string(), "postal_code": string(),
        "services": array(service),
    }));
    let feature = object(json!({ "type": { "const": "Feature" }, "geometry": geometry, "properties": properties }));
    object(json!({ "type": { "const": "FeatureCollection" }, "features": array(feature) }))
}
