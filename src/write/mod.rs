//! Writing: the only place that touches the output directory.
//!
//! The output path is a symbolic link to one of two generation directories kept beside it
//! (`.public.gens/a` and `.public.gens/b`), so readers always see one complete generation.
//! A build brings the *inactive* generation up to date, writing only the files whose bytes
//! differ from what that generation holds and removing the ones that are gone, then points
//! the link at it with a single atomic rename. A failed or killed build leaves the published
//! generation, and the link, exactly as they were.
//!
//! Each generation carries its manifest (path → content hash and size: `_manifest.json` and
//! its shards under `_manifest/`, see [`ManifestRoot`]), which is both the record of what the
//! generation holds and what an upload step or a CDN can use.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use rayon::prelude::*;

mod files;
mod lock;
mod manifest;

pub use files::NO_SYNC_ENV;
use files::{
    link_tree, point_link, remove_file_and_empty_parents, remove_stale_temporaries, remove_tree, resolve, sync_dir,
    sync_generation, write_creating_parents,
};
pub(crate) use files::{replace_file, replace_file_with, write_file_atomically};
use lock::OutputLock;
pub use manifest::{
    Counts, FileEntry, MANIFEST, Manifest, ManifestRoot, Totals, content_hash, is_manifest_path, shard_path,
};
pub(crate) use manifest::{Encoded, SHARDS, content_hash_of_file, parse_shard, shard_prefix};

const GENERATIONS: [&str; 2] = ["a", "b"];

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
    /// The manifest could not be serialised.
    #[error("cannot serialise the manifest: {0}")]
    Manifest(#[from] serde_json::Error),
    /// Another build holds the output's lock.
    #[error(
        "another svcdir build is writing {output} (it holds {lock}); run one build at a time, or wait for it to finish"
    )]
    Busy {
        /// The output directory.
        output: PathBuf,
        /// The lock file.
        lock: PathBuf,
    },
}

fn io_err<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> WriteError + 'a {
    move |source| WriteError::Io { action, path: path.to_owned(), source }
}

/// What a publication changed, compared with the previously published output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PublishSummary {
    /// Files that are new or whose bytes changed.
    pub changed: usize,
    /// Files with the same bytes as before.
    pub unchanged: usize,
    /// Files that no longer exist.
    pub removed: usize,
    /// Files actually written to disk (the inactive generation also catches up with the
    /// previous build's changes).
    pub written: usize,
    /// Bytes of every file of the output.
    pub bytes: u64,
}

/// The output directory and its two generations.
#[derive(Debug)]
pub(crate) struct Publisher {
    output: PathBuf,
    gens: PathBuf,
    target_name: &'static str,
    target: PathBuf,
    /// The published generation's root manifest, if there is one (its entries are read only
    /// where a build needs them: the up-to-date check reads this alone).
    active: Option<ManifestRoot>,
    /// What the target generation holds on disk, once prepared.
    held: Manifest,
    /// The target's root manifest, when it had one: the shards it names are on disk, checked.
    held_root: Option<ManifestRoot>,
    new: Mutex<BTreeMap<String, FileEntry>>,
    written: AtomicUsize,
    bytes: AtomicU64,
    /// Held for the whole build (see [`Publisher::open`]).
    _lock: OutputLock,
}

