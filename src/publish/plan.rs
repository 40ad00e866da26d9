//! What a publish must do: which files to upload (in order), which objects to delete, and
//! how many are already in place, from the local tree and what the store says.
//!
//! The remote manifest is the record of the last *complete* publish. When it is clean
//! (no publish ran since without finishing, see [`RemoteManifest::clean`]) and lists exactly
//! the local files, nothing else is asked of the store. Otherwise the store's listing
//! decides, object by object: an object is in place when the manifest vouches for it (same
//! hash and size, and not written since the manifest was) or when its ETag is the MD5 of
//! the local bytes (what S3 and compatible stores give for a plain upload). So a publish
//! killed part-way and run again uploads only what had not arrived, and deletes what a
//! killed run left behind.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use md5::{Digest, Md5};
use rayon::prelude::*;

use super::PublishError;
use super::local::LocalTree;
use crate::api::objects::upload_stage;
use crate::index::published::POINTER;
use crate::write::{FileEntry, MANIFEST, content_hash};

/// The remote `_manifest.json`.
#[derive(Debug, Clone)]
pub struct RemoteManifest {
    /// Its files; `None` when it could not be read as a manifest.
    pub files: Option<BTreeMap<String, FileEntry>>,
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
pub struct Listed {
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
    /// Files to upload, in upload order (see [`upload_stage`]); the manifest is not among
    /// them.
    pub uploads: Vec<String>,
    /// Objects to delete, relative to the prefix.
    pub deletes: Vec<String>,
    /// Whether the manifest must be written (after the uploads).
    pub upload_manifest: bool,
    /// Objects already in place, the manifest included.
    pub unchanged: usize,
    /// Bytes to upload, the manifest included.
    pub bytes: u64,
}

impl Plan {
    /// Whether the store already holds the tree.
    pub fn is_empty(&self) -> bool {
        self.uploads.is_empty() && self.deletes.is_empty() && !self.upload_manifest
    }
}

/// The plan decided by the remote manifest alone, when it is clean and lists exactly the
/// local files; `None` when the store's listing is needed.
pub fn from_manifest(local: &LocalTree, remote: Option<&RemoteManifest>) -> Option<Plan> {
    let remote = remote.filter(|r| r.clean)?;
    if remote.files.as_ref() != Some(&local.files) {
        return None;
    }
    let same = remote.hash == content_hash(&local.manifest);
    Some(Plan {
        uploads: Vec::new(),
        deletes: Vec::new(),
        upload_manifest: !same,
        unchanged: local.files.len() + usize::from(same),
        bytes: if same { 0 } else { local.manifest.len() as u64 },
    })
}

/// The plan decided object by object from the store's listing (relative path → object).
/// `remote_pointer` holds the store's `_search/current.json`: the pointer is written after
/// the manifest, so the manifest cannot vouch for it; it is in place when its bytes are.
pub fn from_listing(
    local: &LocalTree,
    remote: Option<&RemoteManifest>,
    listing: &BTreeMap<String, Listed>,
    remote_pointer: Option<&[u8]>,
) -> Result<Plan, PublishError> {
    let vouched = |rel: &str, entry: &FileEntry, listed: &Listed| {
        remote.is_some_and(|r| {
            r.files.as_ref().and_then(|files| files.get(rel)) == Some(entry) && listed.last_modified < r.last_modified
        })
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
            if vouched(rel, entry, listed) {
                return Ok((rel, true));
            }
            let Some(e_tag) = listed.e_tag.as_deref().map(|t| t.trim_matches('"')) else {
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
    plan.deletes = listing.keys().filter(|rel| *rel != MANIFEST && !local.files.contains_key(*rel)).cloned().collect();
    let manifest_in_place = remote.is_some_and(|r| !r.marked && r.hash == content_hash(&local.manifest));
    plan.upload_manifest = !(manifest_in_place && plan.uploads.is_empty() && plan.deletes.is_empty());
    if plan.upload_manifest {
        plan.bytes += local.manifest.len() as u64;
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
    use crate::write::Manifest;

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
            files: Manifest::parse(&local.manifest).map(|m| m.files),
            hash: content_hash(&local.manifest),
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
        assert_eq!(plan.unchanged, 3);
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
        let plan = from_listing(&local, Some(&remote), &listing, None).unwrap();
        assert_eq!(plan.uploads, ["late.json", "new.json"]);
        assert_eq!(plan.deletes, ["gone.json", "orphan.json"]);
        assert!(plan.upload_manifest);
        assert_eq!(plan.unchanged, 2);
        assert_eq!(plan.bytes, 2 + local.manifest.len() as u64);
    }

    #[test]
    fn an_object_rewritten_after_the_manifest_is_not_vouched_for() {
        let (_dir, local) = tree(&[("a.json", "same")]);
        let remote = manifest_of(&local, 10, false);
        // Same size, written at the manifest's second or later, opaque ETag: upload again.
        let listing = BTreeMap::from([("a.json".to_owned(), listed("SAME", 10, false))]);
        assert_eq!(from_listing(&local, Some(&remote), &listing, None).unwrap().uploads, ["a.json"]);
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
        let stale = from_listing(&local, Some(&remote), &listing, Some(b"old pointer")).unwrap();
        assert_eq!(stale.uploads, [POINTER]);
        let same = from_listing(&local, Some(&remote), &listing, Some(b"new pointer")).unwrap();
        assert!(same.uploads.is_empty(), "{same:?}");
        assert_eq!(from_listing(&local, Some(&remote), &listing, None).unwrap().uploads, [POINTER]);
    }
}
