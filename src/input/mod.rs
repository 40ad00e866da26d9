//! Loading: every file of the dataset directory into serde records, with located errors.
//!
//! This module reads and parses (input-format.md); it checks the shape of each line and
//! field, not the rules between records (uniqueness, references, slugs), which belong to
//! [`crate::validate`]. Every problem of a run is collected, not only the first.

pub(crate) mod error;
pub mod postcodes;
pub(crate) mod records;
pub mod writer;

use std::fs;
use std::path::Path;

use serde::de::DeserializeOwned;

pub use error::{DataError, DataErrors};
pub(crate) use postcodes::{AliasRow, PostcodeRow};
use records::{CategoryRecord, LocationRecord, OrganisationRecord, ServiceAreaRecord, ServiceRecord};

/// File names inside the dataset directory.
pub mod files {
    /// The category tree.
    pub const CATEGORIES: &str = "categories.json";
    /// The fixed list of service areas.
    pub const SERVICE_AREAS: &str = "service_areas.json";
    /// Organisations, one per line.
    pub const ORGANISATIONS: &str = "organisations.jsonl";
    /// Locations, one per line.
    pub const LOCATIONS: &str = "locations.jsonl";
    /// Services, one per line.
    pub const SERVICES: &str = "services.jsonl";
    /// Folder of NRS postcode extracts.
    pub const POSTCODES: &str = "postcodes";
    /// Optional extra area-code aliases.
    pub const ALIASES: &str = "area_code_aliases.csv";
}

/// Size limits on input, far above any real record (the largest line of a real-looking
/// dataset is under 1 KB; a 25 KB categories.json is the largest JSON file): a runaway
/// export (a 60 MB description, a file with no newline) is a located error, not a huge
/// output or a huge allocation. Enforced while reading.
pub mod limits {
    /// One line of a `.jsonl` file, in bytes: a longer line is never read whole.
    pub(crate) const MAX_LINE_BYTES: usize = 1 << 20;
    /// One text value (a string anywhere in a record), in bytes.
    pub(crate) const MAX_FIELD_BYTES: usize = 64 << 10;
    /// A whole `.json` file (`categories.json`, `service_areas.json`), in bytes.
    pub(crate) const MAX_JSON_FILE_BYTES: u64 = 16 << 20;
    /// One row of a postcode `.csv` file, in bytes.
    pub(crate) const MAX_CSV_ROW_BYTES: usize = 64 << 10;

    /// A size in words: `1 MiB`, `64 KiB`.
    pub fn describe(bytes: u64) -> String {
        if bytes >= 1 << 20 { format!("{} MiB", bytes >> 20) } else { format!("{} KiB", bytes >> 10) }
    }
}

/// Why a file of the dataset is not read (issue 28): only regular files inside the input
/// folder are, so a link to a device never ends and a link out of the folder shows nothing
/// of its target.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InputFileError {
    /// No such file.
    #[error("required file is missing")]
    Missing,
    /// A link (or a path through one) to something outside the input folder.
    #[error("is a link to a file outside the input folder; only files inside it are read")]
    Outside,
    /// A device, a FIFO, a socket or a folder.
    #[error("is not a regular file; only regular files are read")]
    NotRegular,
    /// The file system refused.
    #[error("cannot be read: {0}")]
    Io(#[from] std::io::Error),
}

/// Opens `rel` (`/`-separated) of the input folder `root`: a regular file, found through
/// links or not, whose real path is inside the real `root`.
pub(crate) fn open_input(root: &Path, rel: &str) -> Result<fs::File, InputFileError> {
    let path = root.join(rel);
    let real = match fs::canonicalize(&path) {
        Ok(real) => real,
        // A dangling link is missing, like a missing file.
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Err(InputFileError::Missing),
        Err(err) => return Err(err.into()),
    };
    if !real.starts_with(fs::canonicalize(root)?) {
        return Err(InputFileError::Outside);
    }
    // Checked before opening: opening a FIFO would wait for a writer.
    if !fs::metadata(&real)?.is_file() {
        return Err(InputFileError::NotRegular);
    }
    let file = fs::File::open(&real)?;
    // And of what was opened, should the path have changed in between.
    if !file.metadata()?.is_file() {
        return Err(InputFileError::NotRegular);
    }
    Ok(file)
}

