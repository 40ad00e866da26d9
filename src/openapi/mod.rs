//! The OpenAPI 3.1 document of the whole API (v3, v4 and v4.1), published by `svcdir build`
//! at `public/api/openapi.json` with an HTML reference page beside it.
//!
//! The component schemas mirror the views of `src/views` field for field, with
//! `additionalProperties: false` so that a field added to a view and not here fails the
//! tests: `tests/it/openapi.rs` validates every JSON file of a fixture build and a set of
//! search answers against them, and `make test-contract` runs schemathesis against nginx.

mod page;
mod schemas;

use serde_json::{Value, json};

use crate::api::ApiError;

pub(crate) use page::{PageError, render_page};
pub(crate) use schemas::schemas;
use schemas::{r, string};

/// `components.headers`: what every response carries (behaviour.md, Routing).
fn headers() -> Value {
    let described = |name: &str, value: &str| match name {
        "Vary" => format!("`{value}` (plus `Accept-Encoding` where gzip applies)."),
        _ => format!("Always `{value}`."),
    };
    crate::api::headers::COMMON
        .iter()
        .map(|&(name, value)| {
            let header =
                json!({ "description": described(name, value), "schema": { "type": "string" }, "example": value });
            (name.to_owned(), header)
        })
        .collect::<serde_json::Map<String, Value>>()
        .into()
}

fn header_refs() -> Value {
    crate::api::headers::COMMON
        .iter()
        .map(|&(name, _)| (name.to_owned(), json!({ "$ref": format!("#/components/headers/{name}") })))
        .collect::<serde_json::Map<String, Value>>()
        .into()
}

/// A response in JSON (`schema`) or its HTML view (`format=api`, or a browser's `Accept`).
fn response(description: &str, schema: Value) -> Value {
    json!({
        "description": description,
        "headers": header_refs(),
        "content": {
            "application/json": { "schema": schema },
            "text/html": { "schema": { "type": "string" } },
        },
    })
}

fn error_responses() -> Value {
    json!({
        "NotFound": response(&format!("Unknown path, id or slug (`{{\"detail\": \"{}\"}}`), an unknown `format`, or for paged lists a page past the end, 0 or not a number (`{{\"detail\": \"{}\"}}`).", ApiError::NotFound, ApiError::InvalidPage), r("Detail")),
        "BadRequest": response("Invalid query parameters: each bad parameter mapped to its messages; or a malformed path (a bad `%` escape, an encoded NUL, `..` above the root): `{\"detail\": \"Malformed request.\"}`.", r("BadRequestBody")),
        "MethodNotAllowed": response("Any method but GET, HEAD and OPTIONS: `{\"detail\": \"Method \\\"X\\\" not allowed.\"}`.", r("Detail")),
    })
}

fn parameters() -> Value {
    let query = |name: &str, description: &str, schema: Value| json!({ "name": name, "in": "query", "required": false, "description": description, "schema": schema });
    json!({
        "format": query("format", "`json` gives JSON, `api` the HTML view; without it, an `Accept` header preferring text/html gives HTML.", json!({ "type": "string", "enum": ["json", "api"] })),
        "postcode": { "name": "postcode", "in": "query", "required": true, "description": "Postcode around which services are sought (case and spaces free; `+` for a space), or a postcode district (`AB10`) or sector (`AB10 1`): its mean point and every area of its postcodes.", "schema": { "type": "string" }, "example": "G2 1AL" },
        "q": query("q", "Keywords: every word must match the name, the description or a category name.", string()),
        "category": query("category", "Category slug(s), comma-separated: services tagged with any of them or below them in the tree.", string()),
        "location_type": query("location_type", "`local` or `national`.", json!({ "type": "string", "enum": ["local", "national"] })),
        "radius": query("radius", "Metres from the postcode to cover.", json!({ "type": "integer", "minimum": 0, "default": 5000 })),
        "page_size": query("page_size", "Results per page; values above 100 are taken as 100.", json!({ "type": "integer", "minimum": 1, "default": 10 })),
        "page": query("page", "Page number, from 1.", json!({ "type": "integer", "minimum": 1, "default": 1 })),
        "key": { "name": "key", "in": "path", "required": true, "description": "The id (UUID) or the slug.", "schema": { "type": "string" } },
        "slug": { "name": "slug", "in": "path", "required": true, "description": "A category's slug.", "schema": { "type": "string", "pattern": "^[a-z0-9-]+$" } },
        "code": { "name": "code", "in": "path", "required": true, "description": "A service area's code, exactly as in the fixed list (case-sensitive).", "schema": { "type": "string", "pattern": "^[A-Z0-9]{1,32}$" } },
    })
}

