//! `svcdir nginx-config`: a complete `nginx.conf` that serves a build and sends the two
//! search paths to `svcdir-search` (behaviour.md, "The two programs", "Routing").
//!
//! The configuration is rendered from `templates/nginx.conf.j2`, embedded in the binary.
//! This module owns checking the options, quoting every value for nginx, and the bodies
//! that nginx answers from the configuration itself (they come from [`crate::api`], so
//! nginx and `svcdir serve` send the same bytes). It does not run nginx.
//!
//! Known differences from [`crate::api::routing::route`], all on requests no client of the API
//! sends: nginx 1.22 reads only the first of several `Accept` header lines (1.23 joins them);
//! a parameter *name* written with `%` escapes (`%66ormat`) is not recognised, nor `page`
//! digits written with `%` escapes; a `q` with more than six decimals or in exponent form
//! counts as 1; nginx itself refuses a method name with characters other than `A`–`Z`, `_`
//! and `-` (400) and a request body over `client_max_body_size`, 1 MB (413).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use minijinja::{AutoEscape, Environment, context};

use crate::api::Format;
use crate::api::bodies::{self, METHOD_PLACEHOLDER};
use crate::api::headers;
use crate::api::query::PageNumber;
use crate::api::routing::{self, V3_PATH, V4_PATH};
use crate::urls as paths;

