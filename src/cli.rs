//! Command-line surface of `svcdir` and `svcdir-search`: clap structs and help text only.
//!
//! Raw arguments never leave this module unvalidated: `config` turns them into the
//! configurations the library runs on.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Publishes the read-only directory API as static files, plus a search index.
#[derive(Debug, Parser)]
#[command(name = "svcdir", version, about, long_about = None)]
pub struct SvcdirCli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands of `svcdir`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Read and validate a dataset, then write every non-search response under the output
    /// directory and the search index. A failed build changes nothing.
    Build(BuildArgs),
    /// Read and validate a dataset and report every problem, writing nothing.
    Validate(ValidateArgs),
    /// Write a deterministic synthetic dataset (for the embedded default and benchmarks).
    Sample(SampleArgs),
}

/// Options of `svcdir build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Dataset directory (categories.json, service_areas.json, *.jsonl, postcodes/*.csv).
    #[arg(long, value_name = "DIR", default_value = "input")]
    pub input: PathBuf,
    /// Output directory. Replaced as a whole, and only when the build succeeds.
    #[arg(long, value_name = "DIR", default_value = "public")]
    pub output: PathBuf,
    /// Where to write the search index read by svcdir-search.
    #[arg(long, value_name = "FILE", default_value = "build/search.idx")]
    pub index: PathBuf,
    /// Public origin of the API, e.g. https://directory.example.org. Every absolute URL in
    /// every response (next, previous, permalink, directory_url) starts with it.
    #[arg(long, value_name = "URL", env = "SVCDIR_BASE_URL")]
    pub base_url: String,
    /// Origin of the human-facing directory site used in permalink and directory_url.
    /// Defaults to the base URL.
    #[arg(long, value_name = "URL")]
    pub site_url: Option<String>,
    /// Services per page of /api/v4/import/.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub import_page_size: usize,
    /// No progress bar and no summary line; errors are still printed.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Options of `svcdir validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Dataset directory.
    #[arg(long, value_name = "DIR", default_value = "input")]
    pub input: PathBuf,
}

/// Options of `svcdir sample`.
#[derive(Debug, Args)]
pub struct SampleArgs {
    /// Number of services to generate (a few are unpublished).
    #[arg(long, value_name = "N", default_value_t = 400)]
    pub services: usize,
    /// Seed of the generator: the same seed and size always give the same bytes.
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,
    /// Directory to write the dataset into; created when missing, its files overwritten.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}
