//! The maps of the HTML views (behaviour.md, "Import and lists"): inline SVG drawn on the
//! server over a simplified coastline of Scotland built into the program, with nothing
//! fetched from elsewhere and the same bytes for the same answer.
//!
//! The coastline (`coast.json`, made once by `tools/coastline/make.py` from Natural Earth's
//! public-domain 1:10m land polygons) is projected once, on first use, into one fixed plane
//! and written as one SVG path; each map is only a `viewBox` onto that plane, so drawing a
//! map costs its markers, never the coastline. The plane is equirectangular, true to scale
//! at 57° N: x = (lon + 10) · cos 57° and y = 62 − lat, in units of 0.0001° of latitude
//! (about 11 m). Distances on the map (the radius circle, the scale bar) are worked out at
//! their own latitude, so they stay true where the plane is not.

use std::fmt::Write as _;
use std::sync::OnceLock;

use crate::model::Point;
use crate::model::geo::EARTH_RADIUS_M;

/// Degrees of latitude per unit of the plane.
const UNIT_DEG: f64 = 1e-4;
/// The latitude at which the plane is true to scale.
const TRUE_LAT: f64 = 57.0;
/// The drawn width of every map, in CSS pixels (it shrinks with a narrow page).
const WIDTH_PX: f64 = 640.0;
/// The smallest extent shown, in metres: one location alone gets a street-level view.
const MIN_EXTENT_M: f64 = 2000.0;

/// A numbered place on a map.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Marker<'a> {
    /// The number drawn on it: its position in the page's list, from 1.
    pub number: usize,
    /// Where it is.
    pub point: Point,
    /// What it is (a service's name, a location's address), for the text alternative.
    pub label: &'a str,
}

