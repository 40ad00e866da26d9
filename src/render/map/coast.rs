//! The coastline (`coast.json`), projected once into the map's plane, and the part of it a
//! map shows, cut to its frame.

use std::fmt::Write as _;
use std::sync::OnceLock;

use super::frame::Bounds;
use super::project;
use crate::model::Point;

/// The coastline, projected once into whole units of the plane.
pub(super) struct Coast {
    rings: Vec<Ring>,
    /// The box the data was cut to.
    pub(super) bounds: Bounds,
}

/// One closed ring of the coastline.
struct Ring {
    /// Its points, in whole units, no two in a row alike.
    points: Vec<(f64, f64)>,
    /// Its bounding box.
    bounds: Bounds,
}

impl Coast {
    /// The SVG path data of the coastline within `view` (plus a margin, so that the edges
    /// of cut rings fall outside the picture): rings wholly inside as they are, rings across
    /// its edge cut to it (Sutherland-Hodgman), the others left out. Whole units, each
    /// point relative to the last: a street-level map carries a few dozen points, not the
    /// whole coast.
    pub(super) fn path_within(&self, view: Bounds) -> String {
        let mut path = String::with_capacity(4096);
        for ring in &self.rings {
            let b = ring.bounds;
            if b.x1 < view.x0 || b.x0 > view.x1 || b.y1 < view.y0 || b.y0 > view.y1 {
                continue;
            }
            let inside = view.x0 <= b.x0 && b.x1 <= view.x1 && view.y0 <= b.y0 && b.y1 <= view.y1;
            let cut;
            let points = if inside {
                &ring.points
            } else {
                cut = clip(&ring.points, view);
                &cut
            };
            write_ring(&mut path, points);
        }
        path
    }
}

/// `points` cut to `view`, one edge of the box at a time.
fn clip(points: &[(f64, f64)], view: Bounds) -> Vec<(f64, f64)> {
    type Edge = (fn(&Bounds, (f64, f64)) -> bool, fn(&Bounds, (f64, f64), (f64, f64)) -> (f64, f64));
    let edges: [Edge; 4] = [
        (|v, p| p.0 >= v.x0, |v, a, b| (v.x0, a.1 + (v.x0 - a.0) / (b.0 - a.0) * (b.1 - a.1))),
        (|v, p| p.0 <= v.x1, |v, a, b| (v.x1, a.1 + (v.x1 - a.0) / (b.0 - a.0) * (b.1 - a.1))),
        (|v, p| p.1 >= v.y0, |v, a, b| (a.0 + (v.y0 - a.1) / (b.1 - a.1) * (b.0 - a.0), v.y0)),
        (|v, p| p.1 <= v.y1, |v, a, b| (a.0 + (v.y1 - a.1) / (b.1 - a.1) * (b.0 - a.0), v.y1)),
    ];
    let mut current = points.to_vec();
    for (inside, cross) in edges {
        let Some(&last) = current.last() else { break };
        let mut out = Vec::with_capacity(current.len() + 8);
        let mut prev = last;
        for &here in &current {
            match (inside(&view, here), inside(&view, prev)) {
                (true, true) => out.push(here),
                (true, false) => {
                    out.push(cross(&view, prev, here));
                    out.push(here);
                }
                (false, true) => out.push(cross(&view, prev, here)),
                (false, false) => {}
            }
            prev = here;
        }
        current = out;
    }
    current
}

/// Appends one closed ring as path data, rounded to whole units, relative moves.
fn write_ring(path: &mut String, points: &[(f64, f64)]) {
    if points.len() < 3 {
        return;
    }
    let mut last: Option<(i64, i64)> = None;
    for &(x, y) in points {
        let here = (x.round() as i64, y.round() as i64);
        match last {
            None => {
                let _ = write!(path, "M{} {}l", here.0, here.1);
            }
            Some(prev) if prev == here => continue,
            Some(prev) => {
                let (dx, dy) = (here.0 - prev.0, here.1 - prev.1);
                if !path.ends_with('l') && dx >= 0 {
                    path.push(' ');
                }
                let _ = write!(path, "{dx}");
                if dy >= 0 {
                    path.push(' ');
                }
                let _ = write!(path, "{dy}");
            }
        }
        last = Some(here);
    }
    path.push('z');
}

/// `coast.json` as `tools/coastline/make.py` writes it.
#[derive(serde::Deserialize)]
struct CoastFile {
    /// West, south, east, north, degrees.
    #[serde(rename = "box")]
    bbox: [f64; 4],
    /// Rings of `[longitude, latitude]`.
    rings: Vec<Vec<[f64; 2]>>,
}

pub(super) fn coast() -> &'static Coast {
    static COAST: OnceLock<Coast> = OnceLock::new();
    COAST.get_or_init(|| {
        let file: CoastFile =
            serde_json::from_str(include_str!("coast.json")).expect("the embedded coastline parses (tested)");
        let [west, south, east, north] = file.bbox;
        let (x0, y1) = project(Point { lat: south, lon: west });
        let (x1, y0) = project(Point { lat: north, lon: east });
        let rings = file
            .rings
            .iter()
            .filter_map(|ring| {
                let mut points: Vec<(f64, f64)> = Vec::with_capacity(ring.len());
                for &[lon, lat] in ring {
                    let (x, y) = project(Point { lat, lon });
                    let here = (x.round(), y.round());
                    if points.last() != Some(&here) {
                        points.push(here);
                    }
                }
                let first = *points.first()?;
                let mut bounds = Bounds::of(first);
                for &(x, y) in &points {
                    bounds.add(x, y);
                }
                Some(Ring { points, bounds })
            })
            .collect();
        Coast { rings, bounds: Bounds { x0, y0, x1, y1 } }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GLASGOW: Point = Point { lat: 55.8617, lon: -4.2583 };

    #[test]
    fn the_coastline_is_scotland() {
        let coast = coast();
        let whole = coast.path_within(coast.bounds);
        assert!(whole.len() > 5_000 && whole.len() < 40_000, "{}", whole.len());
        assert!(whole.starts_with('M') && whole.ends_with('z'));
        // A street-level view of Glasgow carries a small part of it.
        let (x, y) = project(GLASGOW);
        let street = coast.path_within(Bounds { x0: x - 200.0, y0: y - 200.0, x1: x + 200.0, y1: y + 200.0 });
        assert!(street.len() < 2_000, "{}", street.len());
        // A view of the Firth of Clyde crosses the coast: cut rings stay closed.
        let clyde = coast.path_within(Bounds { x0: x - 4000.0, y0: y - 1000.0, x1: x, y1: y + 1000.0 });
        assert!(clyde.len() > 20 && clyde.matches('M').count() == clyde.matches('z').count(), "{clyde}");
        // Glasgow, Inverness and Lerwick lie inside the box the data was cut to.
        for p in [GLASGOW, Point { lat: 57.48, lon: -4.22 }, Point { lat: 60.15, lon: -1.15 }] {
            let (x, y) = project(p);
            let b = coast.bounds;
            assert!(b.x0 < x && x < b.x1 && b.y0 < y && y < b.y1, "{p:?}");
        }
    }
}
