//! The real NRS Scottish Postcode Directory extracts (`../shared/data/postcodes/`), read
//! through the library and the binary, checked against an independent reading of the same
//! files with the `csv` crate by the documented column positions and header names
//! (input-format.md, Postcode files; behaviour.md, Search 1-2). Tests using the shared data
//! pass with a note when it is absent.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use svcdir::input::DataErrors;
use svcdir::input::postcodes::read_postcode_file;
use svcdir::model::PostcodeDirectory;

use crate::common::{self, assert_ok, fixture};

/// behaviour.md, Search 2: postcode-file code → code of the fixed list of service areas,
/// read from the specification itself (`../shared/spec/behaviour.md`, where the
/// postcode-data tests run), so the test does not share the code's table.
fn spec_aliases() -> Vec<(String, String)> {
    let spec = std::fs::read_to_string(common::repo().join("../shared/spec/behaviour.md")).expect("behaviour.md");
    let start = spec.find("Built-in aliases").expect("the alias rule in behaviour.md");
    let rule = &spec[start..start + spec[start..].find("\n3. ").expect("the next rule")];
    rule.split_whitespace()
        .filter_map(|word| word.split_once('→'))
        .map(|(from, to)| (from.to_owned(), to.trim_end_matches([',', '.']).to_owned()))
        // Only code → code pairs, not the rule's "(postcode code → list code)".
        .filter(|(from, to)| !from.is_empty() && !to.is_empty())
        .collect()
}

#[test]
fn the_built_in_aliases_are_the_specification_s() {
    if common::shared_data().is_none() {
        return;
    }
    let spec = spec_aliases();
    assert_eq!(spec.len(), 12, "{spec:?}");
    let code: Vec<(String, String)> =
        svcdir::validate::BUILT_IN_ALIASES.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect();
    assert_eq!(code, spec);
}

/// How the independent reader finds the columns.
#[derive(Debug, Clone, Copy)]
enum Layout {
    /// No header; 1-based columns: postcode 1, deletion 5, lat/lon 8-9, council 11,
    /// health board 16, integration authority 19.
    SmallUser,
    /// No header; one more column after the date of deletion.
    LargeUser,
    /// Header row; columns by name (the 2018 codes).
    Header2018,
}

/// One live row as the independent reader sees it.
#[derive(Debug, Clone, PartialEq)]
struct Part {
    line: usize,
    lat: f64,
    lon: f64,
    /// Council, health board, integration authority, as written in the file.
    raw: [String; 3],
}

/// A live postcode: its row, or the rows of its parts when NRS splits it between areas
/// (`PA31 8UAA`, `PA31 8UAB`: split indicator `Y`, a letter after the unit postcode).
#[derive(Debug, Clone, PartialEq)]
struct Expected {
    parts: Vec<Part>,
}

impl Expected {
    fn first(&self) -> &Part {
        &self.parts[0]
    }
}

struct Reading {
    /// Live postcodes, normalised, with their rows.
    live: BTreeMap<String, Expected>,
    /// How many live rows (before removing repeats).
    live_rows: usize,
    /// Postcodes of terminated rows that are not also live.
    terminated: BTreeSet<String>,
}

/// Upper case, white space out, the split letter of a split postcode dropped, one space
/// before the last three characters.
fn normalise(raw: &str) -> String {
    let mut compact: String = raw.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_ascii_uppercase();
    if compact.len() == 8 && compact.ends_with(|c: char| c.is_ascii_alphabetic()) {
        compact.pop();
    }
    let (outward, inward) = compact.split_at(compact.len() - 3);
    format!("{outward} {inward}")
}

