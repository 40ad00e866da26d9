//! NRS Scottish Postcode Directory extracts, in both published layouts, and the optional
//! area-code alias file. CSV is read with the `csv` crate only.

use std::fs;
use std::path::Path;

use super::{DataError, DataErrors};
use crate::model::geo::normalise_postcode;

/// A live postcode as read from an extract (area codes not yet mapped through aliases).
#[derive(Debug, Clone, PartialEq)]
pub struct PostcodeRow {
    /// File the row came from, relative to the dataset directory.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// Normalised postcode.
    pub code: String,
    /// Whether this row is one part of a postcode that a boundary splits (`PA31 8UAA`): the
    /// parts of one postcode lie at other points by nature.
    pub split_part: bool,
    /// Latitude.
    pub latitude: f64,
    /// Longitude.
    pub longitude: f64,
    /// Council area code (may be empty).
    pub council: String,
    /// Health board code (may be empty).
    pub health_board: String,
    /// Integration authority code (may be empty).
    pub integration_authority: String,
}

/// One line of `area_code_aliases.csv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AliasRow {
    /// 1-based line.
    pub line: usize,
    /// Code as postcode files write it.
    pub from: String,
    /// Code of the fixed list of service areas.
    pub to: String,
}

/// Zero-based positions of the columns that matter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Columns {
    postcode: usize,
    deletion: usize,
    latitude: usize,
    longitude: usize,
    council: usize,
    health_board: usize,
    integration_authority: usize,
}

/// "Small user" layout without header: latitude and longitude in columns 8 and 9, council,
/// health board and integration authority in 11, 16 and 19 (1-based; input-format.md).
const SMALL_USER: Columns = Columns {
    postcode: 0,
    deletion: 4,
    latitude: 7,
    longitude: 8,
    council: 10,
    health_board: 15,
    integration_authority: 18,
};

/// "Large user" layout: one more column after the date of deletion.
const LARGE_USER: Columns = Columns {
    postcode: 0,
    deletion: 4,
    latitude: 8,
    longitude: 9,
    council: 11,
    health_board: 16,
    integration_authority: 19,
};

/// Reads every `*.csv` in the postcode folder of the input folder `root`, in file-name
/// order, keeping live postcodes.
pub(crate) fn read_postcode_dir(root: &Path, errors: &mut DataErrors) -> Vec<PostcodeRow> {
    let entries = match fs::read_dir(root.join(super::files::POSTCODES)) {
        Ok(entries) => entries,
        Err(_) => {
            errors.push(DataError::file(super::files::POSTCODES, "required folder is missing"));
            return Vec::new();
        }
    };
    let mut paths: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|ext| ext.eq_ignore_ascii_case("csv")))
        .collect();
    paths.sort();
    if paths.is_empty() {
        errors.push(DataError::file(super::files::POSTCODES, "holds no .csv file (at least one is required)"));
    }
    let mut rows = Vec::new();
    for path in paths {
        let name = format!(
            "{}/{}",
            super::files::POSTCODES,
            path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
        );
        match super::open_input(root, &name) {
            Ok(file) => rows.extend(read_postcodes(file, &name, errors)),
            Err(err) => errors.push(DataError::file(name, err.to_string())),
        }
    }
    rows
}

/// Reads one NRS extract, with or without header, keeping live postcodes.
pub fn read_postcode_file(path: &Path, name: &str, errors: &mut DataErrors) -> Vec<PostcodeRow> {
    match fs::File::open(path) {
        Ok(file) => read_postcodes(file, name, errors),
        Err(err) => {
            errors.push(DataError::file(name, format!("cannot be read: {err}")));
            Vec::new()
        }
    }
}

/// [`read_postcode_file`] of an open file.
fn read_postcodes(file: fs::File, name: &str, errors: &mut DataErrors) -> Vec<PostcodeRow> {
    let mut rows = Vec::new();
    let mut columns: Option<Columns> = None;
    for_each_record(file, name, errors, |line, record, errors| {
        let columns = match columns {
            Some(columns) => columns,
            None => {
                let header = is_header(record);
                match if header { header_columns(record) } else { guess_layout(record) } {
                    Ok(found) => {
                        columns = Some(found);
                        if header {
                            return true;
                        }
                        found
                    }
                    Err(message) => {
                        errors.push(DataError { line: Some(line), ..DataError::file(name, message) });
                        return false;
                    }
                }
            }
        };
        if let Some(row) = parse_row(record, columns, name, line, errors) {
            rows.push(row);
        }
        true
    });
    rows
}

