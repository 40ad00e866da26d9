//! Integration tests: the real binaries on real files.

mod common;

mod build;
