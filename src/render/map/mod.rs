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

mod coast;
mod frame;

use std::fmt::Write as _;

use crate::model::Point;
use crate::model::geo::EARTH_RADIUS_M;
use coast::coast;
use frame::{Bounds, Frame};

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

#[cfg(test)]
mod tests {
    use super::*;

    const GLASGOW: Point = Point { lat: 55.8617, lon: -4.2583 };

    fn texts(svg: &str) -> Vec<&str> {
        svg.split("<text ").skip(1).map(|t| &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()]).collect()
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
