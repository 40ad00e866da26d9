//! `svcdir sample`: deterministic synthetic datasets (placeholder; being written).

use std::path::PathBuf;

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
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Writes a complete dataset into `cfg.out`.
pub fn generate(_cfg: &SampleConfig) -> Result<SampleSummary, SampleError> {
    todo!("sample generator")
}
