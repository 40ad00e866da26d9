//! The manifest of a tree: `_manifest.json` at its root (format version, fingerprint, index
//! hash, counts, totals and the list of shards) and the shards under `_manifest/`, each a
//! content-addressed file (`_manifest/<hash>.json`) holding the entries of the paths whose
//! hash starts with its prefix.
//!
//! Sharded so that what is read most often stays small however large the tree grows: a
//! build's up-to-date check and a publish with nothing to do read the root only (a few
//! hundred kilobytes at a million files), and a publish after a small change reads and
//! writes only the shards whose hash changed.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Name of the root manifest inside a tree.
pub const MANIFEST: &str = "_manifest.json";
/// Folder of the manifest's shards inside a tree.
pub(crate) const SHARDS: &str = "_manifest";
/// Version of the manifest format; another version is treated as no manifest. Version 1
/// held every entry in `_manifest.json` itself.
const MANIFEST_VERSION: u32 = 2;
/// Most entries a shard holds before the tree is split into 16 times as many shards.
const SHARD_ENTRIES: usize = 1024;
/// Most hex digits of a shard's prefix: 4096 shards (about 260 entries each at a million
/// files).
const MAX_PREFIX_DIGITS: usize = 3;

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

/// [`content_hash`] of a file's bytes, read a buffer at a time.
pub(crate) fn content_hash_of_file(path: &Path) -> std::io::Result<String> {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    std::io::copy(&mut std::fs::File::open(path)?, &mut hasher)?;
    Ok(format!("{:032x}", hasher.digest128()))
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

/// Files and bytes a manifest describes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    /// Files (the manifest's own aside).
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
}

/// `_manifest.json`: everything but the entries, and where the entries are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestRoot {
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
    /// What the build published (absent for a tree that no build described): the next
    /// build's shrink guard and an up-to-date build's summary read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<Counts>,
    /// Files and bytes of the tree.
    pub totals: Totals,
    /// Shard prefix (hex digits of the XXH3-64 of a path; all of one length) → content hash
    /// of the shard, whose file is `_manifest/<hash>.json`.
    pub shards: BTreeMap<String, String>,
}

impl ManifestRoot {
    /// Parses a root manifest; `None` when malformed or of another version.
    pub fn parse(bytes: &[u8]) -> Option<ManifestRoot> {
        let root: ManifestRoot = serde_json::from_slice(bytes).ok()?;
        (root.version == MANIFEST_VERSION).then_some(root)
    }

    /// Reads a tree's root manifest; `None` when absent, unreadable or of another version.
    pub fn read(dir: &Path) -> Option<ManifestRoot> {
        ManifestRoot::parse(&fs::read(dir.join(MANIFEST)).ok()?)
    }
}

/// A shard's file: the entries of its paths.
#[derive(Debug, Serialize, Deserialize)]
struct Shard<K: Ord, E> {
    files: BTreeMap<K, E>,
}

/// Parses a shard's bytes, checked against the hash that names it; `None` when they do
/// not match (a torn or foreign file) or do not parse.
pub(crate) fn parse_shard(hash: &str, bytes: &[u8]) -> Option<BTreeMap<String, FileEntry>> {
    if content_hash(bytes) != hash {
        return None;
    }
    serde_json::from_slice::<Shard<String, FileEntry>>(bytes).ok().map(|s| s.files)
}

/// The relative path of the shard with this content hash.
pub fn shard_path(hash: &str) -> String {
    format!("{SHARDS}/{hash}.json")
}

/// Whether a relative path is one of the manifest's own files (the root or a shard).
pub fn is_manifest_path(rel: &str) -> bool {
    rel == MANIFEST || rel.strip_prefix(SHARDS).is_some_and(|rest| rest.starts_with('/'))
}

/// How many hex digits of a path's hash name its shard in a tree of `files` files.
fn prefix_digits(files: usize) -> usize {
    let mut digits = 0;
    while digits < MAX_PREFIX_DIGITS && files > SHARD_ENTRIES << (4 * digits) {
        digits += 1;
    }
    digits
}

/// The shard prefix of a path.
pub(crate) fn shard_prefix(rel: &str, digits: usize) -> String {
    let hex = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(rel.as_bytes()));
    hex[..digits].to_owned()
}

/// What a tree holds: the root's fields and every entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    /// See [`ManifestRoot::fingerprint`].
    pub fingerprint: String,
    /// See [`ManifestRoot::index`].
    pub index: String,
    /// Every file but the manifest's own, by relative path.
    pub files: BTreeMap<String, FileEntry>,
    /// See [`ManifestRoot::counts`].
    pub counts: Option<Counts>,
}

/// A manifest as files: the shards (relative path → bytes) and the root's bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Encoded {
    /// The root.
    pub root: ManifestRoot,
    /// The root's bytes (`_manifest.json`).
    pub root_bytes: Vec<u8>,
    /// Each shard's bytes by relative path (`_manifest/<hash>.json`).
    pub shards: BTreeMap<String, Vec<u8>>,
}

impl Manifest {
    /// The manifest of a tree that no build described (no fingerprint, no index).
    pub(crate) fn of_files(files: BTreeMap<String, FileEntry>) -> Manifest {
        Manifest { files, ..Manifest::default() }
    }