/// The CSV reader's buffer: the most it holds beyond the record it is reading.
const CSV_BUFFER: usize = 8 << 10;

/// A row over [`super::limits::MAX_CSV_ROW_BYTES`], found while it is read.
#[derive(Debug, thiserror::Error)]
#[error("row over the length limit")]
struct RowOverLimit;

/// A reader that fails once more than a row's limit (plus the CSV reader's buffer) has been
/// read past the start of the current row: a 100 MB row costs 64 KiB, not 100 MB, and a
/// file with no line end at all (a device) ends.
struct RowLimited<R> {
    inner: R,
    read: u64,
    row_start: std::rc::Rc<std::cell::Cell<u64>>,
}

impl<R: std::io::Read> std::io::Read for RowLimited<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let limit = (super::limits::MAX_CSV_ROW_BYTES + CSV_BUFFER) as u64;
        if self.read - self.row_start.get() > limit {
            return Err(std::io::Error::other(RowOverLimit));
        }
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

/// Reads a CSV file row by row (with or without header, rows of any width), handing each
/// record and its line to `visit` until it says stop; a row the CSV reader rejects is
/// reported with its line and skipped. The row limit is enforced while reading.
fn for_each_record(
    file: fs::File,
    name: &str,
    errors: &mut DataErrors,
    mut visit: impl FnMut(usize, &csv::StringRecord, &mut DataErrors) -> bool,
) {
    let row_start = std::rc::Rc::new(std::cell::Cell::new(0));
    let limited = RowLimited { inner: file, read: 0, row_start: row_start.clone() };
    let mut reader =
        csv::ReaderBuilder::new().has_headers(false).flexible(true).buffer_capacity(CSV_BUFFER).from_reader(limited);
    let mut record = csv::StringRecord::new();
    let limit = super::limits::describe(super::limits::MAX_CSV_ROW_BYTES as u64);
    loop {
        let next_line = reader.position().line() as usize;
        match reader.read_record(&mut record) {
            Ok(false) => return,
            Ok(true) => {
                row_start.set(reader.position().byte());
                let line = record.position().map_or(0, |p| p.line() as usize);
                if record.as_slice().len() > super::limits::MAX_CSV_ROW_BYTES {
                    let column = record.iter().enumerate().max_by_key(|(_, f)| f.len()).map(|(c, _)| c);
                    errors.push(DataError {
                        line: Some(line),
                        field: column.map(|c| format!("column {}", c + 1)),
                        ..DataError::file(name, format!("row is over the length limit of {limit}"))
                    });
                    continue;
                }
                if !visit(line, &record, errors) {
                    return;
                }
            }
            Err(err) if over_limit(&err) => {
                errors.push(DataError {
                    line: Some(next_line),
                    ..DataError::file(name, format!("row is over the length limit of {limit}; no row is that long"))
                });
                return;
            }
            Err(err) => {
                let line = err.position().map(|p| p.line() as usize);
                errors.push(DataError { line, ..DataError::file(name, format!("not valid CSV: {err}")) });
                // An I/O error repeats forever; a malformed row does not.
                if matches!(err.kind(), csv::ErrorKind::Io(_)) {
                    return;
                }
            }
        }
    }
}

/// Whether the CSV reader stopped at [`RowLimited`]'s limit.
fn over_limit(err: &csv::Error) -> bool {
    match err.kind() {
        csv::ErrorKind::Io(io) => io.get_ref().is_some_and(|inner| inner.is::<RowOverLimit>()),
        _ => false,
    }
}

fn is_header(record: &csv::StringRecord) -> bool {
    record.get(0).is_some_and(|f| f.trim().eq_ignore_ascii_case("postcode"))
}

fn header_columns(record: &csv::StringRecord) -> Result<Columns, String> {
    let exact = |want: &str| {
        record
            .iter()
            .position(|f| f.trim().eq_ignore_ascii_case(want))
            .ok_or_else(|| format!("header has no `{want}` column"))
    };
    // `CouncilArea2019Code` and friends: whatever the year, the latest one wins.
    let latest = |prefix: &str| {
        record
            .iter()
            .enumerate()
            .filter_map(|(ix, f)| {
                let year = f.trim().strip_prefix(prefix)?.strip_suffix("Code")?;
                (year.len() == 4 && year.bytes().all(|b| b.is_ascii_digit())).then(|| (year.to_owned(), ix))
            })
            .max()
            .map(|(_, ix)| ix)
            .ok_or_else(|| format!("header has no `{prefix}<year>Code` column"))
    };
    Ok(Columns {
        postcode: exact("Postcode")?,
        deletion: exact("DateOfDeletion")?,
        latitude: exact("Latitude")?,
        longitude: exact("Longitude")?,
        council: latest("CouncilArea")?,
        health_board: latest("HealthBoardArea")?,
        integration_authority: latest("IntegrationAuthority")?,
    })
}

