//! Sets of services as bitsets: one bit per service, so that the services of a postcode's
//! areas, of a category subtree or of a `q` are combined with a few thousand word
//! operations, and `count` is a population count (issue 12).
//!
//! This module owns the set type only; which sets exist is `index`, how they combine for a
//! request is `search::matches`.

use super::ServiceNo;

/// A set of services, one bit each, over a fixed number of services.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ServiceSet {
    words: Vec<u64>,
}

impl ServiceSet {
    /// The empty set over `services` services.
    pub(crate) fn empty(services: usize) -> ServiceSet {
        ServiceSet { words: vec![0; services.div_ceil(64)] }
    }

    /// The set of the given services (each below `services`).
    pub(crate) fn of(services: usize, members: impl IntoIterator<Item = ServiceNo>) -> ServiceSet {
        let mut set = ServiceSet::empty(services);
        for ix in members {
            set.insert(ix);
        }
        set
    }

    /// The set's words, 64 services each, service `i` at bit `i % 64` of word `i / 64`.
    pub(crate) fn words(&self) -> &[u64] {
        &self.words
    }

    /// Adds `ix`.
    #[inline]
    pub(crate) fn insert(&mut self, ix: ServiceNo) {
        if let Some(word) = self.words.get_mut(ix as usize / 64) {
            *word |= 1 << (ix % 64);
        }
    }

    /// Removes `ix`; whether it was there.
    #[inline]
    pub(crate) fn remove(&mut self, ix: ServiceNo) -> bool {
        match self.words.get_mut(ix as usize / 64) {
            Some(word) => {
                let bit = 1 << (ix % 64);
                let was = *word & bit != 0;
                *word &= !bit;
                was
            }
            None => false,
        }
    }

    /// Whether `ix` is in the set.
    #[inline]
    pub(crate) fn contains(&self, ix: ServiceNo) -> bool {
        self.words.get(ix as usize / 64).is_some_and(|w| w & (1 << (ix % 64)) != 0)
    }

    /// Adds every member of `other`.
    pub(crate) fn union_with(&mut self, other: &[u64]) {
        for (a, b) in self.words.iter_mut().zip(other) {
            *a |= b;
        }
    }

    /// Keeps only the members of `other`.
    pub(crate) fn intersect_with(&mut self, other: &[u64]) {
        for (n, a) in self.words.iter_mut().enumerate() {
            *a &= other.get(n).copied().unwrap_or(0);
        }
    }

    /// Removes every member of `other`.
    pub(crate) fn subtract(&mut self, other: &[u64]) {
        for (a, b) in self.words.iter_mut().zip(other) {
            *a &= !b;
        }
    }

    /// Number of members.
    pub(crate) fn len(&self) -> usize {
        count_ones_within(&self.words, None)
    }

    /// Whether the set has no member.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Number of members that are also in `other`.
    pub(crate) fn len_within(&self, other: &[u64]) -> usize {
        count_ones_within(&self.words, Some(other))
    }

    /// Members, ascending.
    #[cfg(test)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = ServiceNo> + '_ {
        ones(&self.words)
    }
}

/// Adds services, as [`ServiceSet::insert`] does each (those past the set's words are left
/// out). Never inlined: inside the radius scan, whose registers are all taken, the loop
/// reloaded the set's address and length from the stack for every member (issue 24).
impl Extend<ServiceNo> for ServiceSet {
    #[inline(never)]
    fn extend<I: IntoIterator<Item = ServiceNo>>(&mut self, members: I) {
        let words = self.words.as_mut_slice();
        for ix in members {
            if let Some(word) = words.get_mut(ix as usize / 64) {
                *word |= 1 << (ix % 64);
            }
        }
    }
}

/// The ones of `words` (and of `mask`, when given), with the CPU's POPCNT instruction when it
/// has one. The baseline x86-64 target has none, so `count_ones` compiles to a dozen
/// operations a word; over the 1,500 words of a set of 100,000 services, twice a search,
/// that was measurable (issue 24: with POPCNT, 9 % less CPU a search in an A/B under wrk).
fn count_ones_within(words: &[u64], mask: Option<&[u64]>) -> usize {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has POPCNT, the one feature the function is compiled for.
        return unsafe { count_ones_popcnt(words, mask) };
    }
    count_ones_portable(words, mask)
}

