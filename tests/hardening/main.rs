//! Hardening (issue 6): crash safety of publishing, path safety and escaping of hostile
//! data, the search server's limits and faults, and property tests of the input readers.

#[path = "../it/common/mod.rs"]
mod common;
#[path = "../search_support/mod.rs"]
mod search_support;

mod crash;
mod escaping;
mod limits;
mod paths;
mod server;
