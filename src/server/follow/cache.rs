//! The cache folder of `svcdir-search --from`: where the indexes fetched from a store are
//! kept, and the one fetch under way, resumable across polls and restarts.
//!
//! The folder may hold files of others (`--cache` is the operator's folder), so nothing here
//! touches a file it did not write: what it wrote is listed in a record file, every other
//! name is left alone, and no link is followed (the files it makes are new, made with
//! `O_EXCL`; the files it reopens, with `O_NOFOLLOW`). The default folder is a new one of the
//! temporary directory with a random name, mode 0700, removed when the server stops.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The record of what this cache holds that svcdir-search wrote.
const RECORD: &str = ".svcdir-search-files";
/// The lock file, held while a process uses the folder.
const LOCK: &str = ".lock";
/// The names of partial fetches begin so (the rest is random, made by `tempfile`).
const PARTIAL_PREFIX: &str = ".svcdir-partial-";
/// A record larger than this is not one svcdir-search wrote.
const MAX_RECORD_BYTES: u64 = 64 << 10;

/// Why the cache folder cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// A file system call failed.
    #[error("cache folder {}: cannot {action}: {source}", path.display())]
    Io {
        /// The folder or file.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The cause.
        source: std::io::Error,
    },
    /// Another process holds the cache folder.
    #[error("cache folder {} is in use by another svcdir-search (one process per --cache folder)", path.display())]
    Busy {
        /// The folder.
        path: PathBuf,
    },
    /// A file svcdir-search did not write has the name an index needs.
    #[error("cache folder: {} is not a file svcdir-search wrote, and is left alone; move it away", path.display())]
    InTheWay {
        /// The file.
        path: PathBuf,
    },
}

/// The fetch under way: a file of the folder, the index it becomes, and the ETag of the
/// object its bytes came from (a resumed fetch asks for the same object).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Partial {
    file: String,
    /// The content hash its bytes are to have.
    pub(super) index: String,
    /// The ETag of the object whose first bytes it holds.
    pub(super) e_tag: Option<String>,
}

/// What [`RECORD`] holds.
#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Record {
    /// The hashes of the indexes kept as `<hash>.idx`.
    indexes: BTreeSet<String>,
    partial: Option<Partial>,
}

/// The cache folder of one process, locked while it runs.
#[derive(Debug)]
pub(super) struct Cache {
    dir: PathBuf,
    record: Record,
    _lock: File,
    /// The default folder, removed when the server stops (after the lock is closed: fields
    /// drop in order).
    _temporary: Option<tempfile::TempDir>,
}

/// A partial fetch reopened to go on: its file (read from its start, written at its end),
/// its length, and the ETag of the object its bytes came from.
#[derive(Debug)]
pub(super) struct Resumed {
    pub(super) file: File,
    pub(super) bytes: u64,
    pub(super) e_tag: Option<String>,
}

