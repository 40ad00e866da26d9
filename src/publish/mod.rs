//! `svcdir publish`: copies a built tree to object storage (S3 and S3-compatible stores,
//! GCS, Azure, a local folder), moving only what changed (behaviour.md, "Publishing and
//! the CDN edge").
//!
//! Steps: `local` reads and hashes the tree; the remote manifest (its root, and the shards
//! that differ from the local ones) and, when needed, the store's listing say what is there
//! (`plan`); then uploads (a file before the lists that link to it), the manifest's new
//! shards, its root, the pointer to the search index, and deletes (old shards among them),
//! in that order, so readers never meet a link to a
//! missing object and a failure part-way leaves the previous site whole. `store` opens
//! the store from the URL and the standard environment.
//!
//! Being killed at any moment is safe: before its first upload a publish re-writes the
//! remote manifest with the metadata mark `svcdir-publish: running`, and only the final
//! manifest, written once everything is in place, has no mark. A run that finds the mark
//! compares the store's listing with the tree object by object instead of trusting the
//! manifest, so it uploads only what is still missing or different and deletes what an
//! interrupted run left behind.

pub(crate) mod local;
pub(crate) mod plan;
pub mod report;
pub(crate) mod store;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use futures::{StreamExt, TryStreamExt};
use object_store::{Attribute, Attributes, ObjectStoreExt, PutOptions, PutPayload};

use crate::api::objects::{POINTER_STAGE, object_headers, upload_stage};
use crate::index::published::POINTER;
use crate::write::{FileEntry, MANIFEST, ManifestRoot, content_hash, is_manifest_path, parse_shard, shard_path};
use local::LocalTree;
use plan::{Listed, Plan, RemoteManifest};
use store::Target;

/// The metadata key of the mark on the remote manifest while a publish runs.
const MARK_KEY: &str = "svcdir-publish";
/// Its value.
const MARK_RUNNING: &str = "running";

/// Why a publish failed.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// `--to` is not a URL of a supported store.
    #[error("--to {url:?}: {reason}")]
    BadUrl {
        /// The URL given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `--to` names a cloud store, and this program was built without the `cloud` feature
    /// (`make build` leaves it out to compile faster; `cargo build --release` has it).
    #[error(
        "--to {url:?}: this svcdir was built without cloud stores (cargo feature `cloud`); \
         build it with `cargo build --release` (or `make install`) to publish to {scheme}://"
    )]
    NoCloud {
        /// The URL given.
        url: String,
        /// Its scheme (`s3`, `gs`, `az`).
        scheme: String,
    },
    /// The store could not be set up from the URL and the environment.
    #[error("cannot use {url}: {detail}")]
    Store {
        /// The URL given.
        url: String,
        /// The cause, credentials redacted and bounded (`store::redact`).
        detail: String,
    },
    /// The bucket or container does not exist.
    #[error("{url}: the bucket does not exist, or these credentials cannot see it ({detail}); create it first")]
    NoBucket {
        /// The URL given.
        url: String,
        /// The store's answer.
        detail: String,
    },
    /// The store refused the credentials.
    #[error(
        "{url}: the store refused the credentials ({detail}); check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN (or the store's own variables) and the bucket's permissions"
    )]
    Credentials {
        /// The URL given.
        url: String,
        /// The store's answer (never the credentials).
        detail: String,
    },
    /// A request to the store failed (after its retries).
    #[error("{url}: cannot {action} {what}: {detail}")]
    Remote {
        /// The URL given.
        url: String,
        /// What was being done.
        action: &'static str,
        /// To what.
        what: String,
        /// The store's answer, credentials redacted and bounded (`store::redact`).
        detail: String,
    },
    /// A local file could not be read.
    #[error("cannot read {path}: {source}")]
    Local {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The publish would delete more objects than allowed.
    #[error(
        "this publish would delete {count} objects, more than --max-deletes {max}; nothing was changed (check --public and --to, or raise --max-deletes)"
    )]
    TooManyDeletes {
        /// Objects to delete.
        count: usize,
        /// The limit.
        max: usize,
    },
}