/// The map of a search page: the point searched from (`from`, named `from_name`), the
/// circle of `radius_m` metres around it, and the located results. None when no result of
/// the page has a location (such a page shows no map).
pub(crate) fn search_map(from: Point, from_name: &str, radius_m: u64, markers: &[Marker<'_>]) -> Option<String> {
    if markers.is_empty() {
        return None;
    }
    let centre = project(from);
    let radius = radius_m as f64;
    let (rx, ry) = (radius / metres_per_x(from.lat), radius / metres_per_y());
    let coast = coast();
    // The circle counts towards the frame only within the coastline's box: a radius of a
    // thousand kilometres still shows Scotland, not the sea around it.
    let mut bounds = Bounds::of(centre);
    bounds.add((centre.0 - rx).max(coast.bounds.x0), (centre.1 - ry).max(coast.bounds.y0));
    bounds.add((centre.0 + rx).min(coast.bounds.x1), (centre.1 + ry).min(coast.bounds.y1));
    for marker in markers {
        let (x, y) = project(marker.point);
        bounds.add(x, y);
    }
    let frame = Frame::around(bounds, from.lat);
    let shown = markers.len();
    let title = format!("Map of the results near {from_name}");
    let mut desc = format!(
        "The point searched from, {from_name}, with a circle of radius {} around it, and {} of this page's \
         results at their location nearest to it, each numbered by its place in the list:",
        distance_text(radius),
        if shown == 1 { "one".to_owned() } else { shown.to_string() },
    );
    for (n, marker) in markers.iter().enumerate() {
        let separator = if n == 0 { " " } else { "; " };
        let away = distance_text(from.distance_m(marker.point));
        let _ = write!(desc, "{separator}{}. {}, {away} away", marker.number, marker.label);
    }
    desc.push('.');
    let mut svg = frame.open(&title, &desc);
    if radius > 0.0 {
        let _ = writeln!(
            svg,
            "<ellipse cx=\"{}\" cy=\"{}\" rx=\"{}\" ry=\"{}\" fill=\"#0b5cad\" fill-opacity=\"0.08\" stroke=\"#0b5cad\" \
             stroke-width=\"{}\" stroke-dasharray=\"{} {}\"/>",
            num(centre.0),
            num(centre.1),
            num(rx),
            num(ry),
            frame.px(1.5),
            frame.px(6.0),
            frame.px(4.0),
        );
    }
    // The point searched from: a ring with a cross.
    let (s, r) = (9.0 * frame.w / WIDTH_PX, frame.px(5.0));
    let _ = writeln!(
        svg,
        "<g><title>{}, the point searched from</title><circle cx=\"{}\" cy=\"{}\" r=\"{r}\" fill=\"#fff\" \
         stroke=\"#1b1b1b\" stroke-width=\"{w}\"/><path d=\"M{} {}h{}M{} {}v{}\" stroke=\"#1b1b1b\" stroke-width=\"{w}\"/></g>",
        escape(from_name),
        num(centre.0),
        num(centre.1),
        num(centre.0 - s),
        num(centre.1),
        num(2.0 * s),
        num(centre.0),
        num(centre.1 - s),
        num(2.0 * s),
        w = frame.px(2.0),
    );
    frame.markers(&mut svg, markers);
    frame.close(&mut svg);
    Some(svg)
}

/// The map of a service's or an organisation's locations (`subject` names it). None when
/// it has no location.
pub(crate) fn places_map(subject: &str, markers: &[Marker<'_>]) -> Option<String> {
    let first = markers.first()?;
    let mut bounds = Bounds::of(project(first.point));
    let mut lat = (f64::MAX, f64::MIN);
    for marker in markers {
        let (x, y) = project(marker.point);
        bounds.add(x, y);
        lat = (lat.0.min(marker.point.lat), lat.1.max(marker.point.lat));
    }
    let frame = Frame::around(bounds, (lat.0 + lat.1) / 2.0);
    let title = format!("Map of the locations of {subject}");
    let mut desc = match markers.len() {
        1 => format!("{subject} has one location:"),
        n => format!("{subject} has {n} locations, each numbered by its place in the list:"),
    };
    for (n, marker) in markers.iter().enumerate() {
        let separator = if n == 0 { " " } else { "; " };
        let _ = write!(desc, "{separator}{}. {}", marker.number, marker.label);
    }
    desc.push('.');
    let mut svg = frame.open(&title, &desc);
    frame.markers(&mut svg, markers);
    frame.close(&mut svg);
    Some(svg)
}

/// `(x, y)` of a point in the plane.
fn project(p: Point) -> (f64, f64) {
    ((p.lon + 10.0) * TRUE_LAT.to_radians().cos() / UNIT_DEG, (62.0 - p.lat) / UNIT_DEG)
}

/// Metres per unit of y (a unit of latitude is the same length everywhere).
fn metres_per_y() -> f64 {
    UNIT_DEG.to_radians() * EARTH_RADIUS_M
}

/// Metres per unit of x at latitude `lat`.
fn metres_per_x(lat: f64) -> f64 {
    metres_per_y() * lat.to_radians().cos() / TRUE_LAT.to_radians().cos()
}

/// A distance as the text alternative and the scale bar say it: `800 m`, `2.3 km`, `15 km`.
fn distance_text(metres: f64) -> String {
    if metres < 1000.0 {
        format!("{} m", metres.round())
    } else if metres < 10_000.0 {
        let km = format!("{:.1}", metres / 1000.0);
        format!("{} km", km.strip_suffix(".0").unwrap_or(&km))
    } else {
        format!("{} km", (metres / 1000.0).round())
    }
}

/// A coordinate or length of the plane, with one decimal (a few hundredths of a pixel at
/// the smallest extent): short, and the same bytes for the same number. Written where it
/// is shown, without a string of its own (a map has a few dozen).
fn num(v: f64) -> Num {
    Num(v)
}

/// [`num`]'s text: `{:.1}` without a trailing `.0`, and `0` for `-0`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Num(f64);

impl std::fmt::Display for Num {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fn shown(text: &str) -> &str {
            match text.strip_suffix(".0") {
                Some("-0") => "0",
                Some(whole) => whole,
                None => text,
            }
        }
        let mut buf = [0u8; 48];
        let mut cursor = std::io::Cursor::new(&mut buf[..]);
        if std::io::Write::write_fmt(&mut cursor, format_args!("{:.1}", self.0)).is_ok() {
            let len = cursor.position() as usize;
            // `{:.1}` writes ASCII only.
            if let Ok(text) = std::str::from_utf8(&buf[..len]) {
                return f.write_str(shown(text));
            }
        }
        // Longer than the buffer: far beyond any map, written all the same.
        f.write_str(shown(&format!("{:.1}", self.0)))
    }
}

fn escape(text: &str) -> v_htmlescape::VHtmlescape<'_> {
    v_htmlescape::escape(text)
}

