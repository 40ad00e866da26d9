//! The change record of `public/changes/` (issue 17): which services and organisations each
//! build added, changed or removed, so that a client that knows its last build id fetches
//! only what changed since.
//!
//! This module owns the record's shapes, the comparison of two builds' states (the content
//! hash of each id's v4 single-object response), the pages, and reading the previous build's
//! record: from the published output, another folder, or a published site over HTTP
//! (`svcdir build --previous`), so that a CI run from a fresh clone continues the chain.
//! Nothing here reads a clock: the same input and the same previous record give the same
//! bytes, and a build that changes nothing adds no entry.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::model::{Directory, Timestamp};

/// The record's folder (`/changes/`, pages `?page=N`).
pub(crate) const FOLDER: &str = crate::urls::CHANGES;
/// What the last build held: id → content hash, for the next build to compare with.
pub(crate) const STATE: &str = crate::urls::CHANGES_STATE;
/// Entries per page, newest first.
pub(crate) const PER_PAGE: usize = 100;

/// What one kind of object did in one build; ids sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Diff {
    /// New ids.
    pub added: Vec<Uuid>,
    /// Ids whose v4 single-object response changed.
    pub changed: Vec<Uuid>,
    /// Ids gone.
    pub removed: Vec<Uuid>,
}

impl Diff {
    fn between(before: &BTreeMap<Uuid, String>, after: &BTreeMap<Uuid, String>) -> Diff {
        let mut diff = Diff::default();
        for (id, hash) in after {
            match before.get(id) {
                None => diff.added.push(*id),
                Some(old) if old != hash => diff.changed.push(*id),
                Some(_) => {}
            }
        }
        diff.removed = before.keys().filter(|id| !after.contains_key(id)).copied().collect();
        diff
    }

    fn is_empty(&self) -> bool {
        self.added.is_empty() && self.changed.is_empty() && self.removed.is_empty()
    }
}

/// One build that changed something.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Entry {
    /// XXH3-128 of the previous entry's id and this build's [`State`]: equal states at
    /// different points of the chain still get different ids.
    pub id: String,
    /// The previous entry's id, `null` for the first.
    pub previous: Option<String>,
    /// The newest `last_updated` (or organisation `last_edited`) in the data.
    pub data_time: Option<String>,
    /// Services.
    pub services: Diff,
    /// Organisations.
    pub organisations: Diff,
}

/// A page of the record: `changes/index.json` is page 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Page {
    /// Entries, newest first.
    pub builds: Vec<Entry>,
    /// Absolute URL of the next (older) page.
    pub next: Option<String>,
}

/// What a build published, for the next one to compare with (`changes/state.json`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct State {
    /// The id of the record's newest entry.
    pub build: Option<String>,
    /// Service id → content hash of `/api/v4/services/<id>/`.
    pub services: BTreeMap<Uuid, String>,
    /// Organisation id → content hash of `/api/v4/organisations/<id>/`.
    pub organisations: BTreeMap<Uuid, String>,
}

/// The previous build's record and state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Previous {
    /// Every entry, newest first.
    pub builds: Vec<Entry>,
    /// What it held.
    pub state: State,
}

/// Where the previous build is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A published site: `{origin}/changes/state.json`, `{origin}/changes/?format=json&page=N`.
    Url(String),
    /// A build's output folder (the published output by default).
    Dir(PathBuf),
}

impl Source {
    /// `--previous`: an `http(s)://` origin, else a folder.
    pub fn parse(text: &str) -> Source {
        if text.starts_with("http://") || text.starts_with("https://") {
            Source::Url(text.trim_end_matches('/').to_owned())
        } else {
            Source::Dir(PathBuf::from(text))
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Url(url) => f.write_str(url),
            Source::Dir(dir) => write!(f, "{}", dir.display()),
        }
    }
}

/// Why the previous record could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ChangesError {
    /// A file or URL could not be read.
    #[error("cannot read the previous build's change record at {at}: {reason}")]
    Read {
        /// File or URL.
        at: String,
        /// Why.
        reason: String,
    },
    /// A file of the record is not what this program writes.
    #[error("the previous build's change record at {at} is not valid: {source}")]
    Parse {
        /// File or URL.
        at: String,
        /// Why.
        source: serde_json::Error,
    },
}

/// The largest record page read over HTTP (a page holds at most [`PER_PAGE`] entries).
#[cfg(feature = "cloud")]
const MAX_BODY: usize = 1 << 30;

enum Object {
    State,
    Page(usize),
}

/// A [`Source`] opened for reading: a folder, or a published site through object_store's
/// HTTP client (reqwest; the program's one HTTP client and TLS stack), driven by a runtime
/// of its own since a build is not async.
enum Reader<'a> {
    Dir(&'a Path),
    #[cfg(feature = "cloud")]
    Http {
        origin: &'a str,
        client: reqwest::Client,
        runtime: tokio::runtime::Runtime,
    },
}

