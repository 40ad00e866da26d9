//! What a publish moves when little changed (issue 27, item 2), counted at a [`Proxy`] in
//! front of the S3 server: a publish with nothing to do, then one after a single service's
//! description changed. `tests/publish` checks the rule on a small sample; `make
//! bench-s3-publish` counts the same at 100,000 services.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use svcdir::write::{Manifest, ManifestRoot, is_manifest_path, shard_path};

use crate::proxy::{Proxy, Transfer};
use crate::s3::{S3Server, publish, summary};

/// A `svcdir sample` dataset and its build, in a folder of its own.
#[derive(Debug)]
pub struct Sample {
    /// The dataset.
    pub input: PathBuf,
    /// The built tree, `public` beside `input`.
    pub public: PathBuf,
}

impl Sample {
    /// Generates `services` services of seed `seed` under `dir` (not built yet).
    pub fn generate(dir: &Path, services: usize, seed: u64) -> Sample {
        let input = dir.join("input");
        svcdir::sample::generate(&svcdir::sample::SampleConfig { services, seed, out: input.clone() }).expect("sample");
        Sample { input, public: dir.join("public") }
    }

    /// Builds the tree (one object per file: no `--precompress`); its manifest.
    pub fn build(&self) -> (ManifestRoot, Manifest) {
        let work = self.public.parent().expect("the sample's folder");
        crate::dataset::assert_ok(&crate::dataset::build(&self.input, work, &[]));
        (ManifestRoot::read(&self.public).expect("root"), Manifest::read(&self.public).expect("manifest"))
    }

    /// Changes the description of the first published service of the dataset.
    pub fn change_one_service(&self) {
        let services = self.input.join("services.jsonl");
        let text = std::fs::read_to_string(&services).expect("services");
        let line = text.lines().find(|l| !l.contains("\"published\":false")).expect("a published service");
        let mut record: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line).expect("record");
        record.insert("description".into(), "Changed by the publish traffic count.".into());
        let changed = serde_json::to_string(&record).expect("json");
        std::fs::write(&services, text.replacen(line, &changed, 1)).expect("write");
    }
}

/// The two publishes, as the proxy saw them.
#[derive(Debug)]
pub struct Traffic {
    /// Bytes of the root manifest before the change.
    pub root_bytes: u64,
    /// The publish with nothing to do.
    pub noop: Vec<Transfer>,
    /// Files new or changed between the two builds, by their manifests.
    pub changed: BTreeSet<String>,
    /// The manifest's shards of the new build that the old one did not have: (path, bytes).
    pub new_shards: BTreeMap<String, u64>,
    /// The shards of the old build that changed, as paths of the store.
    pub old_shards: BTreeSet<String>,
    /// The publish after the change.
    pub after_change: Vec<Transfer>,
    /// The prefix of every object's path in the store's requests: `/<bucket>/<prefix>/`.
    pub prefix: String,
}

impl Traffic {
    /// Counts a no-op publish of `sample` (already built, `old` its manifest, and already
    /// published to `s3://bucket/site` on `s3`), then one after a service changed.
    pub fn count(sample: &Sample, old: &(ManifestRoot, Manifest), s3: &S3Server, bucket: &str) -> Traffic {
        let proxy = Proxy::start(s3.port, 0, Duration::ZERO);
        let env = S3Server::env_for(&proxy.endpoint());
        let to = format!("s3://{bucket}/site");
        let transfers = || std::mem::take(&mut *proxy.counts.transfers.lock().unwrap_or_else(|p| p.into_inner()));
        let published = |what: &str| {
            let output = publish(&sample.public, &to, &env, &[]);
            assert!(output.status.success(), "{what} failed: {}", String::from_utf8_lossy(&output.stderr));
            summary(&output)
        };

        let root_bytes = std::fs::metadata(sample.public.join("_manifest.json")).expect("root manifest").len();
        let noop_summary = published("the no-op publish");
        assert_eq!(noop_summary["uploaded"].as_u64(), Some(0), "{noop_summary}");
        let noop = transfers();

        sample.change_one_service();
        let (old_root, old) = old;
        let (new_root, new) = sample.build();
        let changed = new
            .files
            .iter()
            .filter(|(rel, entry)| old.files.get(*rel) != Some(entry))
            .map(|(rel, _)| rel.clone())
            .collect();
        let new_shards = new_root
            .shards
            .iter()
            .filter(|(p, h)| old_root.shards.get(*p) != Some(*h))
            .map(|(_, h)| {
                let path = shard_path(h);
                let bytes = std::fs::metadata(sample.public.join(&path)).expect("shard").len();
                (path, bytes)
            })
            .collect();
        let old_shards = old_root
            .shards
            .iter()
            .filter(|(p, h)| new_root.shards.get(*p) != Some(*h))
            .map(|(_, h)| shard_path(h))
            .collect();
        published("the publish after one change");
        Traffic {
            root_bytes,
            noop,
            changed,
            new_shards,
            old_shards,
            after_change: transfers(),
            prefix: format!("/{bucket}/site/"),
        }
    }

