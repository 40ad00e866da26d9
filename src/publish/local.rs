//! The tree to publish as it is on disk: every file under `--public` with its content hash
//! and size, and the manifest (root and shards) that describes exactly those files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::PublishError;
use crate::write::{Encoded, FileEntry, MANIFEST, Manifest, is_manifest_path};

/// The files of the tree to publish.
#[derive(Debug, Clone)]
pub(crate) struct LocalTree {
    /// The directory (a build's output, possibly a symbolic link to its generation).
    pub root: PathBuf,
    /// Every file but the manifest's own, by relative `/`-separated path.
    pub files: BTreeMap<String, FileEntry>,
    /// The manifest to upload after the files: the build's own when it describes exactly
    /// these files (encoding is deterministic, so these are its bytes), else one made from
    /// them.
    pub manifest: Encoded,
    /// Symbolic links under the root (relative paths): not followed, so not published.
    pub skipped_links: Vec<String>,
}

impl LocalTree {
    /// Reads and hashes every file under `root` (hashing in parallel: it reads the whole
    /// tree, which the publish would have to read anyway to check what changed).
    pub(crate) fn scan(root: &Path) -> Result<LocalTree, PublishError> {
        let local = |source: std::io::Error, path: &Path| PublishError::Local { path: path.to_owned(), source };
        if !root.is_dir() {
            let err = std::io::Error::new(std::io::ErrorKind::NotFound, "not a directory");
            return Err(local(err, root));
        }
        let mut rels = Vec::new();
        let mut skipped_links = Vec::new();
        for entry in walkdir::WalkDir::new(root).follow_root_links(true) {
            let entry = entry.map_err(|err| {
                let path = err.path().unwrap_or(root).to_owned();
                local(err.into(), &path)
            })?;
            let rel = entry.path().strip_prefix(root).unwrap_or(entry.path());
            if entry.file_type().is_symlink() {
                // A link could name anything on the machine: never followed, but named.
                skipped_links.push(rel.to_string_lossy().replace(std::path::MAIN_SEPARATOR, "/"));
                continue;
            }
            if !entry.file_type().is_file() {
                continue;
            }
            let rel = rel
                .to_str()
                .filter(|r| !r.contains('\\'))
                .ok_or_else(|| local(std::io::Error::other("the file name is not UTF-8"), entry.path()))?;
            let rel = rel.replace(std::path::MAIN_SEPARATOR, "/");
            if !is_manifest_path(&rel) {
                rels.push(rel);
            }
        }
        let files = rels
            .into_par_iter()
            .map(|rel| {
                let path = root.join(&rel);
                let bytes = std::fs::read(&path).map_err(|err| local(err, &path))?;
                Ok((rel, FileEntry::of(&bytes)))
            })
            .collect::<Result<BTreeMap<_, _>, PublishError>>()?;
        let manifest = match Manifest::read(root) {
            Some(built) if built.files == files => built,
            _ => Manifest::of_files(files.clone()),
        };
        let manifest = manifest.encode().map_err(std::io::Error::other).map_err(|e| local(e, root))?;
        Ok(LocalTree { root: root.to_owned(), files, manifest, skipped_links })
    }

    /// The bytes of one file.
    pub(crate) fn read(&self, rel: &str) -> Result<Vec<u8>, PublishError> {
        if rel == MANIFEST {
            return Ok(self.manifest.root_bytes.clone());
        }
        if let Some(bytes) = self.manifest.shards.get(rel) {
            return Ok(bytes.clone());
        }
        let path = self.root.join(rel);
        std::fs::read(&path).map_err(|source| PublishError::Local { path, source })
    }
}
