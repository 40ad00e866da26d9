//! The rows of the tabular data package, one table at a time: each table's objects are
//! made from the documents' views serialised to JSON (so the two forms cannot disagree),
//! written as CSV records as they are made, and put in id order by their positions, so a
//! table never holds more than its own CSV text in memory (holding every table's rows as
//! JSON trees at once cost a gigabyte at 100,000 services). Text cells a spreadsheet would
//! run as a formula begin with a `'` ([`super::tables::NEUTRAL_NOTE`]).

use std::io::Write;
use std::ops::Range;

use serde_json::Value;

use super::Index;
use super::tables::{Kind, Table};
use super::views::{
    AddressView, ContactView, LocationView, OrganizationView, ServiceAtLocationView, ServiceDepth, ServiceView,
    TaxonomyTermView, TaxonomyView,
};
use crate::model::{Directory, LocationIx};
use crate::views::Publication;

/// Writes `table` as CSV to `out`: the header row, then its rows in id order, each id once
/// (the first object made with it). Tables the directory has nothing for have the header
/// only.
pub(crate) fn write_csv(
    dir: &Directory,
    publication: &Publication,
    index: &Index,
    table: &Table,
    out: &mut impl Write,
) -> Result<(), csv::Error> {
    let mut records = csv::Writer::from_writer(Vec::new());
    records.write_record(table.columns.iter().map(|c| c.name))?;
    records.flush()?;
    let header = records.get_ref().len();
    // Each record's id and its bytes in `records`, in the order made.
    let mut spans: Vec<(Option<String>, Range<usize>)> = Vec::new();
    let mut error = None;
    objects(dir, publication, index, table.name, &mut |value: Value| {
        if error.is_some() {
            return;
        }
        let start = records.get_ref().len();
        let written = records
            .write_record(table.columns.iter().map(|c| neutral(c.kind, cell(&value[c.name]))))
            .and_then(|()| records.flush().map_err(csv::Error::from));
        match written {
            Ok(()) => spans.push((value["id"].as_str().map(str::to_owned), start..records.get_ref().len())),
            Err(e) => error = Some(e),
        }
    });
    if let Some(e) = error {
        return Err(e);
    }
    // Stable: of several objects with one id, the first made is kept.
    spans.sort_by(|a, b| a.0.cmp(&b.0));
    spans.dedup_by(|a, b| a.0 == b.0);
    let bytes = records.get_ref();
    out.write_all(&bytes[..header])?;
    for (_, span) in spans {
        out.write_all(&bytes[span])?;
    }
    Ok(())
}

/// Gives every object of table `name`, as the JSON of its view.
fn objects(dir: &Directory, publication: &Publication, index: &Index, name: &str, give: &mut dyn FnMut(Value)) {
    let to_value = |v: &dyn erased_serialize::Serialize| v.value();
    match name {
        "organization" => {
            for org in &dir.organisations {
                give(to_value(&OrganizationView::flat(publication, org)));
            }
        }
        "service" => {
            for service in &dir.services {
                let mut flat = to_value(&ServiceView::new(dir, publication, service, ServiceDepth::List));
                flat.as_object_mut().map(|m| m.remove("organization"));
                give(flat);
            }
        }
        "service_area" | "attribute" => {
            for service in &dir.services {
                let view = ServiceView::new(dir, publication, service, ServiceDepth::Full);
                if name == "service_area" {
                    view.service_areas.iter().flatten().for_each(|area| give(to_value(area)));
                } else {
                    view.attributes.iter().flatten().for_each(|attribute| give(to_value(attribute)));
                }
            }
        }
        "phone" | "contact" => {
            for contact in dir.services.iter().filter_map(ContactView::of) {
                if name == "phone" {
                    contact.phones.iter().for_each(|phone| give(to_value(phone)));
                } else {
                    give(to_value(&contact));
                }
            }
        }
        "service_at_location" => {
            for &(_, s, l) in &index.service_at_locations {
                let (service, location) = (&dir.services[s], &dir.locations[l]);
                give(to_value(&ServiceAtLocationView::new(dir, publication, service, location, false)));
            }
        }
        "location" | "address" => {
            // Locations that some service uses: the others are not published through any service.
            let mut used: Vec<LocationIx> = index.service_at_locations.iter().map(|&(_, _, l)| l).collect();
            used.sort_unstable();
            used.dedup();
            for location in used.into_iter().map(|l| &dir.locations[l]) {
                if name == "location" {
                    give(to_value(&LocationView::new(location, false)));
                } else {
                    give(to_value(&AddressView::new(location)));
                }
            }
        }
        "taxonomy" => give(to_value(&TaxonomyView::new(dir, publication, None))),
        "taxonomy_term" => {
            for &(_, ix) in &index.terms {
                give(to_value(&TaxonomyTermView::new(dir, publication, ix)));
            }
        }
        _ => {}
    }
}

/// The first characters that make a spreadsheet read a cell as a formula (OWASP, "CSV
/// Injection"): `=`, `+`, `-`, `@`, tab and carriage return.
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// A cell of a text column that a spreadsheet would run as a formula, neutralised as OWASP
/// advises: a single quote before it. The text comes from service providers, not from
/// whoever opens the file, and email addresses are provider text too (`=cmd@example.org` passes
/// as an address). Numbers are left alone (a negative longitude is a number).
fn neutral(kind: Kind, cell: String) -> String {
    let text = matches!(kind, Kind::Text | Kind::Email);
    if text && cell.starts_with(FORMULA_STARTS) { format!("'{cell}") } else { cell }
}

fn cell(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Any view as a JSON value (the views are `Serialize`; serialising them cannot fail).
mod erased_serialize {
    pub(super) trait Serialize {
        fn value(&self) -> serde_json::Value;
    }

    impl<T: serde::Serialize> Serialize for T {
        fn value(&self) -> serde_json::Value {
            serde_json::to_value(self).unwrap_or_default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Kind::{Email, Number, Text};

    #[test]
    fn formula_cells_of_text_columns_are_neutralised() {
        for formula in ["=1+1", "+44 141 111 1111", "-2", "@SUM(A1)", "\tx", "\rx"] {
            assert_eq!(neutral(Text, formula.to_owned()), format!("'{formula}"));
        }
        for plain in ["", "Food", "a=b", "'quoted", " =x"] {
            assert_eq!(neutral(Text, plain.to_owned()), plain);
        }
        assert_eq!(neutral(Number, "-4.25".to_owned()), "-4.25", "a negative number stays a number");
        assert_eq!(neutral(Email, "+x@example.org".to_owned()), "'+x@example.org");
        assert_eq!(neutral(Email, "=cmd@example.org".to_owned()), "'=cmd@example.org");
        assert_eq!(neutral(Email, "x@example.org".to_owned()), "x@example.org");
    }
}
