//! Synthetic postcodes and their NRS "small user" CSV rows.
//!
//! Each town's postcodes lie in its real districts (outward codes), scattered around a
//! centre per district, so that nearby postcodes share a district the way real ones do.
//! About one row in fourteen is terminated (has a date of deletion); locations only ever use
//! live ones.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::SampleError;
use super::towns::{Town, towns};

/// Fewest postcodes a dataset has, whatever its size.
const MIN_POSTCODES: usize = 200;
/// Most postcodes a dataset has: about the size of the real small-user file (some 230,000
/// rows); beyond that more rows only make the file bigger, not the data more realistic.
const MAX_POSTCODES: usize = 250_000;
/// Fewest postcodes per town, so that every town has live postcodes to put locations at.
const MIN_PER_TOWN: usize = 4;
/// Letters used in the inward code (the NRS never uses C, I, K, M, O, V there).
const INWARD_LETTERS: &[u8] = b"ABDEFGHJLNPQRSTUWXYZ";
/// Share of a district's code space a town may fill: keeps rejection sampling quick.
const MAX_FILL: f64 = 0.6;
/// Share of postcodes that are terminated.
const TERMINATED: f64 = 0.07;
/// Columns in a small-user row (the real file has 56 and a trailing empty one).
pub(crate) const COLUMNS: usize = 57;

/// One synthetic postcode.
#[derive(Debug, Clone)]
pub(crate) struct Postcode {
    /// Normalised form, e.g. `G13 3AE`.
    pub code: String,
    /// Index into [`towns`].
    pub town: usize,
    /// Decimal degrees.
    pub lat: f64,
    /// Decimal degrees.
    pub lon: f64,
    /// Date of introduction `(day, month, year)`.
    pub introduced: (u32, u32, i32),
    /// Date of deletion; `None` for a live postcode.
    pub deleted: Option<(u32, u32, i32)>,
}

/// All postcodes, sorted by code like the NRS files, with the live ones indexed by town.
#[derive(Debug)]
pub(crate) struct Postcodes {
    /// Every postcode, sorted by code.
    pub all: Vec<Postcode>,
    /// For each town, indices into `all` of its live postcodes (never empty).
    pub live_by_town: Vec<Vec<usize>>,
}

/// How many postcodes a dataset of `services` services gets.
pub(crate) fn target_count(services: usize) -> usize {
    (services / 2).clamp(MIN_POSTCODES, MAX_POSTCODES)
}

/// Generates about `target` postcodes (fewer when a town's code space would fill up).
pub(crate) fn generate(rng: &mut ChaCha8Rng, target: usize) -> Postcodes {
    let total_weight: u32 = towns().iter().map(|t| t.weight).sum();
    let mut all = Vec::with_capacity(target + towns().len() * MIN_PER_TOWN);
    for (town_index, town) in towns().iter().enumerate() {
        let share = target as f64 * f64::from(town.weight) / f64::from(total_weight);
        let capacity = town.districts.len() * 10 * INWARD_LETTERS.len() * INWARD_LETTERS.len();
        let count = (share.round() as usize).max(MIN_PER_TOWN).min((capacity as f64 * MAX_FILL) as usize);
        town_postcodes(rng, town_index, town, count, &mut all);
    }
    all.sort_by(|a, b| a.code.cmp(&b.code));
    let mut live_by_town = vec![Vec::new(); towns().len()];
    for (i, p) in all.iter().enumerate() {
        if p.deleted.is_none() {
            live_by_town[p.town].push(i);
        }
    }
    Postcodes { all, live_by_town }
}

