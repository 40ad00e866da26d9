//! The Open Referral UK profile's OpenAPI document as this publication answers it, published
//! at `public/openreferral/openapi.json` with `servers` at `{base_url}/openreferral`.
//!
//! The paths, operation ids and response schemas are the profile's (`schema/openapi.json`
//! of OpenReferralUK/uk-profile, whose compiled schemas the responses reference by their
//! canonical URLs); the parameters are what static files answer: `page` on the lists and
//! nothing else (no `search`, `per_page` or filters). `/organizations` comes from HSDS core.

use serde_json::{Value, json};

/// Where the profile's schemas are published (the `$ref`s of the profile's own document).
const SCHEMAS: &str = "https://raw.githubusercontent.com/openreferral/uk-profile/main/schema";

fn schema(name: &str) -> Value {
    json!({ "$ref": format!("{SCHEMAS}/{name}.json") })
}

fn ok(description: &str, schema: Value) -> Value {
    json!({
        "200": { "description": description, "content": { "application/json": { "schema": schema } } },
        "404": {
            "description": "No such object, or a page past the end.",
            "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Detail" } } }
        }
    })
}

fn list(id: &str, summary: &str, item: &str) -> Value {
    json!({ "get": {
        "operationId": id,
        "summary": summary,
        "parameters": [{ "$ref": "#/components/parameters/page" }],
        "responses": ok(summary, json!({
            "allOf": [{ "$ref": "#/components/schemas/Page" }],
            "properties": { "contents": { "type": "array", "items": schema(item) } }
        })),
    }})
}

fn single(id: &str, summary: &str, object: &str) -> Value {
    json!({ "get": {
        "operationId": id,
        "summary": summary,
        "parameters": [{ "name": "id", "in": "path", "required": true, "schema": { "type": "string", "format": "uuid" } }],
        "responses": ok(summary, schema(object)),
    }})
}

/// The whole document.
pub(crate) fn document(base_url: &str) -> Value {
    let page_property = |ty: &str, description: &str| json!({ "type": ty, "description": description });
    json!({
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "info": {
            "title": "Open Referral UK Profile",
            "version": super::HSDS_VERSION,
            "description": "The directory in the Open Referral UK profile of HSDS 3.0, published as static files. \
                Lists are paged with `page` (from 1); the profile's search, `per_page` and filter parameters are \
                not answered. Objects the directory has no id for carry deterministic UUIDv5 ids.",
            "license": { "name": "Creative Commons Attribution Share-Alike 4.0 license", "url": "https://creativecommons.org/licenses/by/4.0/" }
        },
        "servers": [{ "url": format!("{base_url}/{}", super::FOLDER) }],
        "paths": {
            "/": { "get": {
                "operationId": "getAPIMetaInformation",
                "summary": "Retrieve information about this API and its relationship with HSDS.",
                "responses": ok("Information about this API.", json!({
                    "type": "object",
                    "properties": {
                        "version": { "type": "string", "description": "HSDS version of this API." },
                        "profile": { "type": "string", "format": "uri" },
                        "openapi_url": { "type": "string", "format": "uri" }
                    }
                })),
            }},
            "/services": list("getPaginatedListOfServices", "Paginated listing of services with their one-to-one fields.", "compiled/service_list"),
            "/services/{id}": single("getFullyNestedServiceById", "A fully nested service.", "compiled/service"),
            "/service_at_locations": list("getPaginatedListOfServiceAtLocation", "Paginated listing of service_at_location.", "compiled/service_at_location_list"),
            "/service_at_locations/{id}": single("getServiceAtLocationWithNestedDataById", "A fully nested service_at_location.", "compiled/service_at_location"),
            "/organizations": list("getPaginatedListOfOrganizations", "Paginated listing of organizations (HSDS core).", "compiled/organization_list"),
            "/organizations/{id}": single("getOrganizationById", "An organization with its services (HSDS core).", "compiled/organization"),
            "/taxonomies": list("getPaginatedListOfTaxonomies", "Paginated listing of taxonomies.", "taxonomy"),
            "/taxonomies/{id}": single("getTaxonomyById", "A taxonomy with its terms.", "taxonomy"),
            "/taxonomy_terms": list("getPaginatedListOfTaxonomyTerms", "Paginated listing of taxonomy terms.", "taxonomy_term"),
            "/taxonomy_terms/{id}": single("getTaxonomyTermById", "A taxonomy term.", "taxonomy_term"),
        },
        "components": {
            "schemas": {
                "Page": {
                    "type": "object",
                    "properties": {
                        "total_items": page_property("integer", "The total number of entities over all pages."),
                        "total_pages": page_property("integer", "Count of total pages."),
                        "page_number": page_property("integer", "The number of the current page."),
                        "size": page_property("integer", "The number of entities in the current page."),
                        "first_page": page_property("boolean", "Whether this is the first page."),
                        "last_page": page_property("boolean", "Whether this is the last page."),
                        "empty": page_property("boolean", "Whether the result set is empty."),
                    }
                },
                "Detail": {
                    "type": "object",
                    "properties": { "detail": { "type": "string" } },
                    "required": ["detail"],
                    "additionalProperties": false
                }
            },
            "parameters": {
                "page": {
                    "name": "page", "in": "query", "required": false,
                    "description": "Page number of paginated result, from 1.",
                    "schema": { "type": "integer", "minimum": 1 }
                }
            }
        }
    })
}
