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
    // An up-to-date build reports what is published, not zeros (issue 15 item 5).
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

// --- issue 15: the shrink guard (item 4) and `validate --json` (item 5) ---

/// The small fixture copied into `work/input`, so a test can change it.
fn editable_small(work: &std::path::Path) -> std::path::PathBuf {
    let input = work.join("input");
    common::copy_dir(&fixture("small"), &input);
    input
}

#[test]
fn a_build_that_would_empty_the_site_stops_and_changes_nothing() {
    let work = tempfile::tempdir().unwrap();
    let input = editable_small(work.path());
    common::assert_ok(&common::build(&input, work.path(), &[]));
    let public = work.path().join("public");
    let published = common::read_tree(&public);
    let index = std::fs::read(work.path().join("search.idx")).unwrap();

    std::fs::write(input.join("services.jsonl"), "").unwrap();
    let refused = common::build(&input, work.path(), &[]);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("would publish no service") && stderr.contains("--allow-shrink"), "{stderr}");
    assert_eq!(common::read_tree(&public), published, "public/ unchanged byte for byte");
    assert_eq!(std::fs::read(work.path().join("search.idx")).unwrap(), index, "index unchanged");

    let allowed = common::build(&input, work.path(), &["--allow-shrink", "--json"]);
    common::assert_ok(&allowed);
    let summary: Value = serde_json::from_slice(&allowed.stdout).unwrap();
    assert_eq!(summary["services"], 0, "{summary}");
    assert_eq!(common::json(&public, "api/v4/import/index.json")["count"], 0);
}

#[test]
fn a_build_with_under_half_the_published_services_stops() {
    let work = tempfile::tempdir().unwrap();
    let input = editable_small(work.path());
    common::assert_ok(&common::build(&input, work.path(), &[]));
    let public = work.path().join("public");
    let published = common::read_tree(&public);

    // 6 services published; the first 2 lines (both published) left.
    let services = std::fs::read_to_string(input.join("services.jsonl")).unwrap();
    let kept: Vec<&str> = services.lines().take(2).collect();
    std::fs::write(input.join("services.jsonl"), kept.join("\n") + "\n").unwrap();
    let refused = common::build(&input, work.path(), &["--json"]);
    assert_eq!(refused.status.code(), Some(1));
    let body: Value = serde_json::from_slice(&refused.stdout).unwrap();
    assert_eq!(body["ok"], false);
    let message = body["errors"][0]["message"].as_str().unwrap();
    assert!(message.contains("2 services, fewer than half of the 6 published now"), "{message}");
    assert_eq!(common::read_tree(&public), published, "public/ unchanged byte for byte");

    common::assert_ok(&common::build(&input, work.path(), &["--allow-shrink"]));
    assert_eq!(common::json(&public, "api/v4/import/index.json")["count"], 2);
}