    /// Reads a tree's whole manifest (the root, then every shard it names); `None` when
    /// anything is missing, malformed or of another version.
    pub fn read(dir: &Path) -> Option<Manifest> {
        Manifest::read_with_root(dir).map(|(_, manifest)| manifest)
    }

    /// Like [`Manifest::read`], with the root as read.
    pub(crate) fn read_with_root(dir: &Path) -> Option<(ManifestRoot, Manifest)> {
        let root = ManifestRoot::read(dir)?;
        let shards: Vec<BTreeMap<String, FileEntry>> = root
            .shards
            .par_iter()
            .map(|(_, hash)| parse_shard(hash, &fs::read(dir.join(shard_path(hash))).ok()?))
            .collect::<Option<_>>()?;
        Some((root.clone(), Manifest::from_parts(root, shards)))
    }

    /// The manifest of a root and its shards' entries.
    pub fn from_parts(root: ManifestRoot, shards: impl IntoIterator<Item = BTreeMap<String, FileEntry>>) -> Manifest {
        let mut files = BTreeMap::new();
        for shard in shards {
            files.extend(shard);
        }
        Manifest { fingerprint: root.fingerprint, index: root.index, files, counts: root.counts }
    }

    /// The manifest as files. Deterministic: the same manifest always gives the same bytes.
    pub(crate) fn encode(&self) -> Result<Encoded, serde_json::Error> {
        let digits = prefix_digits(self.files.len());
        let mut groups: BTreeMap<String, BTreeMap<&str, &FileEntry>> = BTreeMap::new();
        for (rel, entry) in &self.files {
            groups.entry(shard_prefix(rel, digits)).or_default().insert(rel, entry);
        }
        let encoded: Vec<(String, String, Vec<u8>)> = groups
            .into_par_iter()
            .map(|(prefix, files)| {
                let bytes = serde_json::to_vec(&Shard { files })?;
                Ok((prefix, content_hash(&bytes), bytes))
            })
            .collect::<Result<_, serde_json::Error>>()?;
        let root = ManifestRoot {
            version: MANIFEST_VERSION,
            fingerprint: self.fingerprint.clone(),
            index: self.index.clone(),
            counts: self.counts,
            totals: Totals { files: self.files.len(), bytes: self.files.values().map(|e| e.size).sum() },
            shards: encoded.iter().map(|(prefix, hash, _)| (prefix.clone(), hash.clone())).collect(),
        };
        let root_bytes = serde_json::to_vec(&root)?;
        let shards = encoded.into_iter().map(|(_, hash, bytes)| (shard_path(&hash), bytes)).collect();
        Ok(Encoded { root, root_bytes, shards })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(n: usize) -> Manifest {
        let files =
            (0..n).map(|i| (format!("api/v4/services/{i}/index.json"), FileEntry::of(&i.to_le_bytes()))).collect();
        Manifest { fingerprint: "f".into(), index: "i".into(), files, counts: Some(Counts::default()) }
    }

    #[test]
    fn shards_grow_with_the_tree_and_read_back_whole() {
        assert_eq!(prefix_digits(0), 0);
        assert_eq!(prefix_digits(1024), 0);
        assert_eq!(prefix_digits(1025), 1);
        assert_eq!(prefix_digits(1_100_000), 3);
        assert_eq!(prefix_digits(100_000_000), 3, "at most 4096 shards");
        let dir = tempfile::tempdir().unwrap();
        let m = manifest(3000);
        let encoded = m.encode().unwrap();
        assert_eq!(encoded.root.shards.len(), 16);
        assert_eq!(encoded.root.totals, Totals { files: 3000, bytes: 3000 * 8 });
        assert_eq!(encoded, m.encode().unwrap(), "deterministic");
        fs::create_dir_all(dir.path().join(SHARDS)).unwrap();
        for (rel, bytes) in &encoded.shards {
            fs::write(dir.path().join(rel), bytes).unwrap();
        }
        fs::write(dir.path().join(MANIFEST), &encoded.root_bytes).unwrap();
        assert_eq!(Manifest::read(dir.path()), Some(m));
        assert_eq!(ManifestRoot::read(dir.path()), Some(encoded.root));
        // A shard whose bytes are not those its name says is no manifest.
        let (first, _) = encoded.shards.iter().next().unwrap();
        fs::write(dir.path().join(first), b"{\"files\":{}}").unwrap();
        assert_eq!(Manifest::read(dir.path()), None);
    }

    #[test]
    fn one_changed_file_changes_one_shard() {
        let before = manifest(5000).encode().unwrap();
        let mut m = manifest(5000);
        m.files.insert("api/v4/services/7/index.json".into(), FileEntry::of(b"changed"));
        let after = m.encode().unwrap();
        let changed = before.root.shards.iter().filter(|(p, h)| after.root.shards.get(*p) != Some(h)).count();
        assert_eq!(changed, 1);
        assert!(is_manifest_path("_manifest.json") && is_manifest_path("_manifest/ab.json"));
        assert!(!is_manifest_path("_manifest.jsonx") && !is_manifest_path("_manifests/x"));
    }
}