fn town_postcodes(rng: &mut ChaCha8Rng, town_index: usize, town: &Town, count: usize, out: &mut Vec<Postcode>) {
    // Each district gets its own centre, so a district's postcodes cluster together.
    let centres: Vec<(f64, f64)> =
        town.districts.iter().map(|_| offset(rng, town.lat, town.lon, town.radius_km * 0.6)).collect();
    let mut seen = HashSet::with_capacity(count);
    let mut made = 0;
    while made < count {
        let d = rng.gen_range(0..town.districts.len());
        let sector = rng.gen_range(0..10u8);
        let l1 = INWARD_LETTERS[rng.gen_range(0..INWARD_LETTERS.len())] as char;
        let l2 = INWARD_LETTERS[rng.gen_range(0..INWARD_LETTERS.len())] as char;
        let code = format!("{} {sector}{l1}{l2}", town.districts[d]);
        if !seen.insert(code.clone()) {
            continue;
        }
        let (lat, lon) = offset(rng, centres[d].0, centres[d].1, town.radius_km * 0.5);
        let introduced = if rng.gen_bool(0.7) {
            // The date the NRS gives every postcode that predates its records.
            (1, 8, 1973)
        } else {
            (rng.gen_range(1..=28), rng.gen_range(1..=12), rng.gen_range(1974..=2022))
        };
        // The first few stay live so every town has somewhere to put locations.
        let deleted = (made >= 2 && rng.gen_bool(TERMINATED)).then(|| {
            (rng.gen_range(1..=28), rng.gen_range(1..=12), rng.gen_range((introduced.2 + 1).max(1980)..=2024))
        });
        out.push(Postcode { code, town: town_index, lat, lon, introduced, deleted });
        made += 1;
    }
}

/// A point uniformly distributed in a disc of `radius_km` around `(lat, lon)`.
///
/// Rejection sampling in a square instead of an angle and a radius: no trigonometry on
/// random values, so the same seed gives the same digits on every platform.
pub(crate) fn offset(rng: &mut ChaCha8Rng, lat: f64, lon: f64, radius_km: f64) -> (f64, f64) {
    loop {
        let dx: f64 = rng.gen_range(-1.0..1.0);
        let dy: f64 = rng.gen_range(-1.0..1.0);
        if dx * dx + dy * dy <= 1.0 {
            let dlat = dy * radius_km / 111.32;
            let dlon = dx * radius_km / (111.32 * lat.to_radians().cos());
            return (lat + dlat, lon + dlon);
        }
    }
}

/// Writes every postcode as a small-user row without header.
pub(crate) fn write_csv(path: &Path, postcodes: &Postcodes) -> Result<(), SampleError> {
    let csv_err = |source| SampleError::Csv { path: path.to_path_buf(), source };
    // Text quoted, numbers bare: the mix the real NRS files show.
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .quote_style(csv::QuoteStyle::NonNumeric)
        .from_path(path)
        .map_err(csv_err)?;
    let mut row: Vec<String> = vec![String::new(); COLUMNS];
    for (i, p) in postcodes.all.iter().enumerate() {
        fill_row(&mut row, i, p);
        w.write_record(&row).map_err(csv_err)?;
    }
    w.flush()
        .map_err(|source| SampleError::from(crate::input::writer::WriteError::Io { path: path.to_path_buf(), source }))
}

