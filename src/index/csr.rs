//! A table of lists in two flat vectors (compressed sparse rows): how the index stores
//! one list per service or per location without a vector each.

use serde::{Deserialize, Serialize};

use super::damage::Damage;
use super::packed::{self, Packed};

/// Offsets into a flat array: the items of key `k` are `items[start[k]..start[k + 1]]`.
/// Stored as is in the index's core: two vectors decode in one go, where a vector per key
/// would cost an allocation each at start-up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(serialize = "T: Packed", deserialize = "T: Packed"))]
pub(crate) struct Csr<T> {
    #[serde(with = "packed")]
    pub(super) start: Vec<u32>,
    #[serde(with = "packed")]
    pub(super) items: Vec<T>,
}

impl<T> Default for Csr<T> {
    fn default() -> Csr<T> {
        Csr { start: vec![0], items: Vec::new() }
    }
}

impl<T: Copy> Csr<T> {
    /// Builds from each key's items, in key order.
    pub(crate) fn from_lists<L: IntoIterator<Item = T>>(lists: impl Iterator<Item = L>) -> Csr<T> {
        let mut csr = Csr::default();
        for list in lists {
            csr.items.extend(list);
            csr.start.push(csr.items.len() as u32);
        }
        csr
    }
}

impl<T> Csr<T> {
    /// Number of keys.
    pub(crate) fn keys(&self) -> usize {
        self.start.len().saturating_sub(1)
    }

    /// Every item, key after key.
    pub(crate) fn items(&self) -> &[T] {
        &self.items
    }

    /// Whether the offsets start at 0, never go back and end at the number of items: what
    /// makes [`Csr::get`] cut every key's items out of `items`.
    pub(crate) fn check(&self) -> Result<(), Damage> {
        if self.start.first() != Some(&0)
            || self.start.windows(2).any(|w| w[0] > w[1])
            || self.start.last().map(|&e| e as usize) != Some(self.items.len())
        {
            return Err(Damage::Offsets);
        }
        Ok(())
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