/// [`count_ones_within`]'s count; inlined into each caller, which compiles it for its CPU.
#[inline(always)]
fn count_ones_portable(words: &[u64], mask: Option<&[u64]>) -> usize {
    match mask {
        None => words.iter().map(|w| w.count_ones() as usize).sum(),
        Some(mask) => words.iter().zip(mask).map(|(a, b)| (a & b).count_ones() as usize).sum(),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn count_ones_popcnt(words: &[u64], mask: Option<&[u64]>) -> usize {
    count_ones_portable(words, mask)
}

/// Members of the set whose words are `words`, ascending.
#[cfg(test)]
pub(crate) fn ones(words: &[u64]) -> impl Iterator<Item = ServiceNo> + '_ {
    members(words.iter().copied())
}

/// Members of both sets (words `a` and `b`), ascending.
pub(crate) fn ones_within<'a>(a: &'a [u64], b: &'a [u64]) -> impl Iterator<Item = ServiceNo> + 'a {
    members(a.iter().zip(b).map(|(&x, &y)| x & y))
}

/// The members a sequence of 64-bit words stands for: bit `b` of word `n` is `64n + b`.
fn members(words: impl Iterator<Item = u64>) -> impl Iterator<Item = ServiceNo> {
    words.enumerate().flat_map(|(n, word)| {
        let mut rest = word;
        std::iter::from_fn(move || {
            if rest == 0 {
                return None;
            }
            let bit = rest.trailing_zeros();
            rest &= rest - 1;
            Some(n as ServiceNo * 64 + bit)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extending_adds_as_inserting_does() {
        let mut set = ServiceSet::of(200, [7]);
        set.extend([0, 64, 64, 199, 256, 4096]);
        assert_eq!(set.iter().collect::<Vec<_>>(), [0, 7, 64, 199]);
        let mut one_by_one = ServiceSet::of(200, [7]);
        for ix in [0, 64, 64, 199, 256, 4096] {
            one_by_one.insert(ix);
        }
        assert_eq!(set, one_by_one);
    }

    #[test]
    fn set_operations_agree_with_a_plain_set() {
        let a = ServiceSet::of(200, [0, 5, 63, 64, 130, 199]);
        let b = ServiceSet::of(200, [5, 64, 65, 199]);
        assert_eq!(a.iter().collect::<Vec<_>>(), [0, 5, 63, 64, 130, 199]);
        assert_eq!((a.len(), a.len_within(b.words())), (6, 3));
        let mut u = a.clone();
        u.union_with(b.words());
        assert_eq!(u.iter().collect::<Vec<_>>(), [0, 5, 63, 64, 65, 130, 199]);
        let mut i = a.clone();
        i.intersect_with(b.words());
        assert_eq!(i.iter().collect::<Vec<_>>(), [5, 64, 199]);
        let mut d = a.clone();
        d.subtract(b.words());
        assert_eq!(d.iter().collect::<Vec<_>>(), [0, 63, 130]);
        assert!(d.remove(63) && !d.remove(63) && !d.contains(63) && d.contains(130));
        assert!(ServiceSet::empty(10).is_empty() && !a.is_empty());
        // Out of range: ignored, never a panic.
        let mut e = ServiceSet::empty(10);
        e.insert(1000);
        assert!(e.is_empty() && !e.contains(1000));
    }

    proptest::proptest! {
        #[test]
        fn counts_agree_with_the_members(
            a in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..40),
            b in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..40),
        ) {
            // Whichever count this CPU runs (POPCNT or not), and the one it does not.
            let set = ServiceSet { words: a.clone() };
            proptest::prop_assert_eq!(set.len(), ones(&a).count());
            let both = a.iter().zip(&b).map(|(x, y)| x & y).collect::<Vec<u64>>();
            proptest::prop_assert_eq!(set.len_within(&b), ones(&both).count());
            proptest::prop_assert_eq!(count_ones_portable(&a, Some(&b)), ones(&both).count());
        }
    }
}
