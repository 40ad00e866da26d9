//! Rendering: the model → the v4 and v3 static responses, as (path, bytes) files, and the
//! pieces every output family renders with ([`OutputFile`], `endpoint`, [`RenderError`]).
//!
//! The work is cut into [`Job`]s (one resource each: a service under its id and slug, an
//! organisation, an import page, a list); each job renders its JSON once and its HTML view,
//! and gives the files it owns. Jobs are independent, so `build` runs them in parallel with
//! rayon; every byte depends on the model and configuration only, never on timing. The list
//! of every output family (this one, Open Referral UK, OpenAPI, the downloads) is
//! `crate::jobs`'s.

pub(crate) mod form;
pub(crate) mod map;

use serde::Serialize;

use crate::api::html::{Body, Extras, FrontPage, HtmlError, HtmlView, render_html};
use crate::api::query::PageNumber;
use crate::model::{Directory, OrgIx, ServiceIx};
use crate::views::v4::{self, Envelope, OrganisationView, PagedEnvelope, ServiceContext, ServiceView};
use crate::views::{Publication, v3};

/// Why a response could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// JSON serialisation failed.
    #[error("cannot serialise {path}: {source}")]
    Json {
        /// The response's path.
        path: String,
        /// The cause.
        source: serde_json::Error,
    },
    /// The HTML view failed.
    #[error("cannot render the HTML view of {path}: {source}")]
    Html {
        /// The response's path.
        path: String,
        /// The cause.
        source: HtmlError,
    },
}

/// One file of the output: a path relative to the output directory, and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFile {
    /// Relative path with `/` separators.
    pub path: String,
    /// Content.
    pub bytes: Vec<u8>,
}

/// One unit of rendering work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// A service, under its id and its slug.
    Service(ServiceIx),
    /// An organisation, under its id and its slug.
    Organisation(OrgIx),
    /// Page `n` (from 1) of the import.
    ImportPage(usize),
    /// `/api/v4/categories/`.
    CategoriesV4,
    /// `/api/v4/service-areas/`.
    ServiceAreasV4,
    /// `/api/v3/categories/`.
    CategoriesV3,
    /// `/api/v3/service-areas/`.
    ServiceAreasV3,
    /// The 404 body, for the web server to send for any unknown path.
    NotFound,
    /// The API root (`/`, `/api/`), whose HTML view is the front page.
    Root,
}

/// Where the static files live: the URL space (`crate::urls`).
pub(crate) use crate::urls as paths;

/// Everything a job reads.
#[derive(Debug, Clone, Copy)]
pub struct RenderContext<'a> {
    /// The model.
    pub dir: &'a Directory,
    /// Origins, licence, attribution.
    pub publication: &'a Publication,
    /// Services per import page (and items per page of the Open Referral UK lists).
    pub import_page_size: usize,
}