impl Publisher {
    /// Takes the output's lock (`.NAME.lock` beside it), finds the published generation (if
    /// any) and picks the other one as the target.
    ///
    /// Two builds of one output at once would write into the same inactive generation; the
    /// second one fails at once with [`WriteError::Busy`] and touches nothing.
    pub(crate) fn open(output: &Path) -> Result<Publisher, WriteError> {
        let name = output.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "public".to_owned());
        let parent = match output.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&parent).map_err(io_err("create", &parent))?;
        let lock = OutputLock::take(output, parent.join(format!(".{name}.lock")))?;
        let gens = parent.join(format!(".{name}.gens"));
        let active_name = fs::read_link(output)
            .ok()
            .and_then(|target| target.file_name().map(|n| n.to_string_lossy().into_owned()))
            .and_then(|n| GENERATIONS.iter().copied().find(|g| *g == n));
        let target_name = match active_name {
            Some("a") => "b",
            _ => "a",
        };
        // A plain directory (an older layout, or made by hand) has no usable manifest: it is
        // replaced whole.
        let active = active_name.and_then(|_| ManifestRoot::read(output));
        Ok(Publisher {
            output: output.to_owned(),
            target: gens.join(target_name),
            gens,
            target_name,
            active,
            held: Manifest::default(),
            held_root: None,
            new: Mutex::new(BTreeMap::new()),
            written: AtomicUsize::new(0),
            bytes: AtomicU64::new(0),
            _lock: lock,
        })
    }

    /// The fingerprint and index hash of the published output, if it has a manifest.
    pub(crate) fn published_fingerprint(&self) -> Option<(&str, &str)> {
        self.active.as_ref().map(|m| (m.fingerprint.as_str(), m.index.as_str()))
    }

    /// The published root manifest, if any.
    pub(crate) fn published(&self) -> Option<&ManifestRoot> {
        self.active.as_ref()
    }

    /// Makes the target generation a known state before anything is written into it:
    /// its own manifest when it has one, else a hard-linked copy of the published
    /// generation (else empty). Then marks it dirty by removing its manifest, so that a
    /// build killed from here on is detected by the next one.
    pub(crate) fn prepare(&mut self) -> Result<(), WriteError> {
        fs::create_dir_all(&self.gens).map_err(io_err("create", &self.gens))?;
        match Manifest::read_with_root(&self.target) {
            Some((root, held)) => {
                self.held = held;
                self.held_root = Some(root);
            }
            None => {
                remove_tree(&self.target)?;
                fs::create_dir_all(&self.target).map_err(io_err("create", &self.target))?;
                if let Some(active) = self.active.as_ref().and_then(|_| Manifest::read(&self.output)) {
                    link_tree(&self.output, &self.target, &active)?;
                    self.held = active;
                }
            }
        }
        let manifest = self.target.join(MANIFEST);
        match fs::remove_file(&manifest) {
            Ok(()) => Ok(()),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(err) => Err(io_err("remove", &manifest)(err)),
        }
    }

    /// Keeps a file the target generation already holds, without its bytes: for a variant
    /// derived from a file that `put` found unchanged. False when the target lacks it.
    pub(crate) fn keep_held(&self, rel: &str) -> bool {
        let Some(entry) = self.held.files.get(rel) else { return false };
        self.bytes.fetch_add(entry.size, Ordering::Relaxed);
        self.new.lock().unwrap_or_else(|e| e.into_inner()).insert(rel.to_owned(), entry.clone());
        true
    }

    /// Puts one file into the target generation, writing it only when the generation does
    /// not already hold these bytes; true when it did hold them. Safe to call from many
    /// threads.
    pub(crate) fn put(&self, rel: &str, bytes: &[u8]) -> Result<bool, WriteError> {
        let path = resolve(&self.target, rel)?;
        let entry = FileEntry::of(bytes);
        let held = self.held.files.get(rel);
        let unchanged = held == Some(&entry);
        if !unchanged {
            if held.is_some() {
                // The file may be a hard link shared with the published generation: never
                // write through it, replace the name instead.
                let tmp =
                    path.with_file_name(format!(".{}.tmp", path.file_name().unwrap_or_default().to_string_lossy()));
                fs::write(&tmp, bytes).map_err(io_err("write", &tmp))?;
                fs::rename(&tmp, &path).map_err(io_err("rename into", &path))?;
            } else {
                write_creating_parents(&path, bytes)?;
            }
            self.written.fetch_add(1, Ordering::Relaxed);
        }
        self.bytes.fetch_add(entry.size, Ordering::Relaxed);
        self.new.lock().unwrap_or_else(|e| e.into_inner()).insert(rel.to_owned(), entry);
        Ok(unchanged)
    }

    /// Where to make a large file that is then [`Publisher::adopt`]ed (the search index):
    /// beside the generations, on their file system, in none of them. What a killed build
    /// left there is removed first.
    pub(crate) fn scratch(&self, name: &str) -> PathBuf {
        remove_stale_temporaries(&self.gens, name);
        self.gens.join(format!(".{name}.tmp-{}", std::process::id()))
    }

    /// Puts the file made at `from` ([`Publisher::scratch`]) into the target generation as
    /// `rel`, as [`Publisher::put`] puts bytes: moved there, unless the generation already
    /// holds the same bytes (`entry`: their hash and size), in which case `from` is removed.
    /// Returns the file's path in the target generation.
    pub(crate) fn adopt(&self, rel: &str, from: &Path, entry: FileEntry) -> Result<PathBuf, WriteError> {
        let path = resolve(&self.target, rel)?;
        if self.held.files.get(rel) == Some(&entry) {
            fs::remove_file(from).map_err(io_err("remove", from))?;
        } else {
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).map_err(io_err("create", parent))?;
            }
            // A rename replaces the name, never writes through a hard link shared with the
            // published generation.
            fs::rename(from, &path).map_err(io_err("rename into", &path))?;
            self.written.fetch_add(1, Ordering::Relaxed);
        }
        self.bytes.fetch_add(entry.size, Ordering::Relaxed);
        self.new.lock().unwrap_or_else(|e| e.into_inner()).insert(rel.to_owned(), entry);
        Ok(path)
    }

    /// The content hash of a file put by this build so far.
    pub(crate) fn hash_of(&self, rel: &str) -> Option<String> {
        self.new.lock().unwrap_or_else(|e| e.into_inner()).get(rel).map(|e| e.hash.clone())
    }

    /// Removes what the target holds but the build did not put, writes its manifest, and
    /// publishes it by pointing the output link at it.
    pub(crate) fn commit(self, fingerprint: &str, index: &str, counts: Counts) -> Result<PublishSummary, WriteError> {
        let files = self.new.into_inner().unwrap_or_else(|e| e.into_inner());
        let stale: Vec<&String> = self.held.files.keys().filter(|p| !files.contains_key(*p)).collect();
        stale.par_iter().try_for_each(|rel| remove_file_and_empty_parents(&self.target, rel))?;

        let manifest =
            Manifest { fingerprint: fingerprint.to_owned(), index: index.to_owned(), files, counts: Some(counts) };
        let encoded = manifest.encode()?;
        // Compared with the published manifest shard by shard: a shard with the published
        // one's prefix and hash holds the same entries, so only the others are read (from the
        // published generation, before the link moves).
        let empty = BTreeMap::new();
        let active_shards = self.active.as_ref().map_or(&empty, |r| &r.shards);
        let same = |prefix: &String, hash: &String| active_shards.get(prefix) == Some(hash);
        let before: BTreeMap<String, FileEntry> = match self.active.as_ref() {
            Some(_) => active_shards
                .iter()
                .filter(|(prefix, hash)| encoded.root.shards.get(*prefix) != Some(*hash))
                .filter_map(|(_, hash)| parse_shard(hash, &fs::read(self.output.join(shard_path(hash))).ok()?))
                .flatten()
                .collect(),
            None => BTreeMap::new(),
        };
        // Shards are named by their content: one the target already holds (checked when its
        // manifest was read) is kept; the others are written, and any other file of the
        // folder (an older build's shard) removed.
        let held_shards: std::collections::HashSet<String> =
            self.held_root.iter().flat_map(|r| r.shards.values()).map(|hash| shard_path(hash)).collect();
        encoded.shards.par_iter().try_for_each(|(rel, bytes)| match held_shards.contains(rel) {
            true => Ok(()),
            false => write_creating_parents(&self.target.join(rel), bytes),
        })?;
        remove_other_shards(&self.target, &encoded)?;
        // Every file of the generation on disk before the manifest says it is complete and
        // the link publishes it: a power cut after "built" must not leave files the manifest
        // lists with no bytes.
        sync_generation(&self.target)?;
        write_file_atomically(&self.target.join(MANIFEST), &encoded.root_bytes)?;
        sync_dir(&self.target);
        point_link(&self.output, &self.gens, self.target_name)?;

        let mut summary = PublishSummary {
            written: self.written.into_inner(),
            bytes: self.bytes.into_inner(),
            ..PublishSummary::default()
        };
        let digits = encoded.root.shards.keys().next().map_or(0, String::len);
        for (path, entry) in &manifest.files {
            let prefix = shard_prefix(path, digits);
            if encoded.root.shards.get(&prefix).is_some_and(|hash| same(&prefix, hash))
                || before.get(path) == Some(entry)
            {
                summary.unchanged += 1;
            } else {
                summary.changed += 1;
            }
        }
        summary.removed = before.keys().filter(|p| !manifest.files.contains_key(*p)).count();
        Ok(summary)
    }
}

