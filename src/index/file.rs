//! The index file (format in the parent module's documentation): what is stored of each
//! service, the core section, the rendered results, the header with its checksum, and the
//! checks a file must pass before it is served.

use std::path::Path;

use super::csr::Csr;
use super::postcodes::PostcodeTable;
use super::stored::{Core, StoredPublication, StoredReference, StoredServices};
use super::text::TextIndex;
use super::{FORMAT_VERSION, HEADER_LEN, IndexError, LocationNo, MAGIC};
use crate::model::{AreaKind, Directory};
use crate::views::Publication;
use crate::views::v3::ServiceV3;
use crate::views::v4::{ServiceContext, ServiceView};
use rayon::prelude::*;

/// The bytes of an index file, owned or mapped.
pub(super) enum Backing {
    Owned(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl std::fmt::Debug for Backing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Backing::Owned(bytes) => write!(f, "Owned({} bytes)", bytes.len()),
            Backing::Mapped(map) => write!(f, "Mapped({} bytes)", map.len()),
        }
    }
}

impl std::ops::Deref for Backing {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Backing::Owned(bytes) => bytes,
            Backing::Mapped(map) => map,
        }
    }
}

/// Renders every service's result as JSON: all the v4 ones, then all the v3 ones, then the
/// HTML view's fragments of these ([`super::markup`]), with the offsets that cut them apart
/// before them.
pub(super) fn render_results(dir: &Directory, publication: &Publication) -> Vec<u8> {
    let render = |ix: usize| -> Vec<u8> {
        let service = &dir.services[ix % dir.services.len()];
        let rendered = if ix < dir.services.len() {
            serde_json::to_vec(&ServiceView::new(dir, publication, service, ServiceContext::List))
        } else {
            serde_json::to_vec(&ServiceV3::new(dir, service))
        };
        rendered.expect("a view serialises: plain strings, numbers and lists")
    };
    let mut parts: Vec<Vec<u8>> = (0..2 * dir.services.len()).into_par_iter().map(render).collect();
    let fragments = super::markup::fragments(&parts);
    parts.extend(fragments);
    let table = 8 * (parts.len() + 1);
    let mut out = Vec::with_capacity(table + parts.iter().map(Vec::len).sum::<usize>());
    let mut offset = 0u64;
    out.extend_from_slice(&offset.to_le_bytes());
    for part in &parts {
        offset += part.len() as u64;
        out.extend_from_slice(&offset.to_le_bytes());
    }
    for part in parts {
        out.extend_from_slice(&part);
    }
    out
}

/// The core of a directory.
pub(super) fn core_of(dir: &Directory, publication: &Publication) -> Core {
    let mut by_name: Vec<u32> = (0..dir.services.len() as u32).collect();
    by_name.sort_unstable_by(|&a, &b| {
        let (a, b) = (&dir.services[a as usize], &dir.services[b as usize]);
        a.name.cmp(&b.name).then_with(|| a.id.cmp(&b.id))
    });
    let postcodes = PostcodeTable::of(&dir.postcodes, &dir.service_areas);
    let mut name_rank = vec![0u32; by_name.len()];
    for (rank, &ix) in by_name.iter().enumerate() {
        name_rank[ix as usize] = rank as u32;
    }
    Core {
        publication: StoredPublication::of(publication),
        reference: StoredReference::of(dir),
        outcodes: postcodes.outcodes(),
        postcodes,
        text: TextIndex::build(dir),
        services: StoredServices {
            areas: Csr::from_lists(dir.services.iter().map(|s| s.service_areas.iter().copied())),
            categories: Csr::from_lists(dir.services.iter().map(|s| s.categories.iter().copied())),
            locations: Csr::from_lists(dir.services.iter().map(|s| s.locations.iter().map(|l| l.get() as LocationNo))),
            name_rank,
        },
        location_points: dir.locations.iter().map(|l| l.point).collect(),
    }
}

/// The whole file of a directory's index.
pub(super) fn encode(dir: &Directory, publication: &Publication) -> Result<Vec<u8>, IndexError> {
    let core = postcard::to_allocvec(&core_of(dir, publication))?;
    Ok(file_bytes(&core, &render_results(dir, publication)))
}

