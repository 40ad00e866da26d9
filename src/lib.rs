//! svcdir: a static API generator for a directory of health and wellbeing services.
//!
//! Data flows load → validate → model → render → write for the static files
//! (`svcdir build`), and index → query → respond for search (`svcdir-search`).

pub mod api;
pub mod build;
pub(crate) mod changes;
pub mod cli;
pub mod compress;
pub mod config;
pub mod convert;
pub(crate) mod downloads;
pub mod edge;
pub mod index;
pub mod input;
pub(crate) mod jobs;
pub mod listings;
pub mod model;
pub mod nginx;
pub(crate) mod openapi;
pub mod openreferral;
pub mod preview;
pub mod publish;
pub(crate) mod render;
pub mod report;

pub mod sample;
pub mod schema;
pub mod search;
pub mod server;
#[doc(hidden)]
pub mod test_support;
#[cfg(feature = "cloud")]
pub mod tls;
pub(crate) mod urls;
pub mod validate;
pub mod views;
pub mod write;
