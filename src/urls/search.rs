//! Where a publication keeps its search index (behaviour.md, "A publication"): the index
//! named by its content hash and the pointer that names it, under a folder that holds
//! nothing else and that every front end answers with the 404 of an unknown path.

/// The folder of the tree that holds the index and its pointer, and nothing else.
pub(crate) const FOLDER: &str = "_search";
/// The pointer's path in the tree.
pub(crate) const POINTER: &str = "_search/current.json";

/// The path of the index with this content hash.
pub(crate) fn index_path(hash: &str) -> String {
    format!("{FOLDER}/{hash}.idx")
}