impl Cache {
    /// Opens and locks `dir` (made if missing), or makes a new folder of the temporary
    /// directory when `dir` is `None`.
    pub(super) fn open(dir: Option<&Path>) -> Result<Cache, CacheError> {
        let (dir, temporary) = match dir {
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(io(dir, "create"))?;
                (dir.to_owned(), None)
            }
            None => {
                use std::os::unix::fs::PermissionsExt as _;
                let temporary = tempfile::Builder::new()
                    .prefix("svcdir-search-")
                    .permissions(std::fs::Permissions::from_mode(0o700))
                    .tempdir()
                    .map_err(io(&std::env::temp_dir(), "make a folder in"))?;
                (temporary.path().to_owned(), Some(temporary))
            }
        };
        let lock_path = dir.join(LOCK);
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&lock_path)
            .map_err(io(&lock_path, "open its lock file"))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Err(CacheError::Busy { path: dir }),
            Err(std::fs::TryLockError::Error(source)) => {
                return Err(CacheError::Io { path: lock_path, action: "lock", source });
            }
        }
        let record = read_record(&dir.join(RECORD));
        let mut cache = Cache { dir, record, _lock: lock, _temporary: temporary };
        // Entries whose files are gone, or are no longer files, are forgotten.
        let before = cache.record.indexes.len();
        let dir = cache.dir.clone();
        cache.record.indexes.retain(|hash| is_file(&dir.join(index_name(hash))));
        let partial_gone = cache.record.partial.as_ref().is_some_and(|p| !is_file(&dir.join(&p.file)));
        if partial_gone {
            cache.record.partial = None;
        }
        if partial_gone || cache.record.indexes.len() != before {
            cache.save()?;
        }
        Ok(cache)
    }

    /// The folder.
    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of index `hash`, when this cache wrote it and it is still a regular file.
    pub(super) fn index(&self, hash: &str) -> Option<PathBuf> {
        let path = self.dir.join(index_name(hash));
        (self.record.indexes.contains(hash) && is_file(&path)).then_some(path)
    }

    /// The partial fetch of `hash`, reopened to go on, if there is one; a partial fetch of
    /// another index is removed (at most one is kept).
    pub(super) fn resume(&mut self, hash: &str) -> Result<Option<Resumed>, CacheError> {
        let Some(partial) = self.record.partial.clone() else { return Ok(None) };
        if partial.index != hash {
            self.discard_partial()?;
            return Ok(None);
        }
        let path = self.dir.join(&partial.file);
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&path)
            .and_then(|file| Ok((file.metadata()?, file)));
        match opened {
            Ok((meta, file)) if meta.is_file() => Ok(Some(Resumed { file, bytes: meta.len(), e_tag: partial.e_tag })),
            // Gone, or replaced by a link: start again.
            _ => {
                self.record.partial = None;
                self.save()?;
                Ok(None)
            }
        }
    }

    /// Starts a new partial fetch of `hash` from the object of ETag `e_tag`, removing any
    /// other; the file is new (made with `O_EXCL`, never a link's target).
    pub(super) fn start(&mut self, hash: &str, e_tag: Option<String>) -> Result<File, CacheError> {
        self.discard_partial()?;
        let (file, path) = tempfile::Builder::new()
            .prefix(PARTIAL_PREFIX)
            .tempfile_in(&self.dir)
            .and_then(|file| file.keep().map_err(|err| err.error))
            .map_err(io(&self.dir, "make a file in"))?;
        let name = path.file_name().expect("a file's name").to_string_lossy().into_owned();
        self.record.partial = Some(Partial { file: name, index: hash.to_owned(), e_tag });
        self.save()?;
        Ok(file)
    }

    /// The partial fetch of `hash`, complete and checked, becomes the index `<hash>.idx`.
    pub(super) fn finish(&mut self, hash: &str) -> Result<PathBuf, CacheError> {
        let partial = self.record.partial.take().filter(|p| p.index == hash).expect("a partial fetch of this index");
        let from = self.dir.join(&partial.file);
        let to = self.dir.join(index_name(hash));
        if self.record.indexes.contains(hash) {
            remove_if_file(&to);
        }
        // A link, not a rename: a file already at that name (not ours) stays as it is.
        match std::fs::hard_link(&from, &to) {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                self.record.partial = Some(partial);
                return Err(CacheError::InTheWay { path: to });
            }
            Err(source) => return Err(CacheError::Io { path: to, action: "link the fetched index to", source }),
        }
        remove_if_file(&from);
        self.record.indexes.insert(hash.to_owned());
        self.save()?;
        Ok(to)
    }

    /// Removes the partial fetch, if any (its bytes were refused, or another index is due).
    pub(super) fn discard_partial(&mut self) -> Result<(), CacheError> {
        if let Some(partial) = self.record.partial.take() {
            remove_if_file(&self.dir.join(&partial.file));
            self.save()?;
        }
        Ok(())
    }

    /// Removes the index `hash` if this cache wrote it (it did not pass when read).
    pub(super) fn remove(&mut self, hash: &str) -> Result<(), CacheError> {
        if self.record.indexes.remove(hash) {
            remove_if_file(&self.dir.join(index_name(hash)));
            self.save()?;
        }
        Ok(())
    }

    /// Removes every index this cache wrote but those of `keep` (a mapped file removed
    /// stays readable until its map goes: unlinking never changes bytes).
    pub(super) fn prune(&mut self, keep: &[&str]) -> Result<(), CacheError> {
        let stale: Vec<String> = self.record.indexes.iter().filter(|h| !keep.contains(&h.as_str())).cloned().collect();
        if stale.is_empty() {
            return Ok(());
        }
        for hash in &stale {
            remove_if_file(&self.dir.join(index_name(hash)));
            self.record.indexes.remove(hash);
        }
        self.save()
    }

    /// Writes the record: a new file renamed over the old (a link at its name is replaced,
    /// never followed).
    fn save(&self) -> Result<(), CacheError> {
        let path = self.dir.join(RECORD);
        let text = serde_json::to_vec_pretty(&self.record).expect("the record serialises");
        let mut file = tempfile::Builder::new()
            .prefix(".svcdir-record-")
            .tempfile_in(&self.dir)
            .map_err(io(&self.dir, "make a file in"))?;
        std::io::Write::write_all(&mut file, &text).map_err(io(file.path(), "write"))?;
        file.persist(&path).map_err(|err| CacheError::Io { path, action: "write", source: err.error })?;
        Ok(())
    }
}

/// The name of an index's file.
fn index_name(hash: &str) -> String {
    format!("{hash}.idx")
}

fn io(path: &Path, action: &'static str) -> impl FnOnce(std::io::Error) -> CacheError {
    let path = path.to_owned();
    move |source| CacheError::Io { path, action, source }
}

/// A regular file itself, not a link to one.
fn is_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
}

