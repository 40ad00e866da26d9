//! Words as the text index and the query see them (the module above says what a word is
//! and when two match): the fields a word can come from and their weights, folding and
//! stemming, the stop words of a query, and the typo allowance with its edit distance.

use std::borrow::Cow;
use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};

/// Field bit: the service's name (weight 2).
pub(crate) const FIELD_NAME: u8 = 1;
/// Field bit: the service's description (weight 1.5).
pub(crate) const FIELD_DESCRIPTION: u8 = 2;
/// Field bit: the name of a category the service is tagged with (weight 1).
pub(crate) const FIELD_CATEGORY: u8 = 4;

/// Relevance of one query word for a service, in half points: 2 for a name match, 1.5 for
/// a description match, 1 for a category-name match, summed over the fields that match
/// (behaviour.md, Search 4). Half points keep relevance an exact integer.
pub(crate) fn field_weight_halves(fields: u8) -> u32 {
    let mut w = 0;
    if fields & FIELD_NAME != 0 {
        w += 4;
    }
    if fields & FIELD_DESCRIPTION != 0 {
        w += 3;
    }
    if fields & FIELD_CATEGORY != 0 {
        w += 2;
    }
    w
}

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// The English stem of a lower-case word.
pub fn stem(word: &str) -> Cow<'_, str> {
    STEMMER.stem(word)
}

/// The words of `text`, in order (see the module documentation), duplicates kept.
pub fn words(text: &str) -> Vec<String> {
    let folded = deunicode::deunicode(text);
    let mut out = Vec::new();
    let mut current = String::new();
    let mut flush = |current: &mut String| {
        let trimmed = current.trim_matches('\'');
        if !trimmed.is_empty() {
            out.push(trimmed.to_owned());
        }
        current.clear();
    };
    for c in folded.chars() {
        if c.is_ascii_alphanumeric() || c == '\'' {
            current.push(c.to_ascii_lowercase());
        } else {
            flush(&mut current);
        }
    }
    flush(&mut current);
    out
}

/// English stop words, dropped from a query before matching as the described service's
/// English analyser drops them (behaviour.md, Search 4). Sorted, for the binary search.
pub const STOP_WORDS: [&str; 33] = [
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not", "of",
    "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with",
];

/// Whether `word` (lower case) is one of the [`STOP_WORDS`].
pub(crate) fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// The distinct words of a query that are not stop words, in the order first given; empty
/// when nothing is left, and then the query has no `q` (behaviour.md, Search 4).
pub fn query_words(q: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    words(q).into_iter().filter(|w| !is_stop_word(w) && seen.insert(w.clone())).collect()
}

/// How many edits a query word of `chars` characters may be away (behaviour.md, Search 4).
pub(crate) fn allowance(chars: usize) -> usize {
    match chars {
        0..=3 => 0,
        4..=6 => 1,
        _ => 2,
    }
}

/// Whether the optimal-string-alignment distance between `a` and `b` is at most `k`.
/// Allocation-free for words up to 63 bytes; longer words fall back to `strsim`.
///
/// Only the band of cells within `k` of the diagonal is computed: a cell farther off is
/// at least its distance from the diagonal, so it counts as `k + 1`, and every value is
/// capped there (capping commutes with the recurrence's `+ 1` and `min`). The fuzzy
/// lookup calls this for every term of a nearby length (issue 24: a band of 5 cells a row
/// instead of the whole row).
pub(crate) fn osa_within(a: &[u8], b: &[u8], k: usize) -> bool {
    if a.len().abs_diff(b.len()) > k {
        return false;
    }
    if k == 0 {
        return a == b;
    }
    const MAX: usize = 63;
    if a.len() > MAX || b.len() > MAX {
        return match (std::str::from_utf8(a), std::str::from_utf8(b)) {
            (Ok(a), Ok(b)) => strsim::osa_distance(a, b) <= k,
            _ => false,
        };
    }
    let (m, n) = (a.len(), b.len());
    // No distance here exceeds 63, so a k past it changes nothing.
    let k = k.min(MAX);
    let cap = k as u8 + 1;
    let mut two_back = [cap; MAX + 1];
    let mut prev = [cap; MAX + 1];
    let mut cur = [cap; MAX + 1];
    for (j, slot) in prev.iter_mut().enumerate().take(n.min(k) + 1) {
        *slot = j as u8;
    }
    let mut prev_min = 0;
    for i in 1..=m {
        let (lo, hi) = (i.saturating_sub(k).max(1), (i + k).min(n));
        // Left of the band: the first column, or a cell off the band.
        cur[lo - 1] = if lo == 1 { (i as u8).min(cap) } else { cap };
        let mut row_min = cur[lo - 1];
        for j in lo..=hi {
            let cost = u8::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(two_back[j - 2] + 1);
            }
            cur[j] = d.min(cap);
            row_min = row_min.min(cur[j]);
        }
        // Right of the band, read by the next row.
        if hi < n {
            cur[hi + 1] = cap;
        }
        // Every later cell is at least the minimum of this row or the one before it (a
        // swap reaches two rows back), so stop once both exceed k.
        if row_min == cap && prev_min == cap {
            return false;
        }
        prev_min = row_min;
        std::mem::swap(&mut two_back, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[n] <= k as u8
}
