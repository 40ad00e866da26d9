//! Writing: the only place that touches the output directory.
//!
//! The output path is a symbolic link to one of two generation directories kept beside it
//! (`.public.gens/a` and `.public.gens/b`), so readers always see one complete generation.
//! A build brings the *inactive* generation up to date, writing only the files whose bytes
//! differ from what that generation holds and removing the ones that are gone, then points
//! the link at it with a single atomic rename. A failed or killed build leaves the published
//! generation, and the link, exactly as they were.
//!
//! Each generation carries `_manifest.json` (path → content hash and size), which is both
//! the record of what the generation holds and what an upload step or a CDN can use.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

mod files;
mod lock;

pub use files::NO_SYNC_ENV;
use files::{
    link_tree, point_link, remove_file_and_empty_parents, remove_tree, resolve, sync_dir, sync_generation,
    write_creating_parents,
};
pub use files::{replace_file, write_file_atomically};
use lock::OutputLock;

/// Name of the manifest inside each generation.
pub const MANIFEST: &str = "_manifest.json";
/// Version of the manifest format; another version is treated as no manifest.
const MANIFEST_VERSION: u32 = 1;
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

/// One file of a manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// XXH3-128 of the content in hex: a strong ETag and a change detector (not a
    /// defence against someone forging content, which nobody here is placed to do).
    pub hash: String,
    /// Size in bytes.
    pub size: u64,
}

impl FileEntry {
    /// The entry of some bytes.
    pub fn of(bytes: &[u8]) -> FileEntry {
        FileEntry { hash: content_hash(bytes), size: bytes.len() as u64 }
    }
}

/// XXH3-128 of some bytes, in hex. XXH3 hashes at memory speed; BLAKE3 here cost a tenth
/// of a full build.
pub fn content_hash(bytes: &[u8]) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}

/// What a generation holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Format version.
    pub version: u32,
    /// Fingerprint of everything the build read (see `build`): equal fingerprints give
    /// equal outputs, so a build whose fingerprint matches the published one is a no-op.
    pub fingerprint: String,
    /// Content hash of the search index written by the same build: the index is a file of
    /// its own (`--index`), so a build killed between writing it and publishing must not
    /// let a later build take a mismatched pair for up to date.
    #[serde(default)]
    pub index: String,
    /// Every file but the manifest, by relative path.
    pub files: BTreeMap<String, FileEntry>,
    /// What the build published (absent in manifests written before it was recorded): the
    /// next build's shrink guard and an up-to-date build's summary read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<Counts>,
}

/// How many records a build published.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Published services.
    pub services: usize,
    /// Published organisations.
    pub organisations: usize,
    /// Live postcodes.
    pub postcodes: usize,
}

impl Manifest {
    /// Reads a generation's manifest; `None` when absent, unreadable or of another version.
    fn read(dir: &Path) -> Option<Manifest> {
        Manifest::parse(&fs::read(dir.join(MANIFEST)).ok()?)
    }

    /// Parses a manifest; `None` when malformed or of another version.
    pub fn parse(bytes: &[u8]) -> Option<Manifest> {
        let manifest: Manifest = serde_json::from_slice(bytes).ok()?;
        (manifest.version == MANIFEST_VERSION).then_some(manifest)
    }

    /// The manifest of a tree that no build described (no fingerprint, no index).
    pub fn of_files(files: BTreeMap<String, FileEntry>) -> Manifest {
        Manifest { version: MANIFEST_VERSION, fingerprint: String::new(), index: String::new(), files, counts: None }
    }
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
pub struct Publisher {
    output: PathBuf,
    gens: PathBuf,
    target_name: &'static str,
    target: PathBuf,
    /// The published generation's manifest, if there is one.
    active: Option<Manifest>,
    /// What the target generation holds on disk, once prepared.
    held: Manifest,
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
    pub fn open(output: &Path) -> Result<Publisher, WriteError> {
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
        let active = if active_name.is_some() {
            Manifest::read(output)
        } else if output.is_dir() {
            // A plain directory (an older layout, or made by hand): replaced whole.
            None
        } else {
            None
        };
        Ok(Publisher {
            output: output.to_owned(),
            target: gens.join(target_name),
            gens,
            target_name,
            active,
            held: Manifest::default(),
            new: Mutex::new(BTreeMap::new()),
            written: AtomicUsize::new(0),
            bytes: AtomicU64::new(0),
            _lock: lock,
        })
    }

