//! `svcdir build`: load → validate → model → render → write, plus the search index.
//!
//! The one function here runs the stages in order and is the only caller of `write`.
//! Progress is reported through a callback so the binary can draw a bar.

use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use crate::config::BuildConfig;
use crate::input::DataErrors;
use crate::render::{RenderContext, RenderError};
use crate::write::{Staging, WriteError};

/// What a build reports as it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// A stage started.
    Stage(&'static str),
    /// Rendering and writing started: this many jobs.
    Jobs(usize),
    /// One more job's files are written.
    JobDone,
}

/// What a successful build did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BuildSummary {
    /// Published services.
    pub services: usize,
    /// Published organisations.
    pub organisations: usize,
    /// Live postcodes.
    pub postcodes: usize,
    /// Files written under the output directory.
    pub files: usize,
    /// Bytes written under the output directory.
    pub bytes: u64,
    /// Size of the search index file.
    pub index_bytes: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Why a build failed; the previous output is untouched in every case.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The dataset breaks the input format.
    #[error("{0}")]
    Data(#[from] DataErrors),
    /// A response could not be rendered.
    #[error(transparent)]
    Render(#[from] RenderError),
    /// The output could not be written.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// The search index could not be written.
    #[error("cannot write the search index: {0}")]
    Index(#[from] crate::index::IndexError),
}

/// Runs a whole build.
pub fn build(cfg: &BuildConfig, progress: &(dyn Fn(Progress) + Sync)) -> Result<BuildSummary, BuildError> {
    let started = Instant::now();
    progress(Progress::Stage("loading"));
    let dir = crate::validate::load_directory(&cfg.input)?;

    progress(Progress::Stage("rendering"));
    let ctx = RenderContext {
        dir: &dir,
        publication: &cfg.publication,
        import_page_size: cfg.import_page_size,
    };
    let staging = Staging::create(&cfg.output)?;
    let jobs = ctx.jobs();
    progress(Progress::Jobs(jobs.len()));
    let files = AtomicUsize::new(0);
    let bytes = AtomicU64::new(0);
    jobs.par_iter().try_for_each(|&job| -> Result<(), BuildError> {
        let outputs = ctx.render(job)?;
        let mut made_dir: Option<&str> = None;
        for file in &outputs {
            let parent = file.path.rsplit_once('/').map_or("", |(p, _)| p);
            if !parent.is_empty() && made_dir != Some(parent) {
                staging.create_dir(parent)?;
                made_dir = Some(parent);
            }
            staging.write(&file.path, &file.bytes)?;
            bytes.fetch_add(file.bytes.len() as u64, Ordering::Relaxed);
        }
        files.fetch_add(outputs.len(), Ordering::Relaxed);
        progress(Progress::JobDone);
        Ok(())
    })?;

    progress(Progress::Stage("indexing"));
    let index_bytes = write_index(&dir, cfg)?;

    progress(Progress::Stage("publishing"));
    staging.commit()?;
    Ok(BuildSummary {
        services: dir.services.len(),
        organisations: dir.organisations.len(),
        postcodes: dir.postcodes.postcodes.len(),
        files: files.into_inner(),
        bytes: bytes.into_inner(),
        index_bytes,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Writes the search index (atomically, beside its final name) and gives its size.
fn write_index(dir: &crate::model::Directory, cfg: &BuildConfig) -> Result<u64, BuildError> {
    let index = crate::index::SearchIndex::build(dir, &cfg.publication);
    index.write(&cfg.index)?;
    Ok(std::fs::metadata(Path::new(&cfg.index)).map(|m| m.len()).unwrap_or(0))
}
