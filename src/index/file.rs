//! The index file (format in the parent module's documentation): what is stored of each
//! service, the core section, the rendered results, the header with its checksum, and the
//! checks a file must pass before it is served.

use std::io;
use std::path::Path;

use super::csr::Csr;
use super::damage::Damage;
use super::postcodes::PostcodeTable;
use super::stored::{Core, StoredPublication, StoredReference, StoredServices};
use super::text::TextIndex;
use super::{CHECKSUM_LEN, FORMAT_VERSION, HEADER_LEN, IndexError, LocationNo, MAGIC};
use crate::api::html::ResultFragment;
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

/// Services rendered at a time while the index is written: enough to keep every core busy,
/// few enough that a chunk's parts are a few megabytes (the whole section is the index's
/// bulk, 0.8 GB at 100,000 services, and is never held in memory).
pub(super) const SERVICES_PER_CHUNK: usize = 4096;

/// Writes the rendered section at `start` of `out`: the offsets that cut the parts apart,
/// then the parts themselves, in [`super::markup`]'s order (every service's result as v4
/// JSON, then as v3 JSON, then the HTML view's fragments of these). The parts are rendered a
/// chunk of services at a time and written as they come; the fragments are made from the
/// JSON parts read back from `out`. Returns the section's length.
pub(super) fn write_rendered<F>(dir: &Directory, publication: &Publication, out: &mut F, start: u64) -> io::Result<u64>
where
    F: io::Read + io::Write + io::Seek,
{
    let n = dir.services.len();
    let parts = super::markup::RENDERED_KINDS * n;
    let text_at = start + 8 * (parts as u64 + 1);
    // offsets[k]..offsets[k + 1]: part k within the text.
    let mut offsets: Vec<u64> = Vec::with_capacity(parts + 1);
    offsets.push(0);
    out.seek(io::SeekFrom::Start(text_at))?;
    for kind in 0..super::markup::RENDERED_KINDS {
        for first in (0..n).step_by(SERVICES_PER_CHUNK) {
            let services = first..(first + SERVICES_PER_CHUNK).min(n);
            let chunk: Vec<Vec<u8>> = match kind {
                0 => services.into_par_iter().map(|ix| json_v4(dir, publication, ix)).collect(),
                1 => services.into_par_iter().map(|ix| json_v3(dir, ix)).collect(),
                _ => {
                    // The JSON parts of the same services, `2 * n` parts back.
                    let (from, to) = ((kind - 2) * n + services.start, (kind - 2) * n + services.end);
                    let mut json = vec![0; (offsets[to] - offsets[from]) as usize];
                    out.seek(io::SeekFrom::Start(text_at + offsets[from]))?;
                    out.read_exact(&mut json)?;
                    out.seek(io::SeekFrom::Start(text_at + offsets[offsets.len() - 1]))?;
                    let at = |k: usize| (offsets[k] - offsets[from]) as usize;
                    (from..to).into_par_iter().map(|k| ResultFragment::encode(&json[at(k)..at(k + 1)])).collect()
                }
            };
            // One write a chunk: the parts joined.
            let mut joined = Vec::with_capacity(chunk.iter().map(Vec::len).sum());
            for part in chunk {
                joined.extend_from_slice(&part);
                offsets.push(offsets[offsets.len() - 1] + part.len() as u64);
            }
            out.write_all(&joined)?;
        }
    }
    out.seek(io::SeekFrom::Start(start))?;
    let table: Vec<u8> = offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
    out.write_all(&table)?;
    Ok(text_at - start + offsets[offsets.len() - 1])
}

/// Service `ix`'s result as v4 JSON.
fn json_v4(dir: &Directory, publication: &Publication, ix: usize) -> Vec<u8> {
    serde_json::to_vec(&ServiceView::new(dir, publication, &dir.services[ix], ServiceContext::List))
        .expect("a view serialises: plain strings, numbers and lists")
}

/// Service `ix`'s result as v3 JSON.
fn json_v3(dir: &Directory, ix: usize) -> Vec<u8> {
    serde_json::to_vec(&ServiceV3::new(dir, &dir.services[ix]))
        .expect("a view serialises: plain strings, numbers and lists")
}

