//! Rendering: model → response bytes (JSON and HTML), in parallel.

pub mod html;
