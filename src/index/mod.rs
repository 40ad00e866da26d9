//! The search index: everything `svcdir-search` needs to answer a search, in one file.
//!
//! It owns the index's contents and its file format; it does not parse requests or decide
//! which services match (that is `search`). [`SearchIndex::build`] is called by
//! `svcdir build` on the same [`Directory`] and [`Publication`] the static files come from,
//! so search results are rendered with the same views and say the same things.
//!
//! # File format
//! `MAGIC` (8 bytes), the format version (`u32`, little-endian), then one postcard value:
//! the publication, the directory and the stored text index. Everything else (the R-tree,
//! per-service location vectors, area posting lists, ...) is cheap to derive and is rebuilt
//! on load, which keeps the file small and the format simple. After decoding, every index
//! that a request could follow is checked, so a damaged file is refused at start-up instead
//! of panicking on some request. Bump [`FORMAT_VERSION`] whenever the encoded shape changes
//! (including any change to the model's serde shape).

pub mod sets;
pub mod spatial;
pub mod text;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::model::{AreaIx, Directory, ServiceIx};
use crate::views::Publication;
use sets::ServiceSet;
use spatial::{SpatialIndex, UnitVector, unit_vector};
use text::{TextIndex, TextLookup};

/// First bytes of every index file.
pub const MAGIC: [u8; 8] = *b"SVCDIDX\0";
/// Version of the encoding written after the magic bytes.
pub const FORMAT_VERSION: u32 = 1;
const HEADER_LEN: usize = MAGIC.len() + 4;

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
    /// The file does not start with [`MAGIC`].
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
        reason: String,
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

/// Offsets into a flat array: the items of key `k` are `items[start[k]..start[k + 1]]`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Csr<T> {
    start: Vec<u32>,
    items: Vec<T>,
}

impl<T> Csr<T> {
    /// Builds from `(key, item)` pairs, keeping the pairs' order within a key.
    fn from_pairs(keys: usize, pairs: impl Iterator<Item = (usize, T)> + Clone) -> Csr<T>
    where
        T: Copy + Default,
    {
        let mut start = vec![0u32; keys + 1];
        for (k, _) in pairs.clone() {
            start[k + 1] += 1;
        }
        for k in 1..start.len() {
            start[k] += start[k - 1];
        }
        let mut fill = start.clone();
        let mut items = vec![T::default(); start[keys] as usize];
        for (k, item) in pairs {
            items[fill[k] as usize] = item;
            fill[k] += 1;
        }
        Csr { start, items }
    }

    /// The items of `key` (empty when out of range).
    #[inline]
    pub(crate) fn get(&self, key: usize) -> &[T] {
        match (self.start.get(key), self.start.get(key + 1)) {
            (Some(&a), Some(&b)) => &self.items[a as usize..b as usize],
            _ => &[],
        }
    }
}

/// Everything a search needs: the directory itself (results are rendered from it with the
/// static build's views), the publication, and the structures that make a search fast.
#[derive(Debug)]
pub struct SearchIndex {
    pub(crate) directory: Directory,
    pub(crate) publication: Publication,
    pub(crate) text: TextLookup,
    /// Locations of area-less services.
    pub(crate) spatial: SpatialIndex,
    /// Unit vectors of each service's locations, for its distance key.
    pub(crate) service_points: Csr<UnitVector>,
    /// Services without service areas at each location: the only ones a location within
    /// the radius can make match (see [`SpatialIndex`]).
    pub(crate) location_services: Csr<ServiceIx>,
    /// Each service's position in (name, id) order: the last two keys of Search 7 as one
    /// integer, so that ordering never touches the strings.
    pub(crate) name_rank: Vec<u32>,
    /// Service area by code.
    pub(crate) area_by_code: HashMap<String, AreaIx>,
    /// The services of each service area, as a set: a postcode's matches by area are the
    /// union of a few of these.
    pub(crate) area_sets: Vec<ServiceSet>,
    /// The services tagged with each category node itself (not its subtree).
    pub(crate) category_sets: Vec<ServiceSet>,
    /// Services with an area of kind Country or Region (Search 6), as a set.
    pub(crate) national_set: ServiceSet,
    /// Services with at least one location.
    pub(crate) located_set: ServiceSet,
    /// Every location of any service: results are taken from it nearest first.
    pub(crate) nearest: SpatialIndex,
    /// Every service at each location.
    pub(crate) services_at: Csr<ServiceIx>,
    /// Services without locations, in (name, id) order: the order in which they follow
    /// the located ones when there is no `q` (Search 7).
    pub(crate) unlocated_by_name: Vec<ServiceIx>,
}

