//! The search, one integration target: its rules one by one through the router
//! (`rules`), a differential test of thousands of random queries against a brute-force
//! reference written from behaviour.md (`differential`), and the real `svcdir-search`
//! binary over HTTP (`server`). `support` holds the requests and the reference.
// A test crate's modules share items as `pub`; the lint is for the library's API (Cargo.toml).
#![allow(unreachable_pub)]

mod differential;
mod follow;
mod rules;
mod server;
mod support;