#[test]
fn a_first_build_with_no_service_stops_unless_allowed() {
    let work = tempfile::tempdir().unwrap();
    let input = editable_small(work.path());
    std::fs::write(input.join("services.jsonl"), "").unwrap();
    let refused = common::build(&input, work.path(), &[]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(!work.path().join("public").exists(), "nothing published");
    assert!(!work.path().join("search.idx").exists(), "no index written");
    common::assert_ok(&common::build(&input, work.path(), &["--allow-shrink"]));
}

#[test]
fn validate_json_prints_one_object() {
    let ok = common::svcdir(&["validate", "--input", fixture("small").to_str().unwrap(), "--json"]);
    common::assert_ok(&ok);
    let stdout = String::from_utf8(ok.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let value: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(value["ok"], true);
    assert_eq!(value["services"], 6);
    assert_eq!(value["organisations"], 2);
    assert_eq!(value["postcodes"], 2);
    assert!(value["locations"].as_u64().is_some_and(|n| n > 0), "{value}");

    let work = tempfile::tempdir().unwrap();
    let input = editable_small(work.path());
    std::fs::write(input.join("services.jsonl"), "{not json\n").unwrap();
    let bad = common::svcdir(&["validate", "--input", input.to_str().unwrap(), "--json"]);
    assert_eq!(bad.status.code(), Some(1));
    let value: Value = serde_json::from_slice(&bad.stdout).unwrap();
    assert_eq!(value["ok"], false);
    assert_eq!(value["errors"][0]["file"], "services.jsonl");
    assert_eq!(value["errors"][0]["line"], 1);
    assert!(value["more"].as_u64().is_some(), "{value}");
}

// --- issue 15 item 9: consistent options, usage errors, progress, quoting ---

#[test]
fn output_names_every_written_folder_and_the_old_out_still_works() {
    let work = tempfile::tempdir().unwrap();
    for (command, flag) in [("sample", "--output"), ("sample", "--out"), ("schema", "--output"), ("schema", "--out")] {
        let help = common::svcdir(&[command, "--help"]);
        let text = String::from_utf8_lossy(&help.stdout);
        assert!(text.contains("--output <DIR>"), "{command} --help names --output:\n{text}");
        let dir = work.path().join(format!("{command}{flag}"));
        let mut args = vec![command, flag, dir.to_str().unwrap()];
        if command == "sample" {
            args.extend(["--services", "20"]);
        }
        common::assert_ok(&common::svcdir(&args));
        assert!(std::fs::read_dir(&dir).unwrap().count() > 0, "{command} {flag} wrote into {}", dir.display());
    }
    let help = common::svcdir(&["convert", "--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("--output <DIR>"));
    let same = |flag: &str| {
        let dir = work.path().join(format!("schema-again{flag}"));
        common::assert_ok(&common::svcdir(&["schema", flag, dir.to_str().unwrap()]));
        common::read_tree(&dir)
    };
    assert_eq!(same("--out"), same("--output"), "the alias does the same");
}

#[test]
fn a_bad_listen_address_is_a_usage_error() {
    let work = tempfile::tempdir().unwrap();
    let public = work.path().join("public");
    for listen in ["nonsense", "127.0.0.1", "127.0.0.1:99999", "localhost:"] {
        let out = common::svcdir(&["serve", "--public", public.to_str().unwrap(), "--listen", listen]);
        assert_eq!(out.status.code(), Some(2), "serve --listen {listen}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--listen"), "{stderr}");
        let search = Command::new(env!("CARGO_BIN_EXE_svcdir-search")).args(["--listen", listen]).output().unwrap();
        assert_eq!(search.status.code(), Some(2), "svcdir-search --listen {listen}");
    }
}

#[test]
fn the_progress_bar_never_shows_0_of_0() {
    // The bar is drawn on a terminal only: `script` gives the build one.
    if svcdir::test_support::skip_unless(
        Command::new("script").arg("--version").output().is_ok_and(|o| o.status.success()),
        "`script` (util-linux) is absent: no terminal to draw the progress bar on",
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("input");
    common::assert_ok(&common::svcdir(&["sample", "--output", input.to_str().unwrap(), "--services", "2000"]));
    let build = format!(
        "'{}' build --input '{}' --output '{}' --index '{}' --base-url {}",
        env!("CARGO_BIN_EXE_svcdir"),
        input.display(),
        work.path().join("public").display(),
        work.path().join("search.idx").display(),
        common::BASE_URL
    );
    let typescript = work.path().join("typescript");
    let out = Command::new("script")
        .args(["--quiet", "--return", "--command", &build])
        .arg(&typescript)
        .env("TERM", "xterm")
        .env_remove("SVCDIR_BASE_URL")
        .output()
        .unwrap();
    common::assert_ok(&out);
    let drawn = String::from_utf8_lossy(&std::fs::read(&typescript).unwrap()).into_owned();
    assert!(drawn.contains("built "), "the build ran on the terminal:\n{drawn}");
    assert!(drawn.contains("loading"), "a stage was drawn:\n{drawn}");
    assert!(!drawn.contains("0/0"), "no 0/0 in what the terminal showed:\n{drawn}");
}

#[test]
fn error_values_are_quoted_once() {
    let work = tempfile::tempdir().unwrap();
    let input = editable_small(work.path());
    let path = input.join("locations.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let mut record: Value = serde_json::from_str(&lines[1]).unwrap();
    record["latitude"] = serde_json::json!("north");
    record["x_ok"] = serde_json::json!("fine");
    record["colour"] = serde_json::json!("blue");
    lines[1] = record.to_string();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();

    let out = common::svcdir(&["validate", "--input", input.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("field `latitude`, value \"north\""), "{stderr}");
    assert!(!stderr.contains("\\\""), "no escaped quote inside a quoted value:\n{stderr}");
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    let values: Vec<&str> = value["errors"].as_array().unwrap().iter().filter_map(|e| e["value"].as_str()).collect();
    assert!(values.contains(&"north"), "{value}");
    assert!(values.iter().all(|v| !v.starts_with('"')), "{values:?}");
}
