//! Every output family of a build, and the one list of their work: the v4 and v3 answers
//! (`crate::render`), the Open Referral UK API (`crate::openreferral`), the OpenAPI
//! document and its page (`crate::openapi`), the bulk downloads (`crate::downloads`) and the
//! listings without a postcode (`crate::listings`).
//! `build` runs these jobs in parallel; the change record comes after them (it compares
//! what they wrote with the previous build).
//!
//! This module sits above the families so that none of them depends on another's list:
//! each renders with `crate::render`'s pieces and writes to `crate::urls`'s paths.

use crate::openreferral::Index;
use crate::render::{OutputFile, RenderContext, RenderError, json_bytes, paths};

/// Why a job's files could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// A JSON answer or its HTML view failed.
    #[error(transparent)]
    Render(#[from] RenderError),
    /// The OpenAPI reference page failed.
    #[error(transparent)]
    OpenApiPage(#[from] crate::openapi::PageError),
    /// A bulk download failed.
    #[error(transparent)]
    Download(#[from] crate::downloads::DownloadError),
}

/// One unit of rendering work, of any family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// A v4 or v3 answer (`crate::render`).
    Api(crate::render::Job),
    /// The OpenAPI document (`/api/openapi.json`, `/api/openapi/`) and its reference page.
    OpenApi,
    /// A file set of the Open Referral UK API (`crate::openreferral`).
    OpenReferral(crate::openreferral::Job),
    /// The bulk downloads (`crate::downloads`).
    Downloads,
    /// A page of a category's or a service area's listing (`crate::listings`).
    Listing(crate::listings::Job),
}

/// What every family's jobs read: the rendering context and the Open Referral UK lists'
/// order (also the tabular package's).
#[derive(Debug, Clone, Copy)]
pub struct Jobs<'a> {
    /// The model, publication and paging.
    pub ctx: RenderContext<'a>,
    /// The order of the Open Referral UK lists.
    pub oruk: &'a Index,
    /// The services of each listing.
    pub listings: &'a crate::listings::Listings,
}

impl Jobs<'_> {
    /// Every job of a full build, in a fixed order.
    pub fn all(&self) -> Vec<Job> {
        let mut jobs: Vec<Job> = self.ctx.jobs().into_iter().map(Job::Api).collect();
        jobs.extend([Job::OpenApi, Job::Downloads]);
        jobs.extend(crate::openreferral::jobs(&self.ctx, self.oruk).into_iter().map(Job::OpenReferral));
        jobs.extend(self.listings.jobs(self.ctx.import_page_size).into_iter().map(Job::Listing));
        jobs
    }

    /// Renders one job's files.
    pub fn render(&self, job: Job) -> Result<Vec<OutputFile>, JobError> {
        let (dir, publication) = (self.ctx.dir, self.ctx.publication);
        match job {
            Job::Api(job) => Ok(self.ctx.render(job)?),
            Job::OpenApi => {
                let doc = crate::openapi::document(&publication.base_url);
                let json = json_bytes(paths::OPENAPI_FILE, &doc)?;
                let html = crate::openapi::render_page(&doc)?.into_bytes();
                Ok(vec![
                    OutputFile { path: paths::OPENAPI_FILE.to_owned(), bytes: json.clone() },
                    OutputFile { path: format!("{}/index.json", paths::OPENAPI), bytes: json },
                    OutputFile { path: format!("{}/index.html", paths::OPENAPI), bytes: html },
                ])
            }
            Job::OpenReferral(job) => Ok(crate::openreferral::render(&self.ctx, self.oruk, job)?),
            Job::Listing(job) => Ok(self.listings.render(&self.ctx, job)?),
            Job::Downloads => Ok(vec![
                OutputFile {
                    path: paths::SERVICES_NDJSON_GZ.to_owned(),
                    bytes: crate::downloads::services_ndjson_gz(dir, publication)?,
                },
                OutputFile {
                    path: paths::OPENREFERRAL_ZIP.to_owned(),
                    bytes: crate::downloads::openreferral_zip(dir, publication, self.oruk)?,
                },
                OutputFile {
                    path: paths::LOCATIONS_GEOJSON.to_owned(),
                    bytes: crate::downloads::locations_geojson(dir)?,
                },
            ]),
        }
    }
}
