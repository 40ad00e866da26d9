//! Integration tests: the real binaries on real files.

mod common;

mod build;
mod incremental;
mod shapes;

mod bad_input;
mod cli;
mod convert;
mod openapi;
mod postcodes;
mod schema;
mod skipping_rule;
mod slugs;

#[path = "../skipping/mod.rs"]
mod skipping;
