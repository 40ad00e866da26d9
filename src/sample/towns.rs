//! The Scottish towns that synthetic postcodes, locations and organisations are placed in.
//!
//! Area codes are the ones a current NRS postcode file carries: for Glasgow, Fife, North
//! Lanarkshire, Perth and Kinross and the Fife, Tayside, Greater Glasgow and Clyde and
//! Lanarkshire health boards those are the post-2018 codes, which differ from the fixed list
//! in `service_areas.json`. [`list_code`] maps them back (the built-in alias table of
//! `crate::validate`), so that services only ever name codes of the list while postcodes
//! exercise the alias mapping.

use std::sync::OnceLock;

use serde::Deserialize;

/// Which (fictional, Ofcom drama-range) telephone numbers a town's organisations get.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Dial {
    /// 0141 496 0xxx.
    Glasgow,
    /// 0131 496 0xxx.
    Edinburgh,
    /// 01632 960xxx.
    Other,
}

/// One town: centre, postcode districts and the codes its postcodes carry.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Town {
    /// Town name, used as locality.
    pub name: &'static str,
    /// Council area name as people write it in organisation names.
    pub area: &'static str,
    /// Latitude of the centre.
    pub lat: f64,
    /// Longitude of the centre.
    pub lon: f64,
    /// Postcode districts (outward codes) of the town; no district is shared.
    pub districts: &'static [&'static str],
    /// Council area code as postcode files carry it.
    pub council: &'static str,
    /// Health board code as postcode files carry it.
    pub health_board: &'static str,
    /// Integration authority code as postcode files carry it.
    pub integration_authority: &'static str,
    /// Relative size: share of postcodes and of organisations.
    pub weight: u32,
    /// Radius in kilometres within which its postcodes are scattered.
    pub radius_km: f64,
    /// Telephone numbering.
    pub dial: Dial,
}

/// The towns, every council area of Scotland represented at least once: `towns.csv`, one
/// row a town (districts separated by spaces; the codes as postcode files carry them).
const TOWNS_CSV: &str = include_str!("towns.csv");

/// One row of `towns.csv`.
#[derive(Deserialize)]
struct Row {
    name: String,
    area: String,
    lat: f64,
    lon: f64,
    districts: String,
    council: String,
    health_board: String,
    integration_authority: String,
    weight: u32,
    radius_km: f64,
    dial: Dial,
}

/// The towns of `towns.csv`, read once per process. The table is embedded and tested
/// (`sample::tests`), so a row that does not parse is a bug of this crate: it panics.
pub(crate) fn towns() -> &'static [Town] {
    static TOWNS: OnceLock<Vec<Town>> = OnceLock::new();
    TOWNS.get_or_init(|| {
        // The strings live as long as the process, as the table did when it was code.
        let keep = |text: String| -> &'static str { Box::leak(text.into_boxed_str()) };
        csv::Reader::from_reader(TOWNS_CSV.as_bytes())
            .deserialize::<Row>()
            .map(|row| {
                let row = row.expect("the embedded towns.csv parses");
                let districts: Vec<&'static str> =
                    row.districts.split_whitespace().map(|d| keep(d.to_owned())).collect();
                Town {
                    name: keep(row.name),
                    area: keep(row.area),
                    lat: row.lat,
                    lon: row.lon,
                    districts: Box::leak(districts.into_boxed_slice()),
                    council: keep(row.council),
                    health_board: keep(row.health_board),
                    integration_authority: keep(row.integration_authority),
                    weight: row.weight,
                    radius_km: row.radius_km,
                    dial: row.dial,
                }
            })
            .collect()
    })
}

/// Maps a code as postcode files carry it to the code of the fixed service-area list
/// through the built-in aliases (behaviour.md, "Search" item 2); other codes are the same
/// in both.
pub(crate) fn list_code(code: &str) -> &str {
    crate::validate::BUILT_IN_ALIASES.iter().find(|(from, _)| *from == code).map_or(code, |(_, to)| to)
}
