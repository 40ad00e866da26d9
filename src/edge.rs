//! `svcdir cdn-config cloudflare`: a Cloudflare Worker that answers the whole API as the
//! nginx configuration does, reading static objects from the bucket `svcdir publish` fills
//! and sending the two search paths to svcdir-search (behaviour.md, "Publishing and the
//! CDN edge").
//!
//! `worker.js` is rendered from `templates/worker.js.j2` with the tables of [`crate::api`]
//! and the fixed bodies of [`crate::api::bodies`] (the same ones nginx and `svcdir serve`
//! send), plus `wrangler.toml` to deploy it and `workerd.capnp` to run it locally with
//! Cloudflare's open-source runtime. This module checks the options and writes the files;
//! it runs nothing.

use std::path::{Path, PathBuf};

use minijinja::{AutoEscape, Environment, context};
use serde_json::json;

use crate::api::bodies::{self, METHOD_PLACEHOLDER};
use crate::api::{Format, headers, routes};

/// Why the Worker could not be written.
#[derive(Debug, thiserror::Error)]
pub enum EdgeError {
    /// An origin is not an http(s) URL.
    #[error("{option} {value:?} is not an http:// or https:// URL without query or fragment")]
    BadOrigin {
        /// The option.
        option: &'static str,
        /// What was given.
        value: String,
    },
    /// `--listen` is not HOST:PORT.
    #[error("--listen {0:?} is not HOST:PORT")]
    BadListen(String),
    /// A body could not be rendered (a bug).
    #[error("cannot render an error body: {0}")]
    View(#[from] bodies::ViewError),
    /// A template failed (a bug).
    #[error("template: {0}")]
    Template(#[from] minijinja::Error),
    /// A file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// A checked `svcdir cdn-config cloudflare` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerConfig {
    /// Base URL of the published objects (`{static_origin}/{path}`), without trailing `/`.
    pub static_origin: String,
    /// Base URL of svcdir-search, without trailing `/`.
    pub search_origin: String,
    /// Where `workerd serve` listens.
    pub listen: String,
    /// `HOST:PORT` of the HTTP service that holds workerd's Cache API (its
    /// `cacheApiOutbound`); without one the Worker's cache of search answers is a no-op in
    /// workerd (on Cloudflare the platform's cache serves).
    pub cache_service: Option<String>,
}

/// Compatibility date of the Worker: the Workers runtime behaviour it was written for.
const COMPATIBILITY_DATE: &str = "2024-09-23";

impl WorkerConfig {
    /// Checks the options.
    pub fn new(static_origin: &str, search_origin: &str, listen: &str) -> Result<WorkerConfig, EdgeError> {
        let origin = |option: &'static str, value: &str| {
            let ok = (value.starts_with("http://") || value.starts_with("https://"))
                && !value.contains(['?', '#', '"', '\\', ' '])
                && !value.chars().any(char::is_control);
            if ok {
                Ok(value.trim_end_matches('/').to_owned())
            } else {
                Err(EdgeError::BadOrigin { option, value: value.to_owned() })
            }
        };
        let port_ok = listen.rsplit_once(':').is_some_and(|(host, port)| {
            !host.is_empty() && !host.contains(['"', ' ']) && port.parse::<u16>().is_ok_and(|p| p > 0)
        });
        if !port_ok {
            return Err(EdgeError::BadListen(listen.to_owned()));
        }
        Ok(WorkerConfig {
            static_origin: origin("--static-origin", static_origin)?,
            search_origin: origin("--search-origin", search_origin)?,
            listen: listen.to_owned(),
            cache_service: None,
        })
    }

    /// With the Cache API of workerd served by `address` (`HOST:PORT`, checked as `listen`).
    pub fn with_cache_service(mut self, address: &str) -> Result<WorkerConfig, EdgeError> {
        let ok = address.rsplit_once(':').is_some_and(|(host, port)| {
            !host.is_empty() && !host.contains(['"', ' ']) && port.parse::<u16>().is_ok_and(|p| p > 0)
        });
        if !ok {
            return Err(EdgeError::BadListen(address.to_owned()));
        }
        self.cache_service = Some(address.to_owned());
        Ok(self)
    }

    /// `worker.js`.
    pub(crate) fn worker_js(&self) -> Result<String, EdgeError> {
        let lit = |v: serde_json::Value| v.to_string();
        let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
        let bodies = json!({
            "invalid_page_json": text(bodies::invalid_page_body(Format::Json)?),
            "invalid_page_html": text(bodies::invalid_page_body(Format::Html)?),
            "not_allowed_json": text(bodies::method_not_allowed_body(Format::Json)?),
            "not_allowed_html": text(bodies::method_not_allowed_body(Format::Html)?),
            "bad_request_json": text(bodies::bad_request_body()),
            "not_found_json": crate::api::ApiError::NotFound.body().to_string(),
            "unavailable_json": crate::nginx::UNAVAILABLE,
        });
        let common: Vec<[&str; 2]> = headers::COMMON.iter().chain(&headers::HARDENING).map(|(k, v)| [*k, *v]).collect();
        let mut env = Environment::new();
        env.set_auto_escape_callback(|_| AutoEscape::None);
        env.add_template("worker.js.j2", include_str!("../templates/worker.js.j2"))?;
        let rendered = env.get_template("worker.js.j2")?.render(context! {
            version => env!("CARGO_PKG_VERSION"),
            static_origin => lit(json!(self.static_origin)),
            search_origin => lit(json!(self.search_origin)),
            search_paths => lit(json!(routes::SEARCH_PATHS)),
            resource_folders => lit(json!(routes::resource_folders())),
            keyed_prefixes => lit(json!(routes::keyed_prefixes())),
            aliases => lit(json!(routes::aliases())),
            paged_folders => lit(json!(routes::paged_folders())),
            listing_pattern => lit(json!(routes::listing_pattern())),
            exact_files => lit(json!(routes::exact_files())),
            last_page => lit(json!(crate::api::query::PageNumber::LAST)),
            cors => lit(json!({
                "methods": headers::CORS_ALLOW_METHODS,
                "default_headers": headers::CORS_DEFAULT_ALLOW_HEADERS,
                "max_age": headers::CORS_MAX_AGE,
            })),
            errors_folder => lit(json!(routes::ERRORS_FOLDER)),
            allowed_methods => lit(json!(routes::ALLOWED_METHODS)),
            early_405_methods => lit(json!(routes::EARLY_405_METHODS)),
            common_headers => lit(json!(common)),
            content_types => lit(json!({"json": headers::JSON, "html": headers::HTML})),
            cache => lit(json!({
                "static": headers::CACHE_STATIC,
                "search": headers::CACHE_SEARCH,
                "error": headers::CACHE_ERROR,
                "none": headers::CACHE_NONE,
            })),
            bodies => lit(bodies),
            method_placeholder => lit(json!(METHOD_PLACEHOLDER)),
            gzip_min_length => routes::GZIP_MIN_LENGTH,
            html_csp => lit(json!(headers::HTML_CSP)),
            max_accept_bytes => crate::api::negotiate::MAX_ACCEPT_BYTES,
            max_key_len => crate::api::routing::MAX_KEY_LEN,
        })?;
        Ok(format!("{}\n", rendered.trim()))
    }

    /// `wrangler.toml`: deploys `worker.js` with the two origins as variables.
    pub(crate) fn wrangler_toml(&self) -> String {
        let quote = |s: &str| json!(s).to_string();
        format!(
            "# Deploys worker.js with `npx wrangler deploy` (generated by `svcdir cdn-config cloudflare`).\n\
             # Add a route or custom domain for the API's host in the Cloudflare dashboard or below.\n\
             name = \"svcdir-api\"\n\
             main = \"worker.js\"\n\
             compatibility_date = \"{COMPATIBILITY_DATE}\"\n\
             \n\
             [vars]\n\
             STATIC_ORIGIN = {}\n\
             SEARCH_ORIGIN = {}\n",
            quote(&self.static_origin),
            quote(&self.search_origin)
        )
    }

    /// `workerd.capnp`: `workerd serve DIR/workerd.capnp` runs the Worker on `listen`; its
    /// outbound network may reach local and private addresses (both origins may be local).
    pub(crate) fn workerd_capnp(&self) -> String {
        let quote = |s: &str| json!(s).to_string();
        format!(
            "# Runs worker.js locally: `workerd serve workerd.capnp` (generated by `svcdir cdn-config cloudflare`).\n\
             using Workerd = import \"/workerd/workerd.capnp\";\n\
             \n\
             const config :Workerd.Config = (\n\
             \x20 services = [\n\
             \x20   (name = \"svcdir-api\", worker = .worker),\n\
             \x20   # Outbound requests (the two origins): public, private and local addresses.\n\
             \x20   (name = \"origins\", network = (allow = [\"public\", \"private\", \"local\"])),\n\
             {cache_service}\
             \x20 ],\n\
             \x20 sockets = [(name = \"http\", address = {listen}, http = (), service = \"svcdir-api\")],\n\
             );\n\
             \n\
             const worker :Workerd.Worker = (\n\
             \x20 modules = [(name = \"worker.js\", esModule = embed \"worker.js\")],\n\
             \x20 compatibilityDate = \"{COMPATIBILITY_DATE}\",\n\
             \x20 bindings = [\n\
             \x20   (name = \"STATIC_ORIGIN\", text = {static_origin}),\n\
             \x20   (name = \"SEARCH_ORIGIN\", text = {search_origin}),\n\
             \x20 ],\n\
             \x20 globalOutbound = \"origins\",\n\
             {cache_outbound}\
             );\n",
            listen = quote(&self.listen),
            static_origin = quote(&self.static_origin),
            search_origin = quote(&self.search_origin),
            // The Cache API's requests (match GET, put PUT, delete PURGE) go to this service.
            cache_service = self.cache_service.as_deref().map_or(String::new(), |a| format!(
                "    # The Cache API's store (issue 24): caches.default's requests go here.\n    \
                 (name = \"search-cache\", external = (address = {}, http = ())),\n",
                quote(a)
            )),
            cache_outbound = if self.cache_service.is_some() { "  cacheApiOutbound = \"search-cache\",\n" } else { "" },
        )
    }

    /// Writes the three files into `dir` (created when missing).
    pub fn write(&self, dir: &Path) -> Result<(), EdgeError> {
        let write = |name: &str, text: String| {
            let path = dir.join(name);
            std::fs::write(&path, text).map_err(|source| EdgeError::Write { path, source })
        };
        std::fs::create_dir_all(dir).map_err(|source| EdgeError::Write { path: dir.to_owned(), source })?;
        write("worker.js", self.worker_js()?)?;
        write("wrangler.toml", self.wrangler_toml())?;
        write("workerd.capnp", self.workerd_capnp())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workerd_gets_a_cache_service_only_when_given_one() {
        let cfg = WorkerConfig::new("http://127.0.0.1:9000/b", "http://127.0.0.1:8081", "127.0.0.1:8787").unwrap();
        assert!(!cfg.workerd_capnp().contains("cacheApiOutbound"));
        let cached = cfg.with_cache_service("127.0.0.1:9100").unwrap().workerd_capnp();
        assert!(cached.contains(r#"(name = "search-cache", external = (address = "127.0.0.1:9100", http = ())),"#));
        assert!(cached.contains(r#"cacheApiOutbound = "search-cache","#), "{cached}");
        let cfg = WorkerConfig::new("http://127.0.0.1:9000/b", "http://127.0.0.1:8081", "127.0.0.1:8787").unwrap();
        assert!(matches!(cfg.with_cache_service("nowhere"), Err(EdgeError::BadListen(_))));
    }

    #[test]
    fn the_worker_carries_the_contract_and_no_template_syntax() {
        let cfg =
            WorkerConfig::new("http://127.0.0.1:9000/bucket/", "http://127.0.0.1:8081", "127.0.0.1:8787").unwrap();
        let js = cfg.worker_js().unwrap();
        assert!(js.contains(r#"const STATIC_ORIGIN_DEFAULT = "http://127.0.0.1:9000/bucket";"#), "{js}");
        assert!(js.contains(r#"["/api/v4/services","/api/v3/search"]"#));
        assert!(js.contains(headers::CACHE_STATIC) && js.contains("Invalid page."));
        assert!(!js.contains("{{") && !js.contains("{%"));
        let capnp = cfg.workerd_capnp();
        assert!(capnp.contains(r#"address = "127.0.0.1:8787""#) && capnp.contains(r#""local""#));
        assert!(cfg.wrangler_toml().contains(r#"SEARCH_ORIGIN = "http://127.0.0.1:8081""#));
        assert!(WorkerConfig::new("ftp://x", "http://y", "127.0.0.1:1").is_err());
        assert!(WorkerConfig::new("http://x", "http://y?q", "127.0.0.1:1").is_err());
        assert!(WorkerConfig::new("http://x", "http://y", "nowhere").is_err());
    }
}
