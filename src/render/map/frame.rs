//! The part of the plane a map shows ([`Frame`]): its box, its scale, and the pieces every
//! map draws in it: the `<svg>` element with its title, description, sea and coastline, the
//! numbered markers and the scale bar.

use std::fmt::Write as _;

use super::coast::coast;
use super::{MIN_EXTENT_M, Marker, Num, WIDTH_PX, distance_text, escape, metres_per_x, metres_per_y, num, project};

/// A box of the plane.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Bounds {
    pub(super) x0: f64,
    pub(super) y0: f64,
    pub(super) x1: f64,
    pub(super) y1: f64,
}

impl Bounds {
    pub(super) fn of((x, y): (f64, f64)) -> Bounds {
        Bounds { x0: x, y0: y, x1: x, y1: y }
    }

    pub(super) fn add(&mut self, x: f64, y: f64) {
        self.x0 = self.x0.min(x);
        self.y0 = self.y0.min(y);
        self.x1 = self.x1.max(x);
        self.y1 = self.y1.max(y);
    }
}

/// The part of the plane a map shows, and its scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Frame {
    x0: f64,
    y0: f64,
    /// Width, in units of the plane.
    pub(super) w: f64,
    h: f64,
    /// Latitude of the frame's middle, for the scale bar.
    lat: f64,
}

impl Frame {
    /// `bounds` with a margin for the markers, at least [`MIN_EXTENT_M`] across, and between
    /// a landscape 16:9 and a square.
    pub(super) fn around(bounds: Bounds, lat: f64) -> Frame {
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
    pub(super) fn px(&self, px: f64) -> Num {
        num(px * self.w / WIDTH_PX)
    }

    /// The `<svg>` element with its title and description, the sea and the coastline.
    pub(super) fn open(&self, title: &str, desc: &str) -> String {
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
    pub(super) fn markers(&self, svg: &mut String, markers: &[Marker<'_>]) {
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
    pub(super) fn close(&self, svg: &mut String) {
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