impl RenderContext<'_> {
    /// Number of import pages (at least 1: an empty import is one empty page).
    pub(crate) fn import_pages(&self) -> usize {
        self.dir.services.len().div_ceil(self.import_page_size).max(1)
    }

    /// Every job of this family, in a fixed order.
    pub fn jobs(&self) -> Vec<Job> {
        let mut jobs = vec![
            Job::CategoriesV4,
            Job::ServiceAreasV4,
            Job::CategoriesV3,
            Job::ServiceAreasV3,
            Job::NotFound,
            Job::Root,
        ];
        jobs.extend((1..=self.import_pages()).map(Job::ImportPage));
        jobs.extend(OrgIx::all(self.dir.organisations.len()).map(Job::Organisation));
        jobs.extend(ServiceIx::all(self.dir.services.len()).map(Job::Service));
        jobs
    }

    /// Renders one job's files.
    pub fn render(&self, job: Job) -> Result<Vec<OutputFile>, RenderError> {
        let dir = self.dir;
        let publication = self.publication;
        match job {
            Job::Service(ix) => {
                let service = &dir.services[ix];
                let view = ServiceView::new(dir, publication, service, ServiceContext::Single);
                let body = Envelope { meta: publication.meta_full(), data: view };
                let keys = [service.id.to_string(), service.slug.clone()];
                let extras = Extras { map: self.locations_map(&service.name, &service.locations), ..Extras::default() };
                endpoint_under_keys(&keys, paths::service, &service.name, &body, &extras)
            }
            Job::Organisation(ix) => {
                let org = &dir.organisations[ix];
                let body =
                    Envelope { meta: publication.meta_full(), data: OrganisationView::new(dir, publication, org) };
                let keys = [org.id.to_string(), org.slug.clone()];
                let extras = Extras { map: self.locations_map(&org.name, &org.locations), ..Extras::default() };
                endpoint_under_keys(&keys, paths::organisation, &org.name, &body, &extras)
            }
            Job::ImportPage(n) => {
                let body = self.import_page(n);
                let title = format!("Import of all services, page {n}");
                let folder = paths::import_page(&n.to_string());
                let links = Links { next: body.next.clone(), previous: body.previous.clone() };
                let rendered = Rendered::of(&folder, &body, links)?;
                let none = Extras::default();
                let mut files = Vec::from(rendered.files(
                    &folder,
                    &format!("/api/v4/import/?format=json&page={n}"),
                    &title,
                    &none,
                )?);
                if n == 1 {
                    files.extend(rendered.files(paths::IMPORT, "/api/v4/import/", &title, &none)?);
                }
                // `page=last` (behaviour.md, Search 8) is a folder of its own, so that nginx, a
                // CDN and the preview answer it with one file and no arithmetic.
                if n == self.import_pages() {
                    let last = PageNumber::LAST;
                    let url = format!("/api/v4/import/?format=json&page={last}");
                    files.extend(rendered.files(&paths::import_page(last), &url, &title, &none)?);
                }
                Ok(files)
            }
            Job::CategoriesV4 => {
                let body = Envelope { meta: publication.meta_none(), data: v4::category_tree(dir) };
                endpoint(paths::CATEGORIES_V4, "/api/v4/categories/", "Categories", &body)
            }
            Job::ServiceAreasV4 => {
                let body = Envelope { meta: publication.meta_areas(), data: v4::service_areas(dir) };
                endpoint(paths::SERVICE_AREAS_V4, "/api/v4/service-areas/", "Service areas", &body)
            }
            Job::CategoriesV3 => {
                endpoint(paths::CATEGORIES_V3, "/api/v3/categories/", "Categories (v3)", &v3::categories(dir))
            }
            Job::ServiceAreasV3 => endpoint(
                paths::SERVICE_AREAS_V3,
                "/api/v3/service-areas/",
                "Service areas (v3)",
                &v3::service_areas(dir),
            ),
            Job::Root => {
                let links = crate::views::root::RootLinks::new(&publication.base_url);
                let front = FrontPage {
                    services: dir.services.len(),
                    organisations: dir.organisations.len(),
                    licence: publication.licence.clone(),
                    attribution: publication.attribution.clone(),
                    links: links
                        .described()
                        .iter()
                        .map(|(url, what)| ((*url).to_owned(), (*what).to_owned()))
                        .collect(),
                };
                let categories = form::CategoryOptions::of(&dir.categories);
                let query = crate::api::query::RawQuery::default();
                let form = form::SearchForm {
                    version: crate::api::query::ApiVersion::V4,
                    query: &query,
                    errors: None,
                    categories: &categories,
                };
                let form =
                    form.render().map_err(|source| RenderError::Html { path: paths::ROOT.to_owned(), source })?;
                let body = Envelope { meta: publication.meta_full(), data: links };
                let extras = Extras { front: Some(front), form: Some(form), map: None };
                endpoint_with(paths::ROOT, "/", "Service Directory API", &body, &extras)
            }
            Job::NotFound => {
                let body = serde_json::json!({ "detail": "Not found." });
                let json = json_bytes(paths::ERRORS, &body)?;
                let html = html_bytes(paths::ERRORS, "Not found", "/", 404, &body, &Extras::default())?;
                Ok(vec![
                    OutputFile { path: format!("{}/404.json", paths::ERRORS), bytes: json },
                    OutputFile { path: format!("{}/404.html", paths::ERRORS), bytes: html },
                ])
            }
        }
    }

    /// The map of a service's or an organisation's locations, numbered as its `locations`
    /// list; None without locations.
    fn locations_map(&self, subject: &str, locations: &[crate::model::LocationIx]) -> Option<String> {
        let addresses: Vec<(crate::model::Point, String)> = locations
            .iter()
            .map(|&ix| {
                let location = &self.dir.locations[ix];
                (location.point, location.formatted_address())
            })
            .collect();
        let markers: Vec<map::Marker<'_>> = addresses
            .iter()
            .enumerate()
            .map(|(n, (point, address))| map::Marker { number: n + 1, point: *point, label: address })
            .collect();
        map::places_map(subject, &markers)
    }

    /// Page `n` of the import: services in id order, list forms.
    fn import_page(&self, n: usize) -> PagedEnvelope<'_, Vec<ServiceView<'_>>> {
        let size = self.import_page_size;
        let services = &self.dir.services;
        let start = ((n - 1) * size).min(services.len());
        let end = (start + size).min(services.len());
        let page_url = |p: usize| format!("{}/api/v4/import/?format=json&page={p}", self.publication.base_url);
        PagedEnvelope {
            meta: self.publication.meta_full(),
            count: services.len(),
            next: (n < self.import_pages()).then(|| page_url(n + 1)),
            previous: (n > 1).then(|| page_url(n - 1)),
            data: services[start..end]
                .iter()
                .map(|s| ServiceView::new(self.dir, self.publication, s, ServiceContext::List))
                .collect(),
        }
    }
}

