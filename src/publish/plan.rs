//! What a publish must do: which files to upload (in order), which objects to delete, and
//! how many are already in place, from the local tree and what the store says.
//!
//! The remote manifest is the record of the last *complete* publish. When it is clean
//! (no publish ran since without finishing, see [`RemoteManifest::clean`]) it is trusted:
//! its root names its shards by content hash, so only the shards whose hash differs from
//! the local ones are read, and the files they describe are compared entry by entry
//! ([`from_manifest`]); nothing else is asked of the store. Otherwise the store's listing
//! decides, object by object ([`from_listing`]): an object is in place when the manifest
//! vouches for it (same hash and size, and not written since the manifest was) or when its
//! ETag is the MD5 of the local bytes (what S3 and compatible stores give for a plain
//! upload). So a publish killed part-way and run again uploads only what had not arrived,
//! and deletes what a killed run left behind.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use md5::{Digest, Md5};
use rayon::prelude::*;

use super::PublishError;
use super::local::LocalTree;
use crate::api::objects::upload_stage;
use crate::index::published::POINTER;
use crate::write::{FileEntry, MANIFEST, ManifestRoot, content_hash, is_manifest_path, shard_path, shard_prefix};

/// The remote `_manifest.json`, and the entries of those of its shards that were read.
#[derive(Debug, Clone)]
pub(crate) struct RemoteManifest {
    /// Its root; `None` when it could not be read as a manifest.
    pub root: Option<ManifestRoot>,
    /// Entries read from its shards: those of every shard (for the listing), or of the
    /// shards that differ from the local ones (for [`from_manifest`]).
    pub files: BTreeMap<String, FileEntry>,
    /// Content hash of its bytes.
    pub hash: String,
    /// When it was written (store clock, as objects' `last_modified`).
    pub last_modified: DateTime<Utc>,
    /// No publish has started since it was written (a publish marks the manifest before its
    /// first upload and clears the mark last). Stores without object metadata cannot carry
    /// the mark: their manifest is never clean, so they are always listed.
    pub clean: bool,
    /// It carries the mark of a publish that did not finish (it must be written again).
    pub marked: bool,
}

/// One object of the store's listing under the prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Listed {
    /// Size in bytes.
    pub size: u64,
    /// ETag as the store sent it (quoted or not).
    pub e_tag: Option<String>,
    /// When it was written.
    pub last_modified: DateTime<Utc>,
}

/// What to do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Files to upload, in upload order (see [`upload_stage`]); the manifest's are not
    /// among them.
    pub uploads: Vec<String>,
    /// The manifest's shards to upload (after the files, before the root).
    pub shards: Vec<String>,
    /// Objects to delete, relative to the prefix (old shards among them).
    pub deletes: Vec<String>,
    /// Whether the root manifest must be written (after the uploads).
    pub upload_manifest: bool,
    /// Objects already in place, the manifest's included.
    pub unchanged: usize,
    /// Bytes to upload, the manifest's included.
    pub bytes: u64,
}

impl Plan {
    /// Whether the store already holds the tree.
    pub fn is_empty(&self) -> bool {
        self.uploads.is_empty() && self.shards.is_empty() && self.deletes.is_empty() && !self.upload_manifest
    }

    /// Objects to upload, the manifest's included.
    pub(crate) fn upload_count(&self) -> usize {
        self.uploads.len() + self.shards.len() + usize::from(self.upload_manifest)
    }
}

/// The prefixes of the remote shards a plan from the manifest must read: those whose hash
/// differs from the local shard of the same prefix; every one when the two manifests split
/// the tree differently (their prefixes are of another length).
pub(crate) fn shards_to_read(local: &ManifestRoot, remote: &ManifestRoot) -> BTreeSet<String> {
    let digits = |root: &ManifestRoot| root.shards.keys().next().map(String::len);
    let same_split = digits(local) == digits(remote) || local.shards.is_empty() || remote.shards.is_empty();
    remote
        .shards
        .iter()
        .filter(|(prefix, hash)| !same_split || local.shards.get(*prefix) != Some(*hash))
        .map(|(prefix, _)| prefix.clone())
        .collect()
}