fn guess_layout(record: &csv::StringRecord) -> Result<Columns, String> {
    let coordinate = |ix: usize, limit: f64| {
        record.get(ix).and_then(|f| f.trim().parse::<f64>().ok()).is_some_and(|v| v.is_finite() && v.abs() <= limit)
    };
    for layout in [SMALL_USER, LARGE_USER] {
        if coordinate(layout.latitude, 90.0) && coordinate(layout.longitude, 180.0) {
            return Ok(layout);
        }
    }
    Err("first row has no header and matches neither NRS layout \
         (latitude and longitude in columns 8-9, small user, or 9-10, large user)"
        .to_owned())
}

/// NRS lists a postcode that a boundary splits once per part, with a letter after the unit
/// postcode (`PA31 8UAA`, `PA31 8UAB`, split indicator `Y`): the unit postcode is the one
/// people search for, so the letter is dropped (the first part listed wins, as for repeats).
fn unit_postcode(raw: &str) -> &str {
    let compact = raw.chars().filter(|c| !c.is_whitespace()).count();
    match raw.trim_end().char_indices().last() {
        Some((ix, c)) if compact == 8 && c.is_ascii_alphabetic() => raw[..ix].trim_end(),
        _ => raw,
    }
}

fn parse_row(
    record: &csv::StringRecord,
    columns: Columns,
    name: &str,
    line: usize,
    errors: &mut DataErrors,
) -> Option<PostcodeRow> {
    let field = |ix: usize, what: &str, errors: &mut DataErrors| match record.get(ix) {
        Some(value) => Some(value.trim().to_owned()),
        None => {
            errors.push(DataError::at(name, Some(line), what, "", format!("row has no column {}", ix + 1)));
            None
        }
    };
    let deletion = field(columns.deletion, "DateOfDeletion", errors)?;
    if !deletion.is_empty() {
        // A terminated postcode: not searchable.
        return None;
    }
    let raw = field(columns.postcode, "Postcode", errors)?;
    let unit = unit_postcode(&raw);
    let split_part = unit.len() != raw.len();
    let Some(code) = normalise_postcode(unit) else {
        errors.push(DataError::at(name, Some(line), "Postcode", &raw, "is not a postcode"));
        return None;
    };
    let mut coordinate = |ix: usize, what: &str, limit: f64| {
        let text = field(ix, what, errors)?;
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() && v.abs() <= limit => Some(v),
            _ => {
                errors.push(DataError::at(
                    name,
                    Some(line),
                    what,
                    &text,
                    format!("must be a number from -{limit} to {limit}"),
                ));
                None
            }
        }
    };
    let latitude = coordinate(columns.latitude, "Latitude", 90.0);
    let longitude = coordinate(columns.longitude, "Longitude", 180.0);
    let council = field(columns.council, "CouncilArea", errors)?;
    let health_board = field(columns.health_board, "HealthBoardArea", errors)?;
    let integration_authority = field(columns.integration_authority, "IntegrationAuthority", errors)?;
    Some(PostcodeRow {
        file: name.to_owned(),
        line,
        code,
        split_part,
        latitude: latitude?,
        longitude: longitude?,
        council,
        health_board,
        integration_authority,
    })
}