impl<'a> Reader<'a> {
    fn open(source: &'a Source) -> Result<Reader<'a>, ChangesError> {
        match source {
            Source::Dir(dir) => Ok(Reader::Dir(dir)),
            #[cfg(not(feature = "cloud"))]
            Source::Url(origin) => Err(ChangesError::Read {
                at: origin.clone(),
                reason: "this svcdir was built without an HTTP client (cargo feature `cloud`): build it with \
                         `cargo build --release`, or give --previous the previous build's folder"
                    .to_owned(),
            }),
            #[cfg(feature = "cloud")]
            Source::Url(origin) => {
                let read_error = |reason: String| ChangesError::Read { at: origin.clone(), reason };
                crate::tls::install_crypto_provider();
                let client = reqwest::Client::builder()
                    .timeout(std::time::Duration::from_secs(60))
                    .build()
                    .map_err(|e| read_error(format!("cannot start an HTTP client: {e}")))?;
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| read_error(format!("cannot start the async runtime: {e}")))?;
                Ok(Reader::Http { origin, client, runtime })
            }
        }
    }

    /// The object's location and body: `Ok(None)` when the object does not exist there.
    fn fetch(&self, what: &Object) -> Result<Option<(String, Vec<u8>)>, ChangesError> {
        match self {
            Reader::Dir(dir) => {
                let rel = match what {
                    Object::State => STATE.to_owned(),
                    Object::Page(n) => format!("{FOLDER}/page/{n}/index.json"),
                };
                let path = dir.join(&rel);
                let at = path.display().to_string();
                match std::fs::read(&path) {
                    Ok(bytes) => Ok(Some((at, bytes))),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(e) => Err(ChangesError::Read { at, reason: e.to_string() }),
                }
            }
            #[cfg(feature = "cloud")]
            Reader::Http { origin, client, runtime } => {
                let url = match what {
                    Object::State => format!("{origin}/{STATE}"),
                    Object::Page(n) => format!("{origin}/{FOLDER}/?format=json&page={n}"),
                };
                let read_error = |reason: String| ChangesError::Read { at: url.clone(), reason };
                let body = runtime.block_on(async {
                    let mut response = client
                        .get(&url)
                        .header(reqwest::header::ACCEPT, "application/json")
                        .send()
                        .await
                        .map_err(|e| read_error(e.to_string()))?;
                    if response.status() == reqwest::StatusCode::NOT_FOUND {
                        return Ok(None);
                    }
                    if !response.status().is_success() {
                        return Err(read_error(format!("HTTP status {}", response.status())));
                    }
                    let mut bytes = Vec::new();
                    while let Some(chunk) = response.chunk().await.map_err(|e| read_error(e.to_string()))? {
                        if bytes.len() + chunk.len() > MAX_BODY {
                            return Err(read_error(format!("larger than {MAX_BODY} bytes")));
                        }
                        bytes.extend_from_slice(&chunk);
                    }
                    Ok(Some(bytes))
                })?;
                Ok(body.map(|bytes| (url.clone(), bytes)))
            }
        }
    }
}

fn parse<T: serde::de::DeserializeOwned>(at: &str, bytes: &[u8]) -> Result<T, ChangesError> {
    serde_json::from_slice(bytes).map_err(|source| ChangesError::Parse { at: at.to_owned(), source })
}

/// Reads the previous build's record: `Ok(None)` when the source holds none (the first
/// build with a record). Its pages are followed until one has no `next`.
pub(crate) fn read_previous(source: &Source) -> Result<Option<Previous>, ChangesError> {
    let reader = Reader::open(source)?;
    let Some((at, bytes)) = reader.fetch(&Object::State)? else { return Ok(None) };
    let state: State = parse(&at, &bytes)?;
    let mut builds = Vec::new();
    if state.build.is_some() {
        for n in 1.. {
            let Some((at, bytes)) = reader.fetch(&Object::Page(n))? else {
                return Err(ChangesError::Read { at: format!("{source} page {n}"), reason: "missing".into() });
            };
            let page: Page = parse(&at, &bytes)?;
            builds.extend(page.builds);
            if page.next.is_none() {
                break;
            }
        }
    }
    Ok(Some(Previous { builds, state }))
}

/// This build's state from the content hashes of its v4 single-object responses.
pub(crate) fn state(dir: &Directory, hash_of: impl Fn(&str) -> Option<String>) -> State {
    let hashes = |ids: &mut dyn Iterator<Item = Uuid>, folder: fn(&str) -> String| {
        ids.filter_map(|id| hash_of(&format!("{}/index.json", folder(&id.to_string()))).map(|h| (id, h))).collect()
    };
    State {
        build: None,
        services: hashes(&mut dir.services.iter().map(|s| s.id), crate::render::paths::service),
        organisations: hashes(&mut dir.organisations.iter().map(|o| o.id), crate::render::paths::organisation),
    }
}