/// The plan decided by a clean remote manifest: `remote.files` holds the entries of the
/// remote shards that differ from the local ones ([`shards_to_read`]). `None` when the
/// manifest is not clean or could not be read: the store's listing is needed.
pub(crate) fn from_manifest(local: &LocalTree, remote: Option<&RemoteManifest>) -> Option<Plan> {
    let remote = remote.filter(|r| r.clean)?;
    let remote_root = remote.root.as_ref()?;
    let local_root = &local.manifest.root;
    // A local file needs a look when its shard is not the remote one: always unless the two
    // split alike and the hashes of its shard agree.
    let digits = local_root.shards.keys().next().map_or(0, String::len);
    let same_split = remote_root.shards.keys().next().is_none_or(|p| p.len() == digits);
    let settled: BTreeSet<&String> = local_root
        .shards
        .iter()
        .filter(|(p, h)| same_split && remote_root.shards.get(*p) == Some(*h))
        .map(|(p, _)| p)
        .collect();
    let mut plan = Plan::default();
    for (rel, entry) in &local.files {
        let in_place = settled.contains(&shard_prefix(rel, digits)) || remote.files.get(rel) == Some(entry);
        if in_place {
            plan.unchanged += 1;
        } else {
            plan.bytes += entry.size;
            plan.uploads.push(rel.clone());
        }
    }
    plan.uploads.sort_by(|a, b| (upload_stage(a), a).cmp(&(upload_stage(b), b)));
    plan.deletes = remote.files.keys().filter(|rel| !local.files.contains_key(*rel)).cloned().collect();
    let remote_shards: BTreeSet<String> = remote_root.shards.values().map(|h| shard_path(h)).collect();
    add_shards(&mut plan, local, |rel| remote_shards.contains(rel));
    plan.deletes.extend(remote_shards.iter().filter(|rel| !local.manifest.shards.contains_key(*rel)).cloned());
    let same = remote.hash == content_hash(&local.manifest.root_bytes);
    plan.upload_manifest = !same;
    if same {
        plan.unchanged += 1;
    } else {
        plan.bytes += local.manifest.root_bytes.len() as u64;
    }
    Some(plan)
}

/// Adds the local shards the store lacks to the plan (the others are in place: a shard's
/// name is the hash of its bytes).
fn add_shards(plan: &mut Plan, local: &LocalTree, present: impl Fn(&str) -> bool) {
    for (rel, bytes) in &local.manifest.shards {
        if present(rel) {
            plan.unchanged += 1;
        } else {
            plan.bytes += bytes.len() as u64;
            plan.shards.push(rel.clone());
        }
    }
}

/// The plan decided object by object from the store's listing (relative path → object).
/// `remote_pointer` holds the store's `_search/current.json`: the pointer is written after
/// the manifest, so the manifest cannot vouch for it; it is in place when its bytes are.
/// With `verify`, an object whose ETag is an MD5 is judged by it even when the manifest
/// vouches for it (bytes changed in place keep their time on some stores).
pub(crate) fn from_listing(
    local: &LocalTree,
    remote: Option<&RemoteManifest>,
    listing: &BTreeMap<String, Listed>,
    remote_pointer: Option<&[u8]>,
    verify: bool,
) -> Result<Plan, PublishError> {
    let vouched = |rel: &str, entry: &FileEntry, listed: &Listed| {
        remote.is_some_and(|r| r.files.get(rel) == Some(entry) && listed.last_modified < r.last_modified)
    };
    let in_place: Vec<(&String, bool)> = local
        .files
        .par_iter()
        .map(|(rel, entry)| {
            if rel == POINTER {
                return Ok((rel, remote_pointer.is_some_and(|bytes| FileEntry::of(bytes) == *entry)));
            }
            let Some(listed) = listing.get(rel).filter(|l| l.size == entry.size) else {
                return Ok((rel, false));
            };
            let e_tag = listed.e_tag.as_deref().map(|t| t.trim_matches('"'));
            let md5_tag = e_tag.is_some_and(|t| t.len() == 32 && t.bytes().all(|b| b.is_ascii_hexdigit()));
            if vouched(rel, entry, listed) && !(verify && md5_tag) {
                return Ok((rel, true));
            }
            let Some(e_tag) = e_tag else {
                return Ok((rel, false));
            };
            let md5 = md5_hex(&local.read(rel)?);
            Ok((rel, e_tag.eq_ignore_ascii_case(&md5)))
        })
        .collect::<Result<_, PublishError>>()?;
    let mut plan = Plan::default();
    for (rel, present) in in_place {
        if present {
            plan.unchanged += 1;
        } else {
            plan.bytes += local.files[rel].size;
            plan.uploads.push(rel.clone());
        }
    }
    plan.uploads.sort_by(|a, b| (upload_stage(a), a).cmp(&(upload_stage(b), b)));
    // A store's PUT is whole or nothing: a listed shard of the right size has its bytes.
    add_shards(&mut plan, local, |rel| {
        listing.get(rel).is_some_and(|l| l.size == local.manifest.shards[rel].len() as u64)
    });
    plan.deletes = listing
        .keys()
        .filter(|rel| {
            *rel != MANIFEST
                && !local.files.contains_key(*rel)
                && !(is_manifest_path(rel) && local.manifest.shards.contains_key(*rel))
        })
        .cloned()
        .collect();
    let manifest_in_place = remote.is_some_and(|r| !r.marked && r.hash == content_hash(&local.manifest.root_bytes));
    plan.upload_manifest =
        !(manifest_in_place && plan.uploads.is_empty() && plan.shards.is_empty() && plan.deletes.is_empty());
    if plan.upload_manifest {
        plan.bytes += local.manifest.root_bytes.len() as u64;
    } else {
        plan.unchanged += 1;
    }
    Ok(plan)
}

