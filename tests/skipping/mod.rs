//! The one way a test skips when something it needs is absent (nginx, Chromium, podman,
//! `../shared`): it says so in the test output, and passes. Where every tool is installed
//! (`.ci/run` sets `SVCDIR_REQUIRE_ALL=1`), a skip is a failure instead, so a green CI
//! always means that every test ran. Included by each test target (`#[path]`).

#![allow(dead_code)]

/// The environment variable that turns every skip into a failure.
pub const REQUIRE_ALL: &str = "SVCDIR_REQUIRE_ALL";

/// Whether [`REQUIRE_ALL`] is set to anything but empty or `0`.
pub fn required() -> bool {
    std::env::var_os(REQUIRE_ALL).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Skips the calling test, saying why: prints `skipped: REASON`, or panics when
/// [`REQUIRE_ALL`] is set. Call it, then return.
#[track_caller]
pub fn skip(reason: impl std::fmt::Display) {
    skip_when(required(), reason);
}

/// [`skip`] with the requirement given (the testable part).
#[track_caller]
pub fn skip_when(required: bool, reason: impl std::fmt::Display) {
    if required {
        panic!("{REQUIRE_ALL} is set, and this test would have skipped: {reason}");
    }
    eprintln!("skipped: {reason}");
}