fn p(name: &str) -> Value {
    json!({ "$ref": format!("#/components/parameters/{name}") })
}

fn operation(id: &str, tag: &str, summary: &str, params: &[&str], ok: Value, errors: &[(&str, &str)]) -> Value {
    let mut responses = serde_json::Map::new();
    responses.insert("200".to_owned(), ok);
    for (status, name) in errors {
        responses.insert((*status).to_owned(), json!({ "$ref": format!("#/components/responses/{name}") }));
    }
    // Any path can be malformed (nginx answers 400 before routing).
    responses.entry("400").or_insert_with(|| json!({ "$ref": "#/components/responses/BadRequest" }));
    responses.insert("405".to_owned(), json!({ "$ref": "#/components/responses/MethodNotAllowed" }));
    json!({
        "get": {
            "operationId": id,
            "tags": [tag],
            "summary": summary,
            "parameters": params.iter().map(|n| p(n)).collect::<Vec<_>>(),
            "responses": responses,
        }
    })
}

/// A file served as it is at one path (issue 17), whatever `format` and `Accept` say.
fn file_operation(id: &str, summary: &str, content_type: &str, schema: Value) -> Value {
    json!({ "get": {
        "operationId": id, "tags": ["open data"], "summary": summary,
        "responses": {
            "200": { "description": summary, "headers": header_refs(), "content": { content_type: { "schema": schema } } },
            "400": { "$ref": "#/components/responses/BadRequest" },
            "404": { "$ref": "#/components/responses/NotFound" },
            "405": { "$ref": "#/components/responses/MethodNotAllowed" },
        },
    } })
}