/// A file of an encoded core and a rendered section: the header (with its checksum), then
/// the two sections.
pub(super) fn file_bytes(core: &[u8], rendered: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(HEADER_LEN + core.len() + rendered.len());
    bytes.extend_from_slice(&MAGIC);
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&[0; 4]);
    bytes.extend_from_slice(&(core.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&(rendered.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&[0; 16]);
    bytes.extend_from_slice(core);
    bytes.extend_from_slice(rendered);
    let checksum = checksum(&bytes[HEADER_LEN..]);
    bytes[32..40].copy_from_slice(&checksum.to_le_bytes());
    bytes
}

/// XXH3-64 of the body: the header's checksum.
pub(super) fn checksum(body: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(body)
}

/// Bytes read and hashed at a time by [`Sums::of_file`].
pub(super) const CHUNK: usize = 4 << 20;

/// Bytes hashed by one hash before the other hashes them: small enough to stay in a core's
/// own cache.
const SLICE: usize = 64 << 10;

/// The header's checksum and the file's content hash, in one pass over the file.
pub(super) struct Sums {
    /// XXH3-64 of everything after the header.
    pub(super) body: u64,
    /// [`crate::write::content_hash`] of the whole file (what the build's manifest records).
    pub(super) content: String,
}

/// The two hashes of [`Sums`] while the bytes go by.
struct Hashing {
    body: xxhash_rust::xxh3::Xxh3,
    content: xxhash_rust::xxh3::Xxh3,
    at: usize,
}

impl Hashing {
    fn new() -> Hashing {
        Hashing { body: xxhash_rust::xxh3::Xxh3::new(), content: xxhash_rust::xxh3::Xxh3::new(), at: 0 }
    }

    /// The next bytes of the file. Both hashes go over each slice while it is still in the
    /// core's cache: one read of the file from memory instead of two.
    fn update(&mut self, chunk: &[u8]) {
        let from = HEADER_LEN.saturating_sub(self.at).min(chunk.len());
        for (n, slice) in chunk.chunks(SLICE).enumerate() {
            self.content.update(slice);
            let skip = from.saturating_sub(n * SLICE).min(slice.len());
            self.body.update(&slice[skip..]);
        }
        self.at += chunk.len();
    }

    fn finish(self) -> Sums {
        Sums { body: self.body.digest(), content: format!("{:032x}", self.content.digest128()) }
    }
}

impl Sums {
    /// The sums of bytes in memory.
    pub(super) fn of_bytes(bytes: &[u8]) -> Sums {
        let mut hashing = Hashing::new();
        hashing.update(bytes);
        hashing.finish()
    }

    /// The sums of the first `len` bytes of an open file, read into one buffer rather than
    /// through the map: the check leaves no page of the map resident, and nothing but the
    /// map itself needs `unsafe`.
    pub(super) fn of_file(mut file: &std::fs::File, len: usize) -> std::io::Result<Sums> {
        use std::io::{Read as _, Seek as _};
        file.seek(std::io::SeekFrom::Start(0))?;
        let mut hashing = Hashing::new();
        let mut buffer = vec![0; CHUNK.min(len)];
        while hashing.at < len {
            let chunk = &mut buffer[..CHUNK.min(len - hashing.at)];
            file.read_exact(chunk)?;
            hashing.update(chunk);
        }
        Ok(hashing.finish())
    }
}

/// Replaces the file at `path` atomically ([`crate::write::replace_file`]).
pub(super) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), IndexError> {
    crate::write::replace_file(path, bytes).map_err(|source| IndexError::Write { path: path.to_path_buf(), source })
}

