//! `svcdir build`: load → validate → model → render → write, plus the search index.
//!
//! The one function here runs the stages in order and is the only caller of `write`.
//! Progress is reported through a callback so the binary can draw a bar.

use std::path::Path;
use std::time::Instant;

use rayon::prelude::*;

use crate::config::BuildConfig;
use crate::input::DataErrors;
use crate::render::{RenderContext, RenderError};
use crate::write::{Counts, Manifest, PublishSummary, Publisher, WriteError};

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
    /// Files of the output.
    pub files: usize,
    /// What changed compared with the previously published output.
    pub publish: PublishSummary,
    /// Size of the search index file.
    pub index_bytes: u64,
    /// The inputs, configuration and program were those of the published output, so
    /// nothing was read further, rendered or written.
    pub up_to_date: bool,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// Why a build failed; the published output is untouched in every case.
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
    /// A precompressed variant could not be encoded.
    #[error("cannot compress {path}: {source}")]
    Compress {
        /// The variant's path.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The build would publish no service, or fewer than half of what the output holds now,
    /// and `--allow-shrink` was not given (behaviour.md, `svcdir build`).
    #[error(
        "refusing to publish {services} service{} where {output} now has {previous}: {why}; if this is intended, run again with --allow-shrink",
        if *services == 1 { "" } else { "s" },
        output = output.display()
    )]
    Shrink {
        /// Services of this build.
        services: usize,
        /// Services the output directory publishes now.
        previous: usize,
        /// The output directory.
        output: std::path::PathBuf,
        /// Which rule stopped it.
        why: &'static str,
    },
    /// The input directory could not be read for its fingerprint.
    #[error("cannot read {path}: {source}")]
    Input {
        /// The file.
        path: std::path::PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Runs a whole build.
pub fn build(cfg: &BuildConfig, progress: &(dyn Fn(Progress) + Sync)) -> Result<BuildSummary, BuildError> {
    let started = Instant::now();
    let mut publisher = Publisher::open(&cfg.output)?;
    let fingerprint = fingerprint(cfg)?;
    let index_hash = || std::fs::read(&cfg.index).map(|bytes| crate::write::content_hash(&bytes)).ok();
    if let Some((published, published_index)) = publisher.published_fingerprint()
        && published == fingerprint
        && index_hash().as_deref() == Some(published_index)
    {
        // Same input, configuration and program: the published output is already this
        // build's output, byte for byte; its manifest holds the numbers.
        let manifest = publisher.published();
        let files = manifest.map_or(0, |m| m.files.len());
        let counts = manifest.and_then(|m| m.counts).unwrap_or_default();
        return Ok(BuildSummary {
            services: counts.services,
            organisations: counts.organisations,
            postcodes: counts.postcodes,
            files,
            publish: PublishSummary {
                unchanged: files,
                bytes: manifest.map_or(0, Manifest::bytes),
                ..PublishSummary::default()
            },
            index_bytes: file_size(&cfg.index),
            up_to_date: true,
            seconds: started.elapsed().as_secs_f64(),
        });
    }

    progress(Progress::Stage("loading"));
    let dir = crate::validate::load_directory(&cfg.input)?;
    if !cfg.allow_shrink {
        check_shrink(dir.services.len(), published_services(&cfg.output), &cfg.output)?;
    }
    publisher.set_counts(Counts {
        services: dir.services.len(),
        organisations: dir.organisations.len(),
        postcodes: dir.postcodes.postcodes.len(),
    });

    progress(Progress::Stage("rendering"));
    let ctx = RenderContext { dir: &dir, publication: &cfg.publication, import_page_size: cfg.import_page_size };
    publisher.prepare()?;
    let jobs = ctx.jobs();
    progress(Progress::Jobs(jobs.len()));
    let files: usize = jobs
        .par_iter()
        .map(|&job| -> Result<usize, BuildError> {
            let outputs = ctx.render(job)?;
            let mut count = outputs.len();
            for file in &outputs {
                let unchanged = publisher.put(&file.path, &file.bytes)?;
                if cfg.precompress && crate::compress::worth_it(&file.path, file.bytes.len()) {
                    for (suffix, encode) in crate::compress::ENCODINGS {
                        let variant = format!("{}{suffix}", file.path);
                        // An unchanged file's variants are unchanged: not encoded again.
                        if !(unchanged && publisher.keep_held(&variant)) {
                            let bytes = encode(&file.bytes)
                                .map_err(|source| BuildError::Compress { path: variant.clone(), source })?;
                            publisher.put(&variant, &bytes)?;
                        }
                        count += 1;
                    }
                }
            }
            progress(Progress::JobDone);
            Ok(count)
        })
        .try_reduce(|| 0, |a, b| Ok(a + b))?;

    progress(Progress::Stage("indexing"));
    crate::index::SearchIndex::write_directory(&dir, &cfg.publication, &cfg.index)?;
    let index = index_hash().ok_or_else(|| BuildError::Input {
        path: cfg.index.clone(),
        source: std::io::Error::other("the index just written cannot be read back"),
    })?;

    progress(Progress::Stage("publishing"));
    let publish = publisher.commit(&fingerprint, &index)?;
    Ok(BuildSummary {
        services: dir.services.len(),
        organisations: dir.organisations.len(),
        postcodes: dir.postcodes.postcodes.len(),
        files,
        publish,
        index_bytes: file_size(&cfg.index),
        up_to_date: false,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The shrink guard: no service at all, or fewer than half of `previous` (the services the
/// output publishes now, `None` on a first build), stops the build before anything is
/// written, so an empty or truncated export never empties the live site.
pub fn check_shrink(services: usize, previous: Option<usize>, output: &Path) -> Result<(), BuildError> {
    let previous_count = previous.unwrap_or(0);
    let why = if services == 0 {
        "the dataset has no published service (an empty or truncated export?)"
    } else if services * 2 < previous_count {
        "fewer than half of the services published now (a truncated export?)"
    } else {
        return Ok(());
    };
    Err(BuildError::Shrink { services, previous: previous_count, output: output.to_owned(), why })
}

/// The number of services the output directory publishes now: the `count` of its import,
/// whatever version of svcdir wrote it; `None` when it holds no build.
pub fn published_services(output: &Path) -> Option<usize> {
    let bytes = std::fs::read(output.join(crate::render::paths::IMPORT).join("index.json")).ok()?;
    let import: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    import.get("count")?.as_u64().map(|n| n as usize)
}

fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// BLAKE3 over everything a build's output depends on: the program itself, the
/// configuration, and every file of the input directory (names and bytes, in name order).
fn fingerprint(cfg: &BuildConfig) -> Result<String, BuildError> {
    let mut hasher = blake3::Hasher::new();
    hasher.update(env!("CARGO_PKG_VERSION").as_bytes());
    // Any change to the program (rendering, templates) must rebuild.
    if let Some(bytes) = std::env::current_exe().ok().and_then(|exe| std::fs::read(exe).ok()) {
        hasher.update(&bytes);
    }
    let config = format!("{:?}|{}|{}", cfg.publication, cfg.import_page_size, cfg.precompress);
    hasher.update(&(config.len() as u64).to_le_bytes());
    hasher.update(config.as_bytes());
    let input_error = |path: &Path, source| BuildError::Input { path: path.to_owned(), source };
    for entry in walkdir::WalkDir::new(&cfg.input).sort_by_file_name() {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(&cfg.input).to_owned();
            BuildError::Input { path, source: e.into() }
        })?;
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry.path().strip_prefix(&cfg.input).unwrap_or(entry.path());
        let name = rel.to_string_lossy();
        hasher.update(&(name.len() as u64).to_le_bytes());
        hasher.update(name.as_bytes());
        let file = std::fs::File::open(entry.path()).map_err(|e| input_error(entry.path(), e))?;
        let len = file.metadata().map_err(|e| input_error(entry.path(), e))?.len();
        hasher.update(&len.to_le_bytes());
        hasher.update_reader(file).map_err(|e| input_error(entry.path(), e))?;
    }
    Ok(hasher.finalize().to_hex().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shrink_guard() {
        let out = Path::new("public");
        assert!(check_shrink(10, None, out).is_ok(), "a first build");
        assert!(check_shrink(5, Some(10), out).is_ok(), "exactly half");
        assert!(check_shrink(11, Some(10), out).is_ok());
        assert!(matches!(check_shrink(4, Some(10), out), Err(BuildError::Shrink { services: 4, previous: 10, .. })));
        assert!(matches!(check_shrink(0, None, out), Err(BuildError::Shrink { services: 0, .. })), "empty first");
        let message = check_shrink(0, Some(400), out).unwrap_err().to_string();
        assert!(
            message.contains("0 services where public now has 400") && message.contains("--allow-shrink"),
            "{message}"
        );
    }
}
