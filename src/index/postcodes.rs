//! The live postcodes as the search reads them (behaviour.md, Search 1): each code's point
//! and the service areas it lies in, as flat tables.
//!
//! The model keeps a postcode as a record with its own strings (a code and one string per
//! area code), which is right for building and validating; decoded at start-up, the
//! ~160,000 postcodes of Scotland would be more than a million small allocations. Here the
//! codes are one string, the points one vector, and each postcode's areas a range of
//! service-area numbers: a few vectors to decode, and no hashing of area codes per request.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::csr::Csr;
use super::damage::Damage;
use crate::model::geo::normalise_postcode;
use crate::model::{AreaIx, Point, PostcodeDirectory, ServiceArea};

/// Every live postcode, sorted by normalised code.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PostcodeTable {
    /// The codes, one after another; code `i` ends at `ends[i]`.
    codes: String,
    #[serde(with = "super::packed")]
    ends: Vec<u32>,
    #[serde(with = "super::packed")]
    points: Vec<Point>,
    /// The service areas each postcode lies in. Area codes that no service area has are
    /// left out: no service can match through them.
    areas: Csr<AreaIx>,
}

/// One postcode of a [`PostcodeTable`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PostcodeRef<'t> {
    /// Normalised: upper case, one space before the last three characters.
    pub code: &'t str,
    /// Its point.
    pub point: Point,
    /// The service areas it lies in (the alias table already applied).
    pub areas: &'t [AreaIx],
}

impl PostcodeTable {
    /// The table of a directory's postcodes, their area codes resolved to `service_areas`.
    pub fn of(postcodes: &PostcodeDirectory, service_areas: &[ServiceArea]) -> PostcodeTable {
        let by_code: HashMap<&str, AreaIx> =
            service_areas.iter().enumerate().map(|(ix, a)| (a.code.as_str(), ix as AreaIx)).collect();
        let mut table = PostcodeTable::default();
        let mut areas: Vec<AreaIx> = Vec::new();
        for p in &postcodes.postcodes {
            table.codes.push_str(&p.code);
            table.ends.push(table.codes.len() as u32);
            table.points.push(p.point);
            areas.clear();
            areas.extend(p.areas.iter().filter_map(|code| by_code.get(code.as_str()).copied()));
            areas.sort_unstable();
            areas.dedup();
            table.areas.items.extend_from_slice(&areas);
            table.areas.start.push(table.areas.items.len() as u32);
        }
        table
    }

    /// The districts (`AB10`) and sectors (`AB10 1`) of these postcodes as a table of the
    /// same shape (behaviour.md, Search 1): each one's point the mean latitude and mean
    /// longitude of its postcodes (summed in code order), its service areas the union of
    /// theirs. Built once, at build time, so that a search never scans the postcodes.
    pub fn outcodes(&self) -> PostcodeTable {
        struct Sum {
            lat: f64,
            lon: f64,
            n: u32,
            areas: Vec<AreaIx>,
        }
        let mut sums: std::collections::BTreeMap<&str, Sum> = std::collections::BTreeMap::new();
        for i in 0..self.len() {
            let code = self.code(i);
            // A normalised code is the district, a space and three characters, the first of
            // them the sector's digit.
            let Some((district, inward)) = code.split_once(' ').filter(|(_, inward)| inward.len() == 3) else {
                continue;
            };
            let sector = &code[..code.len() - inward.len() + 1];
            for key in [district, sector] {
                let sum = sums.entry(key).or_insert(Sum { lat: 0.0, lon: 0.0, n: 0, areas: Vec::new() });
                sum.lat += self.points[i].lat;
                sum.lon += self.points[i].lon;
                sum.n += 1;
                sum.areas.extend_from_slice(self.areas.get(i));
            }
        }
        let mut table = PostcodeTable::default();
        for (code, mut sum) in sums {
            table.codes.push_str(code);
            table.ends.push(table.codes.len() as u32);
            table.points.push(Point { lat: sum.lat / f64::from(sum.n), lon: sum.lon / f64::from(sum.n) });
            sum.areas.sort_unstable();
            sum.areas.dedup();
            table.areas.items.extend_from_slice(&sum.areas);
            table.areas.start.push(table.areas.items.len() as u32);
        }
        table
    }

