//! Input read with its limits enforced while reading, and only regular files inside the
//! input folder read (issue 28): a 100 MB postcode row costs no more than its limit, and an
//! input file that is a link to a device or out of the folder is a located error that shows
//! nothing of the target.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{copy_dir, fixture};

/// `svcdir validate` of `input`: exit code, stderr and peak RSS in MiB (`None` without GNU
/// time), killed (and failed) after 60 s.
///
/// The peak is GNU time's (`%M`, from its own `wait4`): time starts svcdir from its own small
/// process. The test's `wait4` would not do: a child is charged the resident memory of the
/// process it was spawned from until it execs, so it reported the test process's own peak
/// (over 100 MiB while the other tests ran) instead of svcdir's.
fn validate_measured(input: &Path) -> (i32, String, Option<f64>) {
    let stderr = tempfile::NamedTempFile::new().unwrap();
    let peak = tempfile::NamedTempFile::new().unwrap();
    let time = Path::new("/usr/bin/time");
    let mut command = if time.exists() {
        let mut command = Command::new(time);
        command.args(["--format", "%M", "--output"]).arg(peak.path()).arg(svcdir_testkit::bin("svcdir"));
        command
    } else {
        svcdir::test_support::skipped("GNU time (/usr/bin/time, Debian's `time`) is absent: peak RSS not measured");
        Command::new(svcdir_testkit::bin("svcdir"))
    };
    let mut child = command
        .arg("validate")
        .arg("--input")
        .arg(input)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr.reopen().unwrap())
        .spawn()
        .expect("svcdir runs");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("svcdir validate of {} did not end in 60 s", input.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = fs::read_to_string(stderr.path()).unwrap();
    let code = status.code().unwrap_or_else(|| panic!("svcdir validate did not exit: {status}"));
    // GNU time writes "Command exited with non-zero status N" before the figure.
    let peak = fs::read_to_string(peak.path()).unwrap();
    let kib = peak.lines().last().and_then(|line| line.trim().parse::<f64>().ok());
    (code, text, kib.filter(|_| time.exists()).map(|kib| kib / 1024.0))
}

fn small_copy() -> (tempfile::TempDir, std::path::PathBuf) {
    let work = tempfile::tempdir().unwrap();
    let input = work.path().join("input");
    copy_dir(&fixture("small"), &input);
    (work, input)
}

#[test]
fn a_100_mb_postcode_row_is_a_located_error_in_little_memory() {
    let (_work, input) = small_copy();
    let mut file = fs::File::create(input.join("postcodes/zz-huge.csv")).unwrap();
    file.write_all(b"G2 1AL,").unwrap();
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..100 {
        file.write_all(&chunk).unwrap();
    }
    file.write_all(b"\n").unwrap();
    drop(file);
    let (code, stderr, rss) = validate_measured(&input);
    if let Some(rss) = rss {
        eprintln!("a 100 MB postcode row: peak RSS {rss:.1} MiB");
        assert!(rss < 100.0, "peak RSS {rss:.1} MiB for a 100 MB row");
    }
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("postcodes/zz-huge.csv:1: row is over the length limit of 64 KiB"), "{stderr}");
}

#[test]
fn links_to_devices_and_out_of_the_input_folder_are_located_errors() {
    let (work, input) = small_copy();
    // Out of the folder: a file whose values must not show in any message.
    let outside = work.path().join("outside.jsonl");
    fs::write(&outside, "{\"id\": \"SECRET-VALUE-OUTSIDE\", \"name\": 7}\n").unwrap();
    fs::remove_file(input.join("organisations.jsonl")).unwrap();
    std::os::unix::fs::symlink(&outside, input.join("organisations.jsonl")).unwrap();
    // Devices: a .jsonl never ends, a .csv has no line end.
    fs::remove_file(input.join("services.jsonl")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", input.join("services.jsonl")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", input.join("postcodes/zero.csv")).unwrap();
    // A folder where a file belongs.
    fs::remove_file(input.join("locations.jsonl")).unwrap();
    fs::create_dir(input.join("locations.jsonl")).unwrap();
    // A link inside the folder to a file inside it is read as that file.
    fs::rename(input.join("categories.json"), input.join("shared-categories.json")).unwrap();
    std::os::unix::fs::symlink("shared-categories.json", input.join("categories.json")).unwrap();

    let started = Instant::now();
    let (code, stderr, _) = validate_measured(&input);
    let took = started.elapsed();
    assert_eq!(code, 1, "{stderr}");
    assert!(took < Duration::from_secs(20), "{took:?}");
    let outside_error = "is a link to a file outside the input folder; only files inside it are read";
    for expected in [
        format!("organisations.jsonl: {outside_error}"),
        format!("services.jsonl: {outside_error}"),
        format!("postcodes/zero.csv: {outside_error}"),
        "locations.jsonl: is not a regular file; only regular files are read".to_owned(),
    ] {
        assert!(stderr.contains(&expected), "{expected:?} not in:\n{stderr}");
    }
    assert!(!stderr.contains("categories.json"), "the link inside the folder is read:\n{stderr}");
    assert!(!stderr.contains("SECRET-VALUE-OUTSIDE"), "{stderr}");

    // A device inside the folder (not a link out) is no regular file either.
    let (_work, input) = small_copy();
    fs::remove_file(input.join("services.jsonl")).unwrap();
    let status = Command::new("mkfifo").arg(input.join("services.jsonl")).status().expect("mkfifo runs");
    assert!(status.success());
    let (code, stderr, _) = validate_measured(&input);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("services.jsonl: is not a regular file; only regular files are read"), "{stderr}");
}