    /// The fingerprint and index hash of the published output, if it has a manifest.
    pub fn published_fingerprint(&self) -> Option<(&str, &str)> {
        self.active.as_ref().map(|m| (m.fingerprint.as_str(), m.index.as_str()))
    }

    /// The published manifest, if any.
    pub fn published(&self) -> Option<&Manifest> {
        self.active.as_ref()
    }

    /// Makes the target generation a known state before anything is written into it:
    /// its own manifest when it has one, else a hard-linked copy of the published
    /// generation (else empty). Then marks it dirty by removing its manifest, so that a
    /// build killed from here on is detected by the next one.
    pub fn prepare(&mut self) -> Result<(), WriteError> {
        fs::create_dir_all(&self.gens).map_err(io_err("create", &self.gens))?;
        match Manifest::read(&self.target) {
            Some(held) => self.held = held,
            None => {
                remove_tree(&self.target)?;
                fs::create_dir_all(&self.target).map_err(io_err("create", &self.target))?;
                if let Some(active) = &self.active {
                    link_tree(&self.output, &self.target, active)?;
                    self.held = active.clone();
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
    pub fn keep_held(&self, rel: &str) -> bool {
        let Some(entry) = self.held.files.get(rel) else { return false };
        self.bytes.fetch_add(entry.size, Ordering::Relaxed);
        self.new.lock().unwrap_or_else(|e| e.into_inner()).insert(rel.to_owned(), entry.clone());
        true
    }

    /// Puts one file into the target generation, writing it only when the generation does
    /// not already hold these bytes; true when it did hold them. Safe to call from many
    /// threads.
    pub fn put(&self, rel: &str, bytes: &[u8]) -> Result<bool, WriteError> {
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

    /// The content hash of a file put by this build so far.
    pub fn hash_of(&self, rel: &str) -> Option<String> {
        self.new.lock().unwrap_or_else(|e| e.into_inner()).get(rel).map(|e| e.hash.clone())
    }

    /// Removes what the target holds but the build did not put, writes its manifest, and
    /// publishes it by pointing the output link at it.
    pub fn commit(self, fingerprint: &str, index: &str, counts: Counts) -> Result<PublishSummary, WriteError> {
        let files = self.new.into_inner().unwrap_or_else(|e| e.into_inner());
        let stale: Vec<&String> = self.held.files.keys().filter(|p| !files.contains_key(*p)).collect();
        stale.par_iter().try_for_each(|rel| remove_file_and_empty_parents(&self.target, rel))?;

        let manifest = Manifest {
            version: MANIFEST_VERSION,
            fingerprint: fingerprint.to_owned(),
            index: index.to_owned(),
            files,
            counts: Some(counts),
        };
        // Every file of the generation on disk before the manifest says it is complete and
        // the link publishes it: a power cut after "built" must not leave files the manifest
        // lists with no bytes.
        sync_generation(&self.target)?;
        write_file_atomically(&self.target.join(MANIFEST), &serde_json::to_vec(&manifest)?)?;
        sync_dir(&self.target);
        point_link(&self.output, &self.gens, self.target_name)?;

        let mut summary = PublishSummary {
            written: self.written.into_inner(),
            bytes: self.bytes.into_inner(),
            ..PublishSummary::default()
        };
        let empty = BTreeMap::new();
        let before = self.active.as_ref().map_or(&empty, |m| &m.files);
        for (path, entry) in &manifest.files {
            if before.get(path) == Some(entry) {
                summary.unchanged += 1;
            } else {
                summary.changed += 1;
            }
        }
        summary.removed = before.keys().filter(|p| !manifest.files.contains_key(*p)).count();
        Ok(summary)
    }
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
        assert_eq!(tree(&out).keys().collect::<Vec<_>>(), ["_manifest.json", "new.json"]);
    }

    #[test]
    fn refuses_paths_outside() {
        let dir = tempfile::tempdir().unwrap();
        let mut publisher = Publisher::open(&dir.path().join("public")).unwrap();
        publisher.prepare().unwrap();
        for bad in ["../x", "/etc/x", "a/../../x", "a//b", "a\\b", "a\0b", "", "_manifest.json"] {
            assert!(matches!(publisher.put(bad, b""), Err(WriteError::UnsafePath(_))), "{bad:?}");
        }
    }
}
