//! Command-line conventions of `svcdir` (issue 7): `build --json`, exit codes 0/1/2, and
//! `NO_COLOR`.

use std::process::Command;

use serde_json::Value;

use crate::common::{self, fixture};

fn build_json(input: &std::path::Path, work: &std::path::Path) -> (Option<i32>, Value, String) {
    let output = common::build(input, work, &["--json"]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "one JSON line on stdout:\n{stdout}");
    let value: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    (output.status.code(), value, String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn build_json_prints_one_summary_object() {
    let work = tempfile::tempdir().unwrap();
    let (code, first, _) = build_json(&fixture("small"), work.path());
    assert_eq!(code, Some(0), "{first}");
    assert_eq!(first["ok"], true);
    assert_eq!(first["services"], 6);
    assert_eq!(first["organisations"], 2);
    assert_eq!(first["postcodes"], 2);
    assert_eq!(first["up_to_date"], false);
    for key in ["files", "bytes", "changed", "written", "index_bytes"] {
        assert!(first[key].as_u64().is_some_and(|n| n > 0), "{key} in {first}");
    }
    for key in ["unchanged", "removed"] {
        assert!(first[key].as_u64().is_some(), "{key} in {first}");
    }
    assert!(first["seconds"].as_f64().is_some(), "{first}");
    assert_eq!(first["changed"], first["files"], "a first build changes every file");

    let (code, second, _) = build_json(&fixture("small"), work.path());
    assert_eq!(code, Some(0));
    assert_eq!(second["up_to_date"], true, "{second}");
    assert_eq!(second["unchanged"], first["files"]);
    assert_eq!(second["changed"], 0);
    // issue 15: the numbers of the published build, not zeros.
    for key in ["services", "organisations", "postcodes", "files", "bytes", "index_bytes"] {
        assert_eq!(second[key], first[key], "{key}: {second}");
    }
}

#[test]
fn build_json_lists_the_data_errors_and_exits_1() {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("input");
    common::copy_dir(&fixture("small"), &input);
    let path = input.join("locations.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut record: Value = serde_json::from_str(&lines[1]).unwrap();
    record["latitude"] = serde_json::json!(95.5);
    lines[1] = record.to_string();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();

    let (code, value, stderr) = build_json(&input, work.path());
    assert_eq!(code, Some(1), "{value}");
    assert_eq!(value["ok"], false);
    assert_eq!(value["more"], 0);
    let errors = value["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{value}");
    let error = &errors[0];
    assert_eq!(error["file"], "locations.jsonl");
    assert_eq!(error["line"], 2);
    assert_eq!(error["field"], "latitude");
    assert_eq!(error["value"], "95.5");
    assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()), "{error}");
    // The human-readable report still goes to stderr.
    assert!(stderr.contains("locations.jsonl:2"), "{stderr}");
}

#[test]
fn build_json_reports_bad_usage_with_exit_2() {
    let work = tempfile::tempdir().unwrap();
    let output = common::svcdir(&[
        "build",
        "--input",
        fixture("small").to_str().unwrap(),
        "--output",
        work.path().join("public").to_str().unwrap(),
        "--index",
        work.path().join("search.idx").to_str().unwrap(),
        "--base-url",
        "not a url",
        "--json",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(value["ok"], false);
    assert!(value["errors"][0]["message"].as_str().is_some_and(|m| !m.is_empty()), "{value}");
}

#[test]
fn exit_codes_are_0_1_2() {
    let ok = common::svcdir(&["validate", "--input", fixture("small").to_str().unwrap()]);
    assert_eq!(ok.status.code(), Some(0));
    let work = tempfile::tempdir().unwrap();
    let bad = common::svcdir(&["validate", "--input", work.path().join("missing").to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(1));
    let usage = common::svcdir(&["build", "--no-such-option"]);
    assert_eq!(usage.status.code(), Some(2));
}

fn svcdir_env(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_svcdir"));
    command.args(args).env_remove("NO_COLOR").env_remove("SVCDIR_BASE_URL");
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().unwrap()
}

#[test]
fn no_color_turns_colour_off_even_when_forced() {
    // CLICOLOR_FORCE makes clap colour its usage errors even into a pipe; NO_COLOR wins.
    let coloured = svcdir_env(&["build", "--no-such-option"], &[("CLICOLOR_FORCE", "1")]);
    assert!(coloured.stderr.contains(&0x1b), "the control case must be coloured");
    let plain = svcdir_env(&["build", "--no-such-option"], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]);
    assert_eq!(plain.status.code(), Some(2));
    assert!(!plain.stderr.contains(&0x1b), "{}", String::from_utf8_lossy(&plain.stderr));
    let help = svcdir_env(&["build", "--help"], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]);
    assert!(!help.stdout.contains(&0x1b), "{}", String::from_utf8_lossy(&help.stdout));
}

// ---- issue 15 ------------------------------------------------------------------------

fn stdout_json(output: &std::process::Output) -> Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(stdout.lines().count(), 1, "one JSON line on stdout:\n{stdout}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn validate_json_prints_one_object_like_build_json() {
    let ok = common::svcdir(&["validate", "--json", "--input", fixture("small").to_str().unwrap()]);
    assert_eq!(ok.status.code(), Some(0));
    let value = stdout_json(&ok);
    assert_eq!(value["ok"], true);
    assert_eq!((value["services"].as_u64(), value["organisations"].as_u64()), (Some(6), Some(2)), "{value}");
    assert!(value["locations"].as_u64().is_some() && value["postcodes"] == 2, "{value}");

    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("input");
    common::copy_dir(&fixture("small"), &input);
    std::fs::write(input.join("services.jsonl"), "{not json}\n").unwrap();
    let bad = common::svcdir(&["validate", "--json", "--input", input.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(1));
    let value = stdout_json(&bad);
    assert_eq!(value["ok"], false);
    assert_eq!(value["errors"][0]["file"], "services.jsonl", "{value}");
    assert_eq!(value["errors"][0]["line"], 1, "{value}");
    assert_eq!(value["more"], 0);
    // The same shape as `build --json` on the same data.
    let (code, built, _) = build_json(&input, work.path());
    assert_eq!(code, Some(1));
    assert_eq!(built, value);
}

#[test]
fn output_is_the_option_everywhere_and_out_its_alias() {
    let work = tempfile::tempdir().unwrap();
    for (option, dir) in [("--output", "new"), ("--out", "old")] {
        let out = work.path().join(dir);
        let sample = common::svcdir(&["sample", "--services", "12", "--seed", "3", option, out.to_str().unwrap()]);
        common::assert_ok(&sample);
        assert!(out.join("services.jsonl").is_file(), "sample {option}");
        let schemas = work.path().join(format!("schemas-{dir}"));
        common::assert_ok(&common::svcdir(&["schema", option, schemas.to_str().unwrap()]));
        assert!(schemas.join("services.schema.json").is_file(), "schema {option}");
    }
    assert_eq!(
        std::fs::read(work.path().join("new/services.jsonl")).unwrap(),
        std::fs::read(work.path().join("old/services.jsonl")).unwrap()
    );
    for command in ["sample", "schema", "convert"] {
        let help = common::svcdir(&[command, "--help"]);
        let text = String::from_utf8_lossy(&help.stdout);
        assert!(text.contains("--output <DIR>") && text.contains("aliases: --out"), "{command} --help:\n{text}");
    }
}

#[test]
fn a_bad_listen_address_is_a_usage_error() {
    for (binary, args) in [
        (env!("CARGO_BIN_EXE_svcdir"), &["serve", "--listen"][..]),
        (env!("CARGO_BIN_EXE_svcdir-search"), &["--listen"][..]),
    ] {
        for bad in ["nonsense", "127.0.0.1", "127.0.0.1:99999", "[zz]:80"] {
            let output = Command::new(binary).args(args).arg(bad).output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(2), "{binary} {args:?} {bad}: {stderr}");
            assert!(stderr.contains("not HOST:PORT"), "{stderr}");
            // clap quotes the value once; the message does not quote it again.
            assert_eq!(stderr.matches(bad).count(), 1, "{stderr}");
        }
    }
}

#[test]
fn make_help_lists_every_documented_target_and_clean_removes_the_generations() {
    let repo = common::repo();
    let makefile = std::fs::read_to_string(repo.join("Makefile")).unwrap();
    let help = Command::new("make").arg("-s").arg("-C").arg(&repo).arg("help").output().expect("make runs");
    assert!(help.status.success());
    let listed = String::from_utf8_lossy(&help.stdout);
    let documented: Vec<&str> = makefile
        .lines()
        .filter_map(|l| l.strip_prefix("## ")?.split_once(':').map(|(t, _)| t))
        .filter(|t| !t.contains(' '))
        .collect();
    for target in ["help", "install", "build", "test", "clean", "lint"] {
        assert!(documented.contains(&target), "{target} has a `## {target}:` comment");
    }
    for target in &documented {
        assert!(listed.lines().any(|l| l.split_whitespace().next() == Some(target)), "{target}:\n{listed}");
    }

    // `make clean` with this Makefile, in a scratch folder holding a real build.
    let work = tempfile::tempdir().unwrap();
    std::fs::copy(repo.join("Makefile"), work.path().join("Makefile")).unwrap();
    common::assert_ok(&common::build(&fixture("small"), work.path(), &[]));
    std::fs::create_dir_all(work.path().join("build")).unwrap();
    for left in ["public", ".public.gens", ".public.lock"] {
        assert!(work.path().join(left).symlink_metadata().is_ok(), "{left} before");
    }
    let clean = Command::new("make").arg("-s").arg("-C").arg(work.path()).arg("clean").output().unwrap();
    assert!(clean.status.success(), "{}", String::from_utf8_lossy(&clean.stderr));
    for gone in ["public", ".public.gens", ".public.lock", "build"] {
        assert!(work.path().join(gone).symlink_metadata().is_err(), "{gone} after make clean");
    }
    // And git ignores them.
    let ignore = std::fs::read_to_string(repo.join(".gitignore")).unwrap();
    assert!(ignore.lines().any(|l| l == ".*.gens/") && ignore.lines().any(|l| l == ".*.lock"), "{ignore}");
}

#[test]
fn cargo_toml_declares_the_license_and_the_real_rust_version_readme_states() {
    let repo = common::repo();
    let manifest = std::fs::read_to_string(repo.join("Cargo.toml")).unwrap();
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    let version = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .expect("rust-version in Cargo.toml");
    // rstar 0.14, a dependency, declares 1.90: nothing lower can build it.
    assert!(version.split('.').map(|p| p.parse::<u32>().unwrap()).collect::<Vec<_>>() >= vec![1, 90], "{version}");
    assert!(readme.contains(&format!("{version} or newer")), "README states {version}");
    assert!(manifest.contains("license = \"MIT OR Apache-2.0\""));
    for file in ["LICENSE-MIT", "LICENSE-APACHE", "CHANGELOG.md"] {
        assert!(repo.join(file).is_file(), "{file}");
    }
    assert!(readme.contains("cargo install --path . --locked"));
    let changelog = std::fs::read_to_string(repo.join("CHANGELOG.md")).unwrap();
    assert!(changelog.contains("## [Unreleased]") && changelog.contains("keepachangelog"));
}