/// The encoded body, borrowed for writing.
#[derive(Serialize)]
struct StoredRef<'a> {
    publication: &'a Publication,
    directory: &'a Directory,
    text: &'a TextIndex,
}

/// The encoded body, owned for reading.
#[derive(Deserialize)]
struct Stored {
    publication: Publication,
    directory: Directory,
    text: TextIndex,
}

impl SearchIndex {
    /// Builds the index of a validated directory.
    pub fn build(dir: &Directory, publication: &Publication) -> SearchIndex {
        let text = TextIndex::build(dir);
        SearchIndex::derive(dir.clone(), publication.clone(), text)
    }

    fn derive(directory: Directory, publication: Publication, text: TextIndex) -> SearchIndex {
        let dir = &directory;
        let service_points = Csr::from_pairs(
            dir.services.len(),
            dir.services.iter().enumerate().flat_map(|(ix, s)| {
                s.locations.iter().map(move |&l| (ix, unit_vector(dir.locations[l as usize].point)))
            }),
        );
        let location_services = Csr::from_pairs(
            dir.locations.len(),
            dir.services
                .iter()
                .enumerate()
                .filter(|(_, s)| s.service_areas.is_empty())
                .flat_map(|(ix, s)| s.locations.iter().map(move |&l| (l as usize, ix as ServiceIx))),
        );
        let national: Vec<bool> = dir
            .services
            .iter()
            .map(|s| s.service_areas.iter().any(|&a| dir.service_areas[a as usize].kind.is_national()))
            .collect();
        let area_by_code = dir.service_areas.iter().enumerate().map(|(ix, a)| (a.code.clone(), ix as AreaIx)).collect();
        let spatial = SpatialIndex::build(dir);
        let mut by_name: Vec<u32> = (0..dir.services.len() as u32).collect();
        by_name.sort_unstable_by(|&a, &b| {
            let (a, b) = (&dir.services[a as usize], &dir.services[b as usize]);
            a.name.cmp(&b.name).then_with(|| a.id.cmp(&b.id))
        });
        let mut name_rank = vec![0u32; by_name.len()];
        for (rank, &ix) in by_name.iter().enumerate() {
            name_rank[ix as usize] = rank as u32;
        }
        let services = dir.services.len();
        let mut area_sets = vec![ServiceSet::empty(services); dir.service_areas.len()];
        for (ix, s) in dir.services.iter().enumerate() {
            for &a in &s.service_areas {
                if let Some(set) = area_sets.get_mut(a as usize) {
                    set.insert(ix as ServiceIx);
                }
            }
        }
        let mut category_sets = vec![ServiceSet::empty(services); dir.categories.nodes.len()];
        for (ix, s) in dir.services.iter().enumerate() {
            for &c in &s.categories {
                if let Some(set) = category_sets.get_mut(c as usize) {
                    set.insert(ix as ServiceIx);
                }
            }
        }
        let national_set =
            ServiceSet::of(services, national.iter().enumerate().filter(|(_, n)| **n).map(|(ix, _)| ix as ServiceIx));
        let located_set = ServiceSet::of(
            services,
            dir.services.iter().enumerate().filter(|(_, s)| !s.locations.is_empty()).map(|(ix, _)| ix as ServiceIx),
        );
        let services_at = Csr::from_pairs(
            dir.locations.len(),
            dir.services
                .iter()
                .enumerate()
                .flat_map(|(ix, s)| s.locations.iter().map(move |&l| (l as usize, ix as ServiceIx))),
        );
        let unlocated_by_name =
            by_name.iter().copied().filter(|&ix| dir.services[ix as usize].locations.is_empty()).collect();
        let nearest = SpatialIndex::build_all(dir);
        SearchIndex {
            area_sets,
            category_sets,
            national_set,
            located_set,
            nearest,
            services_at,
            unlocated_by_name,
            name_rank,
            text: TextLookup::new(text),
            spatial,
            service_points,
            location_services,
            area_by_code,
            directory,
            publication,
        }
    }