/// The MD5 of some bytes in hex: the ETag S3 gives an object uploaded in one request.
fn md5_hex(bytes: &[u8]) -> String {
    Md5::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, LocalTree) {
        let dir = tempfile::tempdir().unwrap();
        for (rel, body) in files {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, body).unwrap();
        }
        let local = LocalTree::scan(dir.path()).unwrap();
        (dir, local)
    }

    fn at(seconds: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000 + seconds, 0).unwrap()
    }

    fn listed(body: &str, seconds: i64, md5_tag: bool) -> Listed {
        let e_tag = if md5_tag { format!("\"{}\"", md5_hex(body.as_bytes())) } else { "\"opaque\"".to_owned() };
        Listed { size: body.len() as u64, e_tag: Some(e_tag), last_modified: at(seconds) }
    }

    fn manifest_of(local: &LocalTree, seconds: i64, clean: bool) -> RemoteManifest {
        RemoteManifest {
            root: Some(local.manifest.root.clone()),
            files: local.files.clone(),
            hash: content_hash(&local.manifest.root_bytes),
            last_modified: at(seconds),
            clean,
            marked: !clean,
        }
    }

    #[test]
    fn a_clean_matching_manifest_is_a_no_op_without_listing() {
        let (_dir, local) = tree(&[("a/index.json", "{}"), ("b.html", "<p>")]);
        let remote = manifest_of(&local, 10, true);
        let plan = from_manifest(&local, Some(&remote)).unwrap();
        assert!(plan.is_empty());
        assert_eq!(plan.unchanged, 4, "two files, a shard and the root");
        // A marked manifest (a publish did not finish) sends the publish to the listing.
        assert_eq!(from_manifest(&local, Some(&manifest_of(&local, 10, false))), None);
        assert_eq!(from_manifest(&local, None), None);
    }

    #[test]
    fn the_listing_finds_what_arrived_and_what_is_left_over() {
        let (_dir, old) = tree(&[("keep.json", "1"), ("change.json", "old"), ("gone.json", "x")]);
        let remote = manifest_of(&old, 10, false);
        let (_dir2, local) = tree(&[("keep.json", "1"), ("change.json", "new"), ("new.json", "n"), ("late.json", "l")]);
        let listing = BTreeMap::from([
            // Vouched for by the manifest: written before it, same hash.
            ("keep.json".to_owned(), listed("1", 5, false)),
            // An interrupted publish already uploaded the new bytes (MD5 ETag matches).
            ("change.json".to_owned(), listed("new", 20, true)),
            // Written after the manifest with other bytes: not in place.
            ("late.json".to_owned(), listed("L", 20, true)),
            ("gone.json".to_owned(), listed("x", 5, true)),
            // Left by an interrupted publish of a file since removed.
            ("orphan.json".to_owned(), listed("o", 20, true)),
            ("_manifest.json".to_owned(), listed("m", 10, false)),
        ]);
        let plan = from_listing(&local, Some(&remote), &listing, None, false).unwrap();
        assert_eq!(plan.uploads, ["late.json", "new.json"]);
        assert_eq!(plan.deletes, ["gone.json", "orphan.json"]);
        let shards: Vec<&String> = local.manifest.shards.keys().collect();
        assert_eq!(plan.shards.iter().collect::<Vec<_>>(), shards, "the new shard, not listed");
        assert!(plan.upload_manifest);
        assert_eq!(plan.unchanged, 2);
        let shard_bytes: usize = local.manifest.shards.values().map(Vec::len).sum();
        assert_eq!(plan.bytes, 2 + (shard_bytes + local.manifest.root_bytes.len()) as u64);
    }

    #[test]
    fn a_clean_manifest_plans_a_change_from_the_shards_that_differ() {
        let files = |changed: &str, gone: bool| -> Vec<(String, String)> {
            let mut files: Vec<(String, String)> = (0..3000)
                .map(|i| (format!("s/{i}/index.json"), if i == 7 { changed.to_owned() } else { i.to_string() }))
                .collect();
            if gone {
                files.push(("gone.json".to_owned(), "x".to_owned()));
            }
            files
        };
        let (_d1, old) = tree_owned(&files("old", true));
        let (_d2, local) = tree_owned(&files("new", false));
        let mut remote = manifest_of(&old, 10, true);
        let read = shards_to_read(&local.manifest.root, remote.root.as_ref().unwrap());
        assert!(read.len() <= 2 && read.len() < old.manifest.shards.len(), "{read:?}");
        // Only the shards read are known: the others' entries are vouched for by their hash.
        let digits = read.iter().next().unwrap().len();
        remote.files.retain(|rel, _| read.contains(&shard_prefix(rel, digits)));
        let plan = from_manifest(&local, Some(&remote)).unwrap();
        assert_eq!(plan.uploads, ["s/7/index.json"]);
        let old_shards: Vec<&String> =
            old.manifest.shards.keys().filter(|s| !local.manifest.shards.contains_key(*s)).collect();
        let mut deletes = vec!["gone.json".to_owned()];
        deletes.extend(old_shards.into_iter().cloned());
        assert_eq!(plan.deletes, deletes);
        assert_eq!(plan.shards.len(), read.len());
        assert!(plan.upload_manifest);
        assert_eq!(plan.unchanged, 2999 + local.manifest.shards.len() - read.len());
    }

    fn tree_owned(files: &[(String, String)]) -> (tempfile::TempDir, LocalTree) {
        let borrowed: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        tree(&borrowed)
    }

    #[test]
    fn an_object_rewritten_after_the_manifest_is_not_vouched_for() {
        let (_dir, local) = tree(&[("a.json", "same")]);
        let remote = manifest_of(&local, 10, false);
        // Same size, written at the manifest's second or later, opaque ETag: upload again.
        let listing = BTreeMap::from([("a.json".to_owned(), listed("SAME", 10, false))]);
        assert_eq!(from_listing(&local, Some(&remote), &listing, None, false).unwrap().uploads, ["a.json"]);
    }

    #[test]
    fn verify_judges_an_md5_etag_even_where_the_manifest_vouches() {
        let (_dir, local) = tree(&[("a.json", "same")]);
        let remote = manifest_of(&local, 10, true);
        // Older than the manifest, same size: vouched for, unless its MD5 ETag is checked.
        let listing = BTreeMap::from([("a.json".to_owned(), listed("SAME", 5, true))]);
        assert!(from_listing(&local, Some(&remote), &listing, None, false).unwrap().uploads.is_empty());
        assert_eq!(from_listing(&local, Some(&remote), &listing, None, true).unwrap().uploads, ["a.json"]);
        // An opaque ETag cannot be judged: the manifest's word stands.
        let listing = BTreeMap::from([("a.json".to_owned(), listed("SAME", 5, false))]);
        assert!(from_listing(&local, Some(&remote), &listing, None, true).unwrap().uploads.is_empty());
    }

    #[test]
    fn the_pointer_is_in_place_only_when_its_bytes_are() {
        let (_dir, local) = tree(&[("a.json", "1"), (POINTER, "new pointer")]);
        let remote = manifest_of(&local, 10, false);
        // Older than a manifest that lists it, and the same size: a publish killed between
        // the manifest and the pointer leaves exactly this, with the old pointer's bytes.
        let listing = BTreeMap::from([
            ("a.json".to_owned(), listed("1", 5, false)),
            (POINTER.to_owned(), listed("old pointer", 5, false)),
        ]);
        let stale = from_listing(&local, Some(&remote), &listing, Some(b"old pointer"), false).unwrap();
        assert_eq!(stale.uploads, [POINTER]);
        let same = from_listing(&local, Some(&remote), &listing, Some(b"new pointer"), false).unwrap();
        assert!(same.uploads.is_empty(), "{same:?}");
        assert_eq!(from_listing(&local, Some(&remote), &listing, None, false).unwrap().uploads, [POINTER]);
    }
}
