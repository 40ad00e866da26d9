//! The inverted text index behind `q`: words, stems, fuzzy terms (behaviour.md, Search 4).
//!
//! This module owns what a "word" is and when a query word matches a word of a service; it
//! does not decide the postcode rule or the filters (`search::matches`) nor the order
//! (`search::page`).
//!
//! # Words
//! Text is folded to ASCII with `deunicode` (so `Còmhla` and `comhla` are the same word),
//! lower-cased, and cut into runs of letters, digits and inner apostrophes (`women's` is one
//! word; apostrophes at either end are dropped). The stem of a word is its English Snowball
//! stem (rust-stemmers).
//!
//! # Matching
//! A query word `u` matches a service's word `w` when they have the same stem, or when `u`
//! and `w` themselves are at most `k` edits apart, where `k` depends on the number of
//! characters of `u` (after folding): 3 or fewer → 0, 4 to 6 → 1, 7 or more → 2
//! (behaviour.md, Search 4). An edit is an insertion, deletion or substitution of one
//! character, or a swap of two adjacent ones (optimal string alignment distance, like the
//! "fuzzy transpositions" of common search engines). So `walking` matches `walks` (same
//! stem), `helth` matches `health` (one edit), `emergancy` matches `emergency` (two edits),
//! and `tea` matches `teas` (same stem) but never `tee`. Typos are measured on the words as
//! written, not on stems: stems are short, and allowing the long word's edits on its short
//! stem would let `walking` match `talk`.
//!
//! # Layout
//! The stored part (`TextIndex`) is a sorted dictionary of raw words, each with its stem's
//! number and a posting list of `(service, fields)` sorted by service, plus the sorted stems.
//! The stem → words table and the length buckets of the fuzzy scan are rebuilt on load
//! (`TextLookup`).

mod words;

use serde::{Deserialize, Serialize};

use crate::index::ServiceNo;
use crate::index::damage::Damage;
use crate::model::Directory;
pub(crate) use words::{FIELD_CATEGORY, FIELD_DESCRIPTION, FIELD_NAME, allowance, field_weight_halves, osa_within};
pub use words::{STOP_WORDS, query_words, stem, words};

/// Many strings in one buffer: compact to store and quick to load.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Strings {
    bytes: String,
    #[serde(with = "crate::index::packed")]
    ends: Vec<u32>,
}

impl Strings {
    fn push(&mut self, s: &str) {
        self.bytes.push_str(s);
        self.ends.push(self.bytes.len() as u32);
    }

    /// Number of strings.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// The `i`-th string ("" when out of range; the checks on load rule that out).
    pub(crate) fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends.get(i - 1).copied().unwrap_or(0) as usize };
        let end = self.ends.get(i).copied().unwrap_or(0) as usize;
        self.bytes.get(start..end).unwrap_or("")
    }

    /// Binary search in a sorted list.
    fn find(&self, s: &str) -> Option<usize> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.get(mid).cmp(s) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    fn check(&self) -> Result<(), Damage> {
        let mut start = 0usize;
        for &end in &self.ends {
            let end = end as usize;
            if end < start || self.bytes.get(start..end).is_none() {
                return Err(Damage::StringOffsets);
            }
            start = end;
        }
        if start != self.bytes.len() {
            return Err(Damage::StringTrailing);
        }
        Ok(())
    }
}

/// The stored inverted index: every distinct word of every service's name, description and
/// category names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TextIndex {
    /// Distinct words, sorted.
    terms: Strings,
    /// For each word, the number of its stem in `stems`.
    #[serde(with = "crate::index::packed")]
    term_stem: Vec<u32>,
    /// Distinct stems, sorted.
    stems: Strings,
    /// Posting list of word `t`: `post_service[post_start[t]..post_start[t + 1]]`.
    #[serde(with = "crate::index::packed")]
    post_start: Vec<u32>,
    /// Services, ascending within each list.
    #[serde(with = "crate::index::packed")]
    post_service: Vec<ServiceNo>,
    /// Field bits ([`FIELD_NAME`], ...) of the word in that service.
    #[serde(with = "crate::index::packed")]
    post_fields: Vec<u8>,
}