/// Fills `row` with the columns of one postcode. Only columns 1–5, 8, 9, 11, 16 and 19 carry
/// meaning here; the rest is plausible filler in the shape of the real file, derived from
/// the town and the row number so that it costs no random draws.
fn fill_row(row: &mut [String], i: usize, p: &Postcode) {
    for f in row.iter_mut() {
        f.clear();
    }
    let town = &towns()[p.town];
    let t = p.town;
    // "G13 3AE" -> outward "G13", rest " 3AE" (the sector digit follows the space).
    let (outward, rest) = p.code.split_at(p.code.len() - 4);
    let live = p.deleted.is_none();
    // `write!` into a String cannot fail.
    let _ = write!(row[0], "{}", p.code);
    let _ = write!(row[1], "{outward}");
    let _ = write!(row[2], "{outward} {}", &rest[1..2]);
    let (d, m, y) = p.introduced;
    let _ = write!(row[3], "{d}/{m}/{y} 00:00:00");
    if let Some((d, m, y)) = p.deleted {
        let _ = write!(row[4], "{d}/{m}/{y} 00:00:00");
    }
    let (easting, northing) = grid_reference(p.lat, p.lon);
    let _ = write!(row[5], "{easting}");
    let _ = write!(row[6], "{northing}");
    let _ = write!(row[7], "{:.8}", p.lat);
    let _ = write!(row[8], "{:.8}", p.lon);
    row[9].push('N');
    row[10].push_str(town.council);
    let _ = write!(row[11], "S140000{:02}", 1 + t % 59);
    let _ = write!(row[12], "S170000{:02}", 8 + t % 10);
    let _ = write!(row[13], "S16000{:03}", 74 + t % 73);
    let _ = write!(row[14], "S1300{:04}", 2500 + t * 7 + i % 7);
    row[15].push_str(town.health_board);
    let _ = write!(row[16], "S080000{:02}", 1 + t % 14);
    let _ = write!(row[17], "{:02}", 1 + t % 15);
    row[18].push_str(town.integration_authority);
    let _ = write!(row[19], "S00{:06}", 88_000 + (i * 7) % 46_000);
    let _ = write!(row[20], "S00{:06}", (i * 13) % 42_000);
    let _ = write!(row[21], "{:04}{}{:02}", 6000 + t * 7, block(i), 1 + i % 40);
    let _ = write!(row[22], "S0100{:04}", 6505 + (i * 3) % 6976);
    let _ = write!(row[23], "S0100{:04}", (i * 5) % 6505);
    let _ = write!(row[24], "S0200{:04}", 1245 + t * 19 + i % 19);
    let _ = write!(row[25], "S0200{:04}", t * 19 + i % 19);
    if live {
        let households = 4 + (i * 37) % 60;
        let _ = write!(row[26], "{households}");
        let _ = write!(row[27], "{}", households * 2 + i % 7);
        let _ = write!(row[28], "{}", households.saturating_sub(i % 3));
        let _ = write!(row[29], "{}", households * 2 + i % 5);
        let _ = write!(row[30], "{}", households.saturating_sub(i % 4));
        let _ = write!(row[31], "{}", households * 2 + i % 9);
    } else {
        row[26].push('0');
        row[27].push('0');
    }
    let _ = write!(row[32], "{}", 1 + (i * 97) % 6976);
    let _ = write!(row[33], "S300000{:02}", 1 + t % 60);
    row[34].push_str("UKM");
    let _ = write!(row[34], "{}", 5 + t % 5);
    let _ = write!(row[35], "UKM{}{}", 5 + t % 5, t % 10);
    let _ = write!(row[36], "S1900{:04}", 1000 + t * 11);
    let _ = write!(row[37], "{:06}", 100_000 + t * 1733);
    let _ = write!(row[38], "{:03}", t * 4 + 2);
    let _ = write!(row[39], "S2000{:04}", 1000 + t * 5);
    let _ = write!(row[40], "{:03}", t * 3 + 1);
    let _ = write!(row[41], "S35000{:03}", 1 + (t * 13 + i % 5) % 870);
    let _ = write!(row[42], "S090000{:02}", 1 + t % 6);
    row[43].push_str("000");
    let _ = write!(row[44], "{:02}", 1 + t % 56);
    let _ = write!(row[45], "{:02}", 1 + t % 56);
    // Column 47 (national park) stays empty.
    row[47].push_str(town.council);
    if i.is_multiple_of(3) {
        let _ = write!(row[48], "S050000{:02}", 1 + t % 32);
        let _ = write!(row[49], "S06000{:03}", 1 + t % 99);
    }
    let _ = write!(row[50], "S110000{:02}", 1 + t % 4);
    let _ = write!(row[51], "S220000{:02}", 45 + t % 45);
    let urban = if town.weight >= 10 {
        1
    } else if town.weight >= 3 {
        2
    } else {
        3 + (i % 4)
    };
    let _ = write!(row[52], "{urban}");
    let _ = write!(row[53], "{}", urban + usize::from(urban > 3));
    if live && !i.is_multiple_of(5) {
        row[54].push('Y');
        row[55].push('1');
    } else {
        row[54].push('N');
    }
    // Column 57 stays empty: the real rows end with a trailing comma.
}

/// Two letters for the 1991 output-area code filler.
fn block(i: usize) -> String {
    let a = (b'A' + (i % 26) as u8) as char;
    let b = (b'A' + ((i / 26) % 26) as u8) as char;
    format!("{a}{b}")
}

/// Approximate Ordnance Survey grid reference: filler, close enough to look right.
fn grid_reference(lat: f64, lon: f64) -> (i64, i64) {
    let easting = 400_000.0 + (lon + 2.0) * 111_320.0 * lat.to_radians().cos();
    let northing = (lat - 49.0) * 111_320.0 - 100_000.0;
    (easting.round() as i64, northing.round() as i64)
}
