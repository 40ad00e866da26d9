//! Cheap distance keys between points.
//!
//! Points are kept as unit vectors in 3-D. The straight-line (chord) distance between two
//! unit vectors grows strictly with the great-circle distance, so squared chords order
//! services exactly as great-circle distances do, without any trigonometry per candidate;
//! and "within r metres" becomes "within a chord of `2 sin(r / 2R)`". Whether a location is
//! within the radius is still decided with [`Point::distance_m`] (behaviour.md, Search 3)
//! when its chord falls within a hair of that boundary.

use crate::model::Point;
use crate::model::geo::EARTH_RADIUS_M;

/// A point on the unit sphere.
pub(crate) type UnitVector = [f64; 3];

/// The unit vector of a latitude and longitude.
pub(crate) fn unit_vector(p: Point) -> UnitVector {
    let (lat, lon) = (p.lat.to_radians(), p.lon.to_radians());
    [lat.cos() * lon.cos(), lat.cos() * lon.sin(), lat.sin()]
}

/// What ordering a service by Search 7 reads of it, in one aligned 32-byte block (half a
/// cache line, never split): the unit vector of its location when it has exactly one, and
/// its position in (name, id) order. A result's key then costs one cache miss, where the
/// location table's start, its entry and the name order were three (issue 24).
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(32))]
pub(crate) struct ServiceKey {
    /// The location's unit vector, when `locations` is 1.
    pub(crate) unit: UnitVector,
    /// Its position in (name, id) order: the last two keys of Search 7 as one integer, so
    /// that ordering never touches the strings.
    pub(crate) name_rank: u32,
    /// Number of locations of the service.
    pub(crate) locations: u32,
}

/// Squared chord between two unit vectors: a key that orders like great-circle distance.
#[inline]
pub(crate) fn chord2(a: &UnitVector, b: &UnitVector) -> f64 {
    let (dx, dy, dz) = (a[0] - b[0], a[1] - b[1], a[2] - b[2]);
    dx * dx + dy * dy + dz * dz
}

/// The squared chord of a great-circle distance of `radius_m` metres (4, the diameter's,
/// from half the globe on).
#[inline]
pub(crate) fn radius_chord2(radius_m: f64) -> f64 {
    let angle = (radius_m / EARTH_RADIUS_M).min(std::f64::consts::PI);
    let chord = 2.0 * (angle / 2.0).sin();
    chord * chord
}

/// Whether a point whose squared chord to the centre is `chord2` lies within `radius_m`
/// metres by [`Point::distance_m`]: decided on the chord alone unless it falls within a
/// hair of the boundary, where the great-circle distance itself decides (behaviour.md,
/// Search 3). `exact` computes that distance.
#[inline]
pub(crate) fn within_radius(chord2: f64, radius_m: f64, exact: impl FnOnce() -> f64) -> bool {
    let boundary = radius_chord2(radius_m);
    // Rounding in either formula is ~1e-15 relative; 1e-9 leaves a wide margin.
    if chord2 < boundary * (1.0 - 1e-9) {
        true
    } else if chord2 > boundary * (1.0 + 1e-9) + 1e-12 {
        false
    } else {
        exact() <= radius_m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chords_order_like_great_circles() {
        let glasgow = Point { lat: 55.8609, lon: -4.2514 };
        let places = [
            Point { lat: 55.9533, lon: -3.1883 },
            Point { lat: 55.8642, lon: -4.2518 },
            Point { lat: 57.1497, lon: -2.0943 },
            Point { lat: 55.8609, lon: -4.2514 },
            Point { lat: -33.9, lon: 151.2 },
        ];
        let g = unit_vector(glasgow);
        let mut by_chord = places.to_vec();
        by_chord.sort_by(|a, b| chord2(&g, &unit_vector(*a)).total_cmp(&chord2(&g, &unit_vector(*b))));
        let mut by_distance = places.to_vec();
        by_distance.sort_by(|a, b| glasgow.distance_m(*a).total_cmp(&glasgow.distance_m(*b)));
        assert_eq!(by_chord, by_distance);
    }

    #[test]
    fn within_radius_agrees_with_distance_m() {
        let centre = Point { lat: 55.86, lon: -4.25 };
        let c = unit_vector(centre);
        let mut state = 12345u64;
        for _ in 0..20_000 {
            // A small LCG: no RNG dependency needed here.
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let dlat = ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 0.2;
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let dlon = ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 0.3;
            let p = Point { lat: centre.lat + dlat, lon: centre.lon + dlon };
            let exact = centre.distance_m(p);
            for radius in [exact, exact.floor(), exact.ceil(), 5000.0, 0.0] {
                assert_eq!(
                    within_radius(chord2(&c, &unit_vector(p)), radius, || exact),
                    exact <= radius,
                    "{p:?} {radius}"
                );
            }
        }
    }
}