/// A checked `svcdir publish` request.
#[derive(Debug, Clone)]
pub struct PublishConfig {
    /// The built tree.
    pub public: PathBuf,
    /// The destination URL.
    pub to: String,
    /// Print the plan, change nothing.
    pub dry_run: bool,
    /// Most objects a publish may delete.
    pub max_deletes: usize,
    /// Transfers at once (at least 1).
    pub jobs: usize,
    /// Never trust the remote manifest: list the store and check every object against the
    /// local file (its size, and its ETag when that is an MD5), so that objects deleted or
    /// changed behind the manifest's back are found and uploaded again.
    pub verify: bool,
}

/// What a publish did (or, with `--dry-run`, would do).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PublishSummary {
    /// Whether nothing was changed on purpose.
    pub dry_run: bool,
    /// Objects uploaded, the manifest included.
    pub uploaded: usize,
    /// Objects deleted.
    pub deleted: usize,
    /// Objects already in place.
    pub unchanged: usize,
    /// Bytes uploaded.
    pub bytes: u64,
    /// Wall time.
    pub seconds: f64,
    /// The files to upload and the objects to delete, in order (relative paths).
    pub plan: Plan,
    /// Whether the store had to be listed (no usable, clean remote manifest).
    pub listed: bool,
    /// Symbolic links of the tree, not published (relative paths).
    pub skipped_links: Vec<String>,
}

/// Progress of the transfers, for a progress bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The number of transfers (uploads and deletes) planned.
    Planned(u64),
    /// One more transfer done.
    Done,
}

