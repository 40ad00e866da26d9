//! Integration tests: the real binaries on real files.

mod common;

mod build;
mod incremental;
mod shapes;

mod bad_input;
mod postcodes;
mod slugs;
