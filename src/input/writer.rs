//! Writing a dataset folder in the input format, for the commands that make one
//! (`svcdir sample`, `svcdir convert`): the embedded reference files (the category tree and
//! the fixed list of service areas) and one JSON-lines writer, under the names of
//! [`super::files`].

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

/// The category tree of the embedded default dataset, written verbatim as
/// `categories.json` when no other is given.
pub const CATEGORIES_JSON: &str = include_str!("reference/categories.json");
/// The fixed list of service areas, written verbatim as `service_areas.json` when no other
/// is given.
pub(crate) const SERVICE_AREAS_JSON: &str = include_str!("reference/service_areas.json");

/// A dataset file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Creating or writing the file failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A record could not be serialised.
    #[error("cannot write {path}: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: serde_json::Error,
    },
}

/// Writes `contents` to `path` whole.
pub(crate) fn write_file(path: &Path, contents: &str) -> Result<(), WriteError> {
    std::fs::write(path, contents).map_err(|source| WriteError::Io { path: path.to_path_buf(), source })
}

/// One `.jsonl` file being written, one record per line, as records are made (bounded
/// memory whatever the number of records).
pub(crate) struct JsonLines {
    path: PathBuf,
    w: BufWriter<File>,
}

impl JsonLines {
    /// Creates (or truncates) the file.
    pub(crate) fn create(path: PathBuf) -> Result<Self, WriteError> {
        let file = File::create(&path).map_err(|source| WriteError::Io { path: path.clone(), source })?;
        Ok(Self { path, w: BufWriter::with_capacity(1 << 16, file) })
    }

    /// Appends one record as one line.
    pub(crate) fn write<T: Serialize>(&mut self, record: &T) -> Result<(), WriteError> {
        serde_json::to_writer(&mut self.w, record)
            .map_err(|source| WriteError::Json { path: self.path.clone(), source })?;
        self.w.write_all(b"\n").map_err(|source| WriteError::Io { path: self.path.clone(), source })
    }

    /// Writes every record of `records` to a new file at `path`.
    pub(crate) fn write_all<T: Serialize>(
        path: PathBuf,
        records: impl IntoIterator<Item = T>,
    ) -> Result<(), WriteError> {
        let mut file = JsonLines::create(path)?;
        for record in records {
            file.write(&record)?;
        }
        file.finish()
    }

    /// Flushes the file; an error here is a write error, never lost in a drop.
    pub(crate) fn finish(mut self) -> Result<(), WriteError> {
        self.w.flush().map_err(|source| WriteError::Io { path: self.path, source })
    }
}
