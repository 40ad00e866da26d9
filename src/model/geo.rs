//! Points, great-circle distance, and the postcode directory.

use serde::{Deserialize, Serialize};

/// Mean Earth radius in metres (IUGG), for great-circle distances.
pub(crate) const EARTH_RADIUS_M: f64 = 6_371_008.8;

/// A position in decimal degrees.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Latitude, -90..=90.
    pub lat: f64,
    /// Longitude, -180..=180.
    pub lon: f64,
}

impl Point {
    /// Great-circle distance in metres (haversine).
    pub fn distance_m(self, other: Point) -> f64 {
        let (lat1, lat2) = (self.lat.to_radians(), other.lat.to_radians());
        let dlat = lat2 - lat1;
        let dlon = (other.lon - self.lon).to_radians();
        let h = (dlat / 2.0).sin().powi(2) + lat1.cos() * lat2.cos() * (dlon / 2.0).sin().powi(2);
        2.0 * EARTH_RADIUS_M * h.sqrt().min(1.0).asin()
    }
}

/// A live postcode: where it is and which areas it lies in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Postcode {
    /// Normalised: upper case, one space before the last three characters.
    pub code: String,
    /// Its point.
    pub point: Point,
    /// Council area, health board and integration authority codes mapped through the
    /// alias table, then `XS` and `XB` (behaviour.md, Search 1). Empty codes are left out.
    pub areas: Vec<String>,
}

/// Every live postcode, sorted by normalised code.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PostcodeDirectory {
    /// Sorted by `code`, unique.
    pub postcodes: Vec<Postcode>,
}

impl PostcodeDirectory {
    /// Looks up a postcode in any spelling (see `normalise_postcode`).
    pub fn find(&self, raw: &str) -> Option<&Postcode> {
        let code = normalise_postcode(raw)?;
        self.postcodes.binary_search_by(|p| p.code.as_str().cmp(&code)).ok().map(|ix| &self.postcodes[ix])
    }
}

/// Normalises a postcode: `+` and white space removed, upper case, one space before the
/// last three characters. Returns `None` when fewer than 5 or more than 7 alphanumeric
/// characters remain, or when anything else is left.
pub(crate) fn normalise_postcode(raw: &str) -> Option<String> {
    let compact: String =
        raw.chars().filter(|c| !c.is_whitespace() && *c != '+').map(|c| c.to_ascii_uppercase()).collect();
    if !(5..=7).contains(&compact.len()) || !compact.chars().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    let (outward, inward) = compact.split_at(compact.len() - 3);
    Some(format!("{outward} {inward}"))
}

/// What a search's `postcode` value names (behaviour.md, Search 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PostcodeQuery {
    /// A full postcode, or anything that is neither a district nor a sector: looked up
    /// among the live postcodes (see [`normalise_postcode`]).
    Postcode,
    /// A district (`AB10`) or a sector (`AB10 1`), in its normalised form: upper case,
    /// trimmed, one space between the outward code and the sector's digit.
    Outcode(String),
}

/// Reads a `postcode` value as behaviour.md's Search 1 does: upper-cased, `+` read as a
/// space, trimmed, runs of white space folded to one space; a full postcode (with or
/// without its space) is a postcode, an outward code alone a district, an outward code,
/// one space and one digit a sector (`AB101`, without the space, is looked up as a
/// postcode), anything else a postcode.
pub(crate) fn classify_postcode(raw: &str) -> PostcodeQuery {
    let upper = raw.to_ascii_uppercase().replace('+', " ");
    let folded = upper.split_whitespace().collect::<Vec<_>>().join(" ");
    let compact: String = folded.chars().filter(|c| *c != ' ').collect();
    let full = compact.len() >= 5 && compact.is_ascii() && {
        let (outward, inward) = compact.split_at(compact.len() - 3);
        let inward = inward.as_bytes();
        is_outward(outward)
            && inward[0].is_ascii_digit()
            && inward[1].is_ascii_uppercase()
            && inward[2].is_ascii_uppercase()
    };
    if full {
        return PostcodeQuery::Postcode;
    }
    let outcode = match folded.split_once(' ') {
        None => is_outward(&folded),
        Some((outward, digit)) => is_outward(outward) && digit.len() == 1 && digit.bytes().all(|b| b.is_ascii_digit()),
    };
    if outcode { PostcodeQuery::Outcode(folded) } else { PostcodeQuery::Postcode }
}

