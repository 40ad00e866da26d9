//! `svcdir-search --from SOURCE`: serving the index of a publication and following it
//! (behaviour.md, "A publication: the files and the search index as one unit").
//!
//! Every `--poll` seconds the pointer `_search/current.json` is read (from a store with the
//! ETag of the last read, so an unchanged pointer costs a 304); when it names another index,
//! that index is fetched into the cache folder (a local folder's file is used in place),
//! its bytes checked against its name, and it is put in force as a SIGHUP reload does:
//! requests already running finish with the index they loaded. Anything wrong leaves the
//! index in force, is logged, counted and shown by `/healthz`, and is tried again next time.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use object_store::{GetOptions, GetRange, ObjectStoreExt as _};

use self::cache::Cache;
pub use self::cache::CacheError;

use super::{AppState, LiveState, Telemetry};
use crate::index::IndexError;
use crate::index::published::{MAX_POINTER_BYTES, POINTER, Pointer, PointerError};
use crate::publish::PublishError;
use crate::publish::store::{self, Target};

mod cache;

/// Why a poll or the set-up of `--from` failed.
#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    /// SOURCE is a URL `svcdir publish` cannot use, or its store cannot be set up.
    #[error("--from: {0}")]
    Source(#[source] PublishError),
    /// The cache folder could not be made or used.
    #[error(transparent)]
    Cache(#[from] CacheError),
    /// The pointer could not be read.
    #[error("cannot read {what}: {detail}")]
    Read {
        /// The pointer or index, where it was read from.
        what: String,
        /// The cause.
        detail: String,
    },
    /// The pointer in a folder is not a regular file (a FIFO or a device would block or
    /// never end).
    #[error("cannot read {}: not a regular file", path.display())]
    NotAFile {
        /// The pointer's path.
        path: PathBuf,
    },
    /// Reading the pointer took longer than its time limit.
    #[error("cannot read {what}: no answer within {} s", limit.as_secs())]
    TimedOut {
        /// The pointer, where it was read from.
        what: String,
        /// The time limit.
        limit: Duration,
    },
    /// The pointer is not a pointer to an index.
    #[error(transparent)]
    Pointer(#[from] PointerError),
    /// The fetched bytes are not the index the pointer names.
    #[error("{what}: its bytes hash to {found}, not to the {expected} its name says ({bytes} bytes)")]
    Mismatch {
        /// Where it was read from.
        what: String,
        /// The hash of its name.
        expected: String,
        /// The hash of its bytes.
        found: String,
        /// How many bytes came.
        bytes: u64,
    },
    /// The index is not a valid index.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// The pointer names an index larger than `--max-index-bytes`; nothing is fetched.
    #[error("{what}: the pointer gives it {bytes} bytes, over the {limit} of --max-index-bytes")]
    TooLarge {
        /// The index, where it would be read from.
        what: String,
        /// Its size, as the pointer gives it.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// The index's size is not the one the pointer gives (announced by the store or the
    /// file system, before any byte is read; or more bytes came than the pointer gives).
    #[error("{what}: {found} bytes, not the {expected} the pointer gives")]
    SizeDiffers {
        /// Where it was read from.
        what: String,
        /// The size the pointer gives.
        expected: u64,
        /// The size announced, or the bytes that came before reading stopped.
        found: u64,
    },
    /// The pointer names an index refused at an earlier poll, unchanged since (the same
    /// object in the store, or the same file): it is not fetched again.
    #[error("{index} is unchanged since it was refused, and is not fetched again: {reason}")]
    Refused {
        /// The index's hash.
        index: String,
        /// Why it was refused.
        reason: String,
    },
}

impl FollowError {
    /// A refusal of the index's bytes themselves, which fetching the same object again
    /// would only repeat (not a failure to read them).
    fn is_refusal(&self) -> bool {
        matches!(self, FollowError::Mismatch { .. } | FollowError::SizeDiffers { .. } | FollowError::Index(_))
    }
}

/// Where the publication is.
#[derive(Debug)]
enum Source {
    /// A built output folder, read in place.
    Folder(PathBuf),
    /// A publish destination, through `object_store` as `svcdir publish` opens it, and the
    /// cache folder its indexes are fetched into.
    Store(Target, Cache),
}

/// A followed publication: the source, the cache and what the last poll saw.
#[derive(Debug)]
pub struct Follower {
    source: Source,
    base_url: Option<String>,
    /// The pointer's ETag at the last read that was used (stores only).
    e_tag: Option<String>,
    /// The hash of the index in force.
    in_force: Option<String>,
    /// The index before it, kept in the cache.
    previous: Option<String>,
    /// The largest index fetched or mapped (`--max-index-bytes`).
    max_index_bytes: u64,
    /// The index refused last, while what it would be read from is unchanged.
    refused: Option<Refusal>,
}

/// An index refused, and the version of its object (a store's ETag, a file's identity)
/// then: the same version is refused again without a byte read.
#[derive(Debug)]
struct Refusal {
    index: String,
    version: String,
    reason: String,
}

impl Follower {
    /// Opens SOURCE (a folder path, or a URL with `://`) and, for a store, locks the cache
    /// folder (`cache`, or a new folder of the temporary directory).
    pub fn open(
        source: &str,
        cache: Option<&Path>,
        base_url: Option<String>,
        max_index_bytes: u64,
    ) -> Result<Follower, FollowError> {
        let source = if source.contains("://") {
            let target = store::open_with(source, store::Retries::Poll).map_err(FollowError::Source)?;
            let cache = Cache::open(cache)?;
            tracing::info!(cache = %cache.dir().display(), "cache folder of the fetched indexes");
            Source::Store(target, cache)
        } else {
            Source::Folder(PathBuf::from(source))
        };
        Ok(Follower { source, base_url, e_tag: None, in_force: None, previous: None, max_index_bytes, refused: None })
    }

    /// One poll: reads the pointer and, when it names another index, fetches, checks and
    /// puts it in force. `Ok(true)` when a new index was put in force.
    pub async fn poll(&mut self, live: &LiveState) -> Result<bool, FollowError> {
        let Some((pointer, e_tag)) = self.read_pointer().await? else { return Ok(false) };
        if self.in_force.as_deref() == Some(pointer.index.as_str()) {
            self.e_tag = e_tag;
            return Ok(false);
        }
        if let Some(refusal) = &self.refused
            && refusal.index == pointer.index
        {
            if self.version(&pointer).await.as_ref() == Some(&refusal.version) {
                return Err(FollowError::Refused { index: refusal.index.clone(), reason: refusal.reason.clone() });
            }
            self.refused = None;
        }
        match self.fetch_and_load(&pointer).await {
            Ok(state) => {
                self.previous = self.in_force.replace(pointer.index);
                self.e_tag = e_tag;
                live.store(state);
                self.prune();
                Ok(true)
            }
            Err(err) => {
                if err.is_refusal()
                    && let Some(version) = self.version(&pointer).await
                {
                    let reason = store::redact(&err.to_string());
                    self.refused = Some(Refusal { index: pointer.index.clone(), version, reason });
                }
                Err(err)
            }
        }
    }

    /// The version of the index's object or file now (`None` when it cannot be told).
    async fn version(&self, pointer: &Pointer) -> Option<String> {
        match &self.source {
            Source::Folder(dir) => {
                use std::os::unix::fs::MetadataExt as _;
                let meta = std::fs::metadata(dir.join(&pointer.path)).ok()?;
                Some(format!("{}:{}:{}:{}.{}", meta.dev(), meta.ino(), meta.len(), meta.mtime(), meta.mtime_nsec()))
            }
            Source::Store(target, _) => {
                let meta = target.store.head(&target.location(&pointer.path)).await.ok()?;
                Some(format!("{}:{}", meta.e_tag?, meta.size))
            }
        }
    }

    /// Fetches (or finds) the index the pointer names, checks it and reads it.
    async fn fetch_and_load(&mut self, pointer: &Pointer) -> Result<Arc<AppState>, FollowError> {
        let started = Instant::now();
        let path = self.fetch(pointer).await?;
        let base_url = self.base_url.clone();
        let expected = pointer.index.clone();
        let checked = path.clone();
        let state = tokio::task::spawn_blocking(move || -> Result<AppState, FollowError> {
            let mut state = AppState::read(&checked)?;
            // The hash of the very bytes mapped (a local file could have been replaced
            // between the pointer's read and the map).
            if state.index_hash() != expected {
                return Err(FollowError::Mismatch {
                    what: checked.display().to_string(),
                    expected,
                    found: state.index_hash().to_owned(),
                    bytes: std::fs::metadata(&checked).map_or(0, |m| m.len()),
                });
            }
            if let Some(base_url) = base_url {
                state = state.with_base_url(base_url);
            }
            Ok(state)
        })
        .await
        .map_err(|err| FollowError::Read { what: path.display().to_string(), detail: err.to_string() })
        .and_then(|checked| checked);
        let state = match state {
            Ok(state) => Arc::new(state),
            Err(err) => {
                // A fetched file that does not pass is not kept.
                if let Source::Store(_, cache) = &mut self.source {
                    cache.remove(&pointer.index)?;
                }
                return Err(err);
            }
        };
        tracing::info!(
            index_hash = state.index_hash(),
            services = state.index().service_count(),
            fetch_and_load_ms = started.elapsed().as_millis() as u64,
            "following the publication: a new index is in force",
        );
        Ok(state)
    }

    /// The pointer and its ETag; `None` when the store says it has not changed. Bounded in
    /// time ([`POINTER_TIMEOUT`]) and size ([`MAX_POINTER_BYTES`]) whatever the source.
    async fn read_pointer(&self) -> Result<Option<(Pointer, Option<String>)>, FollowError> {
        let what = match &self.source {
            Source::Folder(dir) => dir.join(POINTER).display().to_string(),
            Source::Store(target, _) => format!("{}/{POINTER}", target.url.trim_end_matches('/')),
        };
        match tokio::time::timeout(POINTER_TIMEOUT, self.read_pointer_unbounded(&what)).await {
            Ok(read) => read,
            Err(_) => Err(FollowError::TimedOut { what, limit: POINTER_TIMEOUT }),
        }
    }

    async fn read_pointer_unbounded(&self, what: &str) -> Result<Option<(Pointer, Option<String>)>, FollowError> {
        let read_error = |detail: String| FollowError::Read { what: what.to_owned(), detail };
        match &self.source {
            Source::Folder(dir) => {
                let path = dir.join(POINTER);
                let bytes = tokio::task::spawn_blocking(move || read_local_pointer(&path))
                    .await
                    .map_err(|err| read_error(err.to_string()))??;
                Ok(Some((Pointer::parse(&bytes)?, None)))
            }
            // A file:/// store's pointer is a local file: read as a folder's is (object_store
            // would open a FIFO there blocking).
            Source::Store(target, _) if let Some(dir) = target.url.strip_prefix("file://") => {
                let path = Path::new(dir).join(POINTER);
                let bytes = tokio::task::spawn_blocking(move || read_local_pointer(&path))
                    .await
                    .map_err(|err| read_error(err.to_string()))??;
                Ok(Some((Pointer::parse(&bytes)?, None)))
            }
            Source::Store(target, _) => {
                // Conditional only while the index it named is in force: after a failed
                // fetch the same pointer must be read (and its index fetched) again.
                let options = GetOptions { if_none_match: self.e_tag.clone(), ..GetOptions::default() };
                let result = match target.store.get_opts(&target.location(POINTER), options).await {
                    Ok(result) => result,
                    Err(object_store::Error::NotModified { .. }) => return Ok(None),
                    Err(err) => return Err(read_error(err.to_string())),
                };
                // The announced size first: a huge Content-Length is refused unread.
                if result.meta.size > MAX_POINTER_BYTES {
                    return Err(PointerError::TooLarge { bytes: result.meta.size }.into());
                }
                let e_tag = result.meta.e_tag.clone();
                let mut bytes = Vec::new();
                let mut stream = result.into_stream();
                while let Some(chunk) = stream.next().await {
                    bytes.extend_from_slice(&chunk.map_err(|err| read_error(err.to_string()))?);
                    if bytes.len() as u64 > MAX_POINTER_BYTES {
                        return Err(PointerError::TooLarge { bytes: bytes.len() as u64 }.into());
                    }
                }
                Ok(Some((Pointer::parse(&bytes)?, e_tag)))
            }
        }
    }

    /// The local file of the index the pointer names: in place in a folder, else fetched
    /// into the cache, its size held to the pointer's and its bytes hashed as they come. A
    /// fetch cut off part way is resumed from where it stopped at the next poll, from the
    /// same object.
    async fn fetch(&mut self, pointer: &Pointer) -> Result<PathBuf, FollowError> {
        let limit = self.max_index_bytes;
        let too_large = |what: String| FollowError::TooLarge { what, bytes: pointer.bytes, limit };
        let (target, cache) = match &mut self.source {
            Source::Folder(dir) => {
                let path = dir.join(&pointer.path);
                if pointer.bytes > limit {
                    return Err(too_large(path.display().to_string()));
                }
                // The file's own size first: a larger file is never mapped.
                let found = std::fs::metadata(&path)
                    .map_err(|err| FollowError::Read { what: path.display().to_string(), detail: err.to_string() })?
                    .len();
                if found != pointer.bytes {
                    return Err(FollowError::SizeDiffers {
                        what: path.display().to_string(),
                        expected: pointer.bytes,
                        found,
                    });
                }
                return Ok(path);
            }
            Source::Store(target, cache) => (target, cache),
        };
        let what = format!("{}/{}", target.url.trim_end_matches('/'), pointer.path);
        if pointer.bytes > limit {
            return Err(too_large(what));
        }
        if let Some(path) = cache.index(&pointer.index) {
            // Fetched before (the index before the one in force, published again, or by an
            // earlier process); checked again when it is read.
            return Ok(path);
        }
        let read_error = |err: object_store::Error| FollowError::Read { what: what.clone(), detail: err.to_string() };
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        let resumed =
            match cache.resume(&pointer.index)? {
                Some(mut resumed) if resumed.bytes < pointer.bytes => {
                    // The bytes already here are hashed again (read back, not fetched).
                    let mut buffer = vec![0; 1 << 20];
                    loop {
                        let n = std::io::Read::read(&mut resumed.file, &mut buffer).map_err(|source| {
                            CacheError::Io { path: cache.dir().to_owned(), action: "read", source }
                        })?;
                        if n == 0 {
                            break;
                        }
                        hasher.update(&buffer[..n]);
                    }
                    Some(resumed)
                }
                Some(_) => {
                    cache.discard_partial()?;
                    None
                }
                None => None,
            };
        let location = target.location(&pointer.path);
        let result = match &resumed {
            Some(resumed) => {
                let options = GetOptions {
                    range: Some(GetRange::Offset(resumed.bytes)),
                    if_match: resumed.e_tag.clone(),
                    ..GetOptions::default()
                };
                match target.store.get_opts(&location, options).await {
                    Ok(result) => Some(result),
                    // Another object under the same name since: fetched whole.
                    Err(object_store::Error::Precondition { .. }) => None,
                    Err(err) => return Err(read_error(err)),
                }
            }
            None => None,
        };
        let (result, mut file, mut bytes) = match (result, resumed) {
            (Some(result), Some(resumed)) => {
                tracing::info!(index = %pointer.index, from_byte = resumed.bytes, "resuming the fetch of an index");
                (result, resumed.file, resumed.bytes)
            }
            _ => {
                cache.discard_partial()?;
                hasher = xxhash_rust::xxh3::Xxh3::new();
                let result = target.store.get(&location).await.map_err(read_error)?;
                let file = cache.start(&pointer.index, result.meta.e_tag.clone())?;
                (result, file, 0)
            }
        };
        // The announced size first: a larger object is refused unread.
        if result.meta.size != pointer.bytes || result.range.start != bytes {
            cache.discard_partial()?;
            return Err(FollowError::SizeDiffers { what, expected: pointer.bytes, found: result.meta.size });
        }
        let cache_error = |source| CacheError::Io { path: cache.dir().to_owned(), action: "write", source };
        let mut stream = result.into_stream();
        while let Some(chunk) = stream.next().await {
            // Cut off: what came is kept for the next poll to go on from.
            let chunk = chunk.map_err(|err| FollowError::Read {
                what: what.clone(),
                detail: format!("{err} (after {bytes} of {} bytes, kept to resume from)", pointer.bytes),
            })?;
            bytes += chunk.len() as u64;
            if bytes > pointer.bytes {
                cache.discard_partial()?;
                return Err(FollowError::SizeDiffers { what, expected: pointer.bytes, found: bytes });
            }
            hasher.update(&chunk);
            std::io::Write::write_all(&mut file, &chunk).map_err(cache_error)?;
        }
        drop(file);
        let found = format!("{:032x}", hasher.digest128());
        if found != pointer.index {
            cache.discard_partial()?;
            return Err(FollowError::Mismatch { what, expected: pointer.index.clone(), found, bytes });
        }
        Ok(cache.finish(&pointer.index)?)
    }

    /// Removes from the cache every index but the one in force and the one before it.
    fn prune(&mut self) {
        let Source::Store(_, cache) = &mut self.source else { return };
        let keep: Vec<&str> = [&self.in_force, &self.previous].into_iter().flatten().map(String::as_str).collect();
        if let Err(err) = cache.prune(&keep) {
            tracing::warn!(error = %err, "cannot prune the cache folder");
        }
    }
}

/// How long one read of the pointer may take (a store's or a folder's).
const POINTER_TIMEOUT: Duration = Duration::from_secs(10);

/// A folder's pointer, read only if it is a regular file and at most [`MAX_POINTER_BYTES`]
/// long. Opened non-blocking, so that a FIFO put there cannot hold the open (or the
/// blocking thread, which a shutdown would wait for) forever.
fn read_local_pointer(path: &Path) -> Result<Vec<u8>, FollowError> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let read_error =
        |err: std::io::Error| FollowError::Read { what: path.display().to_string(), detail: err.to_string() };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(read_error)?;
    // The opened file's own type: a link to /dev/zero is refused as a device.
    if !file.metadata().map_err(read_error)?.is_file() {
        return Err(FollowError::NotAFile { path: path.to_owned() });
    }
    let mut bytes = Vec::new();
    file.take(MAX_POINTER_BYTES + 1).read_to_end(&mut bytes).map_err(read_error)?;
    if bytes.len() as u64 > MAX_POINTER_BYTES {
        return Err(PointerError::TooLarge { bytes: bytes.len() as u64 }.into());
    }
    Ok(bytes)
}

/// Polls now, then every `every`, for as long as the runtime runs; each outcome is logged
/// and counted in `telemetry` (and a failure shown by `/healthz`).
/// A SIGHUP polls at once (the signal's default action would end the process).
pub async fn follow(mut follower: Follower, live: Arc<LiveState>, telemetry: Arc<Telemetry>, every: Duration) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    #[cfg(unix)]
    let mut hangups = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
    loop {
        #[cfg(unix)]
        {
            let hangup = async {
                match hangups.as_mut() {
                    Some(signal) => signal.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = ticks.tick() => {}
                _ = hangup => tracing::info!("SIGHUP: polling the publication now"),
            }
        }
        #[cfg(not(unix))]
        ticks.tick().await;
        match follower.poll(&live).await {
            Ok(swapped) => telemetry.polled(Ok(swapped)),
            Err(err) => {
                let message = store::redact(&err.to_string());
                if live.load().is_some() {
                    tracing::error!(error = %message, "poll of the publication failed, keeping the index in force");
                } else {
                    tracing::error!(error = %message, "poll of the publication failed; no index in force yet (503)");
                }
                telemetry.polled(Err(message));
            }
        }
    }
}