/// A record and the line it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Line<T> {
    /// 1-based line number.
    pub line: usize,
    /// The parsed record.
    pub record: T,
}

/// Everything read from a dataset directory, parsed but not yet cross-checked.
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    /// `categories.json`.
    pub categories: Vec<CategoryRecord>,
    /// `service_areas.json`.
    pub service_areas: Vec<ServiceAreaRecord>,
    /// `organisations.jsonl`.
    pub organisations: Vec<Line<OrganisationRecord>>,
    /// `locations.jsonl`.
    pub locations: Vec<Line<LocationRecord>>,
    /// `services.jsonl`.
    pub services: Vec<Line<ServiceRecord>>,
    /// Live postcodes of every `postcodes/*.csv`, file by file in name order.
    pub postcodes: Vec<PostcodeRow>,
    /// Rows of `area_code_aliases.csv`, when present.
    pub aliases: Vec<AliasRow>,
    /// Files that could not be read whole (missing, bad JSON, lines that are no records):
    /// references into them are not checked, since the record named may be the broken one.
    pub incomplete: std::collections::BTreeSet<&'static str>,
}

/// Reads every file of the dataset directory `dir`.
pub fn load(dir: &Path) -> Result<Dataset, DataErrors> {
    let (dataset, errors) = load_partial(dir);
    errors.into_result(dataset)
}

/// Reads what can be read of `dir`: the records that parsed, and every error.
pub fn load_partial(dir: &Path) -> (Dataset, DataErrors) {
    let mut errors = DataErrors::default();
    let mut dataset = Dataset::default();
    if !dir.is_dir() {
        errors.push(DataError::file(dir.display().to_string(), "is not a directory"));
        dataset.incomplete.extend([
            files::CATEGORIES,
            files::SERVICE_AREAS,
            files::ORGANISATIONS,
            files::LOCATIONS,
            files::SERVICES,
        ]);
        return (dataset, errors);
    }
    let mut incomplete = std::collections::BTreeSet::new();
    let mut e = (&mut errors, &mut incomplete);
    dataset.categories =
        tracked(files::CATEGORIES, &mut e, |e| read_json(dir, files::CATEGORIES, e).unwrap_or_default());
    dataset.service_areas =
        tracked(files::SERVICE_AREAS, &mut e, |e| read_json(dir, files::SERVICE_AREAS, e).unwrap_or_default());
    dataset.organisations = tracked(files::ORGANISATIONS, &mut e, |e| read_jsonl(dir, files::ORGANISATIONS, e));
    dataset.locations = tracked(files::LOCATIONS, &mut e, |e| read_jsonl(dir, files::LOCATIONS, e));
    dataset.services = tracked(files::SERVICES, &mut e, |e| read_jsonl(dir, files::SERVICES, e));
    dataset.incomplete = incomplete;
    check_extensions(files::ORGANISATIONS, &dataset.organisations, |r| &r.extra, &mut errors);
    check_extensions(files::LOCATIONS, &dataset.locations, |r| &r.extra, &mut errors);
    check_extensions(files::SERVICES, &dataset.services, |r| &r.extra, &mut errors);
    dataset.postcodes = postcodes::read_postcode_dir(dir, &mut errors);
    if dir.join(files::ALIASES).symlink_metadata().is_ok() {
        dataset.aliases = postcodes::read_aliases(dir, &mut errors);
    }
    // `x_` fields are kept out of every output: drop them as soon as they are checked.
    for line in &mut dataset.organisations {
        line.record.extra.clear();
    }
    for line in &mut dataset.locations {
        line.record.extra.clear();
    }
    for line in &mut dataset.services {
        line.record.extra.clear();
    }
    (dataset, errors)
}

