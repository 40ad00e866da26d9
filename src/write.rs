//! Writing: the only place that touches the output directory.
//!
//! Files go into a staging directory beside the output; only when every file is written is
//! the staging directory swapped in (an atomic exchange where the kernel offers it), so a
//! failed or interrupted build leaves the previous output exactly as it was.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Why writing failed.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// A file system operation failed.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// Where.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// A relative output path would leave the output directory.
    #[error("refusing to write outside the output directory: {0:?}")]
    UnsafePath(String),
}

fn io_err<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> WriteError + 'a {
    move |source| WriteError::Io { action, path: path.to_owned(), source }
}

/// A staging directory that becomes the output on [`Staging::commit`], and is removed if
/// dropped uncommitted.
#[derive(Debug)]
pub struct Staging {
    root: PathBuf,
    output: PathBuf,
    committed: bool,
}

impl Staging {
    /// Creates an empty staging directory beside `output`, clearing stale ones left by
    /// builds that were killed.
    pub fn create(output: &Path) -> Result<Staging, WriteError> {
        let name = output
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "public".to_owned());
        let parent = match output.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&parent).map_err(io_err("create", &parent))?;
        let prefix = format!(".{name}.staging-");
        if let Ok(entries) = fs::read_dir(&parent) {
            for entry in entries.flatten() {
                if entry.file_name().to_string_lossy().starts_with(&prefix) {
                    let _ = fs::remove_dir_all(entry.path());
                }
            }
        }
        let root = parent.join(format!("{prefix}{}", std::process::id()));
        fs::create_dir_all(&root).map_err(io_err("create", &root))?;
        Ok(Staging { root, output: output.to_owned(), committed: false })
    }

    /// The staging directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Creates a directory (and its parents) under the staging root.
    pub fn create_dir(&self, rel: &str) -> Result<(), WriteError> {
        let path = self.resolve(rel)?;
        fs::create_dir_all(&path).map_err(io_err("create", &path))
    }

    /// Writes one file; its directory must exist (see [`Staging::create_dir`]).
    pub fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), WriteError> {
        let path = self.resolve(rel)?;
        fs::write(&path, bytes).map_err(io_err("write", &path))
    }

    fn resolve(&self, rel: &str) -> Result<PathBuf, WriteError> {
        // Paths are made from validated slugs and UUIDs; this is the last line of defence.
        let safe = !rel.is_empty()
            && !rel.starts_with('/')
            && rel.split('/').all(|part| !part.is_empty() && part != "." && part != "..")
            && !rel.contains(['\\', '\0']);
        if !safe {
            return Err(WriteError::UnsafePath(rel.to_owned()));
        }
        Ok(self.root.join(rel))
    }

    /// Puts the staged tree in place of the output directory.
    pub fn commit(mut self) -> Result<(), WriteError> {
        if self.output.exists() {
            exchange(&self.root, &self.output)?;
            // `root` now holds the previous output.
            fs::remove_dir_all(&self.root).map_err(io_err("remove the previous output", &self.root))?;
        } else {
            fs::rename(&self.root, &self.output).map_err(io_err("rename the staging directory to", &self.output))?;
        }
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.root);
        }
    }
}

/// Swaps two directories: atomically with `renameat2(RENAME_EXCHANGE)` where the kernel
/// and file system offer it, else by two renames.
fn exchange(a: &Path, b: &Path) -> Result<(), WriteError> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        if renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).is_ok() {
            return Ok(());
        }
    }
    let aside = a.with_extension("previous");
    fs::rename(b, &aside).map_err(io_err("move aside", b))?;
    fs::rename(a, b).map_err(io_err("rename the staging directory to", b))?;
    fs::rename(&aside, a).map_err(io_err("move back", &aside))
}

/// Writes a file through a temporary sibling and a rename, so readers never see half of it.
pub fn write_file_atomically(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(io_err("create", parent))?;
    }
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    fs::write(&tmp, bytes).map_err(io_err("write", &tmp))?;
    fs::rename(&tmp, path).map_err(io_err("rename into", path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_replaces_and_drop_discards() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("public");
        fs::create_dir_all(&out).unwrap();
        fs::write(out.join("old.txt"), "old").unwrap();

        let staging = Staging::create(&out).unwrap();
        staging.create_dir("a/b").unwrap();
        staging.write("a/b/new.txt", b"new").unwrap();
        drop(staging);
        assert_eq!(fs::read_to_string(out.join("old.txt")).unwrap(), "old");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "staging removed");

        let staging = Staging::create(&out).unwrap();
        staging.write("new.txt", b"new").unwrap();
        staging.commit().unwrap();
        assert!(!out.join("old.txt").exists());
        assert_eq!(fs::read_to_string(out.join("new.txt")).unwrap(), "new");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "previous output removed");
    }

    #[test]
    fn refuses_paths_outside() {
        let dir = tempfile::tempdir().unwrap();
        let staging = Staging::create(&dir.path().join("public")).unwrap();
        for bad in ["../x", "/etc/x", "a/../../x", "a//b", "a\\b", "a\0b", ""] {
            assert!(matches!(staging.write(bad, b""), Err(WriteError::UnsafePath(_))), "{bad:?}");
        }
    }
}
