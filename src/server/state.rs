//! The state the search handlers answer from: the loaded index with its publication
//! ([`AppState`]), and the slot that lets `svcdir-search` swap in a re-read index on SIGHUP
//! while requests go on ([`LiveState`]).

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;

use crate::index::{IndexError, SearchIndex};
use crate::views::Publication;

/// What the handlers share: the index and the publication the answers are made with.
#[derive(Debug)]
pub struct AppState {
    index: SearchIndex,
    publication: Publication,
    /// The v4 envelope's `meta`, encoded once.
    pub(super) meta_json: Vec<u8>,
    /// The category choices of the HTML views' search form, written once.
    pub(super) category_options: crate::render::form::CategoryOptions,
    /// Content hash of the index file ([`crate::write::content_hash`]), as the build's
    /// manifest records it; worked out from the index itself when it was not read from a file.
    index_hash: OnceLock<String>,
    /// Time taken to read, check and prepare the index.
    load_time: Duration,
}

impl AppState {
    /// Serves `index` with the publication recorded in it.
    pub fn new(index: SearchIndex) -> AppState {
        let publication = index.publication().clone();
        let meta_json = serde_json::to_vec(&publication.meta_full()).unwrap_or_else(|_| b"{}".to_vec());
        let category_options = crate::render::form::CategoryOptions::of(&index.directory().categories);
        AppState {
            index,
            publication,
            meta_json,
            category_options,
            index_hash: OnceLock::new(),
            load_time: Duration::ZERO,
        }
    }

    /// Reads the index at `path` ([`SearchIndex::read`]: mapped, checked, its core decoded),
    /// with its content hash and the time the whole load took.
    pub fn read(path: &Path) -> Result<AppState, IndexError> {
        let started = Instant::now();
        let index = SearchIndex::read(path)?;
        // The hash of the very bytes mapped and checked (worked out in the same pass as the
        // index's own checksum): a file replaced meanwhile cannot mismatch.
        let hash = index.content_hash().to_owned();
        let mut state = AppState::new(index);
        state.index_hash = OnceLock::from(hash);
        state.load_time = started.elapsed();
        Ok(state)
    }

    /// Content hash of the index in force: the `index` recorded in the build's manifest
    /// (`_manifest.json`) by the build that wrote it.
    pub fn index_hash(&self) -> &str {
        self.index_hash.get_or_init(|| self.index.content_hash().to_owned())
    }

    /// Time the index took to read, check and prepare (zero when not read from a file).
    pub fn load_time(&self) -> Duration {
        self.load_time
    }

    /// Replaces the base URL recorded in the index (`svcdir-search --base-url`): the origin
    /// of `next` and `previous`. `base_url` must already be validated, without a trailing `/`.
    pub fn with_base_url(mut self, base_url: String) -> AppState {
        self.publication.base_url = base_url;
        self
    }

    /// The loaded index.
    pub fn index(&self) -> &SearchIndex {
        &self.index
    }

    /// The publication in force.
    pub fn publication(&self) -> &Publication {
        &self.publication
    }
}

/// The state the handlers read: an [`AppState`] that can be replaced while requests are being
/// answered. Each request loads the current one once and answers entirely from it, so a
/// swap never mixes two indexes in one answer (issue 6: a new index without restart).
/// `svcdir-search --from` starts with none, until its first index is fetched.
#[derive(Debug)]
pub struct LiveState {
    current: ArcSwapOption<AppState>,
}

impl LiveState {
    /// Starts with `state`.
    pub fn new(state: Arc<AppState>) -> LiveState {
        LiveState { current: ArcSwapOption::new(Some(state)) }
    }

    /// Starts with no index: searches answer 503 and `/healthz` 503 until one is stored.
    pub fn empty() -> LiveState {
        LiveState { current: ArcSwapOption::empty() }
    }

    /// The state in force now, if an index is.
    pub fn load(&self) -> Option<Arc<AppState>> {
        self.current.load_full()
    }

    /// Puts `state` in force for the requests that start from now on; requests already
    /// running finish with the state they loaded.
    pub fn store(&self, state: Arc<AppState>) {
        self.current.store(Some(state));
    }

    /// Reads the index at `path` again and puts it in force, with `base_url` (validated,
    /// as for [`AppState::with_base_url`]) over the one recorded in the new index. On an
    /// error (file missing, corrupt, of another format version) the state in force is kept.
    pub fn reload(&self, path: &Path, base_url: Option<&str>) -> Result<Arc<AppState>, IndexError> {
        let mut state = AppState::read(path)?;
        if let Some(base_url) = base_url {
            state = state.with_base_url(base_url.to_owned());
        }
        let state = Arc::new(state);
        self.store(state.clone());
        Ok(state)
    }
}