/// Runs one file's reader; a file with any load error is marked incomplete, so that
/// references into it are not checked (the record named may be the broken one).
fn tracked<T>(
    name: &'static str,
    (errors, incomplete): &mut (&mut DataErrors, &mut std::collections::BTreeSet<&'static str>),
    read: impl FnOnce(&mut DataErrors) -> T,
) -> T {
    let before = errors.total();
    let value = read(errors);
    if errors.total() > before {
        incomplete.insert(name);
    }
    value
}

fn read_text(dir: &Path, name: &str, errors: &mut DataErrors) -> Option<String> {
    use std::io::Read;
    let read = || -> Result<String, InputFileError> {
        let mut text = String::new();
        open_input(dir, name)?.take(limits::MAX_JSON_FILE_BYTES + 1).read_to_string(&mut text)?;
        Ok(text)
    };
    match read() {
        Ok(text) if text.len() as u64 > limits::MAX_JSON_FILE_BYTES => {
            let limit = limits::describe(limits::MAX_JSON_FILE_BYTES);
            errors.push(DataError::file(name, format!("file is over the size limit of {limit}")));
            None
        }
        Ok(text) => Some(text),
        Err(err) => {
            missing_or_unreadable(name, &err, errors);
            None
        }
    }
}

fn read_json<T: DeserializeOwned>(dir: &Path, name: &str, errors: &mut DataErrors) -> Option<T> {
    let text = read_text(dir, name, errors)?;
    let value: serde_json::Value = match serde_json::from_str(text.trim_start_matches('\u{feff}')) {
        Ok(value) => value,
        Err(err) => {
            errors
                .push(DataError { line: Some(err.line()), ..DataError::file(name, format!("not valid JSON: {err}")) });
            return None;
        }
    };
    match serde_path_to_error::deserialize(&value) {
        Ok(parsed) => Some(parsed),
        Err(err) => {
            errors.push(parse_error(name, None, &err, None));
            None
        }
    }
}

fn read_jsonl<T: DeserializeOwned>(dir: &Path, name: &str, errors: &mut DataErrors) -> Vec<Line<T>> {
    use std::io::BufRead;
    let file = match open_input(dir, name) {
        Ok(file) => file,
        Err(err) => {
            missing_or_unreadable(name, &err, errors);
            return Vec::new();
        }
    };
    let mut records = Vec::new();
    // Streamed line by line: a million-service file is never held whole in memory, and a
    // line over the limit not even that line (its first MAX_LINE_BYTES at most).
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let mut line = 0;
    loop {
        line += 1;
        let mut bytes = Vec::new();
        let limit = limits::MAX_LINE_BYTES as u64 + 1;
        match std::io::Read::take(&mut reader, limit).read_until(b'\n', &mut bytes) {
            Ok(0) => break,
            Ok(_) => {}
            Err(err) => {
                errors.push(DataError::file(name, format!("cannot be read: {err}")).with_line(line));
                break;
            }
        }
        if bytes.last() == Some(&b'\n') {
            bytes.pop();
        } else if bytes.len() > limits::MAX_LINE_BYTES {
            let limit = limits::describe(limits::MAX_LINE_BYTES as u64);
            errors.push(DataError {
                field: field_open_at_end(&bytes),
                ..DataError::file(name, format!("line is over the length limit of {limit}; no record is that long"))
                    .with_line(line)
            });
            if let Err(err) = reader.skip_until(b'\n') {
                errors.push(DataError::file(name, format!("cannot be read: {err}")).with_line(line));
                break;
            }
            continue;
        }
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        // A line that is not UTF-8 (a Latin-1 export, say) is one error; the next lines are
        // still read.
        let raw = match String::from_utf8(bytes) {
            Ok(raw) => raw,
            Err(err) => {
                errors.push(DataError::file(name, format!("not UTF-8: {}", err.utf8_error())).with_line(line));
                continue;
            }
        };
        // Editors on some systems start files with a byte-order mark.
        let raw = if line == 1 { raw.trim_start_matches('\u{feff}') } else { raw.as_str() };
        if raw.trim().is_empty() {
            continue;
        }
        // Only a line longer than the field limit can hold a field over it.
        if raw.len() > limits::MAX_FIELD_BYTES
            && let Some(field) = field_over_limit(raw)
        {
            let limit = limits::describe(limits::MAX_FIELD_BYTES as u64);
            errors.push(DataError {
                field: Some(field),
                ..DataError::file(name, format!("text is over the length limit of {limit}")).with_line(line)
            });
            continue;
        }
        // Fast path: straight into the record. Only a failing line is parsed again as a
        // value, to tell a syntax error from a field error and quote the field's value.
        if let Ok(record) = serde_json::from_str(raw) {
            records.push(Line { line, record });
            continue;
        }
        let value: serde_json::Value = match serde_json::from_str(raw) {
            Ok(value) => value,
            Err(err) => {
                let message = format!("not valid JSON: {err}");
                errors.push(DataError::file(name, message).with_line(line));
                continue;
            }
        };
        if !value.is_object() {
            errors.push(DataError::file(name, "each line must be a JSON object").with_line(line));
            continue;
        }
        match serde_path_to_error::deserialize(&value) {
            Ok(record) => records.push(Line { line, record }),
            Err(err) => errors.push(parse_error(name, Some(line), &err, Some(&value))),
        }
    }
    records
}

/// The path of the first string value longer than [`limits::MAX_FIELD_BYTES`] in a JSON
/// line, e.g. `description` or `categories[2]`; `None` when there is none or the line is
/// not JSON (then the usual errors say why).
fn field_over_limit(raw: &str) -> Option<String> {
    fn find(value: &serde_json::Value, path: String) -> Option<String> {
        match value {
            serde_json::Value::String(s) if s.len() > limits::MAX_FIELD_BYTES => Some(path),
            serde_json::Value::Array(items) => {
                items.iter().enumerate().find_map(|(ix, item)| find(item, format!("{path}[{ix}]")))
            }
            serde_json::Value::Object(map) => map.iter().find_map(|(key, item)| {
                let sub = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                // A key itself over the limit is named by its first characters.
                if key.len() > limits::MAX_FIELD_BYTES { Some(sub.chars().take(40).collect()) } else { find(item, sub) }
            }),
            _ => None,
        }
    }
    find(&serde_json::from_str(raw).ok()?, String::new())
}

/// The top-level key whose value is still open where a cut-off JSON line ends: the field
/// to name when a line is over the length limit. Scans string and nesting state only.
fn field_open_at_end(bytes: &[u8]) -> Option<String> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let (mut start, mut last_string, mut key) = (0usize, None::<(usize, usize)>, None::<(usize, usize)>);
    for (ix, &b) in bytes.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => {
                    in_string = false;
                    last_string = Some((start, ix));
                }
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                start = ix + 1;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b':' if depth == 1 => key = last_string,
            _ => {}
        }
    }
    let (from, to) = key?;
    String::from_utf8(bytes[from..to].to_vec()).ok().filter(|k| k.len() <= 200)
}