/// Whether `code` is an outward code, `[A-Z]{1,2}[0-9][0-9A-Z]?`.
fn is_outward(code: &str) -> bool {
    let b = code.as_bytes();
    let letters = b.iter().take_while(|c| c.is_ascii_uppercase()).count();
    if !(1..=2).contains(&letters) {
        return false;
    }
    match &b[letters..] {
        [d] => d.is_ascii_digit(),
        [d, x] => d.is_ascii_digit() && (x.is_ascii_digit() || x.is_ascii_uppercase()),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_every_spelling() {
        for raw in ["g2 1al", "G21AL", "G2+1AL", " g2  1AL ", "G2\t1al"] {
            assert_eq!(normalise_postcode(raw).as_deref(), Some("G2 1AL"), "{raw:?}");
        }
        assert_eq!(normalise_postcode("AB101AA").as_deref(), Some("AB10 1AA"));
        for bad in ["", "G2", "G2 1A-L", "ABCDEFGHI", "G2 1ÅL"] {
            assert_eq!(normalise_postcode(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn distance_glasgow_edinburgh() {
        let glasgow = Point { lat: 55.8609, lon: -4.2514 };
        let edinburgh = Point { lat: 55.9533, lon: -3.1883 };
        let d = glasgow.distance_m(edinburgh);
        assert!((66_000.0..68_000.0).contains(&d), "{d}");
        assert_eq!(glasgow.distance_m(glasgow), 0.0);
    }

    #[test]
    fn districts_sectors_and_postcodes() {
        use PostcodeQuery::{Outcode, Postcode};
        let outcode = |s: &str| Outcode(s.into());
        for (raw, want) in [
            ("AB10", outcode("AB10")),
            (" g2 ", outcode("G2")),
            ("eh1", outcode("EH1")),
            ("AB10 1", outcode("AB10 1")),
            ("ab10+ +1", outcode("AB10 1")),
            ("AB1", outcode("AB1")),
            ("EC1A", outcode("EC1A")),
            ("AB101", Postcode),
            ("AB10 1AA", Postcode),
            ("ab101aa", Postcode),
            ("G2 1AL", Postcode),
            ("AB10 12", Postcode),
            ("AB10 A", Postcode),
            ("ABC1", Postcode),
            ("1AB", Postcode),
            ("", Postcode),
            ("AB10 1 1", Postcode),
            ("AB1é0AA", Postcode),
            ("G2 é", Postcode),
        ] {
            assert_eq!(classify_postcode(raw), want, "{raw:?}");
        }
    }

    proptest::proptest! {
        /// Every spelling of a district or a sector is read as it; every spelling of a full
        /// postcode (with or without its space) as a postcode.
        #[test]
        fn outcodes_in_any_spelling(
            outward in "[A-Z]{1,2}[0-9][0-9A-Z]?",
            digit in "[0-9]",
            letters in "[A-Z]{2}",
            pad in "[ +]{0,3}",
            gap in "[ +]{1,3}",
            lower in proptest::bool::ANY,
        ) {
            let case = |s: String| if lower { s.to_lowercase() } else { s };
            let district = case(format!("{pad}{outward}{pad}"));
            proptest::prop_assert_eq!(classify_postcode(&district), PostcodeQuery::Outcode(outward.clone()));
            let sector = case(format!("{pad}{outward}{gap}{digit}{pad}"));
            proptest::prop_assert_eq!(classify_postcode(&sector), PostcodeQuery::Outcode(format!("{outward} {digit}")));
            let spaced = case(format!("{pad}{outward}{gap}{digit}{letters}"));
            proptest::prop_assert_eq!(classify_postcode(&spaced), PostcodeQuery::Postcode);
            let compact = case(format!("{outward}{digit}{letters}"));
            proptest::prop_assert_eq!(classify_postcode(&compact), PostcodeQuery::Postcode);
        }
    }
}
