//! The HTML reference page of the OpenAPI document (`public/api/openapi/index.html`): every
//! operation with its parameters and responses, then every schema, through
//! `templates/openapi.html`.

use serde_json::{Value, json};

/// The operations of a document, for its HTML reference page: (method, path, summary,
/// parameters, responses as `status: schema name`), paths with a trailing slash only.
pub(crate) fn reference(doc: &Value) -> Vec<Value> {
    let name_of = |v: &Value| {
        v.get("$ref").and_then(Value::as_str).map(|s| s.rsplit('/').next().unwrap_or(s).to_owned()).unwrap_or_default()
    };
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        if !path.ends_with('/') && path != "/api/openapi.json" {
            continue;
        }
        let get = &item["get"];
        let params: Vec<Value> = get["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                let param = &doc["components"]["parameters"][name_of(p)];
                json!({ "name": param["name"], "in": param["in"], "required": param["required"], "description": param["description"] })
            })
            .collect();
        let responses: Vec<Value> = get["responses"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(status, resp)| {
                let schema = &resp["content"]["application/json"]["schema"];
                let target = if resp.get("$ref").is_some() {
                    let resolved = &doc["components"]["responses"][name_of(resp)];
                    name_of(&resolved["content"]["application/json"]["schema"])
                } else {
                    name_of(schema)
                };
                json!({ "status": status, "schema": target })
            })
            .collect();
        ops.push(json!({ "method": "GET", "path": path, "summary": get["summary"], "tag": get["tags"][0], "parameters": params, "responses": responses }));
    }
    ops
}

/// Why the reference page could not be rendered.
#[derive(Debug, thiserror::Error)]
#[error("cannot render the OpenAPI reference page: {0}")]
pub struct PageError(#[from] minijinja::Error);

/// The HTML reference page of a document, from `templates/openapi.html`.
pub(crate) fn render_page(doc: &Value) -> Result<String, PageError> {
    let mut env = minijinja::Environment::new();
    env.add_template(crate::api::html::BASE, crate::api::html::BASE_SOURCE)?;
    env.add_template("openapi.html", include_str!("../../templates/openapi.html"))?;
    let schemas: Vec<Value> = doc["components"]["schemas"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, schema)| json!({ "name": name, "json": serde_json::to_string_pretty(schema).unwrap_or_default() }))
        .collect();
    let info = &doc["info"];
    let ctx = json!({
        "title": info["title"],
        "version": info["version"],
        "summary": info["summary"],
        "description": info["description"],
        "openapi": doc["openapi"],
        "server": doc["servers"][0]["url"],
        "operations": reference(doc),
        "schemas": schemas,
    });
    env.get_template("openapi.html")?.render(minijinja::value::Serde(&ctx)).map_err(PageError)
}
