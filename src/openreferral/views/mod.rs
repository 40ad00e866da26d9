//! The Open Referral UK objects (HSDS 3.0 UK profile) as borrowed `Serialize` views over the
//! model, one struct per object of the profile's schemas.
//!
//! Every optional value that is empty, or that the profile's `format` (email, uri) would
//! refuse, is left out rather than written as `""`; required values the directory lacks get
//! the derived value that README ("Open Referral UK") lists. Ids the directory does not have
//! are deterministic UUIDv5 ([`super::ids`]).

use serde::Serialize;
use uuid::Uuid;

mod location;
mod taxonomy;

use super::ids;
use crate::model::{Directory, Organisation, Service};
use crate::views::Publication;
pub(crate) use location::{AddressView, LocationView, ServiceAtLocationView};
pub(crate) use taxonomy::{AttributeView, TAXONOMY_NAME, TaxonomyTermView, TaxonomyView};

/// Whether `text` is an `http(s)` URL that `format: uri` accepts.
pub(crate) fn valid_uri(text: &str) -> bool {
    let lower = text.get(..8).unwrap_or(text).to_ascii_lowercase();
    (lower.starts_with("http://") || lower.starts_with("https://"))
        && !text.chars().any(|c| c.is_whitespace() || c.is_control())
        && fluent_uri::Uri::parse(text).is_ok_and(|uri| uri.authority().is_some_and(|a| !a.host().is_empty()))
}

/// Whether `text` is an address that `format: email` accepts: an ASCII local part and a
/// dotted host name (stricter than RFC 5321, never looser than the validators).
pub(crate) fn valid_email(text: &str) -> bool {
    let Some((local, domain)) = text.rsplit_once('@') else { return false };
    let label_ok = |label: &str| {
        (1..=63).contains(&label.len())
            && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
            && !(label.len() >= 4 && &label[2..4] == "--")
    };
    local.is_ascii()
        && domain.len() <= 253
        && domain.contains('.')
        && domain.split('.').all(label_ok)
        && email_address::EmailAddress::is_valid(text)
}

fn non_empty(text: &str) -> Option<&str> {
    let trimmed = text.trim();
    (!trimmed.is_empty()).then_some(text)
}

fn uri(text: &str) -> Option<&str> {
    valid_uri(text).then_some(text)
}

fn email(text: &str) -> Option<&str> {
    valid_email(text).then_some(text)
}

/// A list, left out when empty.
fn some_items<T>(items: Vec<T>) -> Option<Vec<T>> {
    (!items.is_empty()).then_some(items)
}

/// The profile's `Page` block around a list's items.
#[derive(Debug, Serialize)]
pub(crate) struct Page<T> {
    /// Items over all pages.
    pub total_items: usize,
    /// Number of pages (at least 1).
    pub total_pages: usize,
    /// This page, from 1.
    pub page_number: usize,
    /// Items on this page.
    pub size: usize,
    /// Whether this is page 1.
    pub first_page: bool,
    /// Whether this is the last page.
    pub last_page: bool,
    /// Whether the list is empty.
    pub empty: bool,
    /// This page's items.
    pub contents: Vec<T>,
}

/// The API's root (`/openreferral/`).
#[derive(Debug, Serialize)]
pub(crate) struct Root {
    /// HSDS version.
    pub version: &'static str,
    /// The profile's home.
    pub profile: &'static str,
    /// The profile's OpenAPI document as published here.
    pub openapi_url: String,
}

/// An organisation: flat (lists, inside a service) or with its services.
#[derive(Debug, Serialize)]
pub(crate) struct OrganizationView<'a> {
    /// The directory's id.
    pub id: Uuid,
    /// Name.
    pub name: &'a str,
    /// Description; the name when the directory has none (the profile requires one).
    pub description: &'a str,
    /// Email, when valid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<&'a str>,
    /// Web site, when a valid URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub website: Option<&'a str>,
    /// The directory's permanent page of the organisation.
    pub uri: String,
    /// HSDS core `url` objects: the Facebook and Twitter pages (no UK table holds them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub urls: Option<Vec<UrlView>>,
    /// Its services (the single-organisation document only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub services: Option<Vec<ServiceView<'a>>>,
}