/// The whole document, with `servers: [{url: base_url}]`.
pub(crate) fn document(base_url: &str) -> Value {
    let search = ["postcode", "q", "category", "location_type", "radius", "page_size", "page", "format"];
    let search_v3 = ["postcode", "q", "category", "location_type", "radius", "page", "format"];
    let not_found = [("404", "NotFound")];
    let search_errors = [("400", "BadRequest"), ("404", "NotFound")];
    // (path without trailing slash, operation id, tag, summary, parameters, 200 response, errors)
    type Endpoint<'a> = (&'a str, &'a str, &'a str, &'a str, &'a [&'a str], Value, &'a [(&'a str, &'a str)]);
    let endpoints: Vec<Endpoint<'_>> = vec![
        (
            "/api/v4/services",
            "searchServices",
            "v4",
            "Search services around a postcode",
            &search,
            response("A page of services, nearest first.", r("ServicePage")),
            &search_errors,
        ),
        (
            "/api/v4/services/{key}",
            "getService",
            "v4",
            "One service by id or slug (v4.1: with locations)",
            &["key", "format"],
            response("The service.", r("ServiceResponse")),
            &not_found,
        ),
        (
            "/api/v4/organisations/{key}",
            "getOrganisation",
            "v4",
            "One organisation by id or slug, with its services and locations",
            &["key", "format"],
            response("The organisation.", r("OrganisationResponse")),
            &not_found,
        ),
        (
            "/api/v4/categories",
            "listCategories",
            "v4",
            "The category tree",
            &["format"],
            response("Top-level categories with nested sub_categories.", r("CategoriesResponse")),
            &not_found,
        ),
        (
            "/api/v4/service-areas",
            "listServiceAreas",
            "v4",
            "The fixed list of service areas",
            &["format"],
            response("Every service area.", r("ServiceAreasResponse")),
            &not_found,
        ),
        (
            "/api/v4/import",
            "importServices",
            "v4.1",
            "Every published service, by id, in pages",
            &["page", "format"],
            response("A page of the import.", r("ServicePage")),
            &not_found,
        ),
        (
            "/api/v3/search",
            "searchServicesV3",
            "v3",
            "Search services around a postcode (v3)",
            &search_v3,
            response("A page of v3 services.", r("SearchPageV3")),
            &search_errors,
        ),
        (
            "/api/v3/categories",
            "listCategoriesV3",
            "v3",
            "The flat v3 category list",
            &["format"],
            response("Every category, depth-first.", r("CategoriesV3")),
            &not_found,
        ),
        (
            "/api/v3/service-areas",
            "listServiceAreasV3",
            "v3",
            "The service areas with numeric types (v3)",
            &["format"],
            response("Every service area.", r("ServiceAreasV3")),
            &not_found,
        ),
    ];
    let mut endpoints = endpoints;
    // The listings without a postcode (issue 25), paged as the import.
    endpoints.push((
        "/api/v4/categories/{slug}/services",
        "listCategoryServices",
        "v4.1",
        "The published services of a category and of every category below it, by id, in pages as the import",
        &["slug", "page", "format"],
        response("A page of the category's services.", r("ServicePage")),
        &not_found,
    ));
    endpoints.push((
        "/api/v4/service-areas/{code}/services",
        "listServiceAreaServices",
        "v4.1",
        "The published services of a service area, by id, in pages as the import",
        &["code", "page", "format"],
        response("A page of the service area's services.", r("ServicePage")),
        &not_found,
    ));
    endpoints.push((
        "/changes",
        "getChanges",
        "open data",
        "The change record: what each build added, changed and removed, newest first, 100 builds a page",
        &["page", "format"],
        response(
            "A page of the record. Each entry names the services and organisations (ids sorted) a build added, \
             removed, or whose v4 single-object response changed; `previous` chains the entries; `next` is the \
             older page.",
            r("ChangesPage"),
        ),
        &not_found,
    ));
    let mut paths = serde_json::Map::new();
    for (path, id, tag, summary, params, ok, errors) in endpoints {
        // Every endpoint answers with and without its trailing slash, without a redirect.
        paths.insert(format!("{path}/"), operation(id, tag, summary, params, ok.clone(), errors));
        paths.insert(path.to_owned(), operation(&format!("{id}NoSlash"), tag, summary, params, ok, errors));
    }
    // The API root: `/`, and `/api` with or without its slash, one endpoint.
    for (path, id) in [("/", "getApiRoot"), ("/api/", "getApiRootApi"), ("/api", "getApiRootApiNoSlash")] {
        let summary = "The API root: licence and attribution, and the absolute URL of every part of the API \
                       (its HTML view is the front page, with a search form)";
        let ok = response("Where each part of the API is.", r("RootResponse"));
        paths.insert(path.to_owned(), operation(id, "meta", summary, &["format"], ok, &not_found));
    }
    paths.insert(
        "/api/openapi.json".to_owned(),
        json!({ "get": {
            "operationId": "getOpenApi", "tags": ["meta"], "summary": "This document (also at /api/openapi/, with an HTML reference page)",
            "responses": { "200": { "description": "The OpenAPI document.", "headers": header_refs(),
                "content": { "application/json": { "schema": { "type": "object" } } } },
                "400": { "$ref": "#/components/responses/BadRequest" },
                "405": { "$ref": "#/components/responses/MethodNotAllowed" } },
        } }),
    );
    paths.insert(
        "/changes/state.json".to_owned(),
        file_operation("getChangesState", "What the last build held (id → content hash of its v4 response), for the next build's comparison (`svcdir build --previous URL`)", "application/json", r("ChangesState")),
    );
    paths.insert(
        "/downloads/services.ndjson.gz".to_owned(),
        file_operation(
            "downloadServices",
            "Every published service, one v4 single-service object a line, in id order (gzip)",
            "application/gzip",
            json!({ "type": "string", "contentMediaType": "application/gzip" }),
        ),
    );
    paths.insert(
        "/downloads/openreferral-uk.zip".to_owned(),
        file_operation(
            "downloadOpenReferralUk",
            "The Open Referral UK tabular data package: datapackage.json and one CSV per table",
            "application/zip",
            json!({ "type": "string", "contentMediaType": "application/zip" }),
        ),
    );
    paths.insert(
        "/downloads/locations.geojson".to_owned(),
        file_operation(
            "downloadLocations",
            "Every location of a published service as an RFC 7946 GeoJSON FeatureCollection of Points, by location id, each with its services",
            "application/geo+json",
            r("LocationsGeoJson"),
        ),
    );
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Service Directory API",
            "version": "4.1",
            "summary": "Read-only public directory of health and wellbeing services in Scotland (API v3, v4 and v4.1).",
            "description": "Every endpoint answers GET, HEAD and OPTIONS (200, the headers, no body); any other method is 405. `?format=json` gives JSON, `?format=api` the HTML view. Data licensed under CC BY 4.0.",
            "license": { "name": "CC BY 4.0 (data)", "url": "https://creativecommons.org/licenses/by/4.0/" },
        },
        "jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
        "servers": [{ "url": base_url }],
        "tags": [
            { "name": "v4", "description": "Version 4: `{meta, data}` envelopes." },
            { "name": "v4.1", "description": "Version 4.1, under /api/v4/: adds the import." },
            { "name": "v3", "description": "Version 3: bare arrays and `results` pages." },
            { "name": "meta", "description": "This description." },
            { "name": "open data", "description": "The change record and the bulk downloads. The Open Referral UK form of the directory is under /openreferral/, described by its own document at /openreferral/openapi.json." },
        ],
        "paths": paths,
        "components": {
            "schemas": schemas(),
            "parameters": parameters(),
            "responses": error_responses(),
            "headers": headers(),
        },
    })
}