/// The rendered section alone, in memory ([`write_rendered`]).
#[cfg(test)]
pub(super) fn render_results(dir: &Directory, publication: &Publication) -> Vec<u8> {
    let mut out = io::Cursor::new(Vec::new());
    write_rendered(dir, publication, &mut out, 0).expect("writing into memory does not fail");
    out.into_inner()
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

/// The whole file of a directory's index, in memory.
pub(super) fn encode(dir: &Directory, publication: &Publication) -> Result<Vec<u8>, IndexError> {
    let core = postcard::to_allocvec(&core_of(dir, publication))?;
    let mut out = io::Cursor::new(Vec::new());
    write_index(&core, dir, publication, &mut out).expect("writing into memory does not fail");
    Ok(out.into_inner())
}

/// Writes the index file of an encoded core and a directory's rendered results into `out`
/// (from its start): the rendered section first, as it is made, then the header and the
/// core before it, then the checksum after it all, read back in one pass that also gives
/// the file's content hash. Returns the file's length and its content hash.
pub(super) fn write_index<F>(
    core: &[u8],
    dir: &Directory,
    publication: &Publication,
    out: &mut F,
) -> io::Result<(u64, String)>
where
    F: io::Read + io::Write + io::Seek,
{
    let body_at = HEADER_LEN as u64;
    let rendered_len = write_rendered(dir, publication, out, body_at + core.len() as u64)?;
    out.seek(io::SeekFrom::Start(0))?;
    out.write_all(&header(core.len(), rendered_len))?;
    out.write_all(core)?;
    let checked = body_at + core.len() as u64 + rendered_len;
    let hashing = Hashing::of_reader(out, checked as usize)?;
    let checksum = hashing.checksum().to_le_bytes();
    out.seek(io::SeekFrom::Start(checked))?;
    out.write_all(&checksum)?;
    out.flush()?;
    Ok((checked + CHECKSUM_LEN as u64, hashing.finish(&checksum).content))
}

/// The file's header: magic bytes, format version, the two sections' lengths.
fn header(core_len: usize, rendered_len: u64) -> [u8; HEADER_LEN] {
    let mut header = [0; HEADER_LEN];
    header[..8].copy_from_slice(&MAGIC);
    header[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    header[16..24].copy_from_slice(&(core_len as u64).to_le_bytes());
    header[24..32].copy_from_slice(&rendered_len.to_le_bytes());
    header
}

/// A file of an encoded core and a rendered section: the header, the two sections, then the
/// checksum of all that.
#[cfg(test)]
pub(super) fn file_bytes(core: &[u8], rendered: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(HEADER_LEN + core.len() + rendered.len() + CHECKSUM_LEN);
    bytes.extend_from_slice(&header(core.len(), rendered.len() as u64));
    bytes.extend_from_slice(core);
    bytes.extend_from_slice(rendered);
    let checksum = xxhash_rust::xxh3::xxh3_64(&bytes);
    bytes.extend_from_slice(&checksum.to_le_bytes());
    bytes
}

/// Bytes read and hashed at a time by [`Hashing::of_reader`].
const CHUNK: usize = 4 << 20;

/// Bytes of a map hashed, then dropped from the process, at a time by [`Sums::of_map`]: a
/// multiple of the page size.
const WINDOW: usize = 4 << 20;

/// The file's checksum and its content hash, from one pass over the file.
pub(super) struct Sums {
    /// XXH3-64 of everything before the checksum (the file's last 8 bytes).
    pub(super) checksum: u64,
    /// [`crate::write::content_hash`] of the whole file (what the build's manifest records).
    pub(super) content: String,
}

/// XXH3 over the bytes before the checksum. XXH3's 64- and 128-bit hashes share their state
/// and differ only in the last step, and the checksum is the file's last bytes: so the
/// state that gives the checksum, fed those 8 bytes, gives the content hash of the whole
/// file, and a file is hashed once, not twice (issue 24: the two hashes were most of the
/// search server's start at 100,000 services).
struct Hashing {
    state: xxhash_rust::xxh3::Xxh3,
}

impl Hashing {
    fn new() -> Hashing {
        Hashing { state: xxhash_rust::xxh3::Xxh3::new() }
    }

    fn update(&mut self, bytes: &[u8]) {
        self.state.update(bytes);
    }

    /// XXH3-64 of the bytes so far: what the file stores after them.
    fn checksum(&self) -> u64 {
        self.state.digest()
    }

    /// The checksum of the bytes so far, and the content hash of them followed by `tail`, the
    /// checksum as stored.
    fn finish(mut self, tail: &[u8]) -> Sums {
        let checksum = self.checksum();
        self.state.update(tail);
        Sums { checksum, content: format!("{:032x}", self.state.digest128()) }
    }

    /// The first `len` bytes of a file (or of anything read from its start), read a buffer at
    /// a time: the index being written, which is not mapped.
    fn of_reader<R: io::Read + io::Seek>(file: &mut R, len: usize) -> io::Result<Hashing> {
        file.seek(io::SeekFrom::Start(0))?;
        let mut hashing = Hashing::new();
        let mut buffer = vec![0; CHUNK.min(len)];
        let mut at = 0;
        while at < len {
            let chunk = &mut buffer[..CHUNK.min(len - at)];
            file.read_exact(chunk)?;
            hashing.update(chunk);
            at += chunk.len();
        }
        Ok(hashing)
    }
}

impl Sums {
    /// The sums of a file in memory, at least [`CHECKSUM_LEN`] bytes long.
    pub(super) fn of_bytes(bytes: &[u8]) -> Sums {
        let (checked, tail) = bytes.split_at(bytes.len() - CHECKSUM_LEN);
        let mut hashing = Hashing::new();
        hashing.update(checked);
        hashing.finish(tail)
    }

    /// The sums of a mapped index file (at least [`CHECKSUM_LEN`] bytes long), hashed in
    /// place (no copy into a buffer, which cost two thirds of loading a large index). Past
    /// `keep` (the core, which is decoded while this runs), each window of the map is dropped
    /// from the process once hashed (`MADV_DONTNEED`), so that checking the file does not make
    /// it resident: the pages stay in the page cache, and the rendered results are read from
    /// the map again when requests ask for them.
    pub(super) fn of_map(map: &memmap2::Mmap, keep: usize) -> Sums {
        let checked = map.len() - CHECKSUM_LEN;
        let mut hashing = Hashing::new();
        let mut at = 0;
        while at < checked {
            let end = (at + WINDOW).min(checked);
            hashing.update(&map[at..end]);
            if at >= keep {
                // SAFETY: memmap2 asks that no borrow of the range be live while the kernel
                // replaces its pages. The window's slice ended on the line above; the only
                // other borrow while this runs is the core's, below `keep`; the rendered
                // results are read only once the index is open. And the map is a shared,
                // read-only map of a file nobody writes into (see `SearchIndex::read`): after
                // MADV_DONTNEED a read maps the same bytes from the page cache again.
                let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, at, end - at) };
            }
            at = end;
        }
        hashing.finish(&map[checked..])
    }
}