fn missing_or_unreadable(name: &str, err: &InputFileError, errors: &mut DataErrors) {
    errors.push(DataError::file(name, err.to_string()));
}

impl DataError {
    fn with_line(mut self, line: usize) -> DataError {
        self.line = Some(line);
        self
    }
}

fn parse_error<E: std::fmt::Display>(
    name: &str,
    line: Option<usize>,
    err: &serde_path_to_error::Error<E>,
    value: Option<&serde_json::Value>,
) -> DataError {
    let inner = err.inner().to_string();
    // serde reports a missing field at the parent: name the field itself.
    let missing = inner.strip_prefix("missing field `").and_then(|rest| rest.split('`').next()).map(str::to_owned);
    let path = err.path().to_string();
    let field = missing.or_else(|| (path != ".").then_some(path.clone()));
    let quoted = value.and_then(|v| v.get(path.split(['.', '[']).next().unwrap_or(""))).map(value_text);
    // serde_json appends " at line L column C" for documents; the line is ours already.
    let message = match inner.find(" at line ") {
        Some(cut) if value.is_some() => inner[..cut].to_owned(),
        _ => inner,
    };
    DataError { file: name.to_owned(), line, field, value: quoted, message }
}

/// A JSON value as an error shows it: a string's text (the report quotes it once), any
/// other value as JSON.
fn value_text(value: &serde_json::Value) -> String {
    value.as_str().map_or_else(|| value.to_string(), str::to_owned)
}

fn check_extensions<T>(
    name: &str,
    lines: &[Line<T>],
    extra: impl Fn(&T) -> &records::Extensions,
    errors: &mut DataErrors,
) {
    for line in lines {
        for (key, value) in extra(&line.record) {
            if !key.starts_with("x_") {
                errors.push(DataError::at(
                    name,
                    Some(line.line),
                    key.clone(),
                    value_text(value),
                    "unknown field (extension fields must start with `x_`)",
                ));
            }
        }
    }
}

