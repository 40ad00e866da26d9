//! Integration tests: the real binaries on real files.
// A test crate's modules share items as `pub`; the lint is for the library's API (Cargo.toml).
#![allow(unreachable_pub)]

use svcdir_testkit::dataset as common;

mod build;
mod incremental;
mod shapes;

mod bad_input;
mod changes;
mod cli;
mod convert;
mod downloads;
mod html_valid;
mod listings;
mod openapi;
mod openreferral;
mod postcodes;
mod publication;
mod repository;
mod schema;
mod slugs;