    /// The directory the index was built from.
    pub fn directory(&self) -> &Directory {
        &self.directory
    }

    /// The publication recorded at build time (base URL, site URL, licence, attribution).
    pub fn publication(&self) -> &Publication {
        &self.publication
    }

    /// Number of distinct indexed words.
    pub fn term_count(&self) -> usize {
        self.text.stored().term_count()
    }

    /// Number of locations in the R-tree (those of services without service areas).
    pub fn spatial_len(&self) -> usize {
        self.spatial.len()
    }

    /// The encoded file: header, then postcard.
    pub fn to_bytes(&self) -> Result<Vec<u8>, IndexError> {
        encode(&StoredRef { publication: &self.publication, directory: &self.directory, text: self.text.stored() })
    }

    /// Writes the index of a directory straight from the borrowed model, without building
    /// the query structures or a second copy of the directory: what `svcdir build` does.
    pub fn write_directory(dir: &Directory, publication: &Publication, path: &Path) -> Result<(), IndexError> {
        let text = TextIndex::build(dir);
        write_file(path, &encode(&StoredRef { publication, directory: dir, text: &text })?)
    }

    /// Decodes and checks an encoded index; `path` only names the source in errors.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<SearchIndex, IndexError> {
        let stored = decode(bytes, path)?;
        Ok(SearchIndex::derive(stored.directory, stored.publication, stored.text))
    }

    /// Writes the index to `path`: into a temporary file beside it, then renamed over it, so
    /// that a reader never sees half a file. Creates the parent directory when missing.
    pub fn write(&self, path: &Path) -> Result<(), IndexError> {
        write_file(path, &self.to_bytes()?)
    }
}

fn encode(stored: &StoredRef<'_>) -> Result<Vec<u8>, IndexError> {
    let mut bytes = Vec::with_capacity(HEADER_LEN + 1024);
    bytes.extend_from_slice(&MAGIC);
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    Ok(postcard::to_extend(stored, bytes)?)
}

/// Replaces the file at `path` atomically ([`crate::write::replace_file`]).
fn write_file(path: &Path, bytes: &[u8]) -> Result<(), IndexError> {
    crate::write::replace_file(path, bytes).map_err(|source| IndexError::Write { path: path.to_path_buf(), source })
}

impl SearchIndex {
    /// Reads an index written by [`SearchIndex::write`].
    pub fn read(path: &Path) -> Result<SearchIndex, IndexError> {
        let bytes = std::fs::read(path).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => IndexError::Missing { path: path.to_path_buf() },
            _ => IndexError::Read { path: path.to_path_buf(), source },
        })?;
        let stored = decode(&bytes, path)?;
        // Free the file's bytes before building the derived structures: a lower peak RSS.
        drop(bytes);
        Ok(SearchIndex::derive(stored.directory, stored.publication, stored.text))
    }
}

/// Checks the header, decodes the body, and checks every reference in it.
fn decode(bytes: &[u8], path: &Path) -> Result<Stored, IndexError> {
    let path = path.to_path_buf();
    if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
        return Err(IndexError::BadMagic { path });
    }
    let corrupt = |reason: String| IndexError::Corrupt { path: path.clone(), reason };
    let version = bytes
        .get(MAGIC.len()..HEADER_LEN)
        .and_then(|v| <[u8; 4]>::try_from(v).ok())
        .map(u32::from_le_bytes)
        .ok_or_else(|| corrupt("the header is cut short".into()))?;
    if version != FORMAT_VERSION {
        return Err(IndexError::UnsupportedVersion { path, found: version, supported: FORMAT_VERSION });
    }
    let (stored, rest) =
        postcard::take_from_bytes::<Stored>(&bytes[HEADER_LEN..]).map_err(|e| corrupt(e.to_string()))?;
    if !rest.is_empty() {
        return Err(corrupt(format!("{} unexpected bytes after the index", rest.len())));
    }
    check_directory(&stored.directory).map_err(corrupt)?;
    stored.text.check(stored.directory.services.len()).map_err(corrupt)?;
    Ok(stored)
}

