//! A dataset that passed every check, resolved into the immutable [`Directory`]: published
//! records only, references as indexes, slugs and timestamps settled.

use std::collections::HashMap;

use uuid::Uuid;

use super::records::{Locations, Orgs, ServiceCheck};
use crate::input::Dataset;
use crate::input::records::LocationRecord;
use crate::model::{
    CategoryTree, Contact, Directory, Location, LocationIx, OrgIx, Organisation, Point, PostcodeDirectory, Service,
    ServiceArea, ServiceIx,
};

/// Builds the directory of a dataset that passed every check.
pub(super) fn resolve(
    dataset: Dataset,
    orgs: Orgs,
    locations: Locations,
    service_checks: Vec<ServiceCheck>,
    categories: CategoryTree,
    service_areas: Vec<ServiceArea>,
    postcodes: PostcodeDirectory,
) -> Directory {
    // Published organisations, in id order.
    let mut org_positions: Vec<usize> =
        (0..dataset.organisations.len()).filter(|&p| dataset.organisations[p].record.published).collect();
    org_positions.sort_by_key(|&p| dataset.organisations[p].record.id);
    let org_ix: HashMap<Uuid, OrgIx> =
        org_positions.iter().enumerate().map(|(ix, &p)| (dataset.organisations[p].record.id, OrgIx::new(ix))).collect();

    let mut location_records: Vec<&LocationRecord> =
        dataset.locations.iter().map(|l| &l.record).filter(|r| org_ix.contains_key(&r.organisation_id)).collect();
    location_records.sort_by_key(|r| r.id);
    let location_ix: HashMap<Uuid, LocationIx> =
        location_records.iter().enumerate().map(|(ix, r)| (r.id, LocationIx::new(ix))).collect();
    let locations_model: Vec<Location> = location_records
        .iter()
        .map(|r| Location {
            id: r.id,
            organisation: org_ix[&r.organisation_id],
            name: r.name.clone(),
            description: r.description.clone(),
            street_address: r.street_address.clone(),
            locality: r.locality.clone(),
            region: r.region.clone(),
            state: r.state.clone(),
            postal_code: r.postal_code.clone(),
            country: r.country.clone(),
            point: Point { lat: r.latitude, lon: r.longitude },
        })
        .collect();
    drop(locations);

    let mut service_positions: Vec<usize> = (0..dataset.services.len())
        .filter(|&p| {
            let r = &dataset.services[p].record;
            r.published && org_ix.contains_key(&r.organisation_id)
        })
        .collect();
    service_positions.sort_by_key(|&p| dataset.services[p].record.id);
    let services: Vec<Service> = service_positions
        .iter()
        .map(|&p| {
            let r = &dataset.services[p].record;
            let check = &service_checks[p];
            Service {
                id: r.id,
                organisation: org_ix[&r.organisation_id],
                name: r.name.clone(),
                slug: check.slug.clone(),
                description: r.description.clone(),
                contact: Contact::of(&r.url, &r.phone, &r.email),
                categories: check.categories.clone(),
                service_areas: check.areas.clone(),
                locations: r.location_ids.iter().map(|id| location_ix[id]).collect(),
                last_updated: check.last_updated.expect("checked"),
            }
        })
        .collect();

    let mut organisations: Vec<Organisation> = org_positions
        .iter()
        .map(|&p| {
            let r = &dataset.organisations[p].record;
            let check = &orgs.checks[p];
            Organisation {
                id: r.id,
                name: r.name.clone(),
                slug: check.slug.clone(),
                description: r.description.clone(),
                contact: Contact::of(&r.url, &r.phone, &r.email),
                facebook: r.facebook.clone(),
                twitter: r.twitter.clone(),
                is_claimed: r.is_claimed,
                last_edited: check.last_edited.expect("checked"),
                services: Vec::new(),
                locations: Vec::new(),
            }
        })
        .collect();
    for (ix, service) in services.iter().enumerate() {
        organisations[service.organisation].services.push(ServiceIx::new(ix));
    }
    for (ix, location) in locations_model.iter().enumerate() {
        organisations[location.organisation].locations.push(LocationIx::new(ix));
    }
    Directory { organisations, services, locations: locations_model, categories, service_areas, postcodes }
}
