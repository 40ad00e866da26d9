//! What tests share that the library can hold: [`directory`], the in-memory directory the
//! search tests start from, and the one place where a test that cannot run here (no
//! nginx, no browser, no `../shared`) says so: every test target calls [`skipped`] or
//! [`skip_unless`], so that a skip is always printed, and turned into a failure where
//! everything is meant to run.
//!
//! `.ci/run` installs every tool the tests use and exports `SVCDIR_REQUIRE_ALL=1`: there a
//! skip panics with its reason, so a green CI means every test ran. Not part of the API.

pub mod directory;

use std::ffi::OsStr;
use std::io::Write;

/// The environment variable that turns every skip into a failure (any value but empty or `0`).
pub(crate) const REQUIRE_ALL: &str = "SVCDIR_REQUIRE_ALL";

/// Reports that the calling test cannot run here, and why: prints `skipped: REASON`, or
/// panics with the reason when `REQUIRE_ALL` is set. The caller then returns.
pub fn skipped(reason: &str) {
    if let Err(message) = decide(std::env::var_os(REQUIRE_ALL).as_deref(), reason) {
        panic!("{message}");
    }
    // Straight to the process's stderr, not through `eprintln!`, which the test harness
    // captures and hides for a passing test: the skip shows in every `cargo test` run.
    let _ = writeln!(std::io::stderr(), "skipped: {reason}");
}

/// [`skipped`] when `available` is false; true when the caller must return.
pub fn skip_unless(available: bool, reason: &str) -> bool {
    if !available {
        skipped(reason);
    }
    !available
}

/// Whether a skip is allowed under this value of [`REQUIRE_ALL`]; the failure message if not.
fn decide(require_all: Option<&OsStr>, reason: &str) -> Result<(), String> {
    match require_all {
        Some(value) if !value.is_empty() && value != "0" => {
            Err(format!("{REQUIRE_ALL} is set, so no test may skip, but this one would: {reason}"))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skip_fails_only_where_everything_must_run() {
        assert_eq!(decide(None, "no nginx"), Ok(()));
        assert_eq!(decide(Some(OsStr::new("")), "no nginx"), Ok(()));
        assert_eq!(decide(Some(OsStr::new("0")), "no nginx"), Ok(()));
        let err = decide(Some(OsStr::new("1")), "nginx is not installed").unwrap_err();
        assert!(err.contains("SVCDIR_REQUIRE_ALL") && err.ends_with("nginx is not installed"), "{err}");
    }

    #[test]
    fn skip_unless_skips_only_what_is_unavailable() {
        // Never reaches `skipped` (which would panic under SVCDIR_REQUIRE_ALL).
        assert!(!skip_unless(true, "present"));
    }
}