impl TextIndex {
    /// Indexes every service of `dir`.
    pub(crate) fn build(dir: &Directory) -> TextIndex {
        use std::collections::HashMap;
        let mut postings: HashMap<String, Vec<(ServiceNo, u8)>> = HashMap::new();
        let mut per_service: Vec<(String, u8)> = Vec::new();
        for (ix, service) in dir.services.iter().enumerate() {
            per_service.clear();
            per_service.extend(words(&service.name).into_iter().map(|w| (w, FIELD_NAME)));
            per_service.extend(words(&service.description).into_iter().map(|w| (w, FIELD_DESCRIPTION)));
            for &cat in &service.categories {
                if let Some(node) = dir.categories.nodes.get(cat as usize) {
                    per_service.extend(words(&node.name).into_iter().map(|w| (w, FIELD_CATEGORY)));
                }
            }
            per_service.sort_unstable();
            let mut i = 0;
            while i < per_service.len() {
                let mut fields = per_service[i].1;
                let mut j = i + 1;
                while j < per_service.len() && per_service[j].0 == per_service[i].0 {
                    fields |= per_service[j].1;
                    j += 1;
                }
                let word = std::mem::take(&mut per_service[i].0);
                postings.entry(word).or_default().push((ix as ServiceNo, fields));
                i = j;
            }
        }
        let mut sorted: Vec<(String, Vec<(ServiceNo, u8)>)> = postings.into_iter().collect();
        sorted.sort_unstable_by(|a, b| a.0.cmp(&b.0));

        let term_stems: Vec<String> = sorted.iter().map(|(w, _)| stem(w).into_owned()).collect();
        let mut stem_list: Vec<&str> = term_stems.iter().map(String::as_str).collect();
        stem_list.sort_unstable();
        stem_list.dedup();
        let mut stems = Strings::default();
        for s in &stem_list {
            stems.push(s);
        }

        let mut index = TextIndex { stems, ..TextIndex::default() };
        index.post_start.push(0);
        for ((word, list), word_stem) in sorted.iter().zip(&term_stems) {
            index.terms.push(word);
            let stem_no = stem_list.binary_search(&word_stem.as_str()).unwrap_or(0);
            index.term_stem.push(stem_no as u32);
            for &(service, fields) in list {
                index.post_service.push(service);
                index.post_fields.push(fields);
            }
            index.post_start.push(index.post_service.len() as u32);
        }
        index
    }

    /// Number of distinct words.
    pub(crate) fn term_count(&self) -> usize {
        self.terms.len()
    }

    /// Checks the invariants lookups rely on, so that a damaged file cannot cause a panic
    /// while answering a request. `services` is the number of services of the directory.
    pub(crate) fn check(&self, services: usize) -> Result<(), Damage> {
        self.terms.check()?;
        self.stems.check()?;
        let terms = self.terms.len();
        if self.term_stem.len() != terms || self.post_start.len() != terms + 1 {
            return Err(Damage::TextTables);
        }
        if self.term_stem.iter().any(|&s| s as usize >= self.stems.len()) {
            return Err(Damage::TextStem);
        }
        if self.post_fields.len() != self.post_service.len()
            || self.post_start.first() != Some(&0)
            || self.post_start.last().map(|&l| l as usize) != Some(self.post_service.len())
            || self.post_start.windows(2).any(|w| w[0] > w[1])
        {
            return Err(Damage::PostingOffsets);
        }
        for t in 0..terms {
            let list = &self.post_service[self.post_start[t] as usize..self.post_start[t + 1] as usize];
            if list.windows(2).any(|w| w[0] >= w[1]) || list.last().is_some_and(|&s| s as usize >= services) {
                return Err(Damage::PostingList);
            }
        }
        Ok(())
    }
}

