//! The skip rule of `tests/skipping` (issue 15, item 11): a skip says so and passes, unless
//! `SVCDIR_REQUIRE_ALL` is set, as `.ci/run` sets it, where it fails.

use crate::skipping::{REQUIRE_ALL, skip_when};

#[test]
fn a_skip_passes_with_a_message() {
    skip_when(false, "nothing is missing here; this only shows that a skip passes");
}

#[test]
#[should_panic(expected = "SVCDIR_REQUIRE_ALL is set, and this test would have skipped: nginx is not installed")]
fn a_skip_fails_when_everything_is_required() {
    skip_when(true, "nginx is not installed");
}

#[test]
fn ci_runs_the_tests_with_every_skip_a_failure() {
    let ci = std::fs::read_to_string(crate::common::repo().join(".ci/run")).expect(".ci/run");
    assert!(ci.contains(&format!("{REQUIRE_ALL}=1 make test")), ".ci/run must run `make test` with {REQUIRE_ALL}=1");
}
