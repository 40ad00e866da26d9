//! Points, great-circle distance, and the postcode directory.

use serde::{Deserialize, Serialize};

/// Mean Earth radius in metres (IUGG), for great-circle distances.
pub const EARTH_RADIUS_M: f64 = 6_371_008.8;

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
    /// Looks up a postcode in any spelling (see [`normalise_postcode`]).
    pub fn find(&self, raw: &str) -> Option<&Postcode> {
        let code = normalise_postcode(raw)?;
        self.postcodes.binary_search_by(|p| p.code.as_str().cmp(&code)).ok().map(|ix| &self.postcodes[ix])
    }
}

/// Normalises a postcode: `+` and white space removed, upper case, one space before the
/// last three characters. Returns `None` when fewer than 5 or more than 7 alphanumeric
/// characters remain, or when anything else is left.
pub fn normalise_postcode(raw: &str) -> Option<String> {
    let compact: String =
        raw.chars().filter(|c| !c.is_whitespace() && *c != '+').map(|c| c.to_ascii_uppercase()).collect();
    if !(5..=7).contains(&compact.len()) || !compact.chars().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    let (outward, inward) = compact.split_at(compact.len() - 3);
    Some(format!("{outward} {inward}"))
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
}
