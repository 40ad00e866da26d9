//! The search index: everything `svcdir-search` needs to answer a search, in one file.
//!
//! It owns the index's contents and its file format; it does not parse requests or decide
//! which services match (that is `search`). `svcdir build` encodes the file with
//! `SearchIndex::encode_directory` from the same [`Directory`] and [`Publication`] the
//! static files come from, rendering every service's search result with the same views, so
//! search results say the same things as the static files; [`SearchIndex::build`] does the
//! same in memory (tests, benchmarks), and `svcdir-search` maps a file with
//! [`SearchIndex::read`].
//!
//! # File format (version 6)
//! A 48-byte header: `MAGIC` (8 bytes), the format version (`u32`), 4 zero bytes, the
//! lengths of the two sections (`u64` each) and 16 zero bytes; all little-endian. Then the
//! two sections, and last the XXH3-64 checksum (`u64`) of everything before it, header
//! included: at the end, so that the one pass that checks it also gives the file's content
//! hash (`file::Sums`). The sections:
//! 1. the core, one postcard value of the index's own types (`stored.rs`, never the
//!    model's), flat tables only (no vector or string per record, so that decoding is a few
//!    large copies): the publication, the categories and service areas (what parameters are
//!    checked against), the postcodes as a table of codes, points and service-area numbers
//!    (`postcodes::PostcodeTable`), the text index, per service only what matching and
//!    ordering read (areas, categories, locations, rank in name order) as one table per
//!    field, the locations' points, and the postcodes' districts and sectors as a second
//!    table of the postcodes' shape;
//! 2. the rendered results, read in place from a memory map and never decoded: the JSON of
//!    every service as a v4 search result, then as a v3 one, then the HTML view's fragment
//!    of each (its markup and what the map reads, `markup.rs`), v4 then v3, and before them
//!    the `4 × services + 1` byte offsets (`u64`) that cut them apart.
//!
//! The structures derived from the core (the two location grids, the service sets,
//! `derive.rs`) are rebuilt on load. A file whose header, lengths or checksum do not hold,
//! or whose core refers to anything that does not exist, is refused at start-up, never
//! served. Bump `FORMAT_VERSION` whenever the encoded shape changes (any change to the
//! types of `stored.rs`, or to what they hold).

mod csr;
mod damage;
mod derive;
mod file;
pub(crate) mod grid;
mod markup;
pub(crate) mod packed;
pub(crate) mod postcodes;
pub(crate) mod published;
pub(crate) mod sets;
pub(crate) mod spatial;
mod stored;
pub mod text;

pub use damage::Damage;

use std::path::{Path, PathBuf};

use crate::api::query::ApiVersion;
use crate::model::{Directory, Point};
use crate::views::Publication;
use csr::Csr;
use file::{Backing, Sums, check_core, check_header, check_rendered, encode, write_file};
use grid::LocationGrid;
use postcodes::PostcodeTable;
use sets::ServiceSet;
use spatial::{ServiceKey, UnitVector};
use stored::Core;
use text::TextLookup;

/// A service as the search engine numbers it: the position of its
/// [`crate::model::ServiceIx`], as a plain `u32`, since the bitsets, postings and radius
/// grid do arithmetic on it. Only the index's build converts between the two.
pub(crate) type ServiceNo = u32;
/// A location as the search engine numbers it (see [`ServiceNo`]).
pub(crate) type LocationNo = u32;

/// First bytes of every index file.
pub(crate) const MAGIC: [u8; 8] = *b"SVCDIDX\0";
/// Version of the encoding written after the magic bytes.
pub(crate) const FORMAT_VERSION: u32 = 6;
/// Bytes before the core.
pub(crate) const HEADER_LEN: usize = 48;
/// Bytes of the checksum, after the rendered section.
pub(crate) const CHECKSUM_LEN: usize = 8;