/// Replaces the file at `path` atomically ([`crate::write::replace_file`]).
pub(super) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), IndexError> {
    crate::write::replace_file(path, bytes).map_err(|source| IndexError::Write { path: path.to_path_buf(), source })
}

/// Checks the magic bytes, the version and the lengths; returns the core's length and the
/// stored checksum (the file's last 8 bytes).
pub(super) fn check_header(bytes: &[u8], path: &Path) -> Result<(usize, u64), IndexError> {
    let path = path.to_path_buf();
    if bytes.len() < MAGIC.len() || bytes[..MAGIC.len()] != MAGIC {
        return Err(IndexError::BadMagic { path });
    }
    let corrupt = |reason: Damage| IndexError::Corrupt { path: path.clone(), reason };
    let u32_at = |at: usize| bytes.get(at..at + 4).and_then(|v| <[u8; 4]>::try_from(v).ok()).map(u32::from_le_bytes);
    let u64_at = |at: usize| bytes.get(at..at + 8).and_then(|v| <[u8; 8]>::try_from(v).ok()).map(u64::from_le_bytes);
    let version = u32_at(8).ok_or_else(|| corrupt(Damage::HeaderCutShort))?;
    if version != FORMAT_VERSION {
        return Err(IndexError::UnsupportedVersion { path, found: version, supported: FORMAT_VERSION });
    }
    let (Some(core_len), Some(rendered_len)) = (u64_at(16), u64_at(24)) else {
        return Err(corrupt(Damage::HeaderCutShort));
    };
    let expected =
        (HEADER_LEN as u64 + CHECKSUM_LEN as u64).checked_add(core_len).and_then(|n| n.checked_add(rendered_len));
    if expected != Some(bytes.len() as u64) {
        return Err(corrupt(Damage::Length { actual: bytes.len() as u64, announced: expected }));
    }
    let checksum = &bytes[bytes.len() - CHECKSUM_LEN..];
    Ok((core_len as usize, u64::from_le_bytes(checksum.try_into().expect("8 bytes"))))
}

