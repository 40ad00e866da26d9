//! The repository as a new user meets it (issue 15 item 10): the declared minimum Rust is
//! the real one and README says the same, the licence, the changelog, `make help`,
//! `make clean` and what git ignores.

use std::path::Path;
use std::process::Command;

use crate::common::{self, repo};

/// `cargo metadata` of the package, as JSON.
fn metadata(extra: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .args(extra)
        .current_dir(repo())
        .output()
        .expect("cargo metadata runs");
    common::assert_ok(&out);
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

fn version(text: &str) -> (u64, u64) {
    let mut parts = text.split('.').map(|p| p.parse::<u64>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

#[test]
fn rust_version_is_the_real_minimum_and_readme_says_so() {
    // Filtered to this platform: unfiltered, `cargo metadata` needs every platform's crates
    // in the local registry cache, which a fresh machine that only built here lacks.
    let host = metadata(&["--filter-platform", &host_triple()]);
    let own = host["packages"].as_array().unwrap().iter().find(|p| p["name"] == "svcdir").unwrap();
    let declared = own["rust_version"].as_str().expect("Cargo.toml declares rust-version");
    assert_eq!(own["license"], "MIT OR Apache-2.0");

    // Every package this platform's build uses declares a minimum no higher than ours.
    let used: std::collections::BTreeSet<&str> =
        host["resolve"]["nodes"].as_array().unwrap().iter().map(|n| n["id"].as_str().unwrap()).collect();
    let highest = host["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| used.contains(p["id"].as_str().unwrap()) && p["name"] != "svcdir")
        .filter_map(|p| Some((version(p["rust_version"].as_str()?), p["name"].as_str()?.to_owned())))
        .max()
        .unwrap();
    assert_eq!(version(declared), highest.0, "rust-version {declared}: {} needs {:?}", highest.1, highest.0);

    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(readme.contains(&format!("Rust {declared} or newer")), "README states rust-version {declared}");
    assert!(readme.contains("cargo install --path . --locked"), "README has an install section");
}

fn host_triple() -> String {
    let out = Command::new("rustc").arg("-vV").output().expect("rustc runs");
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines().find_map(|l| l.strip_prefix("host: ")).expect("rustc -vV names the host").to_owned()
}

#[test]
fn licence_files_and_changelog_exist() {
    let mit = std::fs::read_to_string(repo().join("LICENSE-MIT")).unwrap();
    assert!(mit.contains("Permission is hereby granted, free of charge"));
    let apache = std::fs::read_to_string(repo().join("LICENSE-APACHE")).unwrap();
    assert!(apache.contains("Apache License") && apache.contains("Version 2.0, January 2004"));
    let changelog = std::fs::read_to_string(repo().join("CHANGELOG.md")).unwrap();
    assert!(changelog.contains("Keep a Changelog"), "Keep a Changelog style");
    let unreleased = changelog.split("## [Unreleased]").nth(1).expect("an Unreleased section");
    assert!(unreleased.contains("--allow-shrink"), "it lists the work of issue 15");
}

fn make_available() -> bool {
    !svcdir::test_support::skip_unless(
        Command::new("make").arg("--version").output().is_ok_and(|o| o.status.success()),
        "make is not installed",
    )
}

#[test]
fn make_help_lists_every_documented_target() {
    if !make_available() {
        return;
    }
    let out = Command::new("make").args(["--no-print-directory", "help"]).current_dir(repo()).output().unwrap();
    common::assert_ok(&out);
    let help = String::from_utf8(out.stdout).unwrap();
    let makefile = std::fs::read_to_string(repo().join("Makefile")).unwrap();
    let documented: Vec<&str> =
        makefile.lines().filter_map(|l| l.strip_prefix("## ")?.split_once(':').map(|(name, _)| name)).collect();
    for target in ["build", "test", "lint", "clean", "install", "help", "serve"] {
        assert!(documented.contains(&target), "Makefile documents {target}");
    }
    for target in documented {
        assert!(
            help.lines().any(|l| l.split_whitespace().next() == Some(target) && l.split_whitespace().count() > 2),
            "make help lists {target} with its sentence:\n{help}"
        );
    }
}

#[test]
fn make_clean_removes_the_output_its_generations_and_the_index() {
    if !make_available() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    common::assert_ok(&common::build(&common::fixture("small"), work.path(), &[]));
    // A second build: both generations exist.
    let changed = work.path().join("input");
    common::copy_dir(&common::fixture("small"), &changed);
    let text = std::fs::read_to_string(changed.join("services.jsonl")).unwrap().replace("Emergency", "Urgent");
    std::fs::write(changed.join("services.jsonl"), text).unwrap();
    common::assert_ok(&common::build(&changed, work.path(), &[]));
    std::fs::remove_dir_all(&changed).unwrap();
    let index_dir = work.path().join("build");
    std::fs::create_dir(&index_dir).unwrap();
    std::fs::rename(work.path().join("search.idx"), index_dir.join("search.idx")).unwrap();
    assert!(work.path().join(".public.gens/a").is_dir() && work.path().join(".public.gens/b").is_dir());

    let output = work.path().join("public");
    let index = index_dir.join("search.idx");
    let out = Command::new("make")
        .args(["--no-print-directory", "clean"])
        .arg(format!("OUTPUT={}", output.display()))
        .arg(format!("INDEX={}", index.display()))
        .current_dir(repo())
        .output()
        .unwrap();
    common::assert_ok(&out);
    let left: Vec<String> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.is_empty(), "make clean left {left:?}");
}

#[test]
fn what_a_build_leaves_is_ignored_by_git() {
    let git_checkout = Command::new("git")
        .args(["rev-parse", "--is-inside-work-tree"])
        .current_dir(repo())
        .output()
        .is_ok_and(|o| o.status.success());
    if svcdir::test_support::skip_unless(git_checkout, "not a git checkout (or no git)") {
        return;
    }
    for path in ["public", ".public.gens/a/x.json", ".public.gens.link-tmp", ".public.lock", "build/search.idx"] {
        let ignored = Command::new("git").args(["check-ignore", "-q", "--no-index", path]).current_dir(repo()).status();
        assert!(ignored.unwrap().success(), "{path} is ignored by git");
    }
    assert!(Path::new(env!("CARGO_MANIFEST_DIR")).join(".gitignore").is_file());
}
