//! Slugs: the rule a given slug must meet, and the generated slug of a record without one
//! (input-format.md, Slugs).

use uuid::Uuid;

/// Longest slug allowed.
pub(crate) const MAX_SLUG_LEN: usize = 120;

/// Why a slug is not acceptable, as said in error messages.
pub(crate) fn slug_problem(slug: &str) -> Option<&'static str> {
    if slug.is_empty() || slug.len() > MAX_SLUG_LEN {
        return Some("must be 1 to 120 characters");
    }
    let well_formed = slug
        .split('-')
        .all(|word| !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()));
    if !well_formed {
        return Some("must be lower-case ASCII letters and digits joined by single hyphens");
    }
    if Uuid::try_parse(slug).is_ok() {
        return Some("must not have the form of a UUID");
    }
    None
}

/// The slug of a record without one: the name folded to ASCII, lower-cased, every run of
/// other characters one hyphen, cut to fit, then a hyphen and a number taken from the id.
/// The number depends on the id alone, so a record keeps its slug whatever else is added.
/// `fallback` stands in for a name with no letters or digits at all.
pub(crate) fn generate_slug(name: &str, id: &Uuid, fallback: &str) -> String {
    let suffix = id_number(id).to_string();
    let folded = deunicode::deunicode(name).to_ascii_lowercase();
    let mut base = String::with_capacity(folded.len());
    for c in folded.chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            base.push(c);
        } else if !base.is_empty() && !base.ends_with('-') {
            base.push('-');
        }
    }
    let room = MAX_SLUG_LEN - suffix.len() - 1;
    base.truncate(room);
    while base.ends_with('-') {
        base.pop();
    }
    if base.is_empty() {
        base.push_str(fallback);
    }
    format!("{base}-{suffix}")
}

/// A 64-bit number from every byte of the id (FNV-1a), so that ids sharing a prefix
/// (time-ordered UUIDs, hand-made ones) still get different numbers. All 64 bits are kept:
/// a million services sharing a handful of names must not meet on a number (with 8 digits,
/// a 100,000-service sample already did).
fn id_number(id: &Uuid) -> u64 {
    id.as_bytes().iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const ID: Uuid = Uuid::from_u128(0x0000_00ff_1234_4abc_8def_0123_4567_89ab);

    #[test]
    fn generated_from_name_and_id() {
        assert_eq!(generate_slug("Aberdeen Foodbank", &ID, "service"), "aberdeen-foodbank-8920910267566824416");
        assert_eq!(generate_slug("Café Còmhla & Friends!", &ID, "service"), "cafe-comhla-friends-8920910267566824416");
        assert_eq!(generate_slug("  --  ", &ID, "service"), "service-8920910267566824416");
        assert_eq!(generate_slug("日本", &ID, "x"), "ri-ben-8920910267566824416");
    }

    #[test]
    fn problems() {
        assert_eq!(slug_problem("food-bank-12"), None);
        assert_eq!(slug_problem("a"), None);
        for bad in ["", "-a", "a-", "a--b", "A", "a_b", "a b", "é"] {
            assert!(slug_problem(bad).is_some(), "{bad:?}");
        }
        assert!(slug_problem(&"a".repeat(121)).is_some());
        assert!(slug_problem("0a1b2c3d-0000-4000-8000-000000000000").is_some());
        assert!(slug_problem("0a1b2c3d000040008000000000000000").is_some());
    }

    proptest! {
        #[test]
        fn generated_slugs_are_always_valid(name in "\\PC{0,300}", id in any::<u128>()) {
            let slug = generate_slug(&name, &Uuid::from_u128(id), "service");
            prop_assert_eq!(slug_problem(&slug), None, "{}", slug);
        }
    }
}