/// Every reference a request could follow points inside the directory.
fn check_directory(dir: &Directory) -> Result<(), String> {
    let (orgs, services, locations) = (dir.organisations.len(), dir.services.len(), dir.locations.len());
    let (nodes, areas) = (dir.categories.nodes.len(), dir.service_areas.len());
    if services > u32::MAX as usize || locations > u32::MAX as usize {
        return Err("too many records".into());
    }
    for (ix, s) in dir.services.iter().enumerate() {
        if s.organisation as usize >= orgs
            || s.categories.iter().any(|&c| c as usize >= nodes)
            || s.service_areas.iter().any(|&a| a as usize >= areas)
            || s.locations.iter().any(|&l| l as usize >= locations)
        {
            return Err(format!("service {ix} refers to a record that does not exist"));
        }
    }
    for (ix, o) in dir.organisations.iter().enumerate() {
        if o.services.iter().any(|&s| s as usize >= services) || o.locations.iter().any(|&l| l as usize >= locations) {
            return Err(format!("organisation {ix} refers to a record that does not exist"));
        }
    }
    if let Some(ix) = dir.locations.iter().position(|l| l.organisation as usize >= orgs) {
        return Err(format!("location {ix} refers to an organisation that does not exist"));
    }
    for (ix, n) in dir.categories.nodes.iter().enumerate() {
        if n.parent.is_some_and(|p| p as usize >= nodes)
            || n.children.iter().any(|&c| c as usize >= nodes)
            || (n.subtree_end as usize) <= ix
            || n.subtree_end as usize > nodes
        {
            return Err(format!("category {ix} refers to a node that does not exist"));
        }
    }
    if dir.categories.roots.iter().any(|&r| r as usize >= nodes) {
        return Err("a top-level category does not exist".into());
    }
    Ok(())
}

