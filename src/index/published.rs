//! The index as part of a publication (behaviour.md, "A publication: the files and the
//! search index as one unit"): `_search/<index>.idx`, named by its content hash, and the
//! pointer `_search/current.json` that names it. `svcdir build` writes both into the tree it
//! publishes, `svcdir publish` uploads them, and `svcdir-search --from` follows the pointer.

use serde::{Deserialize, Serialize};

pub(crate) use crate::urls::search::{POINTER, index_path};

/// The most bytes a pointer may have: it is three short fields, so anything larger is not a
/// pointer and is refused before it is read whole.
pub(crate) const MAX_POINTER_BYTES: u64 = 64 * 1024;

/// The contents of `_search/current.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Pointer {
    /// The index's content hash ([`crate::write::content_hash`], 32 hex digits).
    pub index: String,
    /// Where the index is, relative to the tree: `_search/<index>.idx`.
    pub path: String,
    /// Its size in bytes.
    pub bytes: u64,
}

/// Why a pointer cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PointerError {
    /// Not the pointer's JSON shape.
    #[error("{POINTER} is not a pointer to an index: {0}")]
    Shape(String),
    /// The pointer is larger than [`MAX_POINTER_BYTES`] (its announced size, or the bytes
    /// that came before reading stopped).
    #[error("{POINTER} is over the {MAX_POINTER_BYTES} bytes a pointer may have ({bytes} bytes)")]
    TooLarge {
        /// Its announced size, or how many bytes came before reading stopped.
        bytes: u64,
    },
    /// The hash is not 32 lowercase hex digits.
    #[error("{POINTER} names the index {0:?}, which is not a content hash (32 hex digits)")]
    BadHash(String),
    /// The path is not the one the hash gives.
    #[error("{POINTER} gives the path {path:?} for index {index}, where {expected:?} was expected")]
    BadPath {
        /// The path given.
        path: String,
        /// The hash given.
        index: String,
        /// The path of that hash.
        expected: String,
    },
}

impl Pointer {
    /// The pointer to an index with this content hash and size.
    pub(crate) fn to(hash: &str, bytes: u64) -> Pointer {
        Pointer { index: hash.to_owned(), path: index_path(hash), bytes }
    }

    /// The pointer's file: deterministic JSON, one line.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec(self).expect("three plain fields serialise");
        bytes.push(b'\n');
        bytes
    }

    /// Parses and checks a pointer: its hash is a content hash and its path the one that hash
    /// gives (so a pointer can never lead outside `_search/`).
    pub(crate) fn parse(bytes: &[u8]) -> Result<Pointer, PointerError> {
        let pointer: Pointer = serde_json::from_slice(bytes).map_err(|e| PointerError::Shape(e.to_string()))?;
        let hex = pointer.index.len() == 32
            && pointer.index.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !hex {
            return Err(PointerError::BadHash(pointer.index));
        }
        let expected = index_path(&pointer.index);
        if pointer.path != expected {
            return Err(PointerError::BadPath { path: pointer.path, index: pointer.index, expected });
        }
        Ok(pointer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pointer_round_trips_and_is_checked() {
        let hash = crate::write::content_hash(b"index");
        let pointer = Pointer::to(&hash, 5);
        let bytes = pointer.to_bytes();
        assert_eq!(
            String::from_utf8(bytes.clone()).unwrap(),
            format!("{{\"index\":\"{hash}\",\"path\":\"_search/{hash}.idx\",\"bytes\":5}}\n")
        );
        assert_eq!(Pointer::parse(&bytes).unwrap(), pointer);
        assert!(matches!(Pointer::parse(b"[]"), Err(PointerError::Shape(_))));
        let bad = br#"{"index":"../../etc/passwd","path":"_search/x.idx","bytes":1}"#;
        assert!(matches!(Pointer::parse(bad), Err(PointerError::BadHash(_))));
        let moved = format!(r#"{{"index":"{hash}","path":"elsewhere/{hash}.idx","bytes":1}}"#);
        assert!(matches!(Pointer::parse(moved.as_bytes()), Err(PointerError::BadPath { .. })));
    }
}
