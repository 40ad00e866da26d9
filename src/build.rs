//! `svcdir build`: load → validate → model → render → write, plus the search index.
//!
//! The one function here runs the stages in order and is the only caller of `write`.
//! Progress is reported through a callback so the binary can draw a bar.

use std::path::Path;
use std::time::Instant;

use rayon::prelude::*;

use crate::config::BuildConfig;
use crate::index::published::{self, Pointer};
use crate::input::DataErrors;
use crate::jobs::{ChangeRecord, Family as _, JobError, Jobs};
use crate::render::RenderContext;
use crate::write::{Counts, FileEntry, PublishSummary, Publisher, WriteError};

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
    Render(#[from] JobError),
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
    /// The previous build's change record could not be read.
    #[error(transparent)]
    Changes(#[from] crate::changes::ChangesError),
    /// The build would publish no service, or under half of those published now.
    #[error("{}", shrink_message(*.services, *.published))]
    Shrink {
        /// Services this build would publish.
        services: usize,
        /// Services the output holds now (none known on a first build).
        published: Option<usize>,
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
    // With --previous the change record continues another build's: always compared anew.
    // A FILE that is not the published index (a build stopped after the switch, before FILE
    // was replaced) makes it no no-op: the build runs and gives FILE the index.
    if let Some((published, published_index)) = publisher.published_fingerprint()
        && cfg.previous.is_none()
        && published == fingerprint
        && holds_index(&cfg.index, published_index)
    {
        // Same input, configuration and program: the published output is already this
        // build's output, byte for byte (and --index FILE has its index).
        // The root manifest alone says all this: no shard is read.
        let manifest = publisher.published();
        let totals = manifest.map(|m| m.totals).unwrap_or_default();
        let (files, bytes) = (totals.files, totals.bytes);
        let counts = manifest.and_then(|m| m.counts).unwrap_or_default();
        return Ok(BuildSummary {
            services: counts.services,
            organisations: counts.organisations,
            postcodes: counts.postcodes,
            files,
            publish: PublishSummary { unchanged: files, bytes, ..PublishSummary::default() },
            index_bytes: file_size(&cfg.index),
            up_to_date: true,
            seconds: started.elapsed().as_secs_f64(),
        });
    }

    progress(Progress::Stage("loading"));
    let dir = crate::validate::load_directory(&cfg.input)?;
    if !cfg.allow_shrink {
        check_shrink(dir.services.len(), published_services(&publisher, &cfg.output))?;
    }

    progress(Progress::Stage("reading the previous change record"));
    let source = cfg.previous.clone().unwrap_or_else(|| crate::changes::published(&cfg.output));
    let previous = crate::changes::read_previous(&source)?;

    progress(Progress::Stage("rendering"));
    let oruk = crate::openreferral::Index::new(&dir);
    let ctx = RenderContext { dir: &dir, publication: &cfg.publication, import_page_size: cfg.import_page_size };
    let listings = crate::listings::Listings::of(&dir);
    let all = Jobs { ctx, oruk: &oruk, listings: &listings };
    publisher.prepare()?;
    let jobs = all.all();
    progress(Progress::Jobs(jobs.len()));
    let files: usize = jobs
        .par_iter()
        .map(|&job| -> Result<usize, BuildError> {
            let count = put_files(cfg, &publisher, &all.render(job)?)?;
            progress(Progress::JobDone);
            Ok(count)
        })
        .try_reduce(|| 0, |a, b| Ok(a + b))?;

    // The change record compares the v4 single-object responses just put with the previous
    // build's, so it comes after every other file.
    let state = crate::changes::state(&dir, |rel| publisher.hash_of(rel));
    let (builds, state) = crate::changes::next_record(&dir, previous, state);
    let record = ChangeRecord { builds: &builds, state: &state, base_url: &cfg.publication.base_url };
    let files = files + put_files(cfg, &publisher, &record.render(())?)?;

    // The index goes into the generation with its pointer, so the one switch of the link
    // publishes files, index and pointer together. It is written to a file as it is made
    // (at 100,000 services it is larger than the rest of the build's memory), and copied
    // to --index FILE after the switch.
    progress(Progress::Stage("indexing"));
    let scratch = publisher.scratch("index");
    let (index_bytes, index) = write_index(&dir, cfg, &scratch).inspect_err(|_| {
        let _ = std::fs::remove_file(&scratch);
    })?;
    let pointer = Pointer::to(&index, index_bytes);
    let index_file = publisher.adopt(&pointer.path, &scratch, FileEntry { hash: index.clone(), size: index_bytes })?;
    publisher.put(published::POINTER, &pointer.to_bytes())?;
    let files = files + 2;

    progress(Progress::Stage("publishing"));
    let counts = Counts {
        services: dir.services.len(),
        organisations: dir.organisations.len(),
        postcodes: dir.postcodes.postcodes.len(),
    };
    crash_point(CrashPoint::BeforeSwitch);
    let publish = publisher.commit(&fingerprint, &index, counts)?;
    // --index FILE gets the published index's bytes after the switch: a build stopped
    // between the two leaves FILE one build behind, which the next build repairs.
    crash_point(CrashPoint::BeforeIndexFile);
    crate::write::replace_file_with(&cfg.index, &index_file)
        .map_err(|source| crate::index::IndexError::Write { path: cfg.index.clone(), source })?;
    Ok(BuildSummary {
        services: dir.services.len(),
        organisations: dir.organisations.len(),
        postcodes: dir.postcodes.postcodes.len(),
        files,
        publish,
        index_bytes,
        up_to_date: false,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Writes the search index of `dir` into a new file at `path`; its length and content hash.
fn write_index(dir: &crate::model::Directory, cfg: &BuildConfig, path: &Path) -> Result<(u64, String), BuildError> {
    let write = |source| crate::index::IndexError::Write { path: path.to_owned(), source };
    let mut file = std::fs::File::options().read(true).write(true).create_new(true).open(path).map_err(write)?;
    Ok(crate::index::SearchIndex::write_directory(dir, &cfg.publication, &mut file, path)?)
}

/// Whether the file at `path` holds the published index `hash`, hashed as it is read (the
/// index is the largest file of a build: not read into memory whole).
fn holds_index(path: &Path, hash: &str) -> bool {
    crate::write::content_hash_of_file(path).is_ok_and(|h| h == hash)
}

/// Where a test may stop a build as `kill -9` would (`SVCDIR_TEST_CRASH_AT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CrashPoint {
    /// The generation is complete, index and pointer included; the link is not switched.
    BeforeSwitch,
    /// The link is switched; `--index FILE` is not replaced yet.
    BeforeIndexFile,
}

/// Test-only fault injection: with `SVCDIR_TEST_CRASH_AT=before-switch` (or
/// `before-index-file`) the process aborts at that step, leaving the disk as a crash would.
fn crash_point(at: CrashPoint) {
    let name = match at {
        CrashPoint::BeforeSwitch => "before-switch",
        CrashPoint::BeforeIndexFile => "before-index-file",
    };
    if std::env::var_os("SVCDIR_TEST_CRASH_AT").is_some_and(|v| v == name) {
        eprintln!("svcdir: SVCDIR_TEST_CRASH_AT={name}: stopping here");
        std::process::abort();
    }
}

/// Puts rendered files into the target generation, with their precompressed variants when
/// asked; the number of files.
fn put_files(
    cfg: &BuildConfig,
    publisher: &Publisher,
    outputs: &[crate::render::OutputFile],
) -> Result<usize, BuildError> {
    let mut count = outputs.len();
    for file in outputs {
        let unchanged = publisher.put(&file.path, &file.bytes)?;
        if cfg.precompress && crate::compress::worth_it(&file.path, file.bytes.len()) {
            for (suffix, encode) in crate::compress::ENCODINGS {
                let variant = format!("{}{suffix}", file.path);
                // An unchanged file's variants are unchanged: not encoded again.
                if !(unchanged && publisher.keep_held(&variant)) {
                    let bytes =
                        encode(&file.bytes).map_err(|source| BuildError::Compress { path: variant.clone(), source })?;
                    publisher.put(&variant, &bytes)?;
                }
                count += 1;
            }
        }
    }
    Ok(count)
}

/// The shrink guard: an empty or truncated export must never empty the live site.
fn check_shrink(services: usize, published: Option<usize>) -> Result<(), BuildError> {
    let shrinks = match published {
        _ if services == 0 => true,
        Some(before) => services * 2 < before,
        None => false,
    };
    if shrinks { Err(BuildError::Shrink { services, published }) } else { Ok(()) }
}

fn shrink_message(services: usize, published: Option<usize>) -> String {
    let what = match published {
        Some(before) if services > 0 => {
            format!("this build would publish {services} services, fewer than half of the {before} published now")
        }
        Some(before) => format!("this build would publish no service (the output holds {before} now)"),
        None => "this build would publish no service".to_owned(),
    };
    format!("{what}; is the export empty or truncated? If this is intended, build again with --allow-shrink")
}

/// How many services the output holds now: recorded in its manifest, else (an output
/// written before the count was recorded, or a plain directory) the `count` of its import.
fn published_services(publisher: &Publisher, output: &Path) -> Option<usize> {
    if let Some(counts) = publisher.published().and_then(|m| m.counts) {
        return Some(counts.services);
    }
    let import = std::fs::read(output.join(crate::render::paths::IMPORT).join("index.json")).ok()?;
    let value: serde_json::Value = serde_json::from_slice(&import).ok()?;
    value.get("count")?.as_u64().map(|n| n as usize)
}

fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// XXH3-128 over everything a build's output depends on: the program itself, the
/// configuration, and every file of the input directory (names and bytes, in name order).
fn fingerprint(cfg: &BuildConfig) -> Result<String, BuildError> {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
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
        let mut file = std::fs::File::open(entry.path()).map_err(|e| input_error(entry.path(), e))?;
        let len = file.metadata().map_err(|e| input_error(entry.path(), e))?.len();
        hasher.update(&len.to_le_bytes());
        std::io::copy(&mut file, &mut hasher).map_err(|e| input_error(entry.path(), e))?;
    }
    Ok(format!("{:032x}", hasher.digest128()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shrink_guard_thresholds() {
        assert!(check_shrink(0, None).is_err(), "a first build with no service");
        assert!(check_shrink(0, Some(0)).is_err());
        assert!(check_shrink(1, None).is_ok());
        assert!(check_shrink(5, Some(10)).is_ok(), "exactly half is not fewer than half");
        assert!(check_shrink(4, Some(9)).is_err());
        assert!(check_shrink(100, Some(10)).is_ok(), "growth");
        let message = check_shrink(4, Some(9)).unwrap_err().to_string();
        assert!(
            message.contains("4 services, fewer than half of the 9") && message.contains("--allow-shrink"),
            "{message}"
        );
    }
}
