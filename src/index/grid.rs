//! Services' locations, one entry per (location, service), in bands of latitude and, within
//! a band, in order of longitude. The index keeps two: the radius rule's candidates (the
//! services without service areas, behaviour.md, Search 3), and every located service, from
//! which a page of results is taken nearest first (Search 7).
//!
//! A radius query is then a few contiguous runs of memory, one per band the circle
//! crosses, each cut out by two binary searches on longitude: no tree to walk and no
//! lookup from a location to its services (issue 12: at 100,000 services an R-tree query
//! plus those lookups, all cache misses, were half of the server's time). As with the
//! R-tree it replaces, the band and longitude bounds only narrow the candidates; whether
//! a location is within the radius is decided by [`within_radius`].

use std::ops::Range;

use super::{LocationNo, ServiceNo};
use crate::model::Point;
use crate::model::geo::EARTH_RADIUS_M;

use super::spatial::{UnitVector, chord2, unit_vector, within_radius};

/// Height of a band in degrees of latitude (about 1.1 km): a 5 km radius crosses about
/// ten bands, and a band's binary searches cost less than the entries they skip.
const BAND_DEGREES: f64 = 0.01;

/// Services' locations, by band of latitude then longitude.
#[derive(Debug, Default)]
pub(crate) struct LocationGrid {
    /// Band of the first band held.
    first_band: i64,
    /// Entries of band `first_band + b` are `band_start[b]..band_start[b + 1]`.
    band_start: Vec<u32>,
    /// Per entry, in band then longitude order: its longitude (what is searched), its point
    /// (what is measured), its location (for the exact distance at the boundary) and its
    /// service. Kept apart so that each scan reads only what it needs.
    lons: Vec<f64>,
    units: Vec<UnitVector>,
    locations: Vec<LocationNo>,
    services: Vec<ServiceNo>,
}

/// The band that holds latitude `lat`.
fn band(lat: f64) -> i64 {
    ((lat + 90.0) / BAND_DEGREES).floor() as i64
}

/// The latitudes of band `b`'s edges, widened by a hair for the rounding of [`band`].
fn band_edges(b: i64) -> (f64, f64) {
    let south = b as f64 * BAND_DEGREES - 90.0;
    (south - 1e-9, south + BAND_DEGREES + 1e-9)
}

/// Metres taken off the radius for the circle whose entries need no distance: far more than
/// the rounding of [`Inner::lons`] (a few centimetres), so that every entry it lets through
/// is well inside the radius, where [`within_radius`] says yes without the exact distance.
const INNER_MARGIN_M: f64 = 1.0;

/// A circle slightly smaller than the search's, for the runs of a band wholly inside it.
#[derive(Debug, Clone, Copy)]
struct Inner {
    centre: Point,
    sin_lat: f64,
    cos_lat: f64,
    cos_angle: f64,
}

impl Inner {
    /// `None` when the circle is too small to bother, or large enough (about 600 km) or near
    /// enough a pole for [`Inner::lons`]'s reasoning to need care.
    fn of(centre: Point, radius_m: f64) -> Option<Inner> {
        let angle = (radius_m - INNER_MARGIN_M) / EARTH_RADIUS_M;
        if !(angle > 0.0 && angle < 0.1) || centre.lat.abs() > 80.0 {
            return None;
        }
        let lat = centre.lat.to_radians();
        Some(Inner { centre, sin_lat: lat.sin(), cos_lat: lat.cos(), cos_angle: angle.cos() })
    }

    /// Half the width in degrees of longitude of the circle at latitude `lat`; `None` when
    /// that latitude misses it.
    fn half_width(&self, lat: f64) -> Option<f64> {
        let lat = lat.to_radians();
        let cos_dlon = (self.cos_angle - self.sin_lat * lat.sin()) / (self.cos_lat * lat.cos());
        (cos_dlon <= 1.0).then(|| cos_dlon.max(-1.0).acos().to_degrees())
    }

