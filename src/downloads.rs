//! The bulk downloads of `public/downloads/` (issue 17): every published service in one
//! gzipped NDJSON file, the Open Referral UK tabular data package as a zip, and (issue 25)
//! the map file, every located place of a published service as GeoJSON.
//!
//! Both are deterministic: the gzip header carries no time or name, every zip entry the
//! same fixed time (1980-01-01, the zip epoch) and permissions, and entries come in a fixed
//! order. They are downloads, served as `application/gzip` and `application/zip`, not
//! precompressed variants of other files (`crate::compress` never takes them).

use std::io::Write;

use crate::model::Directory;
use crate::openreferral::{Index, rows, tables};
use crate::views::Publication;
use crate::views::v4::{ServiceContext, ServiceView};

pub(crate) use crate::urls::{LOCATIONS_GEOJSON, OPENREFERRAL_ZIP, SERVICES_NDJSON_GZ};

/// Why a download could not be made.
#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    /// Serialising a record failed.
    #[error("cannot serialise {what}: {source}")]
    Json {
        /// Which record.
        what: String,
        /// The cause.
        source: serde_json::Error,
    },
    /// Compressing failed.
    #[error("cannot compress {path}: {source}")]
    Io {
        /// The download.
        path: &'static str,
        /// The cause.
        source: std::io::Error,
    },
    /// The zip could not be written.
    #[error("cannot write {OPENREFERRAL_ZIP}: {0}")]
    Zip(#[from] zip::result::ZipError),
    /// A CSV table could not be written.
    #[error("cannot write {OPENREFERRAL_ZIP}: {0}")]
    Csv(#[from] csv::Error),
}

/// `services.ndjson.gz`: the `data` of each service's v4 single-service response (the same
/// view and form), in id order, one a line.
pub(crate) fn services_ndjson_gz(dir: &Directory, publication: &Publication) -> Result<Vec<u8>, DownloadError> {
    let io = |source| DownloadError::Io { path: SERVICES_NDJSON_GZ, source };
    let mut gz = flate2::GzBuilder::new().write(Vec::new(), flate2::Compression::default());
    for service in &dir.services {
        let view = ServiceView::new(dir, publication, service, ServiceContext::Single);
        serde_json::to_writer(&mut gz, &view)
            .map_err(|source| DownloadError::Json { what: format!("service {}", service.id), source })?;
        gz.write_all(b"\n").map_err(io)?;
    }
    gz.finish().map_err(io)
}

/// The map file: serialised straight from the features (a JSON tree of every feature first
/// was most of its memory).
#[derive(serde::Serialize)]
struct FeatureCollection<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    features: Vec<Feature<'a>>,
}

/// A feature of the map file: one location with the published services at it.
#[derive(serde::Serialize)]
struct Feature<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    geometry: Geometry,
    properties: FeatureProperties<'a>,
}

#[derive(serde::Serialize)]
struct Geometry {
    #[serde(rename = "type")]
    kind: &'static str,
    /// Longitude, latitude (RFC 7946, 3.1.1).
    coordinates: [f64; 2],
}

#[derive(serde::Serialize)]
struct FeatureProperties<'a> {
    id: uuid::Uuid,
    name: &'a str,
    formatted_address: String,
    postal_code: &'a str,
    services: Vec<ServiceLink<'a>>,
}

#[derive(serde::Serialize)]
struct ServiceLink<'a> {
    id: uuid::Uuid,
    name: &'a str,
    slug: &'a str,
}

/// `locations.geojson` (behaviour.md, "The map file"): an RFC 7946 FeatureCollection of
/// every location of a published service, in location id order, each a Point with the
/// location's id, name, address and postcode and the published services at it (id order).
pub(crate) fn locations_geojson(dir: &Directory) -> Result<Vec<u8>, DownloadError> {
    let mut at: Vec<Vec<ServiceLink<'_>>> = (0..dir.locations.len()).map(|_| Vec::new()).collect();
    for service in &dir.services {
        for &l in &service.locations {
            at[l.get()].push(ServiceLink { id: service.id, name: &service.name, slug: &service.slug });
        }
    }
    let features: Vec<Feature<'_>> = dir
        .locations
        .iter()
        .zip(at)
        .filter(|(_, services)| !services.is_empty())
        .map(|(location, services)| Feature {
            kind: "Feature",
            geometry: Geometry { kind: "Point", coordinates: [location.point.lon, location.point.lat] },
            properties: FeatureProperties {
                id: location.id,
                name: &location.name,
                formatted_address: location.formatted_address(),
                postal_code: &location.postal_code,
                services,
            },
        })
        .collect();
    let collection = FeatureCollection { kind: "FeatureCollection", features };
    serde_json::to_vec(&collection).map_err(|source| DownloadError::Json { what: LOCATIONS_GEOJSON.to_owned(), source })
}

/// `openreferral-uk.zip`: `datapackage.json` at the root, then one CSV per table of the
/// profile (header row, then rows in id order; empty tables have the header only).
pub(crate) fn openreferral_zip(
    dir: &Directory,
    publication: &Publication,
    index: &Index,
) -> Result<Vec<u8>, DownloadError> {
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default())
        .unix_permissions(0o644);
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let io = |source| DownloadError::Io { path: OPENREFERRAL_ZIP, source };
    let package = serde_json::to_vec_pretty(&tables::datapackage(publication))
        .map_err(|source| DownloadError::Json { what: "datapackage.json".into(), source })?;
    zip.start_file("datapackage.json", options)?;
    zip.write_all(&package).map_err(io)?;
    // One table at a time, its rows written into the zip as they are put in order.
    for table in tables::TABLES {
        zip.start_file(table.path, options)?;
        rows::write_csv(dir, publication, index, table, &mut zip)?;
    }
    Ok(zip.finish()?.into_inner())
}