/// A box of the plane.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bounds {
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

impl Bounds {
    fn of((x, y): (f64, f64)) -> Bounds {
        Bounds { x0: x, y0: y, x1: x, y1: y }
    }

    fn add(&mut self, x: f64, y: f64) {
        self.x0 = self.x0.min(x);
        self.y0 = self.y0.min(y);
        self.x1 = self.x1.max(x);
        self.y1 = self.y1.max(y);
    }
}

/// The part of the plane a map shows, and its scale.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Frame {
    x0: f64,
    y0: f64,
    w: f64,
    h: f64,
    /// Latitude of the frame's middle, for the scale bar.
    lat: f64,
}

impl Frame {
    /// `bounds` with a margin for the markers, at least [`MIN_EXTENT_M`] across, and between
    /// a landscape 16:9 and a square.
    fn around(bounds: Bounds, lat: f64) -> Frame {
        let min = MIN_EXTENT_M / metres_per_y();
        let (mut w, mut h) = ((bounds.x1 - bounds.x0).max(min), (bounds.y1 - bounds.y0).max(min));
        let margin = 0.12 * w.max(h);
        w += 2.0 * margin;
        h += 2.0 * margin;
        if h > w {
            w = h;
        } else if h < w * 9.0 / 16.0 {
            h = w * 9.0 / 16.0;
        }
        let (cx, cy) = ((bounds.x0 + bounds.x1) / 2.0, (bounds.y0 + bounds.y1) / 2.0);
        Frame { x0: cx - w / 2.0, y0: cy - h / 2.0, w, h, lat }
    }

    /// `px` CSS pixels in units of the plane.
    fn px(&self, px: f64) -> Num {
        num(px * self.w / WIDTH_PX)
    }

    /// The `<svg>` element with its title and description, the sea and the coastline.
    fn open(&self, title: &str, desc: &str) -> String {
        let coast = coast();
        let height = (WIDTH_PX * self.h / self.w).round();
        // The coastline within the frame and a margin of a tenth around it.
        let (mx, my) = (self.w / 10.0, self.h / 10.0);
        let path = coast.path_within(Bounds {
            x0: self.x0 - mx,
            y0: self.y0 - my,
            x1: self.x0 + self.w + mx,
            y1: self.y0 + self.h + my,
        });
        let mut svg = String::with_capacity(path.len() + 4096);
        let _ = write!(
            svg,
            "<svg class=\"map\" width=\"{WIDTH_PX}\" height=\"{height}\" viewBox=\"{} {} {} {}\" role=\"img\" \
             aria-labelledby=\"map-title map-desc\">\n<title id=\"map-title\">{}</title>\n<desc id=\"map-desc\">{}</desc>\n\
             <rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#dcebf5\"/>\n\
             <path d=\"{}\" fill=\"#f3f0e6\" stroke=\"#8c9a8c\" stroke-width=\"{}\" stroke-linejoin=\"round\"/>\n",
            num(self.x0),
            num(self.y0),
            num(self.w),
            num(self.h),
            escape(title),
            escape(desc),
            num(self.x0),
            num(self.y0),
            num(self.w),
            num(self.h),
            path,
            self.px(1.0),
        );
        svg
    }