fn read_independently(path: &Path, layout: Layout) -> Reading {
    let has_header = matches!(layout, Layout::Header2018);
    let mut reader = csv::ReaderBuilder::new().has_headers(has_header).flexible(true).from_path(path).unwrap();
    // 0-based: postcode, deletion, latitude, longitude, council, health board, IA.
    let cols: [usize; 7] = match layout {
        Layout::SmallUser => [0, 4, 7, 8, 10, 15, 18],
        Layout::LargeUser => [0, 4, 8, 9, 11, 16, 19],
        Layout::Header2018 => {
            let headers = reader.headers().unwrap().clone();
            let by_name = |name: &str| {
                headers.iter().position(|h| h == name).unwrap_or_else(|| panic!("{}: no column {name}", path.display()))
            };
            [
                by_name("Postcode"),
                by_name("DateOfDeletion"),
                by_name("Latitude"),
                by_name("Longitude"),
                by_name("CouncilArea2018Code"),
                by_name("HealthBoardArea2018Code"),
                by_name("IntegrationAuthority2018Code"),
            ]
        }
    };
    let mut live = BTreeMap::new();
    let mut live_rows = 0;
    let mut terminated = BTreeSet::new();
    for record in reader.records() {
        let record = record.unwrap();
        let line = record.position().unwrap().line() as usize;
        let get = |ix: usize| record.get(ix).unwrap_or_else(|| panic!("line {line}: no column {}", ix + 1)).trim();
        let code = normalise(get(cols[0]));
        if !get(cols[1]).is_empty() {
            terminated.insert(code);
            continue;
        }
        live_rows += 1;
        let part = Part {
            line,
            lat: get(cols[2]).parse().unwrap_or_else(|e| panic!("line {line}: latitude: {e}")),
            lon: get(cols[3]).parse().unwrap_or_else(|e| panic!("line {line}: longitude: {e}")),
            raw: [get(cols[4]).to_owned(), get(cols[5]).to_owned(), get(cols[6]).to_owned()],
        };
        live.entry(code).or_insert_with(|| Expected { parts: Vec::new() }).parts.push(part);
    }
    terminated.retain(|code| !live.contains_key(code));
    Reading { live, live_rows, terminated }
}

/// The area codes a postcode must end up with: its three codes (empty ones left out)
/// mapped through the aliases, plus `XS` and `XB`; sorted, for comparison.
fn mapped(raw: &[String; 3], extra_aliases: &[(&str, &str)]) -> Vec<String> {
    let spec = spec_aliases();
    let table: BTreeMap<&str, &str> =
        spec.iter().map(|(a, b)| (a.as_str(), b.as_str())).chain(extra_aliases.iter().copied()).collect();
    let mut areas: Vec<String> = raw
        .iter()
        .filter(|c| !c.is_empty())
        .map(|c| table.get(c.as_str()).copied().unwrap_or(c).to_owned())
        .chain(["XS".to_owned(), "XB".to_owned()])
        .collect();
    areas.sort();
    areas
}

fn sorted(areas: &[String]) -> Vec<String> {
    let mut areas = areas.to_vec();
    areas.sort();
    areas
}

