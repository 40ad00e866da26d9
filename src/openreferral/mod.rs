//! The Open Referral UK form of the directory (HSDS 3.0, UK profile): the profile's API as
//! static files under `public/openreferral/`, its OpenAPI document, and the tabular data
//! package of the bulk downloads.
//!
//! This module owns the mapping from the model to the profile's objects (`views`), the
//! deterministic ids of objects the directory has no id for (`ids`), the order of every list
//! ([`Index`]), and the files of each piece of work ([`Job`]); `crate::jobs` runs the jobs
//! beside the other families'. README, "Open Referral UK", lists what maps where and what has no home.

pub(crate) mod openapi;
pub(crate) mod rows;
pub mod tables;
pub(crate) mod views;

use uuid::Uuid;

use crate::model::{CategoryIx, Directory, LocationIx, ServiceIx};
use crate::render::{OutputFile, RenderContext, RenderError};
use views::{
    OrganizationView, Page, Root, ServiceAtLocationView, ServiceDepth, ServiceView, TaxonomyTermView, TaxonomyView,
};

pub(crate) use crate::urls::openreferral::FOLDER;
/// The version the root gives: the UK profile of HSDS 3.0, as the profile's validator and its
/// example feed name it.
pub(crate) const HSDS_VERSION: &str = "HSDS-UK-3.0";
/// The profile's home (behaviour.md, "Open Referral UK").
pub(crate) const PROFILE_URL: &str = "https://github.com/OpenReferralUK/uk-profile";

/// Deterministic UUIDv5 ids for the objects the directory has no id for. Services,
/// organisations and locations keep their own ids (UUIDs already).
pub mod ids {
    use uuid::{Uuid, uuid};

    /// The namespace of every derived id: UUIDv5 of
    /// `https://github.com/openreferral/uk-profile#svcdir` in the URL namespace.
    pub(crate) const NAMESPACE: Uuid = uuid!("665373c6-ebe5-56a5-9ae7-b2c9000195c5");

    /// UUIDv5 of `kind:part1:part2...` in `NAMESPACE`.
    pub fn derived(kind: &str, parts: &[&str]) -> Uuid {
        let mut name = kind.to_owned();
        for part in parts {
            name.push(':');
            name.push_str(part);
        }
        Uuid::new_v5(&NAMESPACE, name.as_bytes())
    }

    /// A service at a location.
    pub fn service_at_location(service: Uuid, location: Uuid) -> Uuid {
        derived("service_at_location", &[&service.to_string(), &location.to_string()])
    }

    /// The taxonomy term of the category with this (v3) id.
    pub fn taxonomy_term(category_id: u32) -> Uuid {
        derived("taxonomy_term", &[&category_id.to_string()])
    }

    /// The one taxonomy: the directory's category tree.
    pub fn taxonomy() -> Uuid {
        derived("taxonomy", &["categories"])
    }
}

pub(crate) use crate::urls::openreferral as paths;
pub use crate::urls::openreferral::List;

/// The order of every list: by id, as the profile's ids are compared.
#[derive(Debug, Clone, Default)]
pub struct Index {
    /// Every service at each of its locations, by derived id.
    pub service_at_locations: Vec<(Uuid, ServiceIx, LocationIx)>,
    /// Every category, by derived term id.
    pub terms: Vec<(Uuid, CategoryIx)>,
}

impl Index {
    /// Orders a directory's derived objects.
    pub fn new(dir: &Directory) -> Index {
        let mut service_at_locations: Vec<(Uuid, ServiceIx, LocationIx)> = dir
            .indexed_services()
            .flat_map(|(s, service)| service.locations.iter().map(move |&l| (s, l, service.id)))
            .map(|(s, l, service_id)| (ids::service_at_location(service_id, dir.locations[l].id), s, l))
            .collect();
        service_at_locations.sort_unstable();
        service_at_locations.dedup_by_key(|e| e.0);
        let mut terms: Vec<(Uuid, CategoryIx)> = dir
            .categories
            .nodes
            .iter()
            .enumerate()
            .map(|(ix, node)| (ids::taxonomy_term(node.id), ix as CategoryIx))
            .collect();
        terms.sort_unstable();
        Index { service_at_locations, terms }
    }