/// A tiny directory for unit tests: three services with names, descriptions, categories,
/// areas and locations.
#[cfg(test)]
pub(crate) fn tiny_directory() -> Directory {
    use crate::model::category::CategoryInput;
    use crate::model::{
        AreaKind, CategoryTree, Location, Organisation, Point, Postcode, PostcodeDirectory, Service, ServiceArea,
        Timestamp,
    };
    use uuid::Uuid;
    let category =
        |slug: &str, name: &str, children| CategoryInput { id: None, name: name.into(), slug: slug.into(), children };
    let categories = CategoryTree::build(&[category(
        "activity",
        "Activity",
        vec![category("outdoor-pursuits", "Outdoor Pursuits", vec![])],
    )]);
    let service = |n: u128, name: &str, description: &str, categories: Vec<u16>, areas: Vec<u16>, locations| Service {
        id: Uuid::from_u128(n),
        organisation: 0,
        name: name.into(),
        slug: format!("s-{n}"),
        description: description.into(),
        url: String::new(),
        phone: String::new(),
        email: String::new(),
        categories,
        service_areas: areas,
        locations,
        last_updated: Timestamp(0),
    };
    Directory {
        organisations: vec![Organisation {
            id: Uuid::from_u128(100),
            name: "Org".into(),
            slug: "org".into(),
            description: String::new(),
            url: String::new(),
            phone: String::new(),
            email: String::new(),
            facebook: String::new(),
            twitter: String::new(),
            is_claimed: false,
            last_edited: Timestamp(0),
            services: vec![0, 1, 2],
            locations: vec![0],
        }],
        services: vec![
            service(1, "Walking Group", "Gentle walks.", vec![1], vec![], vec![0]),
            service(2, "Health Walks", "Walking for health.", vec![], vec![0], vec![]),
            service(3, "Money Advice", "Help with debt.", vec![0], vec![1], vec![0]),
        ],
        locations: vec![Location {
            id: Uuid::from_u128(200),
            organisation: 0,
            name: String::new(),
            description: String::new(),
            street_address: "1 Street".into(),
            locality: "Glasgow".into(),
            region: String::new(),
            state: String::new(),
            postal_code: "G2 1AL".into(),
            country: "GB".into(),
            point: Point { lat: 55.86, lon: -4.25 },
        }],
        categories,
        service_areas: vec![
            ServiceArea { code: "XS".into(), kind: AreaKind::Country, name: "Scotland".into() },
            ServiceArea { code: "S12000046".into(), kind: AreaKind::LocalAuthority, name: "Glasgow City".into() },
        ],
        postcodes: PostcodeDirectory {
            postcodes: vec![Postcode {
                code: "G2 1AL".into(),
                point: Point { lat: 55.8609, lon: -4.2514 },
                areas: vec!["S12000046".into(), "XS".into(), "XB".into()],
            }],
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> SearchIndex {
        let publication = Publication::with_defaults("https://api.example.org".into(), "https://example.org".into());
        SearchIndex::build(&tiny_directory(), &publication)
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
            (1, "7faf9f56871ecd4cc6d412e90d38ecf3"),
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
        let again = SearchIndex::from_bytes(&bytes, Path::new("x")).unwrap();
        assert_eq!(again.to_bytes().unwrap(), bytes, "deterministic and lossless");

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/search.idx");
        index().write(&path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
        let names: Vec<_> =
            std::fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["search.idx"], "no temporary file left behind");
        assert_eq!(SearchIndex::read(&path).unwrap().directory().services.len(), 3);
    }

    #[test]
    fn typed_errors() {
        let bytes = index().to_bytes().unwrap();
        let err = |bytes: &[u8]| SearchIndex::from_bytes(bytes, Path::new("f.idx")).unwrap_err();
        assert!(matches!(err(b"nonsense"), IndexError::BadMagic { .. }));
        assert!(matches!(err(b""), IndexError::BadMagic { .. }));
        assert!(matches!(err(&bytes[..10]), IndexError::Corrupt { .. }));
        let mut future = bytes.clone();
        future[8] = 9;
        assert!(matches!(err(&future), IndexError::UnsupportedVersion { found: 9, supported: 1, .. }));
        assert!(matches!(err(&bytes[..bytes.len() - 3]), IndexError::Corrupt { .. }));
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(err(&longer), IndexError::Corrupt { .. }));
        let missing = SearchIndex::read(Path::new("/nonexistent/dir/search.idx")).unwrap_err();
        assert!(matches!(missing, IndexError::Missing { .. }));
        assert!(missing.to_string().contains("/nonexistent/dir/search.idx"));
    }

    #[test]
    fn a_damaged_reference_is_refused_not_served() {
        let mut dir = tiny_directory();
        dir.services[1].locations.push(7);
        let publication = Publication::with_defaults("https://a.example".into(), "https://a.example".into());
        let stored =
            StoredRef { publication: &publication, directory: &dir, text: &TextIndex::build(&tiny_directory()) };
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        let bytes = postcard::to_extend(&stored, bytes).unwrap();
        let err = SearchIndex::from_bytes(&bytes, Path::new("f.idx")).unwrap_err();
        assert!(err.to_string().contains("service 1 refers to a record that does not exist"), "{err}");
    }

    #[test]
    fn derived_structures() {
        let index = index();
        // Only the area-less service's location is in the R-tree; its services list only it.
        assert_eq!(index.spatial_len(), 1);
        assert_eq!(index.location_services.get(0), [0]);
        // Every service at the location is in the tree of all locations.
        assert_eq!(index.nearest.len(), 1);
        assert_eq!(index.services_at.get(0), [0, 2]);
        assert_eq!(index.national_set.iter().collect::<Vec<_>>(), [1]);
        assert_eq!(index.located_set.iter().collect::<Vec<_>>(), [0, 2]);
        assert_eq!(index.area_sets[0].iter().collect::<Vec<_>>(), [1]);
        assert_eq!(index.area_sets[1].iter().collect::<Vec<_>>(), [2]);
        assert_eq!(index.category_sets[0].iter().collect::<Vec<_>>(), [2]);
        assert_eq!(index.category_sets[1].iter().collect::<Vec<_>>(), [0]);
        assert_eq!(index.unlocated_by_name, [1]);
        // (name, id) order: Health Walks, Money Advice, Walking Group.
        assert_eq!(index.name_rank, [2, 0, 1]);
    }
}