/// Publishes `cfg.public` to `cfg.to`.
pub async fn publish(
    cfg: &PublishConfig,
    on_progress: &(dyn Fn(Progress) + Sync),
) -> Result<PublishSummary, PublishError> {
    let started = Instant::now();
    let target = store::open(&cfg.to)?;
    let public = cfg.public.clone();
    let local = tokio::task::spawn_blocking(move || LocalTree::scan(&public))
        .await
        .map_err(|err| PublishError::Local { path: cfg.public.clone(), source: std::io::Error::other(err) })??;
    let mut remote = read_manifest(&target).await?;
    // A clean manifest is trusted (unless asked to verify): only its shards that differ from
    // the local ones are read.
    let trusted = match remote.as_mut().filter(|r| r.clean && !cfg.verify) {
        Some(r) => match r.root.as_ref().map(|root| plan::shards_to_read(&local.manifest.root, root)) {
            Some(prefixes) => read_shards(cfg, &target, r, &prefixes).await?,
            None => false,
        },
        None => false,
    };
    let (plan, listed) = match plan::from_manifest(&local, remote.as_ref().filter(|_| trusted)) {
        Some(plan) => (plan, false),
        None => {
            let listing = list(&target).await?;
            let pointer = match listing.contains_key(POINTER) {
                true => read_object(&target, POINTER).await?,
                false => None,
            };
            // Every entry of the remote manifest vouches for its object here.
            if let Some(r) = remote.as_mut() {
                let prefixes = r.root.as_ref().map(|root| root.shards.keys().cloned().collect()).unwrap_or_default();
                if !read_shards(cfg, &target, r, &prefixes).await? {
                    r.files.clear();
                }
            }
            let local = local.clone();
            let remote = remote.clone();
            let verify = cfg.verify;
            let plan = tokio::task::spawn_blocking(move || {
                plan::from_listing(&local, remote.as_ref(), &listing, pointer.as_deref(), verify)
            })
            .await
            .map_err(|err| PublishError::Local { path: cfg.public.clone(), source: std::io::Error::other(err) })??;
            (plan, true)
        }
    };
    // The manifest's old shards are its own, not the site's: they do not count against the
    // limit (a large change replaces thousands of them).
    let deletes = plan.deletes.iter().filter(|rel| !is_manifest_path(rel)).count();
    if deletes > cfg.max_deletes {
        return Err(PublishError::TooManyDeletes { count: deletes, max: cfg.max_deletes });
    }
    let mut summary = PublishSummary {
        dry_run: cfg.dry_run,
        unchanged: plan.unchanged,
        listed,
        skipped_links: local.skipped_links.clone(),
        ..Default::default()
    };
    if cfg.dry_run || plan.is_empty() {
        summary.plan = plan;
        summary.seconds = started.elapsed().as_secs_f64();
        return Ok(summary);
    }
    on_progress(Progress::Planned((plan.upload_count() + plan.deletes.len()) as u64));

    // Mark the manifest (its own bytes again) before the first change, so that a run
    // killed from here on is noticed by the next one.
    if let Some(remote) = remote.as_ref().filter(|r| r.clean && target.attributes)
        && (!plan.uploads.is_empty() || !plan.shards.is_empty() || !plan.deletes.is_empty())
    {
        let bytes = target
            .store
            .get(&target.location(MANIFEST))
            .await
            .map_err(|err| store::classify(&target, "read", MANIFEST, err))?
            .bytes()
            .await
            .map_err(|err| store::classify(&target, "read", MANIFEST, err))?;
        if content_hash(&bytes) == remote.hash {
            put(&target, &local, MANIFEST, bytes.to_vec(), true).await?;
        }
    }

    // Uploads, stage by stage: every file of a stage is in place before the next starts;
    // then the manifest's shards, then its root, then the pointer to the search index (its
    // own last stage), so that the pointer never names an index the store does not hold yet.
    let mut stages: BTreeMap<u8, Vec<&String>> = BTreeMap::new();
    for rel in &plan.uploads {
        stages.entry(upload_stage(rel).0).or_default().push(rel);
    }
    let pointer = stages.remove(&POINTER_STAGE);
    for files in stages.values() {
        upload_all(cfg, &target, &local, files, on_progress).await?;
    }
    let shards: Vec<&String> = plan.shards.iter().collect();
    upload_all(cfg, &target, &local, &shards, on_progress).await?;
    summary.uploaded = plan.uploads.len() + plan.shards.len();
    summary.bytes = plan.uploads.iter().map(|rel| local.files[rel].size).sum::<u64>()
        + plan.shards.iter().map(|rel| local.manifest.shards[rel].len() as u64).sum::<u64>();

    // The manifest: marked while the pointer or deletes remain, so a run killed before they
    // are done finishes them (a clean manifest would vouch for an old pointer).
    let unfinished = !plan.deletes.is_empty() || pointer.is_some();
    if plan.upload_manifest || unfinished {
        put(&target, &local, MANIFEST, local.manifest.root_bytes.clone(), unfinished).await?;
        summary.uploaded += 1;
        summary.bytes += local.manifest.root_bytes.len() as u64;
        on_progress(Progress::Done);
    }
    if let Some(pointer) = pointer {
        upload_all(cfg, &target, &local, &pointer, on_progress).await?;
    }

    if !plan.deletes.is_empty() {
        let locations: Vec<_> = plan.deletes.iter().map(|rel| Ok(target.location(rel))).collect();
        let locations = futures::stream::iter(locations).boxed();
        target
            .store
            .delete_stream(locations)
            .map(|result| {
                on_progress(Progress::Done);
                result
            })
            .try_collect::<Vec<_>>()
            .await
            .map_err(|err| store::classify(&target, "delete", "objects", err))?;
        summary.deleted = plan.deletes.len();
    }
    if unfinished && target.attributes {
        put(&target, &local, MANIFEST, local.manifest.root_bytes.clone(), false).await?;
    }
    summary.plan = plan;
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// Uploads files of the tree, `--jobs` at a time.
async fn upload_all(
    cfg: &PublishConfig,
    target: &Target,
    local: &LocalTree,
    files: &[&String],
    on_progress: &(dyn Fn(Progress) + Sync),
) -> Result<(), PublishError> {
    futures::stream::iter(files.iter().map(|rel| async move {
        let bytes = match local.manifest.shards.get(rel.as_str()) {
            Some(shard) => shard.clone(),
            None => tokio::fs::read(local.root.join(rel.as_str()))
                .await
                .map_err(|source| PublishError::Local { path: local.root.join(rel.as_str()), source })?,
        };
        put(target, local, rel, bytes, false).await?;
        on_progress(Progress::Done);
        Ok::<(), PublishError>(())
    }))
    .buffer_unordered(cfg.jobs.max(1))
    .try_collect::<()>()
    .await
}

/// Writes one object with its metadata (`marked`: the manifest's mark).
async fn put(target: &Target, local: &LocalTree, rel: &str, bytes: Vec<u8>, marked: bool) -> Result<(), PublishError> {
    let mut attributes = Attributes::new();
    if target.attributes {
        let headers = object_headers(rel, |plain| local.files.contains_key(plain));
        attributes.insert(Attribute::ContentType, headers.content_type.into());
        attributes.insert(Attribute::CacheControl, headers.cache_control.into());
        if let Some(encoding) = headers.content_encoding {
            attributes.insert(Attribute::ContentEncoding, encoding.into());
        }
        if marked {
            attributes.insert(Attribute::Metadata(MARK_KEY.into()), MARK_RUNNING.into());
        }
    }
    let options = PutOptions { attributes, ..Default::default() };
    target
        .store
        .put_opts(&target.location(rel), PutPayload::from(bytes), options)
        .await
        .map_err(|err| store::classify(target, "upload", rel, err))?;
    Ok(())
}

/// The bytes of one object; `None` when there is none.
async fn read_object(target: &Target, rel: &str) -> Result<Option<Vec<u8>>, PublishError> {
    match target.store.get(&target.location(rel)).await {
        Ok(result) => Ok(Some(result.bytes().await.map_err(|err| store::classify(target, "read", rel, err))?.to_vec())),
        Err(object_store::Error::NotFound { .. }) => Ok(None),
        Err(err) => Err(store::classify(target, "read", rel, err)),
    }
}

/// The remote root manifest; `None` when there is none. No shard is read here.
async fn read_manifest(target: &Target) -> Result<Option<RemoteManifest>, PublishError> {
    let result = match target.store.get(&target.location(MANIFEST)).await {
        Ok(result) => result,
        Err(object_store::Error::NotFound { .. }) => return Ok(None),
        Err(err) => return Err(store::classify(target, "read", MANIFEST, err)),
    };
    let last_modified = result.meta.last_modified;
    let marked = result.attributes.get(&Attribute::Metadata(MARK_KEY.into())).is_some();
    let bytes = result.bytes().await.map_err(|err| store::classify(target, "read", MANIFEST, err))?;
    Ok(Some(RemoteManifest {
        root: ManifestRoot::parse(&bytes),
        files: BTreeMap::new(),
        hash: content_hash(&bytes),
        last_modified,
        clean: target.attributes && !marked,
        marked,
    }))
}

/// Reads the remote manifest's shards of these prefixes into `remote.files`, `--jobs` at a
/// time; false when one is missing or not what its name says (the manifest cannot be
/// trusted then).
async fn read_shards(
    cfg: &PublishConfig,
    target: &Target,
    remote: &mut RemoteManifest,
    prefixes: &std::collections::BTreeSet<String>,
) -> Result<bool, PublishError> {
    let Some(root) = remote.root.as_ref() else { return Ok(false) };
    let hashes: Vec<&String> = prefixes.iter().filter_map(|prefix| root.shards.get(prefix)).collect();
    let shards: Vec<Option<BTreeMap<String, FileEntry>>> =
        futures::stream::iter(hashes.into_iter().map(|hash| async move {
            let bytes = read_object(target, &shard_path(hash)).await?;
            Ok::<_, PublishError>(bytes.and_then(|bytes| parse_shard(hash, &bytes)))
        }))
        .buffered(cfg.jobs.max(1))
        .try_collect()
        .await?;
    for shard in shards {
        let Some(shard) = shard else { return Ok(false) };
        remote.files.extend(shard);
    }
    Ok(true)
}

/// Every object under the prefix, by relative path.
async fn list(target: &Target) -> Result<BTreeMap<String, Listed>, PublishError> {
    let prefix = (!target.prefix.is_root()).then_some(&target.prefix);
    let mut stream = target.store.list(prefix);
    let mut listing = BTreeMap::new();
    while let Some(meta) = stream.next().await {
        let meta = meta.map_err(|err| match err {
            // Listing a prefix that holds nothing is an empty list, not an error: a 404 here
            // is the bucket itself.
            object_store::Error::NotFound { .. } if !err.to_string().contains("NoSuchBucket") => {
                PublishError::NoBucket {
                    url: target.url.clone(),
                    detail: "the store answered 404 Not Found".to_owned(),
                }
            }
            err => store::classify(target, "list", "the objects", err),
        })?;
        if let Some(rel) = target.relative(&meta.location) {
            listing.insert(rel, Listed { size: meta.size, e_tag: meta.e_tag, last_modified: meta.last_modified });
        }
    }
    Ok(listing)
}