    /// Number of items of a list.
    pub fn len(&self, dir: &Directory, list: List) -> usize {
        match list {
            List::Services => dir.services.len(),
            List::ServiceAtLocations => self.service_at_locations.len(),
            List::Organizations => dir.organisations.len(),
            List::Taxonomies => 1,
            List::TaxonomyTerms => self.terms.len(),
        }
    }
}

/// One unit of rendering work of the ORUK API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// `/openreferral/` and the profile's OpenAPI document.
    Root,
    /// `/openreferral/services/{id}`.
    Service(ServiceIx),
    /// `/openreferral/organizations/{id}`.
    Organization(u32),
    /// `/openreferral/service_at_locations/{id}`, by position in [`Index::service_at_locations`].
    ServiceAtLocation(usize),
    /// `/openreferral/taxonomies/{id}`.
    Taxonomy,
    /// `/openreferral/taxonomy_terms/{id}`, by position in [`Index::terms`].
    TaxonomyTerm(usize),
    /// Page `n` (from 1) of a list.
    Page(List, usize),
}

/// Number of pages of a list of `len` items (at least 1).
pub fn pages(len: usize, size: usize) -> usize {
    len.div_ceil(size).max(1)
}

/// Every job, in a fixed order.
pub fn jobs(ctx: &RenderContext<'_>, oruk: &Index) -> Vec<Job> {
    let dir = ctx.dir;
    let mut jobs = vec![Job::Root, Job::Taxonomy];
    for list in List::ALL {
        let n = pages(oruk.len(dir, list), ctx.import_page_size);
        jobs.extend((1..=n).map(|page| Job::Page(list, page)));
    }
    jobs.extend(ServiceIx::all(dir.services.len()).map(Job::Service));
    jobs.extend((0..dir.organisations.len() as u32).map(Job::Organization));
    jobs.extend((0..oruk.service_at_locations.len()).map(Job::ServiceAtLocation));
    jobs.extend((0..oruk.terms.len()).map(Job::TaxonomyTerm));
    jobs
}

/// The files of one job.
pub fn render(ctx: &RenderContext<'_>, oruk: &Index, job: Job) -> Result<Vec<OutputFile>, RenderError> {
    let dir = ctx.dir;
    let publication = ctx.publication;
    match job {
        Job::Root => {
            let root = Root {
                version: HSDS_VERSION,
                profile: PROFILE_URL,
                openapi_url: format!("{}/{}", publication.base_url, paths::OPENAPI_FILE),
            };
            let mut files = crate::render::endpoint(paths::ROOT, "/openreferral/", "Open Referral UK", &root)?;
            let doc = openapi::document(&publication.base_url);
            let api =
                crate::render::endpoint(paths::OPENAPI, "/openreferral/openapi/", "Open Referral UK: OpenAPI", &doc)?;
            let json = api[0].bytes.clone();
            files.extend(api);
            files.push(OutputFile { path: paths::OPENAPI_FILE.to_owned(), bytes: json });
            Ok(files)
        }
        Job::Service(ix) => {
            let service = &dir.services[ix];
            let view = ServiceView::new(dir, publication, service, ServiceDepth::Full);
            object(List::Services, service.id, &service.name, &view)
        }
        Job::Organization(ix) => {
            let org = &dir.organisations[ix as usize];
            object(List::Organizations, org.id, &org.name, &OrganizationView::full(dir, publication, org))
        }
        Job::ServiceAtLocation(pos) => {
            let (id, s, l) = oruk.service_at_locations[pos];
            let service = &dir.services[s];
            let view = ServiceAtLocationView::new(dir, publication, service, &dir.locations[l], true);
            object(List::ServiceAtLocations, id, &service.name, &view)
        }
        Job::Taxonomy => {
            let view = TaxonomyView::new(dir, publication, Some(&oruk.terms));
            object(List::Taxonomies, view.id, views::TAXONOMY_NAME, &view)
        }
        Job::TaxonomyTerm(pos) => {
            let (id, ix) = oruk.terms[pos];
            let view = TaxonomyTermView::new(dir, publication, ix);
            object(List::TaxonomyTerms, id, &dir.categories.nodes[ix as usize].name, &view)
        }
        Job::Page(list, n) => render_page(ctx, oruk, list, n),
    }
}