/// An HSDS core `url` object.
#[derive(Debug, Serialize)]
pub(crate) struct UrlView {
    /// Derived id.
    pub id: Uuid,
    /// What it is.
    pub label: &'static str,
    /// The URL.
    pub url: String,
    /// Owner.
    pub organization_id: Uuid,
}

impl<'a> OrganizationView<'a> {
    /// The flat form.
    pub(crate) fn flat(publication: &Publication, org: &'a Organisation) -> Self {
        OrganizationView {
            id: org.id,
            name: &org.name,
            description: non_empty(&org.description).unwrap_or(&org.name),
            email: email(&org.contact.email),
            website: uri(&org.contact.url),
            uri: publication.organisation_url(&org.id.to_string()),
            urls: None,
            services: None,
        }
    }

    /// The full form: social pages and every service.
    pub(crate) fn full(dir: &'a Directory, publication: &Publication, org: &'a Organisation) -> Self {
        let mut view = Self::flat(publication, org);
        view.urls = some_items(social_urls(org));
        view.services = some_items(
            org.services
                .iter()
                .map(|&ix| ServiceView::new(dir, publication, &dir.services[ix], ServiceDepth::InOrganization))
                .collect(),
        );
        view
    }
}

/// Facebook (a URL) and Twitter (a URL or an `@handle`) as HSDS core `url` objects.
pub(crate) fn social_urls(org: &Organisation) -> Vec<UrlView> {
    let twitter = org.twitter.trim();
    let twitter = match twitter.strip_prefix('@') {
        Some(handle) if !handle.is_empty() && handle.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') => {
            format!("https://twitter.com/{handle}")
        }
        _ => twitter.to_owned(),
    };
    [("Facebook", org.facebook.trim().to_owned()), ("Twitter", twitter)]
        .into_iter()
        .filter(|(_, url)| valid_uri(url))
        .map(|(label, url)| UrlView {
            id: ids::derived("url", &[&org.id.to_string(), label]),
            label,
            url,
            organization_id: org.id,
        })
        .collect()
}

/// How much of a service a document holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServiceDepth {
    /// `/services/{id}`: everything, the organisation flat.
    Full,
    /// An item of `/services`: one-to-one fields and the organisation flat.
    List,
    /// Inside an organisation: everything but the organisation.
    InOrganization,
    /// Inside a service_at_location: everything but the service_at_locations.
    InServiceAtLocation,
}

/// A service.
#[derive(Debug, Serialize)]
pub(crate) struct ServiceView<'a> {
    /// The directory's id.
    pub id: Uuid,
    /// Who runs it.
    pub organization_id: Uuid,
    /// Name.
    pub name: &'a str,
    /// Description, when not empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<&'a str>,
    /// Web site, when a valid URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<&'a str>,
    /// Email, when valid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<&'a str>,
    /// Always `active`: unpublished services are in no output.
    pub status: &'static str,
    /// `last_updated`.
    pub last_modified: String,
    /// Service areas.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_areas: Option<Vec<ServiceAreaView<'a>>>,
    /// Its locations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_at_locations: Option<Vec<ServiceAtLocationView<'a>>>,
    /// Who runs it, flat.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub organization: Option<OrganizationView<'a>>,
    /// The telephone number's contact.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contacts: Option<Vec<ContactView<'a>>>,
    /// Its categories, as taxonomy terms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attributes: Option<Vec<AttributeView<'a>>>,
}

impl<'a> ServiceView<'a> {
    /// Views a service at a depth.
    pub(crate) fn new(
        dir: &'a Directory,
        publication: &Publication,
        service: &'a Service,
        depth: ServiceDepth,
    ) -> Self {
        let org = dir.organisation_of(service);
        let nested = depth != ServiceDepth::List;
        ServiceView {
            id: service.id,
            organization_id: org.id,
            name: &service.name,
            description: non_empty(&service.description),
            url: uri(&service.contact.url),
            email: email(&service.contact.email),
            status: "active",
            last_modified: service.last_updated.single_form(),
            service_areas: nested
                .then(|| {
                    service
                        .service_areas
                        .iter()
                        .map(|&ix| ServiceAreaView::new(service, &dir.service_areas[ix as usize]))
                        .collect()
                })
                .and_then(some_items),
            service_at_locations: matches!(depth, ServiceDepth::Full | ServiceDepth::InOrganization)
                .then(|| {
                    service
                        .locations
                        .iter()
                        .map(|&ix| ServiceAtLocationView::new(dir, publication, service, &dir.locations[ix], false))
                        .collect()
                })
                .and_then(some_items),
            organization: (depth != ServiceDepth::InOrganization).then(|| OrganizationView::flat(publication, org)),
            contacts: nested.then(|| ContactView::of(service).into_iter().collect()).and_then(some_items),
            attributes: nested
                .then(|| {
                    service.categories.iter().map(|&ix| AttributeView::new(dir, publication, service, ix)).collect()
                })
                .and_then(some_items),
        }
    }
}