    /// Numbered markers, the first drawn last so that it stays on top.
    fn markers(&self, svg: &mut String, markers: &[Marker<'_>]) {
        let (r, font) = (self.px(11.0), self.px(12.0));
        for marker in markers.iter().rev() {
            let (x, y) = project(marker.point);
            let _ = writeln!(
                svg,
                "<g><title>{n}. {}</title><circle cx=\"{x}\" cy=\"{y}\" r=\"{r}\" fill=\"#b3261e\" stroke=\"#fff\" \
                 stroke-width=\"{w}\"/><text x=\"{x}\" y=\"{y}\" dy=\"0.35em\" text-anchor=\"middle\" \
                 font-family=\"sans-serif\" font-size=\"{font}\" font-weight=\"bold\" fill=\"#fff\">{n}</text></g>",
                escape(marker.label),
                n = marker.number,
                x = num(x),
                y = num(y),
                w = self.px(1.5),
            );
        }
    }

    /// The scale bar (a round distance near a quarter of the width, its label with its
    /// unit), then `</svg>`.
    fn close(&self, svg: &mut String) {
        let per_unit = metres_per_x(self.lat);
        let quarter = self.w * per_unit / 4.0;
        let step = 10f64.powf(quarter.log10().floor());
        let metres = [5.0, 2.0, 1.0].into_iter().map(|k| k * step).find(|&m| m <= quarter).unwrap_or(step);
        let length = metres / per_unit;
        let unit = self.w / WIDTH_PX;
        let (x, y) = (self.x0 + 14.0 * unit, self.y0 + self.h - 14.0 * unit);
        let _ = write!(
            svg,
            "<g><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fff\" fill-opacity=\"0.8\"/>\
             <path d=\"M{} {}v{}h{}v{}\" fill=\"none\" stroke=\"#1b1b1b\" stroke-width=\"{}\"/>\
             <text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-family=\"sans-serif\" font-size=\"{}\" fill=\"#1b1b1b\">{}</text></g>\n</svg>",
            num(x - 6.0 * unit),
            num(y - 26.0 * unit),
            num(length + 12.0 * unit),
            num(32.0 * unit),
            num(x),
            num(y - 5.0 * unit),
            num(5.0 * unit),
            num(length),
            num(-5.0 * unit),
            self.px(2.0),
            num(x + length / 2.0),
            num(y - 10.0 * unit),
            self.px(12.0),
            distance_text(metres),
        );
    }
}

/// The coastline, projected once into whole units of the plane.
struct Coast {
    rings: Vec<Ring>,
    /// The box the data was cut to.
    bounds: Bounds,
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
    fn path_within(&self, view: Bounds) -> String {
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

fn coast() -> &'static Coast {
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

    fn texts(svg: &str) -> Vec<&str> {
        svg.split("<text ").skip(1).map(|t| &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()]).collect()
    }

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

    #[test]
    fn a_search_map_has_its_point_circle_numbered_markers_and_scale() {
        let markers = [
            Marker { number: 1, point: Point { lat: 55.864, lon: -4.251 }, label: "Café <one>" },
            Marker { number: 3, point: Point { lat: 55.87, lon: -4.29 }, label: "Three" },
        ];
        let svg = search_map(GLASGOW, "G2 1AL", 5000, &markers).unwrap();
        assert_eq!(svg, search_map(GLASGOW, "G2 1AL", 5000, &markers).unwrap(), "the same bytes");
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>"));
        assert!(svg.contains("<title id=\"map-title\">Map of the results near G2 1AL</title>"));
        assert!(svg.contains("circle of radius 5 km") && svg.contains("1. Café &lt;one&gt;, 522 m away"), "{svg}");
        assert!(svg.contains("<ellipse "));
        let texts = texts(&svg);
        assert_eq!(texts, ["3", "1", "2 km"], "markers last first, then the scale's label");
        assert!(!svg.contains("<script") && !svg.contains("href"));
        assert_eq!(search_map(GLASGOW, "G2 1AL", 5000, &[]), None, "no located result, no map");
    }

    #[test]
    fn the_scale_bar_is_a_round_distance_with_its_unit() {
        for (radius, label) in [(0, "500 m"), (5000, "2 km"), (100_000, "50 km")] {
            let marker = [Marker { number: 1, point: GLASGOW, label: "x" }];
            let svg = search_map(GLASGOW, "G2 1AL", radius, &marker).unwrap();
            assert_eq!(texts(&svg).last(), Some(&label), "radius {radius}");
        }
    }

    #[test]
    fn a_places_map_numbers_every_location() {
        let one = [Marker { number: 1, point: GLASGOW, label: "1 George Square" }];
        let svg = places_map("Befriending line", &one).unwrap();
        assert!(svg.contains("Befriending line has one location: 1. 1 George Square."), "{svg}");
        assert_eq!(places_map("Nowhere", &[]), None);
    }

    #[test]
    fn numbers_and_distances_are_written_alike_every_time() {
        assert_eq!(num(-0.04).to_string(), "0");
        assert_eq!(num(12.0).to_string(), "12");
        assert_eq!(num(-3.25).to_string(), "-3.2");
        assert_eq!(distance_text(450.4), "450 m");
        assert_eq!(distance_text(2345.0), "2.3 km");
        assert_eq!(distance_text(5000.0), "5 km");
        assert_eq!(distance_text(123_456.0), "123 km");
    }
}