    /// Number of postcodes.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    fn code(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.codes[start..self.ends[i] as usize]
    }

    /// Postcode `i` in code order.
    pub fn get(&self, i: usize) -> Option<PostcodeRef<'_>> {
        let point = *self.points.get(i)?;
        Some(PostcodeRef { code: self.code(i), point, areas: self.areas.get(i) })
    }

    /// Looks up a postcode in any spelling (see [`normalise_postcode`]).
    pub fn find(&self, raw: &str) -> Option<PostcodeRef<'_>> {
        self.find_code(&normalise_postcode(raw)?)
    }

    /// Looks up a code exactly as stored.
    pub fn find_code(&self, code: &str) -> Option<PostcodeRef<'_>> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.code(mid).cmp(code) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return self.get(mid),
            }
        }
        None
    }

    /// Whether every code, point and area range is where the others say, the codes are in
    /// order, and every area exists (`areas` service areas): what a decoded table must hold
    /// before it is searched.
    pub(super) fn check(&self, areas: usize) -> Result<(), Damage> {
        let n = self.points.len();
        if self.ends.len() != n || self.areas.keys() != n {
            return Err(Damage::PostcodeColumns);
        }
        self.areas.check()?;
        let mut start = 0usize;
        let mut previous: Option<&str> = None;
        for &end in &self.ends {
            let code = self.codes.get(start..end as usize).ok_or(Damage::PostcodeBounds)?;
            if previous.is_some_and(|p| p >= code) {
                return Err(Damage::PostcodeOrder);
            }
            previous = Some(code);
            start = end as usize;
        }
        if start != self.codes.len() {
            return Err(Damage::PostcodeText);
        }
        if self.areas.items().iter().any(|&a| a as usize >= areas) {
            return Err(Damage::PostcodeArea);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{AreaKind, Postcode};

    fn table() -> PostcodeTable {
        let area = |code: &str| ServiceArea { code: code.into(), kind: AreaKind::LocalAuthority, name: code.into() };
        let postcode = |code: &str, areas: &[&str]| Postcode {
            code: code.into(),
            point: Point { lat: 55.0, lon: -4.0 },
            areas: areas.iter().map(|a| a.to_string()).collect(),
        };
        PostcodeTable::of(
            &PostcodeDirectory {
                postcodes: vec![
                    postcode("EH1 1YZ", &["S2", "S9"]),
                    postcode("G2 1AL", &["S1", "S2", "S1", "XS"]),
                    postcode("ZE1 0AA", &[]),
                ],
            },
            &[area("S1"), area("S2"), area("XS")],
        )
    }

    #[test]
    fn finds_any_spelling_with_its_service_areas() {
        let t = table();
        assert_eq!(t.len(), 3);
        let g2 = t.find("g21al").expect("found");
        assert_eq!((g2.code, g2.areas), ("G2 1AL", &[0, 1, 2][..]));
        assert_eq!(t.find(" EH1  1yz").map(|p| p.areas), Some(&[1][..]), "S9 is no service area");
        assert_eq!(t.find("ZE10AA").map(|p| p.areas.len()), Some(0));
        assert_eq!(t.find("G2 1AM"), None);
        assert_eq!(t.find("nonsense"), None);
        assert!(t.check(3).is_ok());
        assert!(t.check(2).is_err(), "area 2 would not exist");
        assert!(PostcodeTable::default().check(0).is_ok());
    }

    /// Each district's and sector's point and areas against a plain scan of the postcodes.
    #[test]
    fn districts_and_sectors_are_the_mean_and_union_of_their_postcodes() {
        let area = |code: &str| ServiceArea { code: code.into(), kind: AreaKind::LocalAuthority, name: code.into() };
        let postcode = |code: &str, lat: f64, lon: f64, areas: &[&str]| Postcode {
            code: code.into(),
            point: Point { lat, lon },
            areas: areas.iter().map(|a| a.to_string()).collect(),
        };
        let postcodes = vec![
            postcode("AB1 0AA", 57.0, -2.0, &["S1"]),
            postcode("AB10 1AA", 57.1, -2.1, &["S1", "XS"]),
            postcode("AB10 1AB", 57.2, -2.3, &["S2", "XS"]),
            postcode("AB10 6ZZ", 57.6, -2.2, &["S9"]),
            postcode("G2 1AL", 55.8, -4.2, &["S3"]),
        ];
        let areas = [area("S1"), area("S2"), area("S3"), area("XS")];
        let table = PostcodeTable::of(&PostcodeDirectory { postcodes: postcodes.clone() }, &areas);
        let outcodes = table.outcodes();
        assert!(outcodes.check(areas.len()).is_ok());
        let codes: Vec<&str> = (0..outcodes.len()).map(|i| outcodes.get(i).unwrap().code).collect();
        assert_eq!(codes, ["AB1", "AB1 0", "AB10", "AB10 1", "AB10 6", "G2", "G2 1"]);
        for code in codes {
            let members: Vec<&Postcode> = postcodes
                .iter()
                .filter(|p| p.code.split(' ').next() == Some(code) || p.code[..p.code.len() - 2] == *code)
                .collect();
            let n = members.len() as f64;
            let lat = members.iter().map(|p| p.point.lat).sum::<f64>() / n;
            let lon = members.iter().map(|p| p.point.lon).sum::<f64>() / n;
            let mut want: Vec<AreaIx> = (0..areas.len() as AreaIx)
                .filter(|&a| members.iter().any(|p| p.areas.contains(&areas[a as usize].code)))
                .collect();
            want.sort_unstable();
            let got = outcodes.find_code(code).unwrap();
            assert_eq!((got.point, got.areas), (Point { lat, lon }, &want[..]), "{code}");
        }
        assert_eq!(outcodes.find_code("AB101"), None);
        assert_eq!(outcodes.find_code("AB10 2"), None);
    }

    #[test]
    fn a_damaged_table_is_refused() {
        let mut t = table();
        t.ends.swap(0, 1);
        assert!(t.check(3).is_err());
        let mut t = table();
        t.ends[2] = 1000;
        assert!(t.check(3).is_err());
        let mut t = table();
        t.points.pop();
        assert!(t.check(3).is_err());
        let mut t = table();
        t.codes = "ZE1 0AAG2 1ALEH1 1YZ".into();
        assert!(t.check(3).is_err(), "out of order");
    }
}
