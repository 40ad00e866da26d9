//! `svcdir sample`: deterministic synthetic datasets in the input format (input-format.md).
//!
//! The same `(services, seed)` always gives byte-identical files: every random draw comes
//! from a [`ChaCha8Rng`] seeded with the seed (the clock is never read), postcodes from one
//! stream of it and each organisation, with its locations and services, from a stream of
//! its own. Records are serialised from the loader's own structs
//! (`crate::input::records`), so the generator and the loader agree by construction, and
//! written as they are made, so a million services take bounded memory.
//!
//! What the data looks like, and why:
//! - Places are real Scottish towns (`towns`) with the area codes current postcode files
//!   carry, including the post-2018 codes that only the alias table maps onto the fixed
//!   list of service areas; services name only codes of that list.
//! - Services mix coverage the way the directory does: mostly local (locations only),
//!   some local plus their council area, some area-only, a few national, a few with neither.
//! - Contact details are fictional (`example.org`, Ofcom drama numbers); see `text`.

mod draw;
mod organisation;
mod postcodes;
mod reference;
mod text;
mod towns;

#[cfg(test)]
mod tests;

use std::fs;
use std::path::PathBuf;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::input::files;
use crate::input::writer::{CATEGORIES_JSON, JsonLines, SERVICE_AREAS_JSON, WriteError, write_file};
use organisation::{Context, services_per_organisation};
use reference::{Areas, Categories};

/// The postcode file written, inside the dataset's postcode folder.
const POSTCODES_FILE: &str = "sample-smalluser.csv";

/// Most services one organisation runs (also bounds the given-slug key, see [`given_slug`]).
const MAX_SERVICES_PER_ORGANISATION: usize = 20;
// Service slug keys are `organisation index * 32 + position`, so positions must stay below 32.
const _: () = assert!(MAX_SERVICES_PER_ORGANISATION < 32);
/// First ChaCha stream used for organisations; the ones below are reserved.
const FIRST_ORGANISATION_STREAM: u64 = 16;

/// What to generate.
#[derive(Debug, Clone)]
pub struct SampleConfig {
    /// Number of services to generate (published and unpublished together).
    pub services: usize,
    /// Seed of the random generator: same seed, same bytes.
    pub seed: u64,
    /// Directory to write the dataset into (created if missing).
    pub out: PathBuf,
}

/// What was written.
#[derive(Debug, Clone, Default)]
pub struct SampleSummary {
    /// Organisations written.
    pub organisations: usize,
    /// Locations written.
    pub locations: usize,
    /// Services written.
    pub services: usize,
    /// Postcode rows written.
    pub postcodes: usize,
}

/// Why generation failed.
#[derive(Debug, thiserror::Error)]
pub enum SampleError {
    /// Writing a file failed.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// Writing the postcode CSV failed.
    #[error("cannot write {path}: {source}")]
    Csv {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: csv::Error,
    },
    /// The embedded reference data does not fit the generator (a bug in this crate).
    #[error("embedded {file} is unusable: {message}")]
    Embedded {
        /// `categories.json` or `service_areas.json`.
        file: &'static str,
        /// What is wrong.
        message: String,
    },
}

/// Writes a complete dataset into `cfg.out`: the two embedded reference files, the three
/// `.jsonl` files and `postcodes/sample-smalluser.csv`. Existing files of those names are
/// overwritten; other files in the directory are left alone.
pub fn generate(cfg: &SampleConfig) -> Result<SampleSummary, SampleError> {
    let categories = Categories::parse()?;
    let areas = Areas::parse()?;

    let postcode_dir = cfg.out.join(files::POSTCODES);
    fs::create_dir_all(&postcode_dir).map_err(|source| WriteError::Io { path: postcode_dir.clone(), source })?;
    write_file(&cfg.out.join(files::CATEGORIES), CATEGORIES_JSON)?;
    write_file(&cfg.out.join(files::SERVICE_AREAS), SERVICE_AREAS_JSON)?;

    let base = ChaCha8Rng::seed_from_u64(cfg.seed);
    let mut postcode_rng = base.clone();
    postcode_rng.set_stream(1);
    let postcodes = postcodes::generate(&mut postcode_rng, postcodes::target_count(cfg.services));
    postcodes::write_csv(&postcode_dir.join(POSTCODES_FILE), &postcodes)?;

    let ctx = Context::new(&categories, &areas, &postcodes);
    let mut out = Writers {
        organisations: JsonLines::create(cfg.out.join(files::ORGANISATIONS))?,
        locations: JsonLines::create(cfg.out.join(files::LOCATIONS))?,
        services: JsonLines::create(cfg.out.join(files::SERVICES))?,
    };
    let mut summary = SampleSummary { postcodes: postcodes.all.len(), ..SampleSummary::default() };
    let mut remaining = cfg.services;
    let mut index: u64 = 0;
    while remaining > 0 {
        // A stream per organisation: organisation n is the same whatever follows it.
        let mut rng = base.clone();
        rng.set_stream(FIRST_ORGANISATION_STREAM + index);
        let count = services_per_organisation(&mut rng).min(remaining);
        ctx.organisation(&mut rng, index, count, &mut out, &mut summary)?;
        remaining -= count;
        index += 1;
    }
    out.organisations.finish()?;
    out.locations.finish()?;
    out.services.finish()?;
    Ok(summary)
}

/// The three `.jsonl` files, written as the organisations are made.
struct Writers {
    organisations: JsonLines,
    locations: JsonLines,
    services: JsonLines,
}