pub(crate) fn json_bytes<T: Serialize>(path: &str, body: &T) -> Result<Vec<u8>, RenderError> {
    serde_json::to_vec(body).map_err(|source| RenderError::Json { path: path.to_owned(), source })
}

fn html_bytes(
    path: &str,
    title: &str,
    request: &str,
    status: u16,
    body: &serde_json::Value,
    extras: &Extras,
) -> Result<Vec<u8>, RenderError> {
    let mut view = HtmlView::of_static(title, request, status, body);
    view.extras = extras.clone();
    render_html(&view).map(String::into_bytes).map_err(|source| RenderError::Html { path: path.to_owned(), source })
}

/// The paging links of a body (`next` and `previous` of a paged envelope), which its HTML
/// view shows above the body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Links {
    /// Absolute URL of the next page.
    pub next: Option<String>,
    /// Absolute URL of the previous page.
    pub previous: Option<String>,
}

/// A response rendered once, to be written under one or more folders: its JSON, serialised
/// straight from the view (no `serde_json::Value` tree: building one cost more allocation
/// than the rest of a file), and its body's markup, read from that JSON text.
pub(crate) struct Rendered {
    json: Vec<u8>,
    markup: String,
    links: Links,
}

impl Rendered {
    /// Renders `body`; `folder` names it in errors. `links` must be the body's own `next`
    /// and `previous`, if it has them.
    pub(crate) fn of<T: Serialize>(folder: &str, body: &T, links: Links) -> Result<Rendered, RenderError> {
        let json = json_bytes(folder, body)?;
        let markup = crate::api::html::body_html_from_json(&json)
            .map_err(|source| RenderError::Html { path: folder.to_owned(), source: source.into() })?;
        Ok(Rendered { json, markup, links })
    }

    /// `index.json` and `index.html` of `folder`, the HTML view showing the request as
    /// `request` (its JSON form: the same path with `?format=json`).
    pub(crate) fn files(
        &self,
        folder: &str,
        request: &str,
        title: &str,
        extras: &Extras,
    ) -> Result<[OutputFile; 2], RenderError> {
        let (base, _) = request.split_once('?').unwrap_or((request, ""));
        let view = HtmlView {
            title: title.to_owned(),
            request: request.to_owned(),
            status: 200,
            headers: crate::api::headers::json_headers(),
            body: Body::Markup {
                html: self.markup.as_str().into(),
                next: self.links.next.clone(),
                previous: self.links.previous.clone(),
            },
            json_url: format!("{base}?format=json"),
            extras: extras.clone(),
        };
        let html = render_html(&view).map_err(|source| RenderError::Html { path: folder.to_owned(), source })?;
        Ok([
            OutputFile { path: format!("{folder}/index.json"), bytes: self.json.clone() },
            OutputFile { path: format!("{folder}/index.html"), bytes: html.into_bytes() },
        ])
    }
}