/// Why an index could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// There is no file at the path.
    #[error("search index {} does not exist (write it with `svcdir build --index FILE`)", path.display())]
    Missing {
        /// The path given.
        path: PathBuf,
    },
    /// The file exists but could not be read.
    #[error("cannot read search index {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file does not start with `MAGIC`.
    #[error("{} is not a svcdir search index (its first bytes are not the index's magic bytes)", path.display())]
    BadMagic {
        /// The file.
        path: PathBuf,
    },
    /// The file was written in another format version.
    #[error(
        "search index {} has format version {found}, this program reads version {supported}; \
         rebuild it with the matching `svcdir build`",
        path.display()
    )]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// The version this program reads.
        supported: u32,
    },
    /// The body does not decode, or decodes to inconsistent data.
    #[error("search index {} is corrupt: {reason}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: Damage,
    },
    /// The index could not be encoded.
    #[error("cannot encode the search index: {0}")]
    Encode(#[from] postcard::Error),
    /// Writing or renaming the file failed.
    #[error("cannot write search index {}: {source}", path.display())]
    Write {
        /// The file being written.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Everything a search needs: the publication, the parts of the directory that requests
/// are checked against, the structures that make a search fast, and every service's
/// rendered result, read in place from the file.
#[derive(Debug)]
pub struct SearchIndex {
    /// Postcodes, categories and service areas (no services, organisations or locations:
    /// results are the rendered bytes).
    pub(crate) directory: Directory,
    pub(crate) publication: Publication,
    /// Live postcodes, with the service areas each lies in.
    pub(crate) postcodes: PostcodeTable,
    /// Their districts and sectors, each with its mean point and the union of its areas.
    pub(crate) outcodes: PostcodeTable,
    pub(crate) text: TextLookup,
    /// Locations of area-less services, with their services: the radius rule's candidates.
    pub(crate) radius: LocationGrid,
    /// Each location's point, for the exact radius rule.
    pub(crate) location_points: Vec<Point>,
    /// Unit vectors of each service's locations, for its distance key.
    pub(crate) service_points: Csr<UnitVector>,
    /// Per service, its single location and its name order together (a [`ServiceKey`]).
    pub(crate) service_keys: Vec<ServiceKey>,
    /// The services of each service area, as a set: a postcode's matches by area are the
    /// union of a few of these.
    pub(crate) area_sets: Vec<ServiceSet>,
    /// The services tagged with each category node itself (not its subtree).
    pub(crate) category_sets: Vec<ServiceSet>,
    /// Services with an area of kind Country or Region (Search 6), as a set.
    pub(crate) national_set: ServiceSet,
    /// Services with at least one location.
    pub(crate) located_set: ServiceSet,
    /// Every located service at each of its locations: results are taken from it nearest
    /// first.
    pub(crate) located: LocationGrid,
    /// Services without locations, in (name, id) order: the order in which they follow
    /// the located ones when there is no `q` (Search 7).
    pub(crate) unlocated_by_name: Vec<ServiceNo>,
    /// The whole file; the rendered section starts at `rendered_at`.
    file: Backing,
    rendered_at: usize,
    /// Number of services.
    services: usize,
    /// [`crate::write::content_hash`] of the file.
    content_hash: String,
}

impl SearchIndex {
    /// Builds the index of a validated directory (in memory, exactly as written).
    pub fn build(dir: &Directory, publication: &Publication) -> SearchIndex {
        let bytes = encode(dir, publication).expect("an index in memory encodes");
        SearchIndex::open(Backing::Owned(bytes), Path::new("(built in memory)"))
            .expect("a freshly encoded index passes its own checks")
    }

    /// Checks the file and derives the query structures from its core. Hashing the whole
    /// file (one core, in place when the bytes are a map; the checksum and the content hash
    /// in one pass) and decoding and preparing the core (the other) run side by side;
    /// nothing is returned unless the checksum holds.
    fn open(file: Backing, path: &Path) -> Result<SearchIndex, IndexError> {
        let (core_len, checksum_stored) = check_header(&file, path)?;
        let rendered_at = HEADER_LEN + core_len;
        let corrupt = |reason: Damage| IndexError::Corrupt { path: path.to_path_buf(), reason };
        let (sums, prepared) = rayon::join(
            || match &file {
                Backing::Mapped(map) => Sums::of_map(map, rendered_at),
                Backing::Owned(bytes) => Sums::of_bytes(bytes),
            },
            || -> Result<SearchIndex, IndexError> {
                let core: Core = postcard::from_bytes(&file[HEADER_LEN..rendered_at])
                    .map_err(|e| corrupt(Damage::Undecodable(e)))?;
                check_core(&core).map_err(corrupt)?;
                Ok(SearchIndex::derive(core, rendered_at))
            },
        );
        // The checksum first: a damaged file is reported as such, whatever decoding made of it.
        if sums.checksum != checksum_stored {
            return Err(corrupt(Damage::Checksum { stored: checksum_stored, computed: sums.checksum }));
        }
        let mut index = prepared?;
        // Once the hashing above is done with the rendered section (it drops it from the map).
        check_rendered(&file[rendered_at..file.len() - CHECKSUM_LEN], index.services).map_err(corrupt)?;
        index.file = file;
        index.content_hash = sums.content;
        Ok(index)
    }

    /// The directory's categories and service areas (its services, organisations and
    /// locations are not kept: results are read as rendered bytes; its postcodes are
    /// [`SearchIndex::postcodes`]).
    pub fn directory(&self) -> &Directory {
        &self.directory
    }

    /// The live postcodes.
    pub fn postcodes(&self) -> &PostcodeTable {
        &self.postcodes
    }

    /// The live postcodes' districts and sectors (behaviour.md, Search 1).
    pub fn outcodes(&self) -> &PostcodeTable {
        &self.outcodes
    }

    /// The publication recorded at build time (base URL, site URL, licence, attribution).
    pub fn publication(&self) -> &Publication {
        &self.publication
    }

    /// [`crate::write::content_hash`] of the index file (what the build's manifest records),
    /// worked out when the index was checked.
    pub fn content_hash(&self) -> &str {
        &self.content_hash
    }

    /// Number of services.
    pub fn service_count(&self) -> usize {
        self.services
    }

    /// What ordering service `ix` reads of it (the default, with no location, past the end).
    pub(crate) fn service_key(&self, ix: ServiceNo) -> ServiceKey {
        self.service_keys.get(ix as usize).copied().unwrap_or_default()
    }

    /// Number of locations.
    pub fn location_count(&self) -> usize {
        self.location_points.len()
    }

    /// Number of distinct indexed words.
    pub fn term_count(&self) -> usize {
        self.text.stored().term_count()
    }

    /// The JSON of service `ix` as a search result of `version`, rendered at build time
    /// (empty for an index out of range).
    pub fn rendered(&self, version: ApiVersion, ix: ServiceNo) -> &[u8] {
        let k = ix as usize + if version == ApiVersion::V3 { self.services } else { 0 };
        markup::part(self.rendered_section(), self.services, k)
    }

    /// The rendered section: from the end of the core to the checksum.
    fn rendered_section(&self) -> &[u8] {
        &self.file[self.rendered_at..self.file.len() - CHECKSUM_LEN]
    }

    /// The encoded file.
    pub fn to_bytes(&self) -> Result<Vec<u8>, IndexError> {
        Ok(self.file.to_vec())
    }

    /// Writes the index file of a directory into `file` (empty, open for reading and
    /// writing) straight from the borrowed model, without building the query structures and
    /// without holding the file in memory: what `svcdir build` does. Returns the file's
    /// length and its [`crate::write::content_hash`]; `path` only names the file in errors.
    pub(crate) fn write_directory(
        dir: &Directory,
        publication: &Publication,
        file: &mut std::fs::File,
        path: &Path,
    ) -> Result<(u64, String), IndexError> {
        let core = postcard::to_allocvec(&file::core_of(dir, publication))?;
        let write = |source| IndexError::Write { path: path.to_path_buf(), source };
        file::write_index(&core, dir, publication, file).map_err(write)
    }

    /// Decodes and checks an encoded index; `path` only names the source in errors.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<SearchIndex, IndexError> {
        SearchIndex::open(Backing::Owned(bytes.to_vec()), path)
    }

    /// Writes the index to `path`: into a temporary file beside it, then renamed over it, so
    /// that a reader never sees half a file. Creates the parent directory when missing.
    pub fn write(&self, path: &Path) -> Result<(), IndexError> {
        write_file(path, &self.file)
    }

    /// Reads an index written by [`SearchIndex::write`]: maps the file, checks it, and
    /// decodes only its core; the rendered results are read in place.
    pub fn read(path: &Path) -> Result<SearchIndex, IndexError> {
        let file = std::fs::File::open(path).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => IndexError::Missing { path: path.to_path_buf() },
            _ => IndexError::Read { path: path.to_path_buf(), source },
        })?;
        // SAFETY: a map of a file is sound only while nobody writes into or truncates that
        // file, since the map's bytes would change under the `&[u8]` handed out (or fault,
        // past a truncation). svcdir never does either to an index file: `svcdir build` and
        // `svcdir-search --from` write a new file and rename it into place, the tree's
        // `_search/<hash>.idx` is named by its content and never rewritten, and old ones are
        // only unlinked, which leaves the mapped inode and its bytes as they are. The map is
        // read-only, and shared (MAP_SHARED) so that several servers of one file share its
        // pages; the same invariant covers every process that maps it. An operator who
        // writes into the file by hand while a server maps it breaks it (README says so).
        let map = unsafe { memmap2::Mmap::map(&file) }
            .map_err(|source| IndexError::Read { path: path.to_path_buf(), source })?;
        SearchIndex::open(Backing::Mapped(map), path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::v3::ServiceV3;
    use crate::views::v4::{ServiceContext, ServiceView};
    use file::{core_of, file_bytes, render_results};

    fn index() -> SearchIndex {
        let publication = Publication::with_defaults("https://api.example.org".into(), "https://example.org".into());
        SearchIndex::build(&crate::test_support::directory::tiny(), &publication)
    }

    #[test]
    fn writing_removes_the_temporaries_of_killed_builds_only() {
        let dir = tempfile::tempdir().unwrap();
        // A process that has exited: its id is free (reuse within the test is unlikely, and
        // would only keep its file).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        child.wait().unwrap();
        let dead = child.id();
        let names = [
            format!(".search.idx.tmp-{dead}"),
            ".search.idx.tmp-1".to_owned(), // init: running
            format!(".other.idx.tmp-{dead}"),
            ".search.idx.tmp-x".to_owned(),
        ];
        for name in &names {
            std::fs::write(dir.path().join(name), b"partial").unwrap();
        }
        index().write(&dir.path().join("search.idx")).unwrap();
        let mut left: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        left.sort();
        assert_eq!(
            left,
            [".other.idx.tmp-".to_owned() + &dead.to_string(), names[1].clone(), names[3].clone(), "search.idx".into()]
        );
    }

    /// postcard is not self-describing: an index of another shape read under the same
    /// version number decodes wrongly or not at all. This pins the bytes of one small index
    /// to the version, so a change of the stored shape cannot land unnoticed.
    #[test]
    fn the_stored_shape_is_pinned_to_the_format_version() {
        let bytes = index().to_bytes().unwrap();
        assert_eq!(
            (FORMAT_VERSION, crate::write::content_hash(&bytes).as_str()),
            (6, "bf9f05f91523f2123a73f231c3a7114f"),
            "the index's bytes changed: if the stored shape changed (a field added, removed, \
             retyped or reordered in what `to_bytes` encodes), raise FORMAT_VERSION; then put \
             the new version and hash here",
        );
    }

    #[test]
    fn round_trips_through_bytes_and_files() {
        let bytes = index().to_bytes().unwrap();
        assert_eq!(&bytes[..8], b"SVCDIDX\0");
        assert_eq!(&bytes[8..12], &FORMAT_VERSION.to_le_bytes());
        assert_eq!(index().to_bytes().unwrap(), bytes, "deterministic");
        let again = SearchIndex::from_bytes(&bytes, Path::new("x")).unwrap();
        assert_eq!((again.service_count(), again.location_count()), (3, 1));

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/search.idx");
        index().write(&path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
        let names: Vec<_> =
            std::fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["search.idx"], "no temporary file left behind");
        assert_eq!(SearchIndex::read(&path).unwrap().service_count(), 3);
    }

    #[test]
    fn typed_errors() {
        let bytes = index().to_bytes().unwrap();
        let err = |bytes: &[u8]| SearchIndex::from_bytes(bytes, Path::new("f.idx")).unwrap_err();
        assert!(matches!(err(b"nonsense"), IndexError::BadMagic { .. }));
        assert!(matches!(err(b""), IndexError::BadMagic { .. }));
        assert!(matches!(err(&bytes[..10]), IndexError::Corrupt { .. }));
        assert!(matches!(err(&bytes[..40]), IndexError::Corrupt { .. }));
        let mut future = bytes.clone();
        future[8] = 9;
        assert!(matches!(err(&future), IndexError::UnsupportedVersion { found: 9, supported: 6, .. }));
        // Files of earlier versions (1: postcard only; 2: a record per service and postcode;
        // 3: no districts and sectors; 4: no HTML fragments; 5: the checksum in the header)
        // are refused by their version.
        for version in [1u32, 2, 3, 4, 5] {
            let mut old = MAGIC.to_vec();
            old.extend_from_slice(&version.to_le_bytes());
            old.extend_from_slice(&[0; 100]);
            assert!(
                matches!(err(&old), IndexError::UnsupportedVersion { found, supported: 6, .. } if found == version)
            );
        }
        for cut in [HEADER_LEN, HEADER_LEN + 1, bytes.len() / 2, bytes.len() - 1] {
            let e = err(&bytes[..cut]);
            assert!(matches!(e, IndexError::Corrupt { reason: Damage::Length { .. }, .. }), "{cut}: {e}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(err(&longer), IndexError::Corrupt { reason: Damage::Length { .. }, .. }));
        let missing = SearchIndex::read(Path::new("/nonexistent/dir/search.idx")).unwrap_err();
        assert!(matches!(missing, IndexError::Missing { .. }));
        assert!(missing.to_string().contains("/nonexistent/dir/search.idx"));
    }

    #[test]
    fn the_file_written_chunk_by_chunk_is_the_index_built_in_memory() {
        // More services than one chunk of the writer, so that fragments are read back
        // across chunks.
        let work = tempfile::tempdir().unwrap();
        let input = work.path().join("input");
        let services = file::SERVICES_PER_CHUNK + 600;
        crate::sample::generate(&crate::sample::SampleConfig { services, seed: 3, out: input.clone() }).unwrap();
        let dir = crate::validate::load_directory(&input).unwrap();
        assert!(dir.services.len() > file::SERVICES_PER_CHUNK, "{} services", dir.services.len());
        let publication = Publication::with_defaults("https://api.example.org".into(), "https://example.org".into());
        let path = work.path().join("search.idx");
        let mut file = std::fs::File::options().read(true).write(true).create_new(true).open(&path).unwrap();
        let (len, hash) = SearchIndex::write_directory(&dir, &publication, &mut file, &path).unwrap();
        let written = std::fs::read(&path).unwrap();
        let built = SearchIndex::build(&dir, &publication).to_bytes().unwrap();
        assert!(written == built, "the file differs from the index built in memory");
        assert_eq!((len, hash.as_str()), (built.len() as u64, crate::write::content_hash(&built).as_str()));
        // Read back through the map, whose windows past the core the check drops from the
        // process once hashed: the results read afterwards are the same bytes.
        let read = SearchIndex::read(&path).unwrap();
        let in_memory = SearchIndex::build(&dir, &publication);
        assert_eq!(read.service_count(), dir.services.len());
        assert_eq!(read.content_hash(), hash, "the map's one pass gives the content hash");
        for ix in [0, 1, dir.services.len() as ServiceNo / 2, dir.services.len() as ServiceNo - 1] {
            for version in [ApiVersion::V4, ApiVersion::V3] {
                assert_eq!(read.rendered(version, ix), in_memory.rendered(version, ix));
                assert_eq!(read.rendered_html(version, ix), in_memory.rendered_html(version, ix));
            }
        }
        drop(read);
        // A byte changed near the end (in a window the check drops) is caught.
        let mut bad = written;
        let at = bad.len() - 100;
        bad[at] ^= 0x20;
        std::fs::write(&path, &bad).unwrap();
        assert!(matches!(SearchIndex::read(&path), Err(IndexError::Corrupt { .. })));
    }

    #[test]
    fn one_pass_gives_the_checksum_and_the_content_hash() {
        let bytes = index().to_bytes().unwrap();
        let sums = Sums::of_bytes(&bytes);
        let (checked, stored) = bytes.split_at(bytes.len() - CHECKSUM_LEN);
        assert_eq!(sums.checksum, xxhash_rust::xxh3::xxh3_64(checked));
        assert_eq!(stored, sums.checksum.to_le_bytes(), "the file ends with its checksum");
        assert_eq!(sums.content, crate::write::content_hash(&bytes));
    }

    #[test]
    fn any_flipped_byte_but_the_lengths_is_caught_by_the_checksum() {
        let bytes = index().to_bytes().unwrap();
        // The header's reserved bytes and the checksum itself included; a flipped length is
        // a `Damage::Length`.
        for at in (12..16).chain(32..bytes.len()).step_by(3) {
            let mut bad = bytes.clone();
            bad[at] ^= 0x20;
            let e = SearchIndex::from_bytes(&bad, Path::new("f.idx")).unwrap_err();
            assert!(matches!(e, IndexError::Corrupt { reason: Damage::Checksum { .. }, .. }), "{at}: {e}");
        }
    }

    /// Re-encodes a core and a rendered section into a file with a valid checksum.
    fn file_of(core: &Core, rendered: &[u8]) -> Vec<u8> {
        file_bytes(&postcard::to_allocvec(core).unwrap(), rendered)
    }

    #[test]
    fn a_damaged_reference_is_refused_not_served() {
        let publication = Publication::with_defaults("https://a.example".into(), "https://a.example".into());
        let dir = crate::test_support::directory::tiny();
        let rendered = render_results(&dir, &publication);
        let mut core = core_of(&dir, &publication);
        core.services.locations.items[0] = 7;
        let err = SearchIndex::from_bytes(&file_of(&core, &rendered), Path::new("f.idx")).unwrap_err();
        assert!(matches!(err, IndexError::Corrupt { reason: Damage::DanglingReference, .. }), "{err}");
        let mut core = core_of(&dir, &publication);
        core.services.locations.start.pop();
        let err = SearchIndex::from_bytes(&file_of(&core, &rendered), Path::new("f.idx")).unwrap_err();
        assert!(matches!(err, IndexError::Corrupt { reason: Damage::Offsets, .. }), "{err}");
        let mut core = core_of(&dir, &publication);
        let twice = [dir.postcodes.postcodes.clone(), dir.postcodes.postcodes.clone()].concat();
        core.postcodes = PostcodeTable::of(&crate::model::PostcodeDirectory { postcodes: twice }, &dir.service_areas);
        let err = SearchIndex::from_bytes(&file_of(&core, &rendered), Path::new("f.idx")).unwrap_err();
        assert!(matches!(err, IndexError::Corrupt { reason: Damage::PostcodeOrder, .. }), "{err}");
        let mut core = core_of(&dir, &publication);
        core.reference.areas[0].kind = 9;
        let err = SearchIndex::from_bytes(&file_of(&core, &rendered), Path::new("f.idx")).unwrap_err();
        assert!(matches!(err, IndexError::Corrupt { reason: Damage::AreaKind, .. }), "{err}");
        let mut core = core_of(&dir, &publication);
        core.services.name_rank[0] = 1;
        let err = SearchIndex::from_bytes(&file_of(&core, &rendered), Path::new("f.idx")).unwrap_err();
        assert!(matches!(err, IndexError::Corrupt { reason: Damage::NameRanks, .. }), "{err}");
        // Offsets out of order in the rendered section.
        let mut bad = rendered.clone();
        bad[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        let err =
            SearchIndex::from_bytes(&file_of(&core_of(&dir, &publication), &bad), Path::new("f.idx")).unwrap_err();
        assert!(matches!(err, IndexError::Corrupt { reason: Damage::RenderedOffset(2), .. }), "{err}");
    }

    #[test]
    fn results_are_rendered_with_the_views() {
        let index = index();
        let dir = crate::test_support::directory::tiny();
        for (ix, service) in dir.services.iter().enumerate() {
            let v4 = ServiceView::new(&dir, index.publication(), service, ServiceContext::List);
            assert_eq!(index.rendered(ApiVersion::V4, ix as u32), serde_json::to_vec(&v4).unwrap());
            assert_eq!(
                index.rendered(ApiVersion::V3, ix as u32),
                serde_json::to_vec(&ServiceV3::new(&dir, service)).unwrap()
            );
        }
        assert_eq!(index.rendered(ApiVersion::V4, 99), b"");
    }

    #[test]
    fn derived_structures() {
        let index = index();
        // Only the area-less service is a radius candidate, at its one location.
        assert_eq!(index.radius.len(), 1);
        // Both located services are in the grid of all locations, at the one location.
        assert_eq!(index.located.len(), 2);
        assert_eq!(index.national_set.iter().collect::<Vec<_>>(), [1]);
        assert_eq!(index.located_set.iter().collect::<Vec<_>>(), [0, 2]);
        assert_eq!(index.area_sets[0].iter().collect::<Vec<_>>(), [1]);
        assert_eq!(index.area_sets[1].iter().collect::<Vec<_>>(), [2]);
        assert_eq!(index.category_sets[0].iter().collect::<Vec<_>>(), [2]);
        assert_eq!(index.category_sets[1].iter().collect::<Vec<_>>(), [0]);
        assert_eq!(index.unlocated_by_name, [1]);
        // (name, id) order: Health Walks, Money Advice, Walking Group.
        let name_rank: Vec<u32> = index.service_keys.iter().map(|k| k.name_rank).collect();
        assert_eq!(name_rank, [2, 0, 1]);
        // The keys repeat the name order and the one location of each located service.
        let keys: Vec<(u32, u32)> = index.service_keys.iter().map(|k| (k.name_rank, k.locations)).collect();
        assert_eq!(keys, [(2, 1), (0, 0), (1, 1)]);
        for ix in [0, 2] {
            assert_eq!(index.service_keys[ix].unit, index.service_points.get(ix)[0]);
        }
        assert_eq!((std::mem::size_of::<ServiceKey>(), std::mem::align_of::<ServiceKey>()), (32, 32));
    }
}