/// Property tests of the JSON-lines reader (issue 6, "Fuzzing"): any bytes in a
/// `services.jsonl` give records or located errors, never a panic. The cargo-fuzz target
/// `jsonl` in `fuzz/` runs the same reader on unbounded inputs.
#[cfg(test)]
mod limit_tests {
    use super::*;

    #[test]
    fn the_open_field_of_a_cut_off_line_is_named() {
        let cut = br#"{"id": "x", "tags": {"a": "b"}, "categories": ["a", "b"], "description": "very lo"#;
        assert_eq!(field_open_at_end(cut).as_deref(), Some("description"));
        let escaped = br#"{"name": "a \" quote", "email": "a@b"#;
        assert_eq!(field_open_at_end(escaped).as_deref(), Some("email"));
        assert_eq!(field_open_at_end(b"no json here"), None);
    }

    #[test]
    fn a_field_over_the_limit_is_found_by_path() {
        let long = "x".repeat(limits::MAX_FIELD_BYTES + 1);
        let line = serde_json::json!({"name": "ok", "categories": ["a", long]}).to_string();
        assert_eq!(field_over_limit(&line).as_deref(), Some("categories[1]"));
        let fine = serde_json::json!({"name": "x".repeat(limits::MAX_FIELD_BYTES)}).to_string();
        assert_eq!(field_over_limit(&fine), None);
    }
}

#[cfg(test)]
mod proptests {
    use proptest::prelude::*;

    use super::*;

    const VALID: &str = r#"{"id":"5f0c2a4e-7d43-4c7e-9f3e-2b1d7c8a9e01","organisation_id":"0a000000-0000-4000-8000-000000000001","name":"Drop-in Centre","categories":["community-cafe"]}"#;

    /// One line: a valid record, a mutilated one, JSON of another shape, or any bytes.
    fn line() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            Just(VALID.as_bytes().to_vec()),
            (0..VALID.len(), any::<u8>()).prop_map(|(at, byte)| {
                let mut bytes = VALID.as_bytes().to_vec();
                bytes[at] = byte;
                bytes
            }),
            (0..VALID.len()).prop_map(|cut| VALID.as_bytes()[..cut].to_vec()),
            prop::sample::select(vec![
                "",
                " ",
                "\r",
                "\u{feff}",
                "[]",
                "null",
                "1e999",
                "\"x\"",
                "{}",
                "{\"id\":1}",
                "{\"name\":\"\\ud800\"}",
                "{\"a\":{\"a\":{\"a\":[[[[[[[[[[]]]]]]]]]]}}}",
            ])
            .prop_map(|s| s.as_bytes().to_vec()),
            "\\PC{0,40}".prop_map(String::into_bytes),
            prop::collection::vec(any::<u8>(), 0..40),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn any_services_jsonl_gives_records_or_located_errors(lines in prop::collection::vec(line(), 0..12), crlf in any::<bool>()) {
            let dir = tempfile::tempdir().expect("temp dir");
            let bytes = lines.join(if crlf { &b"\r\n"[..] } else { &b"\n"[..] });
            fs::write(dir.path().join(files::SERVICES), &bytes).expect("write");
            let mut errors = DataErrors::default();
            let records: Vec<Line<ServiceRecord>> = read_jsonl(dir.path(), files::SERVICES, &mut errors);

            let physical: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
            for error in &errors.errors {
                let line = error.line.expect("every error of a line names its line");
                prop_assert!((1..=physical.len()).contains(&line), "{error}");
            }
            let mut seen = std::collections::BTreeSet::new();
            for record in &records {
                prop_assert!(seen.insert(record.line), "one record per line");
                prop_assert!(!errors.errors.iter().any(|e| e.line == Some(record.line)), "a record or an error, not both");
            }
            // Every line with content is accounted for: a record or an error at its number.
            for (ix, raw) in physical.iter().enumerate() {
                let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
                let blank = std::str::from_utf8(raw)
                    .map(|text| if ix == 0 { text.trim_start_matches('\u{feff}') } else { text }.trim().is_empty())
                    .unwrap_or(false);
                let line = ix + 1;
                prop_assert!(blank || seen.contains(&line) || errors.errors.iter().any(|e| e.line == Some(line)),
                    "line {line} lost: {:?}", String::from_utf8_lossy(raw));
            }
        }
    }
}
