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
        Manifest { version: MANIFEST_VERSION, fingerprint: String::new(), index: String::new(), files }
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

/// The exclusive lock of one output, on `.NAME.lock` beside it: released on drop, or by the
/// kernel when the process dies.
#[derive(Debug)]
struct OutputLock {
    file: fs::File,
    path: PathBuf,
    output: PathBuf,
}

impl OutputLock {
    fn take(output: &Path, path: PathBuf) -> Result<OutputLock, WriteError> {
        loop {
            let file = fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .map_err(io_err("open", &path))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(fs::TryLockError::WouldBlock) => {
                    return Err(WriteError::Busy { output: output.to_owned(), lock: path });
                }
                Err(fs::TryLockError::Error(source)) => return Err(io_err("lock", &path)(source)),
            }
            // A build that ends with nothing published removes the file (see `drop`); if it
            // did so between our open and our lock, we hold a file no one else will find.
            if same_file(&file, &path) {
                return Ok(OutputLock { file, path, output: output.to_owned() });
            }
        }
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // A first build that failed leaves nothing behind, its lock file included; it is
        // removed while still locked, so no other build can have taken it meanwhile.
        if fs::symlink_metadata(&self.output).is_err() {
            let _ = fs::remove_file(&self.path);
        }
        let _ = self.file.unlock();
    }
}

#[cfg(unix)]
fn same_file(file: &fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(held), Ok(named)) => (held.dev(), held.ino()) == (named.dev(), named.ino()),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &fs::File, path: &Path) -> bool {
    path.exists()
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

    /// Removes what the target holds but the build did not put, writes its manifest, and
    /// publishes it by pointing the output link at it.
    pub fn commit(self, fingerprint: &str, index: &str) -> Result<PublishSummary, WriteError> {
        let files = self.new.into_inner().unwrap_or_else(|e| e.into_inner());
        let stale: Vec<&String> = self.held.files.keys().filter(|p| !files.contains_key(*p)).collect();
        stale.par_iter().try_for_each(|rel| remove_file_and_empty_parents(&self.target, rel))?;

        let manifest =
            Manifest { version: MANIFEST_VERSION, fingerprint: fingerprint.to_owned(), index: index.to_owned(), files };
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

/// Writes a new file, creating its folder only when the first attempt finds none: one
/// system call per file in the common case, where a build creates hundreds of thousands.
fn write_creating_parents(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    match fs::write(path, bytes) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).map_err(io_err("create", parent))?;
            }
            fs::write(path, bytes).map_err(io_err("write", path))
        }
        other => other.map_err(io_err("write", path)),
    }
}

/// Joins a relative output path to a root, refusing anything that could leave it.
fn resolve(root: &Path, rel: &str) -> Result<PathBuf, WriteError> {
    // Paths are made from validated slugs and UUIDs; this is the last line of defence.
    let safe = !rel.is_empty()
        && !rel.starts_with('/')
        && rel.split('/').all(|part| !part.is_empty() && part != "." && part != "..")
        && !rel.contains(['\\', '\0'])
        && rel != MANIFEST;
    if !safe {
        return Err(WriteError::UnsafePath(rel.to_owned()));
    }
    Ok(root.join(rel))
}

fn remove_tree(path: &Path) -> Result<(), WriteError> {
    match fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(io_err("remove", path)(err)),
    }
}

fn remove_file_and_empty_parents(root: &Path, rel: &str) -> Result<(), WriteError> {
    let path = resolve(root, rel)?;
    match fs::remove_file(&path) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(io_err("remove", &path)(err)),
    }
    // An endpoint folder left empty would still be a directory to a static server.
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d == root || fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
    Ok(())
}

