//! The small random draws of the generator: ids, timestamps, slugs, optional values,
//! coordinates rounded as the dataset writes them, and the choice of a town.

use chrono::{DateTime, FixedOffset, SecondsFormat, Utc};
use rand::{Rng, RngCore};
use rand_chacha::ChaCha8Rng;
use uuid::Uuid;

use super::text;
use super::towns::towns;
use crate::input::records::Extensions;

/// A version-4 UUID from the seeded generator (never from the clock or the OS).
pub(super) fn random_uuid(rng: &mut ChaCha8Rng) -> Uuid {
    let mut bytes = [0u8; 16];
    rng.fill_bytes(&mut bytes);
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}

/// An RFC 3339 timestamp in 2019–2025 with microseconds: mostly `Z`, some `+00:00`, and
/// summer edits sometimes in British Summer Time (`+01:00`), as exports from different
/// systems write them.
pub(super) fn timestamp(rng: &mut ChaCha8Rng) -> String {
    const START: i64 = 1_546_300_800; // 2019-01-01T00:00:00Z
    const END: i64 = 1_767_225_600; // 2026-01-01T00:00:00Z
    let secs = rng.gen_range(START..END);
    let micros: u32 = rng.gen_range(0..1_000_000);
    let Some(utc) = DateTime::<Utc>::from_timestamp(secs, micros * 1000) else {
        // Unreachable for the range above; a fixed valid value keeps the type total.
        return "2019-01-01T00:00:00.000000Z".to_owned();
    };
    // Of 20: one in BST (summer only, so ~2.5 % overall), four `+00:00`, the rest `Z`.
    let style = rng.gen_range(0..20);
    let summer = (4..=9).contains(&chrono::Datelike::month(&utc));
    match (style, summer, FixedOffset::east_opt(3600)) {
        (0, true, Some(bst)) => utc.with_timezone(&bst).to_rfc3339_opts(SecondsFormat::Micros, false),
        (0..=4, _, _) => utc.to_rfc3339_opts(SecondsFormat::Micros, false),
        _ => utc.to_rfc3339_opts(SecondsFormat::Micros, true),
    }
}

/// Occasionally an `x_source` extension field, which the loader keeps out of every output.
pub(super) fn extension(rng: &mut ChaCha8Rng, probability: f64) -> Extensions {
    let mut extra = Extensions::new();
    if rng.gen_bool(probability) {
        let value = match rng.gen_range(0..3) {
            0 => serde_json::json!("aliss-import-2019"),
            1 => serde_json::json!("manual-entry"),
            _ => serde_json::json!({"system": "tsi-feed", "ref": rng.gen_range(1000..99_999)}),
        };
        extra.insert("x_source".to_owned(), value);
    }
    extra
}

/// A valid given slug: the folded name cut to fit, a hyphen and `key` in letters.
///
/// Letters, not digits, at the end: slugs the loader generates end in a number, so a given
/// slug can never take one of theirs, and distinct keys give distinct slugs.
pub(super) fn given_slug(name: &str, key: u64) -> String {
    let mut base = text::fold(name, "-");
    base.truncate(100);
    let base = base.trim_end_matches('-');
    let base = if base.is_empty() { "item" } else { base };
    format!("{base}-{}", letters(key))
}

/// `key` in bijective base 26 over `a`..`z`: 0 → `a`, 25 → `z`, 26 → `aa`.
pub(super) fn letters(mut key: u64) -> String {
    let mut out = Vec::new();
    loop {
        out.push(b'a' + (key % 26) as u8);
        if key < 26 {
            break;
        }
        key = key / 26 - 1;
    }
    out.reverse();
    String::from_utf8_lossy(&out).into_owned()
}

pub(super) fn maybe(rng: &mut ChaCha8Rng, probability: f64, value: impl FnOnce() -> String) -> String {
    if rng.gen_bool(probability) { value() } else { String::new() }
}

/// Six decimals: about 10 cm, what editors' map pickers store.
pub(super) fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// Draws a town by size, flattened a little (weight + 2) so that small towns get some
/// organisations too.
pub(super) struct TownChoice {
    /// Running totals of the weights, one per town.
    cumulative: Vec<u32>,
}

impl TownChoice {
    pub(super) fn new() -> Self {
        let cumulative = towns()
            .iter()
            .scan(0, |total, t| {
                *total += t.weight + 2;
                Some(*total)
            })
            .collect();
        TownChoice { cumulative }
    }

    pub(super) fn sample(&self, rng: &mut ChaCha8Rng) -> usize {
        let total = self.cumulative.last().copied().unwrap_or(1);
        let r = rng.gen_range(0..total);
        self.cumulative.partition_point(|&c| c <= r)
    }
}
