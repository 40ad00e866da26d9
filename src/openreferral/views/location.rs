//! Where services are: a service at one of its locations, the location, and its address.

use serde::Serialize;
use uuid::Uuid;

use super::super::ids;
use super::{ServiceDepth, ServiceView, non_empty};
use crate::model::{Directory, Location, Service};
use crate::views::Publication;

/// A service at one of its locations.
#[derive(Debug, Serialize)]
pub(crate) struct ServiceAtLocationView<'a> {
    /// Derived from the service and location ids.
    pub id: Uuid,
    /// The service.
    pub service_id: Uuid,
    /// The location.
    pub location_id: Uuid,
    /// The location.
    pub location: LocationView<'a>,
    /// The service (the single service_at_location document and its list).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service: Option<Box<ServiceView<'a>>>,
}

impl<'a> ServiceAtLocationView<'a> {
    /// Inside a service (`with_service` false), or on its own with the service.
    pub(crate) fn new(
        dir: &'a Directory,
        publication: &Publication,
        service: &'a Service,
        location: &'a Location,
        with_service: bool,
    ) -> Self {
        ServiceAtLocationView {
            id: ids::service_at_location(service.id, location.id),
            service_id: service.id,
            location_id: location.id,
            location: LocationView::new(location, true),
            service: with_service
                .then(|| Box::new(ServiceView::new(dir, publication, service, ServiceDepth::InServiceAtLocation))),
        }
    }

    /// An item of `/service_at_locations`: location and service flat.
    pub(crate) fn list(
        dir: &'a Directory,
        publication: &Publication,
        service: &'a Service,
        location: &'a Location,
    ) -> Self {
        ServiceAtLocationView {
            id: ids::service_at_location(service.id, location.id),
            service_id: service.id,
            location_id: location.id,
            location: LocationView::new(location, false),
            service: Some(Box::new(ServiceView::new(dir, publication, service, ServiceDepth::List))),
        }
    }
}

/// A location.
#[derive(Debug, Serialize)]
pub(crate) struct LocationView<'a> {
    /// The directory's id.
    pub id: Uuid,
    /// Always `physical`: every location has a street address and a point.
    pub location_type: &'static str,
    /// Name, when not empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<&'a str>,
    /// Description, when not empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<&'a str>,
    /// Latitude.
    pub latitude: f64,
    /// Longitude.
    pub longitude: f64,
    /// Its one address (full forms only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub addresses: Option<Vec<AddressView<'a>>>,
}

impl<'a> LocationView<'a> {
    /// Views a location, with its address or flat.
    pub(crate) fn new(location: &'a Location, with_address: bool) -> Self {
        LocationView {
            id: location.id,
            location_type: "physical",
            name: non_empty(&location.name),
            description: non_empty(&location.description),
            latitude: location.point.lat,
            longitude: location.point.lon,
            addresses: with_address.then(|| vec![AddressView::new(location)]),
        }
    }
}

/// The address of a location.
#[derive(Debug, Serialize)]
pub(crate) struct AddressView<'a> {
    /// Derived from the location id.
    pub id: Uuid,
    /// The location.
    pub location_id: Uuid,
    /// Street address.
    pub address_1: &'a str,
    /// Locality.
    pub city: &'a str,
    /// Region, when not empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<&'a str>,
    /// State; else region; else locality (the profile requires one).
    pub state_province: &'a str,
    /// Postcode.
    pub postal_code: &'a str,
    /// Two-letter country code.
    pub country: &'a str,
    /// Always `physical`.
    pub address_type: &'static str,
}

impl<'a> AddressView<'a> {
    /// The address of a location.
    pub(crate) fn new(location: &'a Location) -> Self {
        AddressView {
            id: ids::derived("address", &[&location.id.to_string()]),
            location_id: location.id,
            address_1: &location.street_address,
            city: &location.locality,
            region: non_empty(&location.region),
            state_province: non_empty(&location.state)
                .or_else(|| non_empty(&location.region))
                .unwrap_or(&location.locality),
            postal_code: &location.postal_code,
            country: &location.country,
            address_type: "physical",
        }
    }
}