/// `index.json` and `index.html` of one endpoint folder, for a body without paging links.
pub(crate) fn endpoint<T: Serialize>(
    folder: &str,
    request: &str,
    title: &str,
    body: &T,
) -> Result<Vec<OutputFile>, RenderError> {
    endpoint_with(folder, request, title, body, &Extras::default())
}

/// [`endpoint`] whose HTML view shows `extras` too.
fn endpoint_with<T: Serialize>(
    folder: &str,
    request: &str,
    title: &str,
    body: &T,
    extras: &Extras,
) -> Result<Vec<OutputFile>, RenderError> {
    Ok(Rendered::of(folder, body, Links::default())?.files(folder, request, title, extras)?.into())
}

/// The same response under several keys (id and slug): byte-identical JSON, and an HTML
/// view that shows the request as made.
fn endpoint_under_keys<T: Serialize>(
    keys: &[String],
    folder_of: fn(&str) -> String,
    title: &str,
    body: &T,
    extras: &Extras,
) -> Result<Vec<OutputFile>, RenderError> {
    let rendered = Rendered::of(&folder_of(&keys[0]), body, Links::default())?;
    let mut files = Vec::with_capacity(keys.len() * 2);
    for key in keys {
        let folder = folder_of(key);
        files.extend(rendered.files(&folder, &format!("/{folder}/"), title, extras)?);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The tags of an HTML page, in order: what follows each `<` that opens one.
    fn tags(html: &str) -> Vec<&str> {
        html.match_indices('<')
            .filter_map(|(at, _)| {
                let rest = &html[at + 1..];
                rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '/' || c == '!')
                    .then(|| &rest[..rest.find(|c: char| c.is_whitespace() || c == '>').unwrap_or(rest.len())])
            })
            .collect()
    }

    /// A service's files with `text` in every free-text field.
    fn service_files(text: &str) -> Vec<OutputFile> {
        let mut dir = crate::test_support::directory::tiny();
        let service = &mut dir.services[0];
        for field in [&mut service.name, &mut service.description, &mut service.contact.url, &mut service.contact.phone]
        {
            *field = text.to_owned();
        }
        let publication = Publication::with_defaults("https://api.example.org".into(), "https://example.org".into());
        let ctx = RenderContext { dir: &dir, publication: &publication, import_page_size: 10 };
        ctx.render(Job::Service(ServiceIx::new(0))).expect("renders")
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        /// Issue 6: JSON output stays valid for any Unicode input and gives the text back, and
        /// the HTML view has the same markup whatever the text: it is shown, never parsed.
        /// (A text starting with `http://` or `https://` becomes a link by design; neither
        /// generator makes one.)
        #[test]
        fn any_text_gives_valid_json_and_the_same_html_markup(
            text in prop_oneof![any::<String>(), "[<>&\"'{}%/=a-z \\u{0}-\\u{1f}\\u{2028}\\u{202e}]{0,40}"],
        ) {
            let plain = service_files("plain");
            let files = service_files(&text);
            prop_assert_eq!(files.len(), plain.len());
            for (file, plain) in files.iter().zip(&plain) {
                if file.path.ends_with(".json") {
                    let json: serde_json::Value = serde_json::from_slice(&file.bytes).expect("valid JSON");
                    prop_assert_eq!(json["data"]["name"].as_str(), Some(text.as_str()));
                    prop_assert_eq!(json["data"]["description"].as_str(), Some(text.as_str()));
                } else {
                    let html = std::str::from_utf8(&file.bytes).expect("UTF-8");
                    let plain = std::str::from_utf8(&plain.bytes).expect("UTF-8");
                    prop_assert_eq!(tags(html), tags(plain), "{}", file.path);
                }
            }
        }
    }
}