/// A [`TextIndex`] with the lookup tables rebuilt on load: stem → words, and words and
/// stems bucketed by length for the fuzzy scans.
#[derive(Debug, Clone, Default)]
pub(crate) struct TextLookup {
    stored: TextIndex,
    /// Words of stem `s`: `stem_term[stem_term_start[s]..stem_term_start[s + 1]]`.
    stem_term_start: Vec<u32>,
    stem_term: Vec<u32>,
    terms_by_len: LengthBuckets,
}

/// String numbers grouped by byte length: those of length `l` are
/// `ids[start[l]..start[l + 1]]`, each with its [`letter_mask`] in `masks`.
#[derive(Debug, Clone, Default)]
struct LengthBuckets {
    start: Vec<u32>,
    ids: Vec<u32>,
    masks: Vec<u32>,
}

/// The set of characters of a word, as bits (letters one each, digits and the apostrophe
/// sharing the rest). One edit changes at most two bits (a substitution removes one
/// character and adds one), so two words whose masks differ in more than `2k` bits are more
/// than `k` edits apart: a cheap test that skips most of the fuzzy scan.
pub(crate) fn letter_mask(word: &[u8]) -> u32 {
    word.iter().fold(0, |mask, &b| {
        mask | match b {
            b'a'..=b'z' => 1 << (b - b'a'),
            b'0'..=b'9' => 1 << (26 + (b - b'0') % 5),
            _ => 1 << 31,
        }
    })
}

impl LengthBuckets {
    fn build(strings: &Strings) -> LengthBuckets {
        let max = (0..strings.len()).map(|i| strings.get(i).len()).max().unwrap_or(0);
        let mut counts = vec![0u32; max + 2];
        for i in 0..strings.len() {
            counts[strings.get(i).len() + 1] += 1;
        }
        for l in 1..counts.len() {
            counts[l] += counts[l - 1];
        }
        let mut fill = counts.clone();
        let mut ids = vec![0u32; strings.len()];
        let mut masks = vec![0u32; strings.len()];
        for i in 0..strings.len() {
            let word = strings.get(i);
            let slot = &mut fill[word.len()];
            ids[*slot as usize] = i as u32;
            masks[*slot as usize] = letter_mask(word.as_bytes());
            *slot += 1;
        }
        LengthBuckets { start: counts, ids, masks }
    }

    /// Positions (in `ids` and `masks`) of the strings whose length is within `k` of `len`.
    fn around(&self, len: usize, k: usize) -> std::ops::Range<usize> {
        let last = self.start.len().saturating_sub(2);
        let lo = len.saturating_sub(k).min(last + 1);
        let hi = (len + k).min(last);
        if lo > hi {
            return 0..0;
        }
        self.start[lo] as usize..self.start[hi + 1] as usize
    }
}

impl TextLookup {
    /// Rebuilds the lookup tables of a checked index.
    pub(crate) fn new(stored: TextIndex) -> TextLookup {
        let mut counts = vec![0u32; stored.stems.len() + 1];
        for &s in &stored.term_stem {
            counts[s as usize + 1] += 1;
        }
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        let mut fill = counts.clone();
        let mut stem_term = vec![0u32; stored.term_stem.len()];
        for (t, &s) in stored.term_stem.iter().enumerate() {
            stem_term[fill[s as usize] as usize] = t as u32;
            fill[s as usize] += 1;
        }
        TextLookup { terms_by_len: LengthBuckets::build(&stored.terms), stem_term_start: counts, stem_term, stored }
    }

    /// The stored part, for writing.
    pub(crate) fn stored(&self) -> &TextIndex {
        &self.stored
    }

    fn terms_of_stem(&self, s: usize) -> &[u32] {
        &self.stem_term[self.stem_term_start[s] as usize..self.stem_term_start[s + 1] as usize]
    }