/// Removes every file of the target's shard folder that the new manifest does not name.
fn remove_other_shards(target: &Path, encoded: &Encoded) -> Result<(), WriteError> {
    let dir = target.join(SHARDS);
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(io_err("read", &dir)(err)),
    };
    for entry in entries {
        let entry = entry.map_err(io_err("read", &dir))?;
        let rel = format!("{SHARDS}/{}", entry.file_name().to_string_lossy());
        if !encoded.shards.contains_key(&rel) {
            let path = entry.path();
            fs::remove_file(&path).map_err(io_err("remove", &path))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_build_of_an_output_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("public");
        let first = Publisher::open(&out).unwrap();
        let second = Publisher::open(&out).unwrap_err();
        assert!(matches!(&second, WriteError::Busy { lock, .. } if lock.ends_with(".public.lock")), "{second}");
        assert!(second.to_string().starts_with("another svcdir build is writing "));
        assert!(Publisher::open(&dir.path().join("other")).is_ok(), "another output is not locked");
        drop(first);
        assert!(!dir.path().join(".public.lock").exists(), "nothing published: no lock file left");
        assert!(Publisher::open(&out).is_ok(), "released with the publisher");
    }

    fn publish(out: &Path, files: &[(&str, &str)], fingerprint: &str) -> PublishSummary {
        let mut publisher = Publisher::open(out).unwrap();
        publisher.prepare().unwrap();
        for (path, content) in files {
            publisher.put(path, content.as_bytes()).unwrap();
        }
        publisher.commit(fingerprint, "", Counts::default()).unwrap()
    }

    fn tree(out: &Path) -> BTreeMap<String, String> {
        walkdir::WalkDir::new(out)
            .into_iter()
            .map(|e| e.unwrap())
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let rel = e.path().strip_prefix(out).unwrap().to_string_lossy().into_owned();
                (rel, fs::read_to_string(e.path()).unwrap())
            })
            .collect()
    }

    #[test]
    fn publishes_generations_and_writes_only_changes() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("public");
        let first = publish(&out, &[("a/x.json", "1"), ("b/y.json", "2"), ("c/z.json", "3")], "f1");
        assert_eq!((first.changed, first.written, first.removed), (3, 3, 0));
        assert_eq!(fs::read_link(&out).unwrap(), Path::new(".public.gens/a"));

        // Second build: target b starts as links to a; one change, one removal.
        let second = publish(&out, &[("a/x.json", "1"), ("b/y.json", "two")], "f2");
        assert_eq!((second.changed, second.unchanged, second.removed, second.written), (1, 1, 1, 1));
        assert_eq!(fs::read_link(&out).unwrap(), Path::new(".public.gens/b"));
        let now = tree(&out);
        assert_eq!(now.get("b/y.json").map(String::as_str), Some("two"));
        assert!(!now.contains_key("c/z.json"));
        assert!(!out.join("c").exists(), "empty endpoint folder removed");
        // Writing b never wrote through a's hard link.
        assert_eq!(fs::read_to_string(dir.path().join(".public.gens/a/b/y.json")).unwrap(), "2");

        // Third build into a: catches up with the second build's change, adds its own.
        let third = publish(&out, &[("a/x.json", "one"), ("b/y.json", "two")], "f3");
        assert_eq!((third.changed, third.unchanged, third.removed), (1, 1, 0));
        assert_eq!(third.written, 2, "x changed now; y catches up with the second build");
        assert!(!dir.path().join(".public.gens/a/c/z.json").exists(), "the second build's removal caught up");
        let manifest = Manifest::read(&out).unwrap();
        assert_eq!(manifest.fingerprint, "f3");
        assert_eq!(manifest.files.len(), 2);
    }

    #[test]
    fn an_unfinished_build_changes_nothing_published() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("public");
        publish(&out, &[("a/x.json", "1")], "f1");
        let before = tree(&out);
        let mut publisher = Publisher::open(&out).unwrap();
        publisher.prepare().unwrap();
        publisher.put("a/x.json", b"changed").unwrap();
        drop(publisher); // killed before commit
        assert_eq!(tree(&out), before);
        // The next build notices the dirty generation and still gets everything right.
        let next = publish(&out, &[("a/x.json", "2")], "f2");
        assert_eq!(next.changed, 1);
        assert_eq!(tree(&out).get("a/x.json").map(String::as_str), Some("2"));
    }

    #[test]
    fn replaces_a_plain_directory() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("public");
        fs::create_dir_all(out.join("old")).unwrap();
        fs::write(out.join("old/file"), "x").unwrap();
        publish(&out, &[("new.json", "1")], "f");
        assert!(fs::symlink_metadata(&out).unwrap().file_type().is_symlink());
        let files: Vec<String> = tree(&out).into_keys().collect();
        assert_eq!(files.len(), 3, "{files:?}");
        assert!(files[0] == MANIFEST && files[1].starts_with("_manifest/") && files[2] == "new.json", "{files:?}");
    }

    #[test]
    fn refuses_paths_outside() {
        let dir = tempfile::tempdir().unwrap();
        let mut publisher = Publisher::open(&dir.path().join("public")).unwrap();
        publisher.prepare().unwrap();
        for bad in ["../x", "/etc/x", "a/../../x", "a//b", "a\\b", "a\0b", "", "_manifest.json", "_manifest/x.json"] {
            assert!(matches!(publisher.put(bad, b""), Err(WriteError::UnsafePath(_))), "{bad:?}");
        }
    }
}