    /// Bytes the no-op publish moved, both ways (bodies).
    pub fn noop_bytes(&self) -> u64 {
        self.noop.iter().map(|t| t.sent + t.received).sum()
    }

    /// The path in the tree of a request to an object of the site (its query left out).
    pub fn rel(&self, transfer: &Transfer) -> Option<String> {
        let rel = transfer.target.strip_prefix(&self.prefix)?;
        Some(rel.split('?').next().unwrap_or(rel).to_owned())
    }

    /// The objects of the tree (the manifest's own aside) the publish after the change put.
    pub fn uploaded(&self) -> BTreeSet<String> {
        self.after_change.iter().filter_map(|t| self.object_put(t)).collect()
    }

    /// Bytes of those objects.
    pub fn uploaded_bytes(&self) -> u64 {
        self.after_change.iter().filter(|t| self.object_put(t).is_some()).map(|t| t.sent).sum()
    }

    /// The manifest shards the publish after the change read.
    pub fn shard_reads(&self) -> BTreeSet<String> {
        self.after_change
            .iter()
            .filter(|t| t.method == "GET")
            .filter_map(|t| self.rel(t))
            .filter(|r| r.starts_with("_manifest/"))
            .collect()
    }

    /// Listings of the store (`?list-type=`) in the publish after the change.
    pub fn listings(&self) -> usize {
        self.after_change.iter().filter(|t| t.target.contains("list-type")).count()
    }

    /// Everything the publish after the change moved beside the objects' own bytes: the
    /// manifest's reads and writes, the deletes, the answers to the uploads.
    pub fn other_bytes(&self) -> u64 {
        let bytes = |t: &Transfer| if self.object_put(t).is_some() { t.received } else { t.sent + t.received };
        self.after_change.iter().map(bytes).sum()
    }

    /// The bound of [`Traffic::other_bytes`] for a publish that reads and writes only the
    /// manifest shards that changed: the root read, marked and written twice; the old
    /// changed shards read (about the size of the new ones), the new ones written; a
    /// kilobyte a request for the rest.
    pub fn other_bound(&self) -> u64 {
        4 * self.root_bytes + 2 * self.new_shards.values().sum::<u64>() + 1024 * self.after_change.len() as u64
    }

    /// Issue 27's rule for the publish after the change: it put exactly the objects whose
    /// bytes changed (by the two manifests), read exactly the manifest shards that changed,
    /// and listed nothing.
    pub fn assert_only_what_changed_moved(&self) {
        assert_eq!(self.uploaded(), self.changed, "the objects put are exactly those whose bytes changed");
        assert_eq!(self.shard_reads(), self.old_shards, "the shards read are exactly those that changed");
        assert_eq!(self.listings(), 0, "nothing listed: {:?}", self.after_change);
    }

    /// The path of an object of the tree (the manifest's own aside) that `transfer` put.
    fn object_put(&self, transfer: &Transfer) -> Option<String> {
        (transfer.method == "PUT").then(|| self.rel(transfer)).flatten().filter(|r| !is_manifest_path(r))
    }
}