    /// Numbers of the indexed words that the query word `word` (one item of [`words`])
    /// matches, ascending.
    pub(crate) fn matching_terms(&self, word: &str) -> Vec<u32> {
        let k = allowance(word.chars().count());
        let mut found = Vec::new();
        if let Some(s) = self.stored.stems.find(&stem(word)) {
            found.extend_from_slice(self.terms_of_stem(s));
        }
        if k > 0 {
            let mask = letter_mask(word.as_bytes());
            let buckets = &self.terms_by_len;
            for pos in buckets.around(word.len(), k) {
                if (buckets.masks[pos] ^ mask).count_ones() as usize > 2 * k {
                    continue;
                }
                let t = buckets.ids[pos];
                if osa_within(word.as_bytes(), self.stored.terms.get(t as usize).as_bytes(), k) {
                    found.push(t);
                }
            }
        }
        found.sort_unstable();
        found.dedup();
        found
    }

    /// Services where `word` matches, ascending, each with the fields it matches in.
    #[cfg(test)]
    pub(crate) fn lookup(&self, word: &str) -> Vec<(ServiceNo, u8)> {
        self.lookup_among(word, |_| true)
    }

    /// [`TextLookup::lookup`] of only the services `keep` says yes to: filtered before the
    /// posting lists of the word's terms are merged, so that a common word (whose terms
    /// list much of the directory) costs what the services in question cost.
    pub(crate) fn lookup_among(&self, word: &str, keep: impl Fn(ServiceNo) -> bool) -> Vec<(ServiceNo, u8)> {
        let terms = self.matching_terms(word);
        let mut out: Vec<(ServiceNo, u8)> = Vec::new();
        for &t in &terms {
            let range = self.stored.post_start[t as usize] as usize..self.stored.post_start[t as usize + 1] as usize;
            out.extend(
                self.stored.post_service[range.clone()]
                    .iter()
                    .copied()
                    .zip(self.stored.post_fields[range].iter().copied())
                    .filter(|&(service, _)| keep(service)),
            );
        }
        if terms.len() > 1 {
            out.sort_unstable_by_key(|&(service, _)| service);
            out.dedup_by(|later, kept| {
                if later.0 == kept.0 {
                    kept.1 |= later.1;
                    true
                } else {
                    false
                }
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn words_fold_and_split() {
        assert_eq!(words("Café Còmhla: Women's  WALKING-group!"), ["cafe", "comhla", "women's", "walking", "group"]);
        assert_eq!(words("'quoted' 24/7 -- ''"), ["quoted", "24", "7"]);
        assert_eq!(query_words("food Food bank food"), ["food", "bank"]);
        assert!(words("  ...  ").is_empty());
    }

    #[test]
    fn stop_words_are_dropped_from_queries() {
        assert!(STOP_WORDS.is_sorted(), "binary search needs them sorted");
        assert_eq!(query_words("help for carers"), ["help", "carers"]);
        assert_eq!(query_words("The Friends of THE Earth"), ["friends", "earth"]);
        assert!(query_words("to be or not to be").is_empty(), "nothing left: no q");
        assert!(query_words(" , . ").is_empty());
        // Only whole words: "into" is a stop word, "intouch" and "it's" are not.
        assert_eq!(query_words("intouch it's"), ["intouch", "it's"]);
    }

    #[test]
    fn allowances() {
        assert_eq!([1, 3, 4, 6, 7, 12].map(allowance), [0, 0, 1, 1, 2, 2]);
    }

    #[test]
    fn stems_used_by_tests() {
        assert_eq!(stem("walks"), "walk");
        assert_eq!(stem("walking"), "walk");
        assert_eq!(stem("women's"), "women");
        assert_eq!(stem("counselling"), "counsel");
    }

    #[test]
    fn bounded_osa() {
        assert!(osa_within(b"health", b"helth", 1));
        assert!(osa_within(b"walks", b"wlaks", 1), "a swap is one edit");
        assert!(!osa_within(b"walks", b"wlkas", 1));
        assert!(osa_within(b"befriending", b"befreindng", 2));
        assert!(!osa_within(b"cat", b"car", 0));
        assert!(osa_within(b"", b"ab", 2));
        assert!(!osa_within(b"", b"abc", 2));
    }

    proptest! {
        #[test]
        fn bounded_osa_agrees_with_strsim(a in "[a-e]{0,14}", b in "[a-e]{0,14}", k in 0usize..7) {
            prop_assert_eq!(osa_within(a.as_bytes(), b.as_bytes(), k), strsim::osa_distance(&a, &b) <= k);
        }

        #[test]
        fn long_words_agree_with_strsim(a in "[ab]{60,70}", b in "[ab]{60,70}") {
            prop_assert_eq!(osa_within(a.as_bytes(), b.as_bytes(), 2), strsim::osa_distance(&a, &b) <= 2);
        }
    }

    #[test]
    fn length_buckets_cover_every_nearby_length() {
        let mut s = Strings::default();
        for w in ["a", "bb", "cc", "dddd", "eeeeeee"] {
            s.push(w);
        }
        let b = LengthBuckets::build(&s);
        let ids = |len, k| {
            let mut ids = b.ids[b.around(len, k)].to_vec();
            ids.sort_unstable();
            ids
        };
        assert_eq!(ids(3, 1), [1, 2, 3]);
        assert_eq!(ids(9, 2), [4]);
        assert!(ids(20, 2).is_empty());
        assert!(ids(0, 0).is_empty());
    }

    proptest! {
        #[test]
        fn letter_masks_never_reject_a_match(a in "[a-f0-9']{0,10}", b in "[a-f0-9']{0,10}", k in 1usize..3) {
            if osa_within(a.as_bytes(), b.as_bytes(), k) {
                prop_assert!((letter_mask(a.as_bytes()) ^ letter_mask(b.as_bytes())).count_ones() as usize <= 2 * k);
            }
        }
    }
}

#[cfg(test)]
mod lookup_tests {
    use super::*;

    #[test]
    fn lookups_give_services_and_fields() {
        let dir = crate::test_support::directory::tiny();
        let lookup = TextLookup::new(TextIndex::build(&dir));
        // "walking": Walking Group's name and, by stem, its "walks"; Health Walks' name (by
        // stem) and description.
        let both = FIELD_NAME | FIELD_DESCRIPTION;
        assert_eq!(lookup.lookup("walking"), [(0, both), (1, both)]);
        assert_eq!(lookup.lookup("walks"), [(0, both), (1, both)]);
        // Category names: Outdoor Pursuits (Walking Group), Activity (Money Advice).
        assert_eq!(lookup.lookup("pursuit"), [(0, FIELD_CATEGORY)]);
        assert_eq!(lookup.lookup("activity"), [(2, FIELD_CATEGORY)]);
        // Typos: one edit at 5 letters, two at 7; none at 3.
        assert_eq!(lookup.lookup("helth"), [(1, FIELD_NAME | FIELD_DESCRIPTION)]);
        assert_eq!(lookup.lookup("adivce"), [(2, FIELD_NAME)]);
        assert_eq!(lookup.lookup("acitvty"), [(2, FIELD_CATEGORY)], "7 letters, two edits");
        assert!(lookup.lookup("actvty").is_empty(), "6 letters, two edits");
        assert!(lookup.lookup("dbt").is_empty());
        assert!(lookup.lookup("xyzzy").is_empty());
    }

    #[test]
    fn relevance_weights() {
        assert_eq!(field_weight_halves(FIELD_NAME), 4);
        assert_eq!(field_weight_halves(FIELD_DESCRIPTION), 3);
        assert_eq!(field_weight_halves(FIELD_CATEGORY), 2);
        assert_eq!(field_weight_halves(FIELD_NAME | FIELD_DESCRIPTION | FIELD_CATEGORY), 9);
    }
}