/// Reads `area_code_aliases.csv` of the input folder `root`: `from_code,to_code` lines, an
/// optional header.
pub(crate) fn read_aliases(root: &Path, errors: &mut DataErrors) -> Vec<AliasRow> {
    let name = super::files::ALIASES;
    let mut rows = Vec::new();
    let file = match super::open_input(root, name) {
        Ok(file) => file,
        Err(err) => {
            errors.push(DataError::file(name, err.to_string()));
            return rows;
        }
    };
    for_each_record(file, name, errors, |line, record, errors| {
        let fields: Vec<&str> = record.iter().map(str::trim).collect();
        match fields.as_slice() {
            ["from_code", "to_code"] if line == 1 => {}
            [""] => {}
            [from, to] if !from.is_empty() && !to.is_empty() => {
                rows.push(AliasRow { line, from: (*from).to_owned(), to: (*to).to_owned() })
            }
            _ => errors.push(DataError::at(
                name,
                Some(line),
                "from_code,to_code",
                record.iter().collect::<Vec<_>>().join(","),
                "each line must be two non-empty codes: from_code,to_code",
            )),
        }
        true
    });
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> (Vec<PostcodeRow>, DataErrors) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.csv");
        fs::write(&path, text).unwrap();
        let mut errors = DataErrors::default();
        let rows = read_postcode_file(&path, "postcodes/x.csv", &mut errors);
        (rows, errors)
    }

    fn small_row(code: &str, deleted: &str, lat: &str) -> String {
        let mut cols = vec![String::new(); 57];
        cols[0] = code.into();
        cols[4] = deleted.into();
        cols[5] = "252241".into();
        cols[7] = lat.into();
        cols[8] = "-4.36".into();
        cols[10] = "S12000049".into();
        cols[15] = "S08000031".into();
        cols[18] = "S37000034".into();
        cols.join(",")
    }

    #[test]
    fn small_layout_keeps_live_rows_only() {
        let text =
            [small_row("\"g13 3ae\"", "", "55.88"), small_row("G2 8AE", "25/1/2017 00:00:00", "55.8")].join("\n");
        let (rows, errors) = read(&text);
        assert!(errors.is_empty(), "{errors}");
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].code, "G13 3AE");
        assert_eq!(rows[0].council, "S12000049");
        assert_eq!(rows[0].integration_authority, "S37000034");
    }

    #[test]
    fn bad_latitude_is_located() {
        let text = [small_row("G13 3AE", "", "55.88"), small_row("G13 3AF", "", "north")].join("\n");
        let (_, errors) = read(&text);
        assert_eq!(errors.errors.len(), 1);
        let e = &errors.errors[0];
        assert_eq!((e.line, e.field.as_deref(), e.value.as_deref()), (Some(2), Some("Latitude"), Some("north")));
    }
}

/// Property tests of the NRS CSV reader (issue 6, "Fuzzing"): arbitrary rows, of any width
/// and content, give live postcodes or located errors, never a panic. The cargo-fuzz target
/// `nrs_csv` in `fuzz/` runs the same reader on unbounded inputs.
#[cfg(test)]
mod proptests {
    use proptest::prelude::*;

    use super::*;

    /// One field: what a column of an NRS extract holds, or anything.
    fn field() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "",
                "G2 1AL",
                "\"g13 3ae\"",
                "EH1 1AA",
                "55.88",
                "-4.36",
                "252241",
                "25/1/2017 00:00:00",
                "S12000049",
                "S08000031",
                "S37000034",
                "Postcode",
                "Latitude",
                "Longitude",
                "DateOfDeletion",
                "NaN",
                "inf",
                "-999999999999",
                "\"",
                "\"\"",
                "a,b",
                "\r",
            ])
            .prop_map(str::to_owned),
            "\\PC{0,12}",
        ]
    }

    fn row() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::collection::vec(field(), 0..60).prop_map(|fields| fields.join(",")),
            prop::collection::vec(any::<u8>(), 0..80).prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn arbitrary_rows_give_rows_or_located_errors(rows in prop::collection::vec(row(), 0..10), raw in any::<bool>(), bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            let dir = tempfile::tempdir().expect("temp dir");
            let path = dir.path().join("x.csv");
            // Either CSV-looking rows or raw bytes (not UTF-8, stray quotes, NULs).
            let content = if raw { bytes } else { rows.join("\n").into_bytes() };
            fs::write(&path, &content).expect("write");
            let mut errors = DataErrors::default();
            let rows = read_postcode_file(&path, "postcodes/x.csv", &mut errors);
            let lines = content.split(|&b| b == b'\n').count();
            prop_assert!(rows.len() <= lines);
            for error in &errors.errors {
                prop_assert_eq!(error.file.as_str(), "postcodes/x.csv");
                if let Some(line) = error.line {
                    prop_assert!((1..=lines).contains(&line), "{error}");
                }
            }
            for row in &rows {
                prop_assert!(!row.code.is_empty());
                prop_assert!(row.code == row.code.to_uppercase(), "normalised: {}", row.code);
            }
        }
    }
}