/// Fills `dst` with hard links to the files of `src` that `manifest` lists (copies where
/// the file system refuses links): the starting point of an inactive generation.
fn link_tree(src: &Path, dst: &Path, manifest: &Manifest) -> Result<(), WriteError> {
    let mut dirs: Vec<&str> = manifest.files.keys().filter_map(|p| p.rsplit_once('/').map(|(d, _)| d)).collect();
    dirs.dedup();
    for dir in dirs {
        let path = resolve(dst, dir)?;
        fs::create_dir_all(&path).map_err(io_err("create", &path))?;
    }
    manifest.files.par_iter().try_for_each(|(rel, _)| {
        let from = resolve(src, rel)?;
        let to = resolve(dst, rel)?;
        fs::hard_link(&from, &to).or_else(|_| fs::copy(&from, &to).map(|_| ())).map_err(io_err("link", &to))
    })
}

/// Points `output` at generation `name` with one atomic rename of a fresh link; a plain
/// directory in the way is swapped out atomically and then removed.
fn point_link(output: &Path, gens: &Path, name: &str) -> Result<(), WriteError> {
    let gens_name = gens.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let link_target = PathBuf::from(gens_name).join(name);
    let tmp = gens.with_file_name(format!("{}.link-tmp", gens.file_name().unwrap_or_default().to_string_lossy()));
    let _ = fs::remove_file(&tmp);
    symlink(&link_target, &tmp).map_err(io_err("create the link", &tmp))?;
    let is_plain_dir = fs::symlink_metadata(output).map(|m| m.is_dir()).unwrap_or(false);
    if is_plain_dir {
        exchange(&tmp, output)?;
        // `tmp` is now the old directory.
        remove_tree(&tmp)
    } else {
        fs::rename(&tmp, output).map_err(io_err("publish", output))?;
        if let Some(parent) = output.parent() {
            sync_dir(parent);
        }
        Ok(())
    }
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink(_target: &Path, _link: &Path) -> io::Result<()> {
    Err(io::Error::new(io::ErrorKind::Unsupported, "symbolic links are needed to publish"))
}

/// Swaps two paths: atomically with `renameat2(RENAME_EXCHANGE)` where the kernel and file
/// system offer it, else by two renames.
fn exchange(a: &Path, b: &Path) -> Result<(), WriteError> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        if renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).is_ok() {
            return Ok(());
        }
    }
    let aside = a.with_extension("previous");
    fs::rename(b, &aside).map_err(io_err("move aside", b))?;
    fs::rename(a, b).map_err(io_err("rename into", b))?;
    fs::rename(&aside, a).map_err(io_err("move back", &aside))
}

/// Flushes a directory's entries, so that a rename survives a power cut (best effort).
fn sync_dir(dir: &Path) {
    if let Ok(handle) = fs::File::open(dir) {
        let _ = handle.sync_all();
    }
}

/// Writes a file through a temporary sibling and a rename, so readers never see half of it.
pub fn write_file_atomically(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    replace_file(path, bytes).map_err(io_err("write", path))
}

/// Replaces the file at `path` with `bytes`: written and synced to a temporary sibling
/// `.NAME.tmp-PID`, then renamed over `path`, so a reader sees the old file or the new one,
/// never half of one, even after a crash. Temporaries of `path` left by killed processes
/// are removed first.
pub fn replace_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write as _;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    remove_stale_temporaries(&parent, &name);
    let temp = parent.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut file = fs::File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// Removes the temporaries `.{name}.tmp-PID` in `parent` that a process killed while
/// writing left behind (its process is gone); those of running processes stay.
fn remove_stale_temporaries(parent: &Path, name: &str) {
    let prefix = format!(".{name}.tmp-");
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let pid = file_name.to_str().and_then(|n| n.strip_prefix(&prefix)).and_then(|p| p.parse::<i32>().ok());
        if let Some(pid) = pid
            && !process_is_running(pid)
        {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Whether a process with this id exists (signal 0 asks without sending anything; a process
/// of another user answers "not permitted", and counts as running).
fn process_is_running(pid: i32) -> bool {
    match rustix::process::Pid::from_raw(pid) {
        Some(pid) => !matches!(rustix::process::test_kill_process(pid), Err(rustix::io::Errno::SRCH)),
        None => false,
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
        publisher.commit(fingerprint, "").unwrap()
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