/// Why no configuration could be made.
#[derive(Debug, thiserror::Error)]
pub enum NginxError {
    /// A `HOST:PORT` option is malformed.
    #[error(
        "{option} {value:?} is not HOST:PORT (a host name or IP address, IPv6 in brackets, and a port from 1 to 65535)"
    )]
    BadAddress {
        /// The option, e.g. `--listen`.
        option: &'static str,
        /// What was given.
        value: String,
    },
    /// No search server was given.
    #[error("at least one --search HOST:PORT is needed")]
    NoSearch,
    /// The public directory's path cannot be written into an nginx configuration.
    #[error("--public {0:?}: the path must be UTF-8 without quotes, backslashes, '$' or control characters")]
    BadPublic(PathBuf),
    /// The public directory's absolute path could not be found.
    #[error("--public {path:?}: {source}")]
    Absolute {
        /// The path given.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A body could not be rendered.
    #[error("cannot render an error body: {0}")]
    View(#[from] bodies::ViewError),
    /// The template failed (a bug).
    #[error("template nginx.conf.j2: {0}")]
    Template(#[from] minijinja::Error),
}

/// A checked `svcdir nginx-config` request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NginxConfig {
    /// Absolute path of the build to serve.
    pub public: PathBuf,
    /// Where nginx listens.
    pub listen: String,
    /// The search servers, at least one.
    pub search: Vec<String>,
    /// Whether to write `daemon off;` (else the caller may pass `-g 'daemon off;'`).
    pub daemon_off: bool,
    /// Disk the cache of search answers may use, in MB; 0 turns the cache off (issue 24).
    pub search_cache_mb: u32,
}

/// The default of [`NginxConfig::search_cache_mb`].
pub(crate) const SEARCH_CACHE_MB: u32 = 256;

/// Cached search answers each nginx worker keeps open (`open_file_cache`): the answers of
/// the queries of the last max-age that are asked again, each a file descriptor.
pub const SEARCH_OPEN_FILES: u32 = 8192;

/// The `max-age` of a `Cache-Control` value, in seconds (0 when it has none).
pub fn max_age(cache_control: &str) -> u64 {
    cache_control
        .split(',')
        .find_map(|d| d.trim().strip_prefix("max-age="))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

impl NginxConfig {
    /// Checks the options; `public` is made absolute (it need not exist yet). It is not
    /// canonicalised: `svcdir build` may publish `public` as a symbolic link to the current
    /// generation, and nginx must follow the link on every request, not pin one generation.
    pub fn new(public: &Path, listen: &str, search: &[String], daemon_off: bool) -> Result<NginxConfig, NginxError> {
        let public =
            std::path::absolute(public).map_err(|source| NginxError::Absolute { path: public.to_owned(), source })?;
        let text = public.to_str().ok_or_else(|| NginxError::BadPublic(public.clone()))?;
        if text.chars().any(|c| matches!(c, '"' | '\'' | '\\' | '$') || c.is_control()) {
            return Err(NginxError::BadPublic(public));
        }
        if search.is_empty() {
            return Err(NginxError::NoSearch);
        }
        let search = search.iter().map(|s| check_address("--search", s)).collect::<Result<Vec<_>, _>>()?;
        Ok(NginxConfig {
            public,
            listen: check_address("--listen", listen)?,
            search,
            daemon_off,
            search_cache_mb: SEARCH_CACHE_MB,
        })
    }

    /// Whether `public` holds a build (its 404 page); the configuration works without, but
    /// serves nothing until `svcdir build` has written there.
    pub fn looks_built(&self) -> bool {
        self.public.join(paths::ERRORS).join("404.json").is_file()
    }

    /// The whole `nginx.conf`.
    pub fn render(&self) -> Result<String, NginxError> {
        let mut env = Environment::new();
        env.set_auto_escape_callback(|_| AutoEscape::None);
        env.add_template("nginx.conf.j2", include_str!("../templates/nginx.conf.j2"))?;
        let public = self.public.to_str().ok_or_else(|| NginxError::BadPublic(self.public.clone()))?;
        let public = public.strip_suffix('/').filter(|p| !p.is_empty()).unwrap_or(public);

        let not_allowed = |format| -> Result<Vec<String>, NginxError> {
            let template = bodies::method_not_allowed_body(format)?;
            Ok(body_lines(405, &String::from_utf8_lossy(&template), Some(METHOD_PLACEHOLDER)))
        };
        let invalid_page = |format| -> Result<Vec<String>, NginxError> {
            Ok(body_lines(404, &String::from_utf8_lossy(&bodies::invalid_page_body(format)?), None))
        };
        let bodies = BTreeMap::from([
            ("invalid_page_json", invalid_page(Format::Json)?),
            ("invalid_page_html", invalid_page(Format::Html)?),
            ("not_allowed_json", not_allowed(Format::Json)?),
            ("not_allowed_html", not_allowed(Format::Html)?),
            ("bad_request_json", body_lines(400, &String::from_utf8_lossy(&bodies::bad_request_body()), None)),
            ("unavailable_json", body_lines(503, UNAVAILABLE, None)),
        ]);
        let search_paths: Vec<String> =
            [V4_PATH, V3_PATH].iter().flat_map(|p| [p.to_string(), p.trim_end_matches('/').to_owned()]).collect();
        let text = env.get_template("nginx.conf.j2")?.render(context! {
            version => env!("CARGO_PKG_VERSION"),
            public => quote(public),
            public_comment => public,
            listen => &self.listen,
            search => &self.search,
            daemon_off => self.daemon_off,
            search_paths => search_paths,
            folder_pattern => crate::api::routes::folder_pattern(),
            aliases => crate::api::routes::aliases().into_iter().collect::<Vec<_>>(),
            paged_pattern => crate::api::routes::paged_pattern(),
            exact_files => routing::EXACT_FILES
                .iter()
                .map(|&(path, content_type, gzip)| context! { path => path, content_type => content_type, gzip => gzip })
                .collect::<Vec<_>>(),
            listing_pattern => crate::api::routes::listing_pattern(),
            last_page => PageNumber::LAST,
            max_accept => crate::api::negotiate::MAX_ACCEPT_BYTES,
            max_key => routing::MAX_KEY_LEN,
            errors_folder => paths::ERRORS,
            common_headers => headers::COMMON
                .iter()
                .chain(&headers::HARDENING)
                .map(|&(name, value)| (name, quote(value)))
                .collect::<Vec<_>>(),
            html_csp => quote(headers::HTML_CSP),
            header_timeout => crate::server::Limits::default().header_timeout.as_secs(),
            cache_static => quote(headers::CACHE_STATIC),
            cache_search => quote(headers::CACHE_SEARCH),
            search_cache_mb => self.search_cache_mb,
            search_open_files => SEARCH_OPEN_FILES,
            // The search's 200s and its errors are cached alike: one max-age for both.
            search_max_age => max_age(headers::CACHE_SEARCH).min(max_age(headers::CACHE_ERROR)),
            cache_error => quote(headers::CACHE_ERROR),
            cache_none => quote(headers::CACHE_NONE),
            cors_methods => quote(headers::CORS_ALLOW_METHODS),
            cors_max_age => quote(headers::CORS_MAX_AGE),
            cors_default_headers => quote(headers::CORS_DEFAULT_ALLOW_HEADERS),
            bodies => bodies,
        })?;
        Ok(format!("{}\n", text.trim()))
    }
}

/// Body of the 503 nginx sends when no search server answers (DRF's `ServiceUnavailable`).
pub(crate) const UNAVAILABLE: &str = r#"{"detail":"Service temporarily unavailable, try again later."}"#;

/// Checks `HOST:PORT`: a host name or IPv4 address, or an IPv6 address in brackets, and a
/// port from 1 to 65535. Nothing else can reach the configuration's text.
fn check_address(option: &'static str, value: &str) -> Result<String, NginxError> {
    let bad = || NginxError::BadAddress { option, value: value.to_owned() };
    let (host, port) = value.rsplit_once(':').ok_or_else(bad)?;
    let port_ok = port.parse::<u16>().is_ok_and(|p| p > 0) && port.bytes().all(|b| b.is_ascii_digit());
    let host_ok = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(v6) => v6.parse::<std::net::Ipv6Addr>().is_ok(),
        None => {
            !host.is_empty()
                && host.len() <= 253
                && host.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
                && !host.starts_with(['-', '.'])
        }
    };
    if port_ok && host_ok { Ok(value.to_owned()) } else { Err(bad()) }
}

/// A double-quoted nginx string: `\` and `"` escaped, `$` through `$svcdir_dollar` (nginx
/// strings have no escape for it).
pub fn quote(text: &str) -> String {
    let mut out = String::from("\"");
    for atom in atoms(text, None) {
        out.push_str(&atom);
    }
    out.push('"');
    out
}

/// The pieces of a quoted string, each whole escape in one piece; `variable` replaces a
/// placeholder by an nginx variable (`(placeholder, "$name")`).
fn atoms(text: &str, variable: Option<(&str, &str)>) -> Vec<String> {
    let mut out = Vec::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some((placeholder, var)) = variable
            && let Some(after) = rest.strip_prefix(placeholder)
        {
            out.push(var.to_owned());
            rest = after;
            continue;
        }
        let mut chars = rest.chars();
        let c = chars.next().unwrap_or_default();
        out.push(match c {
            '\\' => "\\\\".to_owned(),
            '"' => "\\\"".to_owned(),
            '$' => "${svcdir_dollar}".to_owned(),
            c => c.to_string(),
        });
        rest = chars.as_str();
    }
    out
}

