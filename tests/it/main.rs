//! Integration tests: the real binaries on real files.

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