fn is_normalised(code: &str) -> bool {
    let Some((outward, inward)) = code.split_once(' ') else {
        return false;
    };
    (2..=4).contains(&outward.len())
        && inward.len() == 3
        && code.chars().filter(|c| *c != ' ').all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// A dataset made from the small fixture whose `postcodes/` holds `file` alone.
fn dataset_with(work: &Path, file: &Path) -> PathBuf {
    let dir = work.join("input");
    common::copy_dir(&fixture("small"), &dir);
    let postcodes = dir.join("postcodes");
    fs::remove_dir_all(&postcodes).unwrap();
    fs::create_dir(&postcodes).unwrap();
    fs::copy(file, postcodes.join(file.file_name().unwrap())).unwrap();
    dir
}

fn live_count_printed_by_validate(dir: &Path) -> usize {
    let output = common::svcdir(&["validate", "--input", dir.to_str().unwrap()]);
    assert_ok(&output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let before = stdout
        .split(" live postcodes")
        .next()
        .filter(|_| stdout.contains(" live postcodes"))
        .unwrap_or_else(|| panic!("validate prints no live-postcode count:\n{stdout}"));
    before
        .rsplit(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number before ` live postcodes`:\n{stdout}"))
}

/// Checks one real extract end to end; returns the postcode directory for spot checks.
fn check_real_file(name: &str, layout: Layout) -> Option<(Reading, PostcodeDirectory)> {
    let file = common::shared_data()?.join("postcodes").join(name);
    if !file.is_file() {
        svcdir::test_support::skipped(&format!("{} is absent", file.display()));
        return None;
    }
    let expected = read_independently(&file, layout);
    assert!(!expected.live.is_empty(), "{name}: the independent reading found no live postcode");
    assert!(!expected.terminated.is_empty(), "{name}: the independent reading found no terminated postcode");

    // The reader alone: every live row, nothing else, normalised, no error.
    let mut errors = DataErrors::default();
    let rows = read_postcode_file(&file, &format!("postcodes/{name}"), &mut errors);
    assert!(errors.is_empty(), "{name}: read_postcode_file reports errors on the real NRS extract:\n{errors}");
    assert!(
        (expected.live.len()..=expected.live_rows).contains(&rows.len()),
        "{name}: read_postcode_file keeps {} rows; the file has {} live rows of {} live postcodes",
        rows.len(),
        expected.live_rows,
        expected.live.len()
    );
    for row in &rows {
        let want = expected.live.get(&row.code).unwrap_or_else(|| {
            panic!("{name}: read_postcode_file keeps {:?} (line {}), which is no live postcode", row.code, row.line)
        });
        if let Some(part) = want.parts.iter().find(|p| p.line == row.line) {
            assert_eq!(
                [row.council.clone(), row.health_board.clone(), row.integration_authority.clone()],
                part.raw,
                "{name}:{}: raw area codes",
                row.line
            );
            assert_eq!((row.latitude, row.longitude), (part.lat, part.lon), "{name}:{}: point", row.line);
        }
    }
    let row_codes: BTreeSet<&str> = rows.iter().map(|r| r.code.as_str()).collect();
    assert_eq!(row_codes.len(), expected.live.len(), "{name}: read_postcode_file keeps every live postcode");

    // Loaded and validated as a dataset.
    let work = tempfile::tempdir().unwrap();
    let dir = dataset_with(work.path(), &file);
    let dataset = svcdir::input::load(&dir).unwrap_or_else(|e| panic!("{name}: load fails:\n{e}"));
    assert_eq!(dataset.postcodes.len(), rows.len(), "{name}: load keeps the rows read_postcode_file keeps");
    let directory = svcdir::validate::validate(dataset).unwrap_or_else(|e| panic!("{name}: validate fails:\n{e}"));
    let postcodes = directory.postcodes;

    let got: BTreeSet<&str> = postcodes.postcodes.iter().map(|p| p.code.as_str()).collect();
    let want: BTreeSet<&str> = expected.live.keys().map(String::as_str).collect();
    let lost: Vec<&&str> = want.difference(&got).collect();
    let extra: Vec<&&str> = got.difference(&want).collect();
    assert!(lost.is_empty() && extra.is_empty(), "{name}: live postcodes lost {lost:?}, unexpected {extra:?}");
    assert_eq!(postcodes.postcodes.len(), expected.live.len(), "{name}: each postcode once");
    for code in &expected.terminated {
        assert!(postcodes.find(code).is_none(), "{name}: terminated postcode {code} is searchable");
    }
    for p in &postcodes.postcodes {
        assert!(is_normalised(&p.code), "{name}: {:?} is not normalised", p.code);
        let want = &expected.live[&p.code];
        // A split postcode takes the point and areas of one of its parts.
        let part =
            want.parts.iter().find(|part| (part.lat, part.lon) == (p.point.lat, p.point.lon)).unwrap_or_else(|| {
                panic!("{name}: {} has point {:?}, none of its rows' {:?}", p.code, p.point, want.parts)
            });
        assert_eq!(
            sorted(&p.areas),
            mapped(&part.raw, &[]),
            "{name}:{}: {} area codes (raw {:?})",
            part.line,
            p.code,
            part.raw
        );
        // Found in any spelling.
        let compact_lower = p.code.replace(' ', "").to_ascii_lowercase();
        assert_eq!(
            postcodes.find(&compact_lower).map(|f| &f.code),
            Some(&p.code),
            "{name}: lookup of {compact_lower:?}"
        );
    }

    // The binary agrees on the count.
    assert_eq!(
        live_count_printed_by_validate(&dir),
        expected.live.len(),
        "{name}: `svcdir validate` live-postcode count"
    );
    Some((expected, postcodes))
}

fn areas_of(postcodes: &PostcodeDirectory, code: &str) -> Vec<String> {
    sorted(&postcodes.find(code).unwrap_or_else(|| panic!("{code} is not live")).areas)
}

fn strings(codes: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = codes.iter().map(|c| (*c).to_owned()).collect();
    v.sort();
    v
}

/// How many live postcodes of a reading have at least one code that the aliases rename.
fn aliased(reading: &Reading) -> usize {
    let spec = spec_aliases();
    reading.live.values().filter(|e| e.first().raw.iter().any(|c| spec.iter().any(|(from, _)| from == c))).count()
}

#[test]
fn small_user_extract_without_header() {
    let Some((reading, postcodes)) = check_real_file("nrs-smalluser-sample-no-header.csv", Layout::SmallUser) else {
        return;
    };
    // The Glasgow example of behaviour.md: S12000049 / S08000031 / S37000034 in the file.
    assert_eq!(reading.live["G13 3AE"].first().raw, ["S12000049", "S08000031", "S37000034"].map(String::from));
    assert_eq!(areas_of(&postcodes, "G13 3AE"), strings(&["S12000046", "S08000021", "S37000015", "XS", "XB"]));
    assert_eq!(postcodes.find("g133ae").map(|p| (p.point.lat, p.point.lon)), Some((55.88842777, -4.36412429)));
    assert!(reading.terminated.contains("G2 8AE"), "G2 8AE is terminated in the extract");
    assert!(postcodes.find("G2 8AE").is_none());
    assert!(aliased(&reading) > 0, "the extract exercises the alias table");
    // NRS splits PA31 8UA between two areas: rows `PA31 8UAB` and `PA31 8UAA` (split
    // indicator Y). The unit postcode is live and found as people write it.
    assert_eq!(reading.live["PA31 8UA"].parts.len(), 2);
    assert!(postcodes.find("pa31 8ua").is_some(), "the split postcode PA31 8UA is not searchable");
}

#[test]
fn large_user_extract_without_header() {
    let Some((reading, _)) = check_real_file("nrs-largeuser-sample-no-header.csv", Layout::LargeUser) else {
        return;
    };
    assert!(reading.live.len() >= 5, "{} live rows", reading.live.len());
}

#[test]
fn aberdeen_2018_extract_with_header() {
    let Some((reading, postcodes)) = check_real_file("nrs-aberdeen-2018-with-header.csv", Layout::Header2018) else {
        return;
    };
    // Aberdeen City codes are in the list already: they stay as they are.
    let (code, _) = reading
        .live
        .iter()
        .find(|(_, e)| e.first().raw == ["S12000033", "S08000020", "S37000001"].map(String::from))
        .expect("a live Aberdeen City postcode");
    assert_eq!(areas_of(&postcodes, code), strings(&["S12000033", "S08000020", "S37000001", "XS", "XB"]));
    // The 2018 health-board column, not the 2006 or 1995 one, is the one read.
    assert!(
        postcodes.postcodes.iter().all(|p| !p.areas.iter().any(|a| a == "S08000006")),
        "an old health-board code leaked in"
    );
}

// ---------------------------------------------------------------------------------------
// Synthetic extracts: aliases file, header years, spellings

/// A row of the small-user layout (57 columns) with the given fields.
fn small_user_row(postcode: &str, deleted: &str, lat: &str, lon: &str, codes: [&str; 3]) -> String {
    let mut cols = vec![String::new(); 57];
    cols[0] = postcode.to_owned();
    cols[3] = "1/8/1973 00:00:00".to_owned();
    cols[4] = deleted.to_owned();
    cols[7] = lat.to_owned();
    cols[8] = lon.to_owned();
    cols[10] = codes[0].to_owned();
    cols[15] = codes[1].to_owned();
    cols[18] = codes[2].to_owned();
    cols.join(",")
}

fn small_dataset(work: &Path) -> PathBuf {
    let dir = work.join("input");
    common::copy_dir(&fixture("small"), &dir);
    dir
}

fn add_service_area(dir: &Path, code: &str, kind: &str, name: &str) {
    let path = dir.join("service_areas.json");
    let mut areas: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    areas.as_array_mut().unwrap().push(serde_json::json!({"code": code, "type": kind, "name": name}));
    fs::write(&path, serde_json::to_string_pretty(&areas).unwrap()).unwrap();
}

fn load(dir: &Path) -> PostcodeDirectory {
    svcdir::validate::load_directory(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).postcodes
}

#[test]
fn aliases_file_extends_the_built_in_table() {
    let work = tempfile::tempdir().unwrap();
    let dir = small_dataset(work.path());
    add_service_area(&dir, "S12000036", "Local Authority", "City of Edinburgh");
    add_service_area(&dir, "S08000024", "Health Board", "Lothian");
    // A code of a later year that the built-in table does not know.
    fs::write(
        dir.join("postcodes/edinburgh.csv"),
        small_user_row("EH1 1YZ", "", "55.9533", "-3.1883", ["S12000099", "S08000099", "S37000012"]) + "\n",
    )
    .unwrap();

    // Without the file, the unknown codes stay as they are.
    let postcodes = load(&dir);
    assert_eq!(areas_of(&postcodes, "EH1 1YZ"), strings(&["S12000099", "S08000099", "S37000012", "XS", "XB"]));

    fs::write(dir.join("area_code_aliases.csv"), "from_code,to_code\nS12000099,S12000036\nS08000099,S08000024\n")
        .unwrap();
    let postcodes = load(&dir);
    assert_eq!(areas_of(&postcodes, "EH1 1YZ"), strings(&["S12000036", "S08000024", "S37000012", "XS", "XB"]));
    // The built-in aliases still apply beside the file's.
    assert_eq!(areas_of(&postcodes, "G2 1AL"), strings(&["S12000046", "S08000021", "S37000015", "XS", "XB"]));
    // Codes that are in the list already are left alone.
    assert_eq!(areas_of(&postcodes, "AB11 6BA"), strings(&["S12000033", "S08000020", "S37000001", "XS", "XB"]));

    // A file without a header row is read the same way, and the binary accepts the dataset.
    fs::write(dir.join("area_code_aliases.csv"), "S12000099,S12000036\nS08000099,S08000024\n").unwrap();
    assert_eq!(areas_of(&load(&dir), "EH1 1YZ"), strings(&["S12000036", "S08000024", "S37000012", "XS", "XB"]));
    assert_eq!(live_count_printed_by_validate(&dir), 3);
}

#[test]
fn header_columns_are_found_by_name_whatever_their_year() {
    let work = tempfile::tempdir().unwrap();
    let dir = small_dataset(work.path());
    fs::remove_file(dir.join("postcodes/small.csv")).unwrap();
    fs::write(
        dir.join("postcodes/2019.csv"),
        "\"Postcode\",\"Longitude\",\"IntegrationAuthority2019Code\",\"Latitude\",\"HealthBoardArea2019Code\",\
         \"DateOfDeletion\",\"CouncilArea2019Code\",\"Extra\"\n\
         g21al,-4.2486,S37000034,55.8604,S08000031,,S12000049,x\n\
         \"G2 8AE\",\"-4.2625\",\"S37000034\",\"55.8571\",\"S08000031\",\"25/1/2017 00:00:00\",\"S12000049\",\"y\"\n\
         AB11  6ba,-2.0987,S37000001,57.1456,S08000020,,S12000033,z\n",
    )
    .unwrap();
    let postcodes = load(&dir);
    let codes: Vec<&str> = postcodes.postcodes.iter().map(|p| p.code.as_str()).collect();
    assert_eq!(codes, ["AB11 6BA", "G2 1AL"], "live postcodes, normalised and sorted");
    let g2 = postcodes.find("G2 1AL").unwrap();
    assert_eq!((g2.point.lat, g2.point.lon), (55.8604, -4.2486));
    assert_eq!(sorted(&g2.areas), strings(&["S12000046", "S08000021", "S37000015", "XS", "XB"]));
    assert_eq!(areas_of(&postcodes, "AB11 6BA"), strings(&["S12000033", "S08000020", "S37000001", "XS", "XB"]));
}

#[test]
fn spellings_are_normalised_and_files_merge() {
    let work = tempfile::tempdir().unwrap();
    let dir = small_dataset(work.path());
    let rows = [
        small_user_row("\"eh11yz\"", "", "55.95", "-3.19", ["S12000036", "S08000024", "S37000012"]),
        small_user_row(" EH3  9AA ", "", "55.94", "-3.20", ["S12000036", "S08000024", "S37000012"]),
        small_user_row("EH99 1SP", "1/1/2000 00:00:00", "55.95", "-3.17", ["S12000036", "S08000024", "S37000012"]),
    ];
    fs::write(dir.join("postcodes/more.csv"), rows.join("\r\n") + "\r\n").unwrap();
    let postcodes = load(&dir);
    let codes: Vec<&str> = postcodes.postcodes.iter().map(|p| p.code.as_str()).collect();
    assert_eq!(codes, ["AB11 6BA", "EH1 1YZ", "EH3 9AA", "G2 1AL"]);
    for spelling in ["eh1 1yz", "EH11YZ", "eh1+1yz", " EH1\t1YZ "] {
        assert_eq!(postcodes.find(spelling).map(|p| p.code.as_str()), Some("EH1 1YZ"), "{spelling:?}");
    }
}