/// Checks the magic bytes, the version and the lengths; returns the core's length and the
/// stored checksum.
pub(super) fn check_header(bytes: &[u8], path: &Path) -> Result<(usize, u64), IndexError> {
    let path = path.to_path_buf();
    if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
        return Err(IndexError::BadMagic { path });
    }
    let corrupt = |reason: String| IndexError::Corrupt { path: path.clone(), reason };
    let u32_at = |at: usize| bytes.get(at..at + 4).and_then(|v| <[u8; 4]>::try_from(v).ok()).map(u32::from_le_bytes);
    let u64_at = |at: usize| bytes.get(at..at + 8).and_then(|v| <[u8; 8]>::try_from(v).ok()).map(u64::from_le_bytes);
    let version = u32_at(8).ok_or_else(|| corrupt("the header is cut short".into()))?;
    if version != FORMAT_VERSION {
        return Err(IndexError::UnsupportedVersion { path, found: version, supported: FORMAT_VERSION });
    }
    let (Some(core_len), Some(rendered_len), Some(checksum_stored)) = (u64_at(16), u64_at(24), u64_at(32)) else {
        return Err(corrupt("the header is cut short".into()));
    };
    let expected = (HEADER_LEN as u64).checked_add(core_len).and_then(|n| n.checked_add(rendered_len));
    if expected != Some(bytes.len() as u64) {
        return Err(corrupt(format!(
            "the file has {} bytes, its header announces {} (cut short, or bytes added)",
            bytes.len(),
            expected.map_or_else(|| "more than 2^64".to_owned(), |n| n.to_string())
        )));
    }
    Ok((core_len as usize, checksum_stored))
}

/// Every reference a request could follow points inside the core.
pub(super) fn check_core(core: &Core) -> Result<(), String> {
    let reference = &core.reference;
    let (nodes, areas, locations) = (reference.categories.len(), reference.areas.len(), core.location_points.len());
    let stored = &core.services;
    let services = stored.len();
    if services > u32::MAX as usize || locations > u32::MAX as usize {
        return Err("too many records".into());
    }
    for (check, keys) in [
        (stored.areas.check(), stored.areas.keys()),
        (stored.categories.check(), stored.categories.keys()),
        (stored.locations.check(), stored.locations.keys()),
    ] {
        check?;
        if keys != services {
            return Err("the services' tables differ in length".into());
        }
    }
    if stored.categories.items().iter().any(|&c| c as usize >= nodes)
        || stored.areas.items().iter().any(|&a| a as usize >= areas)
        || stored.locations.items().iter().any(|&l| l as usize >= locations)
    {
        return Err("a service refers to a record that does not exist".into());
    }
    // A permutation: each rank below the number of services, and none twice.
    let mut seen = vec![false; services];
    for &r in &stored.name_rank {
        match seen.get_mut(r as usize) {
            Some(slot) if !*slot => *slot = true,
            _ => return Err("the services' name ranks are not a permutation".into()),
        }
    }
    core.postcodes.check(areas)?;
    core.outcodes.check(areas)?;
    if reference.areas.iter().any(|a| a.kind as usize >= AreaKind::ALL.len()) {
        return Err("a service area is of a kind that does not exist".into());
    }
    for (ix, n) in reference.categories.iter().enumerate() {
        if n.parent.is_some_and(|p| p as usize >= nodes)
            || n.children.iter().any(|&c| c as usize >= nodes)
            || (n.subtree_end as usize) <= ix
            || n.subtree_end as usize > nodes
        {
            return Err(format!("category {ix} refers to a node that does not exist"));
        }
    }
    if reference.roots.iter().any(|&r| r as usize >= nodes) {
        return Err("a top-level category does not exist".into());
    }
    core.text.check(services)
}

/// The rendered section: `4 × services + 1` ascending offsets from 0 to the length of the
/// JSON after them.
pub(super) fn check_rendered(rendered: &[u8], services: usize) -> Result<(), String> {
    let table = 8 * (super::markup::RENDERED_KINDS * services + 1);
    let Some(text_len) = rendered.len().checked_sub(table) else {
        return Err("the rendered results' table is cut short".into());
    };
    let mut previous = 0u64;
    for (k, chunk) in rendered[..table].chunks_exact(8).enumerate() {
        let offset = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        if (k == 0 && offset != 0) || offset < previous {
            return Err(format!("rendered result {k}'s offset is out of order"));
        }
        previous = offset;
    }
    if previous != text_len as u64 {
        return Err("the rendered results do not fill their section".into());
    }
    Ok(())
}