/// A service area of a service.
#[derive(Debug, Serialize)]
pub(crate) struct ServiceAreaView<'a> {
    /// Derived from the service and the area code.
    pub id: Uuid,
    /// The service.
    pub service_id: Uuid,
    /// The area's name.
    pub name: &'a str,
    /// The area's name again, in the profile's legacy field.
    pub service_area: &'a str,
    /// The ONS linked-data URI of a GSS code (`S12000005`, ...), for other codes none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
}

impl<'a> ServiceAreaView<'a> {
    fn new(service: &Service, area: &'a crate::model::ServiceArea) -> Self {
        ServiceAreaView {
            id: ids::derived("service_area", &[&service.id.to_string(), &area.code]),
            service_id: service.id,
            name: &area.name,
            service_area: &area.name,
            uri: gss_uri(&area.code),
        }
    }
}

/// `http://statistics.data.gov.uk/id/statistical-geography/CODE` for a GSS code (a letter
/// and eight digits).
pub(crate) fn gss_uri(code: &str) -> Option<String> {
    let bytes = code.as_bytes();
    (bytes.len() == 9 && bytes[0].is_ascii_uppercase() && bytes[1..].iter().all(u8::is_ascii_digit))
        .then(|| format!("http://statistics.data.gov.uk/id/statistical-geography/{code}"))
}

/// The contact that holds a service's telephone number (UK profile phones belong to a
/// contact).
#[derive(Debug, Serialize)]
pub(crate) struct ContactView<'a> {
    /// Derived from the service id.
    pub id: Uuid,
    /// The service.
    pub service_id: Uuid,
    /// The number, as an HSDS core nested phone.
    pub phones: Vec<PhoneView<'a>>,
}

impl<'a> ContactView<'a> {
    /// The contact of a service with a telephone number.
    pub(crate) fn of(service: &'a Service) -> Option<Self> {
        let number = non_empty(&service.contact.phone)?;
        let id = ids::derived("contact", &[&service.id.to_string()]);
        Some(ContactView {
            id,
            service_id: service.id,
            phones: vec![PhoneView { id: ids::derived("phone", &[&service.id.to_string()]), contact_id: id, number }],
        })
    }
}

/// A telephone number.
#[derive(Debug, Serialize)]
pub(crate) struct PhoneView<'a> {
    /// Derived from the service id.
    pub id: Uuid,
    /// Its contact.
    pub contact_id: Uuid,
    /// The number as given.
    pub number: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        for good in ["https://example.org", "http://a.example.org/x?y=1#z", "HTTPS://EXAMPLE.ORG/"] {
            assert!(valid_uri(good), "{good}");
        }
        for bad in ["", "www.example.org", "example", "https://", "https://exa mple.org", "ftp://x.org", "http://a b"] {
            assert!(!valid_uri(bad), "{bad}");
        }
        for good in ["a@example.org", "first.last+tag@sub.example.co.uk"] {
            assert!(valid_email(good), "{good}");
        }
        for bad in ["", "a", "a@", "@example.org", "a@localhost", "a b@example.org", "a@exa_mple.org", "é@example.org"]
        {
            assert!(!valid_email(bad), "{bad}");
        }
    }

    #[test]
    fn gss_codes() {
        assert_eq!(
            gss_uri("S12000005").as_deref(),
            Some("http://statistics.data.gov.uk/id/statistical-geography/S12000005")
        );
        assert_eq!(gss_uri("scotland"), None);
        assert_eq!(gss_uri("S1200000"), None);
    }
}