/// Unlinks `path` if it is a regular file (a link put in its place is left alone).
fn remove_if_file(path: &Path) {
    if is_file(path)
        && let Err(err) = std::fs::remove_file(path)
    {
        tracing::warn!(path = %path.display(), error = %err, "cannot remove a file of the cache folder");
    }
}

/// The record, if there is one that svcdir-search could have written: read without
/// following a link, bounded, its names checked; anything else is an empty record (the
/// files it would have named are then left alone, never removed).
fn read_record(path: &Path) -> Record {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32)
        .open(path);
    let mut bytes = Vec::new();
    let read = file.and_then(|file| {
        if !file.metadata()?.is_file() {
            return Err(std::io::Error::other("not a regular file"));
        }
        file.take(MAX_RECORD_BYTES).read_to_end(&mut bytes)
    });
    match read {
        Ok(_) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Record::default(),
        Err(err) => {
            tracing::warn!(path = %path.display(), error = %err, "cannot read the cache's record; starting a new one");
            return Record::default();
        }
    }
    let Ok(mut record) = serde_json::from_slice::<Record>(&bytes) else {
        tracing::warn!(path = %path.display(), "the cache's record is not one svcdir-search wrote; starting a new one");
        return Record::default();
    };
    record.indexes.retain(|hash| is_hash(hash));
    record.partial = record
        .partial
        .filter(|p| is_hash(&p.index) && p.file.starts_with(PARTIAL_PREFIX) && !p.file.contains('/') && p.file != "..");
    record
}

/// A content hash as pointers give it: 32 lowercase hex digits.
fn is_hash(text: &str) -> bool {
    text.len() == 32 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "0123456789abcdef0123456789abcdef";
    const B: &str = "fedcba9876543210fedcba9876543210";

    fn fetched(cache: &mut Cache, hash: &str, bytes: &[u8]) -> PathBuf {
        let mut file = cache.start(hash, Some("\"e\"".into())).unwrap();
        std::io::Write::write_all(&mut file, bytes).unwrap();
        cache.finish(hash).unwrap()
    }

    #[test]
    fn removes_only_what_it_wrote_and_follows_no_link() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"not the cache's").unwrap();
        let cache_dir = dir.path().join("cache");
        std::fs::create_dir(&cache_dir).unwrap();
        std::fs::write(cache_dir.join("search.idx"), b"the build's").unwrap();
        std::os::unix::fs::symlink(&victim, cache_dir.join(format!("{B}.idx"))).unwrap();
        std::os::unix::fs::symlink(&victim, cache_dir.join(RECORD)).unwrap();

        let mut cache = Cache::open(Some(&cache_dir)).unwrap();
        let a = fetched(&mut cache, A, b"a");
        // A name taken by a file it did not write is refused, and the file kept.
        cache.start(B, None).unwrap();
        assert!(matches!(cache.finish(B), Err(CacheError::InTheWay { .. })));
        cache.discard_partial().unwrap();
        cache.prune(&[]).unwrap();
        assert!(!a.exists());
        assert_eq!(std::fs::read(&victim).unwrap(), b"not the cache's");
        assert_eq!(std::fs::read(cache_dir.join("search.idx")).unwrap(), b"the build's");
        assert!(std::fs::symlink_metadata(cache_dir.join(format!("{B}.idx"))).unwrap().file_type().is_symlink());
        let mut left: Vec<String> =
            std::fs::read_dir(&cache_dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
        left.sort();
        assert_eq!(left, [LOCK, RECORD, &format!("{B}.idx"), "search.idx"]);
    }

    #[test]
    fn a_partial_fetch_and_the_indexes_outlive_the_process() {
        let dir = tempfile::tempdir().unwrap();
        {
            let mut cache = Cache::open(Some(dir.path())).unwrap();
            fetched(&mut cache, A, b"a");
            let mut file = cache.start(B, Some("\"b\"".into())).unwrap();
            std::io::Write::write_all(&mut file, b"half").unwrap();
        }
        let mut cache = Cache::open(Some(dir.path())).unwrap();
        assert!(cache.index(A).is_some());
        let resumed = cache.resume(B).unwrap().expect("the partial fetch");
        assert_eq!((resumed.bytes, resumed.e_tag.as_deref()), (4, Some("\"b\"")));
        // Another index's fetch replaces it: at most one partial fetch.
        cache.start(A, None).unwrap();
        assert!(cache.resume(B).unwrap().is_none());
        let partials = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with(PARTIAL_PREFIX))
            .count();
        assert_eq!(partials, 0);
    }

    #[test]
    fn the_default_folder_is_new_private_and_removed() {
        use std::os::unix::fs::PermissionsExt as _;
        let cache = Cache::open(None).unwrap();
        let dir = cache.dir().to_owned();
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        assert!(!dir.file_name().unwrap().to_string_lossy().ends_with(&std::process::id().to_string()));
        drop(cache);
        assert!(!dir.exists());
    }
}