/// The files of one object of a list, at its id.
fn object<T: serde::Serialize>(list: List, id: Uuid, title: &str, body: &T) -> Result<Vec<OutputFile>, RenderError> {
    let folder = paths::object(list, &id.to_string());
    crate::render::endpoint(&folder, &format!("/{folder}/"), title, body)
}

fn render_page(ctx: &RenderContext<'_>, oruk: &Index, list: List, n: usize) -> Result<Vec<OutputFile>, RenderError> {
    let dir = ctx.dir;
    let publication = ctx.publication;
    let range = page_range(ctx, oruk, list, n);
    match list {
        List::Services => page_files(
            ctx,
            oruk,
            list,
            n,
            dir.services[range].iter().map(|s| ServiceView::new(dir, publication, s, ServiceDepth::List)).collect(),
        ),
        List::ServiceAtLocations => page_files(
            ctx,
            oruk,
            list,
            n,
            oruk.service_at_locations[range]
                .iter()
                .map(|&(_, s, l)| {
                    let service = &dir.services[s];
                    ServiceAtLocationView::list(dir, publication, service, &dir.locations[l])
                })
                .collect(),
        ),
        List::Organizations => page_files(
            ctx,
            oruk,
            list,
            n,
            dir.organisations[range].iter().map(|o| OrganizationView::flat(publication, o)).collect(),
        ),
        List::Taxonomies => {
            page_files(ctx, oruk, list, n, range.map(|_| TaxonomyView::new(dir, publication, None)).collect())
        }
        List::TaxonomyTerms => page_files(
            ctx,
            oruk,
            list,
            n,
            oruk.terms[range].iter().map(|&(_, ix)| TaxonomyTermView::new(dir, publication, ix)).collect(),
        ),
    }
}

/// The positions of page `n` of a list.
fn page_range(ctx: &RenderContext<'_>, oruk: &Index, list: List, n: usize) -> std::ops::Range<usize> {
    let (size, len) = (ctx.import_page_size, oruk.len(ctx.dir, list));
    ((n - 1) * size).min(len)..(n * size).min(len)
}

/// The files of page `n` of a list holding `contents`: its folder, the list's own folder
/// for page 1 and `page/last` for the last page, one rendering for all of them.
fn page_files<T: serde::Serialize>(
    ctx: &RenderContext<'_>,
    oruk: &Index,
    list: List,
    n: usize,
    contents: Vec<T>,
) -> Result<Vec<OutputFile>, RenderError> {
    let size = ctx.import_page_size;
    let len = oruk.len(ctx.dir, list);
    let body = Page {
        total_items: len,
        total_pages: pages(len, size),
        page_number: n,
        size: contents.len(),
        first_page: n == 1,
        last_page: n >= pages(len, size),
        empty: len == 0,
        contents,
    };
    let folder = paths::list_page(list, n);
    let rendered = crate::render::Rendered::of(&folder, &body, crate::render::Links::default())?;
    let none = crate::api::html::Extras::default();
    let title = format!("Open Referral UK: {}, page {n}", list.name());
    let base = format!("/{}/", paths::list(list));
    let mut files = Vec::from(rendered.files(&folder, &format!("{base}?page={n}"), &title, &none)?);
    if n == 1 {
        files.extend(rendered.files(&paths::list(list), &base, &title, &none)?);
    }
    // `?page=last`, as for the import.
    if n == pages(len, size) {
        let last = crate::api::query::PageNumber::LAST;
        files.extend(rendered.files(
            &paths::list_page_named(list, last),
            &format!("{base}?page={last}"),
            &title,
            &none,
        )?);
    }
    Ok(files)
}
