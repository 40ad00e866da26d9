//! The query structures of a checked core: the two location grids, the service sets.
//! Rebuilt on every load, never stored.

use super::csr::Csr;
use super::grid::LocationGrid;
use super::sets::ServiceSet;
use super::spatial::{ServiceKey, UnitVector, unit_vector};
use super::stored::Core;
use super::text::TextLookup;
use super::{Backing, SearchIndex, ServiceNo};
use crate::model::{Directory, PostcodeDirectory};

impl SearchIndex {
    /// The query structures of a checked core; the file is set by the caller.
    pub(super) fn derive(core: Core, rendered_at: usize) -> SearchIndex {
        let Core { publication, reference, postcodes, text, services: stored, location_points, outcodes } = core;
        let (categories, service_areas) = reference.into_model().expect("a checked core's area kinds exist");
        // Categories and service areas only: results are the rendered bytes.
        let directory = Directory {
            organisations: Vec::new(),
            services: Vec::new(),
            locations: Vec::new(),
            categories,
            service_areas,
            postcodes: PostcodeDirectory::default(),
        };
        let services = stored.len();
        let units: Vec<UnitVector> = location_points.iter().map(|&p| unit_vector(p)).collect();
        let locations_of = |ix: usize| stored.locations.get(ix);
        let service_points = Csr {
            start: stored.locations.start.clone(),
            items: stored.locations.items().iter().map(|&l| units[l as usize]).collect(),
        };
        let service_keys = (0..services)
            .map(|ix| {
                let points = service_points.get(ix);
                ServiceKey {
                    unit: points.first().copied().unwrap_or_default(),
                    name_rank: stored.name_rank[ix],
                    locations: points.len() as u32,
                }
            })
            .collect();
        // Every located service at each of its locations: pages are taken from it nearest first.
        let located = LocationGrid::new(
            &location_points,
            &units,
            (0..services).flat_map(|ix| locations_of(ix).iter().map(move |&l| (l, ix as ServiceNo))),
        );
        // Only services without areas are candidates by radius: a service with areas matches
        // the postcode only through one of them (behaviour.md, Search 3: "either no service
        // areas or one among the postcode's codes"), so its locations decide where it sorts,
        // never whether it matches.
        let radius = located.only(|ix| stored.areas.get(ix as usize).is_empty());
        let mut area_sets = vec![ServiceSet::empty(services); directory.service_areas.len()];
        let mut category_sets = vec![ServiceSet::empty(services); directory.categories.nodes.len()];
        let mut national_set = ServiceSet::empty(services);
        let mut located_set = ServiceSet::empty(services);
        for ix in 0..services {
            let service = ix as ServiceNo;
            for &a in stored.areas.get(ix) {
                area_sets[a as usize].insert(service);
                if directory.service_areas[a as usize].kind.is_national() {
                    national_set.insert(service);
                }
            }
            for &c in stored.categories.get(ix) {
                category_sets[c as usize].insert(service);
            }
            if !locations_of(ix).is_empty() {
                located_set.insert(service);
            }
        }
        let mut unlocated_by_name: Vec<ServiceNo> =
            (0..services).filter(|&ix| locations_of(ix).is_empty()).map(|ix| ix as ServiceNo).collect();
        unlocated_by_name.sort_unstable_by_key(|&ix| stored.name_rank[ix as usize]);
        SearchIndex {
            directory,
            publication: publication.into_publication(),
            postcodes,
            outcodes,
            text: TextLookup::new(text),
            radius,
            location_points,
            service_points,
            service_keys,
            area_sets,
            category_sets,
            national_set,
            located_set,
            located,
            unlocated_by_name,
            file: Backing::Owned(Vec::new()),
            rendered_at,
            services,
            content_hash: String::new(),
        }
    }
}