/// Every reference a request could follow points inside the core.
pub(super) fn check_core(core: &Core) -> Result<(), Damage> {
    let reference = &core.reference;
    let (nodes, areas, locations) = (reference.categories.len(), reference.areas.len(), core.location_points.len());
    let stored = &core.services;
    let services = stored.len();
    if services > u32::MAX as usize || locations > u32::MAX as usize {
        return Err(Damage::TooManyRecords);
    }
    for (check, keys) in [
        (stored.areas.check(), stored.areas.keys()),
        (stored.categories.check(), stored.categories.keys()),
        (stored.locations.check(), stored.locations.keys()),
    ] {
        check?;
        if keys != services {
            return Err(Damage::ServiceTables);
        }
    }
    if stored.categories.items().iter().any(|&c| c as usize >= nodes)
        || stored.areas.items().iter().any(|&a| a as usize >= areas)
        || stored.locations.items().iter().any(|&l| l as usize >= locations)
    {
        return Err(Damage::DanglingReference);
    }
    // A permutation: each rank below the number of services, and none twice.
    let mut seen = vec![false; services];
    for &r in &stored.name_rank {
        match seen.get_mut(r as usize) {
            Some(slot) if !*slot => *slot = true,
            _ => return Err(Damage::NameRanks),
        }
    }
    core.postcodes.check(areas)?;
    core.outcodes.check(areas)?;
    if reference.areas.iter().any(|a| a.kind as usize >= AreaKind::ALL.len()) {
        return Err(Damage::AreaKind);
    }
    for (ix, n) in reference.categories.iter().enumerate() {
        if n.parent.is_some_and(|p| p as usize >= nodes)
            || n.children.iter().any(|&c| c as usize >= nodes)
            || (n.subtree_end as usize) <= ix
            || n.subtree_end as usize > nodes
        {
            return Err(Damage::CategoryNode(ix));
        }
    }
    if reference.roots.iter().any(|&r| r as usize >= nodes) {
        return Err(Damage::CategoryRoot);
    }
    core.text.check(services)
}

/// The rendered section: `4 × services + 1` ascending offsets from 0 to the length of the
/// JSON after them.
pub(super) fn check_rendered(rendered: &[u8], services: usize) -> Result<(), Damage> {
    let table = 8 * (super::markup::RENDERED_KINDS * services + 1);
    let Some(text_len) = rendered.len().checked_sub(table) else {
        return Err(Damage::RenderedTable);
    };
    let mut previous = 0u64;
    for (k, chunk) in rendered[..table].chunks_exact(8).enumerate() {
        let offset = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        if (k == 0 && offset != 0) || offset < previous {
            return Err(Damage::RenderedOffset(k));
        }
        previous = offset;
    }
    if previous != text_len as u64 {
        return Err(Damage::RenderedFill);
    }
    Ok(())
}
