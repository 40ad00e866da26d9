//! svcdir: a static API generator for a directory of health and wellbeing services.
//!
//! Data flows load → validate → model → render → write for the static files
//! (`svcdir build`), and index → query → respond for search (`svcdir-search`).

pub mod cli;
pub mod input;
pub mod model;
pub mod render;
pub mod sample;
pub mod views;