    /// The longitudes within which every point between latitudes `south` and `north` is
    /// inside the circle: the narrower of its widths at the two edges (its width along a
    /// meridian rises to a peak and falls, so it is least at an edge); `None` when an edge
    /// misses it or the run would cross the antimeridian.
    fn lons(&self, south: f64, north: f64) -> Option<(f64, f64)> {
        let width = self.half_width(south)?.min(self.half_width(north)?);
        let (west, east) = (self.centre.lon - width, self.centre.lon + width);
        (west >= -180.0 && east <= 180.0 && width > 0.0).then_some((west, east))
    }
}

impl LocationGrid {
    /// The grid of the given (location, service) pairs, `points[location]` being where each
    /// location is and `units[location]` its [`unit_vector`]. Pairs of locations out of
    /// range are left out.
    pub(crate) fn new(
        points: &[Point],
        units: &[UnitVector],
        pairs: impl Iterator<Item = (LocationNo, ServiceNo)>,
    ) -> LocationGrid {
        let mut entries: Vec<(i64, f64, LocationNo, ServiceNo)> = pairs
            .filter_map(|(loc, service)| {
                let p = points.get(loc as usize).filter(|_| (loc as usize) < units.len())?;
                Some((band(p.lat), p.lon, loc, service))
            })
            .collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then((a.2, a.3).cmp(&(b.2, b.3))));
        let Some(first_band) = entries.first().map(|e| e.0) else {
            return LocationGrid::default();
        };
        let last_band = entries.last().map_or(first_band, |e| e.0);
        let bands = (last_band - first_band + 1) as usize;
        let mut band_start = vec![0u32; bands + 1];
        for e in &entries {
            band_start[(e.0 - first_band) as usize + 1] += 1;
        }
        for b in 1..band_start.len() {
            band_start[b] += band_start[b - 1];
        }
        LocationGrid {
            first_band,
            band_start,
            lons: entries.iter().map(|e| e.1).collect(),
            units: entries.iter().map(|e| units[e.2 as usize]).collect(),
            locations: entries.iter().map(|e| e.2).collect(),
            services: entries.into_iter().map(|e| e.3).collect(),
        }
    }

    /// The grid of this one's entries whose service `keep` says yes to: the same order,
    /// without sorting again.
    pub(crate) fn only(&self, keep: impl Fn(ServiceNo) -> bool) -> LocationGrid {
        let mut grid = LocationGrid { first_band: self.first_band, band_start: vec![0], ..LocationGrid::default() };
        for band in self.band_start.windows(2) {
            for e in band[0] as usize..band[1] as usize {
                if keep(self.services[e]) {
                    grid.lons.push(self.lons[e]);
                    grid.units.push(self.units[e]);
                    grid.locations.push(self.locations[e]);
                    grid.services.push(self.services[e]);
                }
            }
            grid.band_start.push(grid.services.len() as u32);
        }
        grid
    }

    /// Number of (location, service) entries.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.services.len()
    }

    /// Whether the grid has no entry.
    pub(crate) fn is_empty(&self) -> bool {
        self.services.is_empty()
    }

    /// Calls `each` with every run of entries that may lie within `radius_m` metres of
    /// `centre`, band by band, with the band's south and north edges: together the runs hold
    /// every entry within the radius (and some just outside it). Stops at `each`'s first error.
    fn runs<E>(
        &self,
        centre: Point,
        radius_m: f64,
        mut each: impl FnMut((f64, f64), usize, usize) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.is_empty() || radius_m.is_nan() || radius_m < 0.0 {
            return Ok(());
        }
        let angle = radius_m / EARTH_RADIUS_M;
        // The latitudes the circle spans, widened by a hair for rounding.
        let spread = angle.to_degrees() * (1.0 + 1e-9) + 1e-9;
        let (south, north) = (centre.lat - spread, centre.lat + spread);
        // Its longitudes: the exact half-width of a spherical cap, unless it holds a pole
        // (or half the globe), when every longitude may be in it.
        let cos_lat = centre.lat.to_radians().cos();
        let half_width =
            if north >= 90.0 || south <= -90.0 || angle >= std::f64::consts::FRAC_PI_2 || angle.sin() >= cos_lat {
                None
            } else {
                Some((angle.sin() / cos_lat).asin().to_degrees() * (1.0 + 1e-9) + 1e-9)
            };
        let ranges: [(f64, f64); 2] = match half_width {
            None => [(f64::NEG_INFINITY, f64::INFINITY), (1.0, 0.0)],
            Some(w) => {
                let (west, east) = (centre.lon - w, centre.lon + w);
                if west < -180.0 {
                    [(west + 360.0, f64::INFINITY), (f64::NEG_INFINITY, east)]
                } else if east > 180.0 {
                    [(west, f64::INFINITY), (f64::NEG_INFINITY, east - 360.0)]
                } else {
                    [(west, east), (1.0, 0.0)]
                }
            }
        };
        let last = self.first_band + self.band_start.len() as i64 - 2;
        let (from, to) = (band(south).max(self.first_band), band(north).min(last));
        for b in from..=to {
            let edges = band_edges(b);
            let b = (b - self.first_band) as usize;
            let (start, end) = (self.band_start[b] as usize, self.band_start[b + 1] as usize);
            let lons = &self.lons[start..end];
            for &(west, east) in ranges.iter().filter(|(west, east)| west <= east) {
                let lo = start + lons.partition_point(|&lon| lon < west);
                let hi = (start + lons.partition_point(|&lon| lon <= east)).max(lo);
                if hi > lo {
                    each(edges, lo, hi)?;
                }
            }
        }
        Ok(())
    }

    /// Adds to `found` the service of every entry whose location lies within `radius_m`
    /// metres of `centre` by [`Point::distance_m`] (`points` as given to [`LocationGrid::new`]),
    /// band by band; a service with several such locations is added once for each. `tick` is
    /// called once per entry looked at and stops the scan at its first error.
    pub(crate) fn within<E>(
        &self,
        points: &[Point],
        centre: Point,
        radius_m: f64,
        mut tick: impl FnMut() -> Result<(), E>,
        found: &mut impl Extend<ServiceNo>,
    ) -> Result<(), E> {
        let c = unit_vector(centre);
        let inner = Inner::of(centre, radius_m);
        let inside = |e: usize| {
            let exact = || points[self.locations[e] as usize].distance_m(centre);
            within_radius(chord2(&c, &self.units[e]), radius_m, exact)
        };
        self.runs(centre, radius_m, |(south_edge, north_edge), lo, hi| {
            // The entries of the band surely inside the circle need no distance: their
            // services are taken as they are, one tick for the run.
            let (inner_lo, inner_hi) = match inner.and_then(|i| i.lons(south_edge, north_edge)) {
                Some((w, e)) => {
                    let run = &self.lons[lo..hi];
                    let inner_lo = lo + run.partition_point(|&lon| lon < w);
                    (inner_lo, (lo + run.partition_point(|&lon| lon <= e)).max(inner_lo))
                }
                None => (hi, hi),
            };
            for e in (lo..inner_lo).chain(inner_hi..hi) {
                tick()?;
                if inside(e) {
                    found.extend([self.services[e]]);
                }
            }
            if inner_hi > inner_lo {
                tick()?;
                found.extend(self.services[inner_lo..inner_hi].iter().copied());
            }
            Ok(())
        })
    }

    /// The runs of entries that may lie within `radius_m` metres of `centre`: every entry
    /// within the radius is in one of them (and some just outside it). Their lengths are what
    /// scanning them costs, known before scanning.
    pub(crate) fn runs_near(&self, centre: Point, radius_m: f64) -> Vec<Range<usize>> {
        let mut runs = Vec::new();
        let _ = self.runs(centre, radius_m, |_, lo, hi| {
            runs.push(lo..hi);
            Ok::<(), ()>(())
        });
        runs
    }

    /// Calls `found` with the service and the squared chord to `c` of every entry of `runs`
    /// whose squared chord is at most `max_chord2`, once `wanted` has said yes to its service
    /// (asked first: a set lookup costs less than the chord). `tick` is called once per run
    /// and stops the scan at its first error.
    pub(crate) fn scan<E>(
        &self,
        runs: &[Range<usize>],
        c: &UnitVector,
        max_chord2: f64,
        mut tick: impl FnMut() -> Result<(), E>,
        mut wanted: impl FnMut(ServiceNo) -> bool,
        mut found: impl FnMut(ServiceNo, f64),
    ) -> Result<(), E> {
        for run in runs {
            tick()?;
            let (services, units) = (&self.services[run.clone()], &self.units[run.clone()]);
            for (&service, unit) in services.iter().zip(units) {
                if wanted(service) {
                    let chord = chord2(c, unit);
                    if chord <= max_chord2 {
                        found(service, chord);
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::spatial::radius_chord2;
    use proptest::prelude::*;

    fn units(points: &[Point]) -> Vec<UnitVector> {
        points.iter().map(|&p| unit_vector(p)).collect()
    }

    /// Every (location, service) pair within the radius, by brute force.
    fn brute(points: &[Point], pairs: &[(LocationNo, ServiceNo)], centre: Point, radius: f64) -> Vec<ServiceNo> {
        let mut found: Vec<ServiceNo> =
            pairs.iter().filter(|(l, _)| points[*l as usize].distance_m(centre) <= radius).map(|p| p.1).collect();
        found.sort_unstable();
        found
    }

    fn grid_finds(grid: &LocationGrid, points: &[Point], centre: Point, radius: f64) -> Vec<ServiceNo> {
        let mut found = Vec::new();
        grid.within(points, centre, radius, || Ok::<(), ()>(()), &mut found).unwrap();
        found.sort_unstable();
        found
    }

    /// Every (location, service) pair whose squared chord to `centre` is at most that of
    /// `radius`, by brute force.
    fn brute_chord(points: &[Point], pairs: &[(LocationNo, ServiceNo)], centre: Point, radius: f64) -> Vec<ServiceNo> {
        let (c, max) = (unit_vector(centre), radius_chord2(radius));
        let mut found: Vec<ServiceNo> =
            pairs.iter().filter(|(l, _)| chord2(&c, &unit_vector(points[*l as usize])) <= max).map(|p| p.1).collect();
        found.sort_unstable();
        found
    }

    fn scan_finds(grid: &LocationGrid, centre: Point, radius: f64) -> Vec<ServiceNo> {
        let runs = grid.runs_near(centre, radius);
        let mut found = Vec::new();
        let c = unit_vector(centre);
        grid.scan(&runs, &c, radius_chord2(radius), || Ok::<(), ()>(()), |_| true, |s, _| found.push(s)).unwrap();
        found.sort_unstable();
        found
    }

    #[test]
    fn finds_what_brute_force_finds_near_the_antimeridian_and_the_poles() {
        let points = vec![
            Point { lat: 55.86, lon: -4.25 },
            Point { lat: 55.87, lon: -4.20 },
            Point { lat: 55.95, lon: -3.19 },
            Point { lat: 0.0, lon: 179.999 },
            Point { lat: 0.0, lon: -179.999 },
            Point { lat: 89.9999, lon: 10.0 },
            Point { lat: 89.9999, lon: -170.0 },
            Point { lat: -89.99, lon: 0.0 },
        ];
        let pairs: Vec<(LocationNo, ServiceNo)> =
            (0..points.len() as u32).map(|l| (l, l * 10)).chain([(0, 7)]).collect();
        let grid = LocationGrid::new(&points, &units(&points), pairs.iter().copied());
        assert_eq!(grid.len(), pairs.len());
        for centre in
            [points[0], points[3], points[4], points[5], Point { lat: -90.0, lon: 0.0 }, Point { lat: 10.0, lon: 0.0 }]
        {
            for radius in [0.0, 1.0, 500.0, 3_500.0, 70_000.0, 1e6, 3e7] {
                assert_eq!(
                    grid_finds(&grid, &points, centre, radius),
                    brute(&points, &pairs, centre, radius),
                    "{centre:?} {radius}"
                );
                assert_eq!(
                    scan_finds(&grid, centre, radius),
                    brute_chord(&points, &pairs, centre, radius),
                    "{centre:?} {radius}"
                );
            }
        }
        // The antimeridian: 222 m apart across it.
        assert_eq!(grid_finds(&grid, &points, points[3], 300.0), [30, 40]);
        assert!(LocationGrid::new(&points, &units(&points), std::iter::empty()).is_empty());
    }

    #[test]
    fn a_scan_asks_the_set_first_and_counts_what_it_looks_at() {
        let points =
            vec![Point { lat: 56.0, lon: -4.0 }, Point { lat: 56.001, lon: -4.0 }, Point { lat: 57.0, lon: -4.0 }];
        let grid = LocationGrid::new(&points, &units(&points), (0..3).map(|l| (l, l)));
        let runs = grid.runs_near(points[0], 500.0);
        // The far location is in no run; the two near ones are looked at.
        assert_eq!(runs.iter().map(ExactSizeIterator::len).sum::<usize>(), 2);
        let (mut asked, mut found) = (Vec::new(), Vec::new());
        let c = unit_vector(points[0]);
        grid.scan(
            &runs,
            &c,
            radius_chord2(500.0),
            || Ok::<(), ()>(()),
            |s| {
                asked.push(s);
                s != 0
            },
            |s, chord| found.push((s, chord)),
        )
        .unwrap();
        // The chord given is the entry's own.
        assert_eq!((asked, found), (vec![0, 1], vec![(1, chord2(&c, &unit_vector(points[1])))]));
        assert!(LocationGrid::new(&points, &units(&points), std::iter::empty()).runs_near(points[0], 1e7).is_empty());
    }

    #[test]
    fn a_tick_error_stops_the_scan() {
        let points = vec![Point { lat: 56.0, lon: -4.0 }; 3];
        let grid = LocationGrid::new(&points, &units(&points), (0..3).map(|l| (l, l)));
        let mut ticks = 0;
        // Under INNER_MARGIN_M: every entry is measured, one tick each.
        let result = grid.within(
            &points,
            points[0],
            0.5,
            || {
                ticks += 1;
                if ticks == 2 { Err("late") } else { Ok(()) }
            },
            &mut Vec::new(),
        );
        assert_eq!((result, ticks), (Err("late"), 2));
        // Wide enough to cover their band: the entries surely inside are one run, one tick.
        let mut ticks = 0;
        let mut found = Vec::new();
        let result = grid.within(
            &points,
            points[0],
            10_000.0,
            || {
                ticks += 1;
                Ok::<(), ()>(())
            },
            &mut found,
        );
        assert_eq!((result, ticks, found.len()), (Ok(()), 1, 3));
    }

    proptest! {
        #[test]
        fn agrees_with_brute_force(
            raw in proptest::collection::vec((-0.3f64..0.3, -0.5f64..0.5), 1..80),
            centre in (-0.3f64..0.3, -0.5f64..0.5),
            radius in 0.0f64..40_000.0,
            base in prop_oneof![Just((56.0, -4.0)), Just((0.0, 179.8)), Just((89.6, 0.0)), Just((-45.0, -179.9))],
        ) {
            let at = |(dlat, dlon): (f64, f64)| {
                let lat = (base.0 + dlat).clamp(-90.0, 90.0);
                let mut lon = base.1 + dlon;
                if lon > 180.0 { lon -= 360.0 }
                if lon < -180.0 { lon += 360.0 }
                Point { lat, lon }
            };
            let points: Vec<Point> = raw.iter().map(|&d| at(d)).collect();
            let pairs: Vec<(LocationNo, ServiceNo)> = (0..points.len() as u32).map(|l| (l, l % 7)).collect();
            let grid = LocationGrid::new(&points, &units(&points), pairs.iter().copied());
            let centre = at(centre);
            // Radii exactly at some location's distance: the boundary is decided exactly.
            for r in [radius, points[0].distance_m(centre), points[points.len() - 1].distance_m(centre)] {
                prop_assert_eq!(grid_finds(&grid, &points, centre, r), brute(&points, &pairs, centre, r));
                prop_assert_eq!(scan_finds(&grid, centre, r), brute_chord(&points, &pairs, centre, r));
                // A grid cut out of another finds what one built from its pairs finds.
                let even: Vec<(LocationNo, ServiceNo)> = pairs.iter().copied().filter(|p| p.1 % 2 == 0).collect();
                let only = grid.only(|s| s % 2 == 0);
                prop_assert_eq!(only.len(), even.len());
                prop_assert_eq!(grid_finds(&only, &points, centre, r), brute(&points, &even, centre, r));
            }
        }
    }
}
