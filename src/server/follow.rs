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
use object_store::{GetOptions, ObjectStoreExt as _};

use super::{AppState, LiveState, Telemetry};
use crate::index::IndexError;
use crate::index::published::{MAX_POINTER_BYTES, POINTER, Pointer, PointerError};
use crate::publish::PublishError;
use crate::publish::store::{self, Target};

/// Why a poll or the set-up of `--from` failed.
#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    /// SOURCE is a URL `svcdir publish` cannot use, or its store cannot be set up.
    #[error("--from: {0}")]
    Source(#[source] PublishError),
    /// The cache folder could not be made or used.
    #[error("cache folder {}: cannot {action}: {source}", path.display())]
    Cache {
        /// The folder or file.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The cause.
        source: std::io::Error,
    },
    /// Another process holds the cache folder.
    #[error("cache folder {} is in use by another svcdir-search (one process per --cache folder)", path.display())]
    CacheBusy {
        /// The folder.
        path: PathBuf,
    },
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

/// The cache folder of one process, locked while it runs.
#[derive(Debug)]
struct Cache {
    dir: PathBuf,
    _lock: std::fs::File,
    /// Removed when the server stops (the default folder of the temporary directory).
    remove_on_drop: bool,
}

impl Drop for Cache {
    fn drop(&mut self) {
        if self.remove_on_drop {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
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
}

impl Follower {
    /// Opens SOURCE (a folder path, or a URL with `://`) and, for a store, locks the cache
    /// folder (`cache`, or a folder of the temporary directory named after this process).
    pub fn open(source: &str, cache: Option<&Path>, base_url: Option<String>) -> Result<Follower, FollowError> {
        let source = if source.contains("://") {
            let target = store::open_with(source, store::Retries::Poll).map_err(FollowError::Source)?;
            let (dir, remove_on_drop) = match cache {
                Some(dir) => (dir.to_owned(), false),
                None => (std::env::temp_dir().join(format!("svcdir-search-{}", std::process::id())), true),
            };
            Source::Store(target, Cache::lock(dir, remove_on_drop)?)
        } else {
            Source::Folder(PathBuf::from(source))
        };
        Ok(Follower { source, base_url, e_tag: None, in_force: None, previous: None })
    }

    /// One poll: reads the pointer and, when it names another index, fetches, checks and
    /// puts it in force. `Ok(true)` when a new index was put in force.
    pub async fn poll(&mut self, live: &LiveState) -> Result<bool, FollowError> {
        let Some((pointer, e_tag)) = self.read_pointer().await? else { return Ok(false) };
        if self.in_force.as_deref() == Some(pointer.index.as_str()) {
            self.e_tag = e_tag;
            return Ok(false);
        }
        let started = Instant::now();
        let path = self.fetch(&pointer).await?;
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
                // A fetched file that does not pass is fetched again next time.
                if matches!(self.source, Source::Store(..)) {
                    let _ = std::fs::remove_file(&path);
                }
                return Err(err);
            }
        };
        live.store(state.clone());
        tracing::info!(
            index_hash = state.index_hash(),
            services = state.index().service_count(),
            fetch_and_load_ms = started.elapsed().as_millis() as u64,
            "following the publication: a new index is in force",
        );
        self.previous = self.in_force.replace(pointer.index);
        self.e_tag = e_tag;
        self.prune();
        Ok(true)
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
    /// into the cache (through a temporary name, its bytes hashed as they come).
    async fn fetch(&self, pointer: &Pointer) -> Result<PathBuf, FollowError> {
        let (target, cache) = match &self.source {
            Source::Folder(dir) => return Ok(dir.join(&pointer.path)),
            Source::Store(target, cache) => (target, cache),
        };
        let path = cache.dir.join(format!("{}.idx", pointer.index));
        if path.is_file() {
            // Fetched before (the index before the one in force, published again); checked
            // again when it is read.
            return Ok(path);
        }
        let what = format!("{}/{}", target.url.trim_end_matches('/'), pointer.path);
        let read_error = |err: object_store::Error| FollowError::Read { what: what.clone(), detail: err.to_string() };
        let result = target.store.get(&target.location(&pointer.path)).await.map_err(read_error)?;
        let partial = cache.dir.join(format!(".{}.idx.part", pointer.index));
        let cache_error = |action| {
            let partial = partial.clone();
            move |source| FollowError::Cache { path: partial, action, source }
        };
        let mut file = std::fs::File::create(&partial).map_err(cache_error("create"))?;
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        let mut bytes = 0u64;
        let mut stream = result.into_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(read_error)?;
            hasher.update(&chunk);
            bytes += chunk.len() as u64;
            std::io::Write::write_all(&mut file, &chunk).map_err(cache_error("write"))?;
        }
        drop(file);
        let found = format!("{:032x}", hasher.digest128());
        if found != pointer.index {
            let _ = std::fs::remove_file(&partial);
            return Err(FollowError::Mismatch { what, expected: pointer.index.clone(), found, bytes });
        }
        std::fs::rename(&partial, &path).map_err(cache_error("rename"))?;
        Ok(path)
    }

    /// Removes from the cache every index but the one in force and the one before it (a
    /// mapped file removed stays readable until its map goes: unlinking never changes bytes).
    fn prune(&self) {
        let Source::Store(_, cache) = &self.source else { return };
        let Ok(entries) = std::fs::read_dir(&cache.dir) else { return };
        let keep: Vec<String> =
            [&self.in_force, &self.previous].into_iter().flatten().map(|hash| format!("{hash}.idx")).collect();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let stale = name.ends_with(".idx") && !keep.contains(&name) || name.ends_with(".idx.part");
            if stale && let Err(err) = std::fs::remove_file(entry.path()) {
                tracing::warn!(path = %entry.path().display(), error = %err, "cannot remove an old index");
            }
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

impl Cache {
    fn lock(dir: PathBuf, remove_on_drop: bool) -> Result<Cache, FollowError> {
        let io = |action| {
            let dir = dir.clone();
            move |source| FollowError::Cache { path: dir, action, source }
        };
        std::fs::create_dir_all(&dir).map_err(io("create"))?;
        let lock_path = dir.join(".lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io("open its lock file"))?;
        match file.try_lock() {
            Ok(()) => Ok(Cache { dir, _lock: file, remove_on_drop }),
            Err(std::fs::TryLockError::WouldBlock) => Err(FollowError::CacheBusy { path: dir }),
            Err(std::fs::TryLockError::Error(source)) => Err(io("lock")(source)),
        }
    }
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
