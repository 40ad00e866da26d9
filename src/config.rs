//! Validated configurations: what the library runs on, made once from raw arguments.

use std::path::PathBuf;

use crate::views::Publication;

/// A raw argument that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    /// A URL option is not an absolute http(s) origin.
    #[error("{option} {value:?} must be an absolute http:// or https:// URL without query or fragment")]
    BadUrl {
        /// The option, e.g. `--base-url`.
        option: &'static str,
        /// What was given.
        value: String,
    },
    /// The import page size is out of range.
    #[error("--import-page-size must be from 1 to 10000, not {0}")]
    BadPageSize(usize),
}

/// Everything `svcdir build` needs.
#[derive(Debug, Clone)]
pub struct BuildConfig {
    /// Dataset directory.
    pub input: PathBuf,
    /// Output directory, replaced whole on success.
    pub output: PathBuf,
    /// Search index file.
    pub index: PathBuf,
    /// Origins, licence and attribution.
    pub publication: Publication,
    /// Services per import page.
    pub import_page_size: usize,
    /// Write `.gz` and `.br` variants.
    pub precompress: bool,
    /// Where the previous build's change record is read (`--previous`); `None`: the output.
    pub previous: Option<crate::changes::Source>,
    /// Publish even when the build has no service or under half of the published ones.
    pub allow_shrink: bool,
}

impl BuildConfig {
    /// Validates raw build arguments.
    pub fn from_args(args: &crate::cli::BuildArgs) -> Result<BuildConfig, ConfigError> {
        let base_url = origin("--base-url", &args.base_url)?;
        let site_url = match &args.site_url {
            Some(site) => origin("--site-url", site)?,
            None => base_url.clone(),
        };
        if !(1..=10_000).contains(&args.import_page_size) {
            return Err(ConfigError::BadPageSize(args.import_page_size));
        }
        Ok(BuildConfig {
            input: args.input.clone(),
            output: args.output.clone(),
            index: args.index.clone(),
            publication: Publication::with_defaults(base_url, site_url),
            import_page_size: args.import_page_size,
            precompress: args.precompress,
            previous: args.previous.as_deref().map(crate::changes::Source::parse),
            allow_shrink: args.allow_shrink,
        })
    }
}

/// Checks an origin-like URL and drops trailing slashes, so that paths join with one `/`.
pub fn origin(option: &'static str, value: &str) -> Result<String, ConfigError> {
    let bad = || ConfigError::BadUrl { option, value: value.to_owned() };
    let rest = value.strip_prefix("https://").or_else(|| value.strip_prefix("http://")).ok_or_else(bad)?;
    let host = rest.split('/').next().unwrap_or("");
    if host.is_empty() || value.contains(['?', '#']) || value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad());
    }
    Ok(value.trim_end_matches('/').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins() {
        assert_eq!(origin("--base-url", "https://example.org/").unwrap(), "https://example.org");
        assert_eq!(origin("--base-url", "http://127.0.0.1:8080").unwrap(), "http://127.0.0.1:8080");
        assert_eq!(origin("--base-url", "https://example.org/dir/").unwrap(), "https://example.org/dir");
        for bad in ["example.org", "ftp://x", "https://", "https://x/?a", "https://x y", "https:///path"] {
            assert!(origin("--base-url", bad).is_err(), "{bad}");
        }
    }
}
