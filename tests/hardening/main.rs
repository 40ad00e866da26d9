//! Hardening (issue 6): crash safety of publishing, path safety and escaping of hostile
//! data, the search server's limits and faults, and property tests of the input readers.

use svcdir_testkit::dataset as common;

mod crash;
mod escaping;
mod inputs;
mod limits;
mod paths;
mod server;
mod store;