/// The record after this build: the previous one, with a new entry first when anything
/// changed (or when there is no previous record and the directory is not empty).
pub(crate) fn next_record(dir: &Directory, previous: Option<Previous>, mut state: State) -> (Vec<Entry>, State) {
    let previous = previous.unwrap_or_default();
    let services = Diff::between(&previous.state.services, &state.services);
    let organisations = Diff::between(&previous.state.organisations, &state.organisations);
    let mut builds = previous.builds;
    let last = builds.first().map(|e| e.id.clone());
    if services.is_empty() && organisations.is_empty() {
        state.build = last;
        return (builds, state);
    }
    let id = {
        let canonical = serde_json::to_vec(&(&last, &state.services, &state.organisations)).unwrap_or_default();
        crate::write::content_hash(&canonical)
    };
    let data_time = dir
        .services
        .iter()
        .map(|s| s.last_updated)
        .chain(dir.organisations.iter().map(|o| o.last_edited))
        .max()
        .map(Timestamp::single_form);
    builds.insert(0, Entry { id: id.clone(), previous: last, data_time, services, organisations });
    state.build = Some(id);
    (builds, state)
}

/// The pages of a record (at least one, possibly empty): page `n` holds entries
/// `(n-1)*PER_PAGE ..`, `next` links to page `n+1`.
pub(crate) fn pages(builds: &[Entry], base_url: &str) -> Vec<Page> {
    let count = builds.len().div_ceil(PER_PAGE).max(1);
    (1..=count)
        .map(|n| Page {
            builds: builds[((n - 1) * PER_PAGE).min(builds.len())..(n * PER_PAGE).min(builds.len())].to_vec(),
            next: (n < count).then(|| format!("{base_url}/{FOLDER}/?format=json&page={}", n + 1)),
        })
        .collect()
}

/// The files of the record: `changes/index.json` (page 1) and `changes/page/N/index.json`
/// for every page, each with its HTML view, and `changes/state.json`.
pub(crate) fn files(
    builds: &[Entry],
    state: &State,
    base_url: &str,
) -> Result<Vec<crate::render::OutputFile>, crate::render::RenderError> {
    let mut files = Vec::new();
    let pages = pages(builds, base_url);
    let last = crate::api::query::PageNumber::LAST;
    let none = crate::api::html::Extras::default();
    for (i, page) in pages.iter().enumerate() {
        let n = i + 1;
        let title = format!("Change record, page {n}");
        let folder = format!("{FOLDER}/page/{n}");
        let links = crate::render::Links { next: page.next.clone(), previous: None };
        let rendered = crate::render::Rendered::of(&folder, page, links)?;
        files.extend(rendered.files(&folder, &format!("/{FOLDER}/?page={n}"), &title, &none)?);
        if n == 1 {
            files.extend(rendered.files(FOLDER, &format!("/{FOLDER}/"), &title, &none)?);
        }
        // `?page=last`, as for the import.
        if n == pages.len() {
            let folder = format!("{FOLDER}/page/{last}");
            files.extend(rendered.files(&folder, &format!("/{FOLDER}/?page={last}"), &title, &none)?);
        }
    }
    let bytes = serde_json::to_vec(state)
        .map_err(|source| crate::render::RenderError::Json { path: STATE.to_owned(), source })?;
    files.push(crate::render::OutputFile { path: STATE.to_owned(), bytes });
    Ok(files)
}

/// The default source: the published output itself, when it exists.
pub(crate) fn published(output: &Path) -> Source {
    Source::Dir(output.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> Uuid {
        Uuid::from_bytes([n; 16])
    }

    #[test]
    fn diffs_are_sorted_and_exact() {
        let before: BTreeMap<Uuid, String> = [(id(1), "a".into()), (id(2), "b".into()), (id(3), "c".into())].into();
        let after: BTreeMap<Uuid, String> = [(id(4), "d".into()), (id(2), "B".into()), (id(3), "c".into())].into();
        let diff = Diff::between(&before, &after);
        assert_eq!(diff, Diff { added: vec![id(4)], changed: vec![id(2)], removed: vec![id(1)] });
        assert!(Diff::between(&after, &after).is_empty());
    }

    #[test]
    fn pages_of_a_hundred_newest_first() {
        let entry = |n: usize| Entry {
            id: format!("{n:032x}"),
            previous: None,
            data_time: None,
            services: Diff::default(),
            organisations: Diff::default(),
        };
        let builds: Vec<Entry> = (0..250).map(entry).collect();
        let pages = pages(&builds, "https://x.org");
        assert_eq!(pages.iter().map(|p| p.builds.len()).collect::<Vec<_>>(), [100, 100, 50]);
        assert_eq!(pages[0].next.as_deref(), Some("https://x.org/changes/?format=json&page=2"));
        assert_eq!(pages[2].next, None);
        assert_eq!(pages[1].builds[0], builds[100]);
        assert_eq!(super::pages(&[], "https://x.org").len(), 1);
    }

    #[test]
    fn sources() {
        assert_eq!(Source::parse("https://x.org/"), Source::Url("https://x.org".into()));
        assert_eq!(Source::parse("public"), Source::Dir("public".into()));
    }
}