/// Longest quoted string written in one piece: nginx refuses a configuration token longer
/// than its 4 KiB read buffer.
const CHUNK: usize = 2000;

/// The directives that answer `status` with `body`: `return` with the body quoted, split
/// across `set` variables when it is long. `placeholder` becomes `$svcdir_method` (the
/// method of the request line, which `error_page` does not change).
fn body_lines(status: u16, body: &str, placeholder: Option<&str>) -> Vec<String> {
    let atoms = atoms(body, placeholder.map(|p| (p, "${svcdir_method}")));
    let mut chunks: Vec<String> = vec![String::new()];
    for atom in atoms {
        let last = chunks.last_mut().filter(|c| c.len() + atom.len() <= CHUNK);
        match last {
            Some(chunk) => chunk.push_str(&atom),
            None => chunks.push(atom),
        }
    }
    if chunks.len() == 1 {
        return vec![format!("return {status} \"{}\";", chunks[0])];
    }
    let mut lines: Vec<String> =
        chunks.iter().enumerate().map(|(i, chunk)| format!("set $svcdir_body{i} \"{chunk}\";")).collect();
    let all: String = (0..chunks.len()).map(|i| format!("${{svcdir_body{i}}}")).collect();
    lines.push(format!("return {status} \"{all}\";"));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> NginxConfig {
        NginxConfig::new(
            Path::new("/srv/svcdir/public/"),
            "127.0.0.1:8080",
            &["127.0.0.1:8081".into(), "[::1]:8082".into()],
            false,
        )
        .unwrap()
    }

    #[test]
    fn search_answers_are_cached_for_their_max_age_by_default() {
        let text = config().render().unwrap();
        let max_age = max_age(headers::CACHE_SEARCH);
        assert_eq!(max_age, 60);
        assert!(text.contains(&format!("proxy_cache_valid 200 400 404 {max_age}s;")), "{text}");
        assert!(text.contains("max_size=256m"));
        assert_eq!(text.matches("proxy_cache svcdir_search;").count(), 4, "each search path");
        assert!(text.contains(r#"proxy_cache_key "$uri?$args $http_accept";"#));
        assert_eq!(text.matches("output_buffers 1 256k;").count(), 4, "a hit in one read and one writev");
        let off = NginxConfig { search_cache_mb: 0, ..config() }.render().unwrap();
        assert!(!off.contains("proxy_cache"), "0 MB turns the cache off");
    }

    #[test]
    fn addresses() {
        for good in ["127.0.0.1:8080", "localhost:1", "[::1]:80", "search-1.internal:65535"] {
            assert!(check_address("--listen", good).is_ok(), "{good}");
        }
        for bad in [
            "8080",
            "127.0.0.1",
            "127.0.0.1:0",
            "127.0.0.1:65536",
            "127.0.0.1:+80",
            ":80",
            "::1:80",
            "[::1:80",
            "a b:80",
            "x;y:80",
            "x{:80",
            "-x:80",
        ] {
            assert!(check_address("--listen", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn public_paths() {
        assert!(NginxConfig::new(Path::new("/srv/a\"b"), "h:1", &["h:2".into()], false).is_err());
        assert!(NginxConfig::new(Path::new("/srv/$x"), "h:1", &["h:2".into()], false).is_err());
        assert!(matches!(NginxConfig::new(Path::new("/srv"), "h:1", &[], false), Err(NginxError::NoSearch)));
        let relative = NginxConfig::new(Path::new("public"), "h:1", &["h:2".into()], false).unwrap();
        assert!(relative.public.is_absolute());
        // A link to the current generation stays a link.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("gen-a")).unwrap();
        std::os::unix::fs::symlink("gen-a", dir.path().join("public")).unwrap();
        let linked = NginxConfig::new(&dir.path().join("public"), "h:1", &["h:2".into()], false).unwrap();
        assert!(linked.public.ends_with("public"), "{:?}", linked.public);
    }

    #[test]
    fn quoting() {
        assert_eq!(quote(r#"a "b" \c $d"#), r#""a \"b\" \\c ${svcdir_dollar}d""#);
        let lines = body_lines(405, r#"{"detail":"Method \"XM\" not allowed."}"#, Some("XM"));
        assert_eq!(lines, [r#"return 405 "{\"detail\":\"Method \\\"${svcdir_method}\\\" not allowed.\"}";"#]);
    }

    #[test]
    fn long_bodies_are_split_without_breaking_escapes() {
        let body = "\"$\\é".repeat(1500);
        let lines = body_lines(404, &body, None);
        assert!(lines.len() > 2, "{lines:?}");
        for line in &lines {
            assert!(line.len() < 4000);
        }
        let joined: String = lines[..lines.len() - 1]
            .iter()
            .map(|l| l.split_once(" \"").unwrap().1.strip_suffix("\";").unwrap())
            .collect();
        assert_eq!(joined, atoms(&body, None).concat());
        assert!(lines.last().unwrap().starts_with("return 404 \"${svcdir_body0}${svcdir_body1}"));
    }

    #[test]
    fn renders_a_whole_configuration() {
        let text = config().render().unwrap();
        assert!(text.contains("root \"/srv/svcdir/public\";"), "{text}");
        assert!(text.contains("listen 127.0.0.1:8080 default_server;"));
        assert!(text.contains("server 127.0.0.1:8081 max_fails=3"));
        assert!(text.contains("server [::1]:8082 max_fails=3"));
        for path in ["/api/v4/services/", "/api/v4/services", "/api/v3/search/", "/api/v3/search"] {
            assert!(text.contains(&format!("location = {path} {{")), "{path}");
        }
        assert!(text.contains("error_page 404 /_errors/404.$svcdir_ext;"));
        let invalid_page = String::from_utf8(bodies::invalid_page_body(Format::Json).unwrap()).unwrap();
        assert!(text.contains(&format!("return 404 {};", quote(&invalid_page))), "{text}");
        assert!(!text.contains("\ndaemon off;"));
        // The slow-header limit of svcdir's servers (server::Limits), not nginx's 60 s.
        assert!(text.contains("\n    client_header_timeout 20s;\n"), "{text}");
        assert!(!text.contains(METHOD_PLACEHOLDER));
        assert!(!text.contains("{{") && !text.contains("{%"));
        assert!(NginxConfig { daemon_off: true, ..config() }.render().unwrap().contains("\ndaemon off;\n"));
    }
}
