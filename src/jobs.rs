//! Every output family of a build, each one [`Family`] of the same shape, and the one list
//! of them: the v4 and v3 answers (`crate::render`), the OpenAPI document and its page
//! (`crate::openapi`), the bulk downloads (`crate::downloads`), the Open Referral UK API
//! (`crate::openreferral`), the listings without a postcode (`crate::listings`), and the
//! change record (`crate::changes`).
//!
//! `build` runs the jobs of [`Jobs::all`] in parallel, then the change record's
//! ([`ChangeRecord`]), which compares what they wrote with the previous build.
//!
//! This module sits above the families so that none of them depends on another's list:
//! each renders with `crate::render`'s pieces and writes to `crate::urls`'s paths. A new
//! family is a struct here with its [`Family`] impl, and one variant of [`Job`].

use crate::changes::{Entry, State};
use crate::listings::Listings;
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

/// The shape of every output family: its work in a build as jobs, in a fixed order, and
/// the files of one job. Jobs are independent of each other, so they run in parallel.
pub(crate) trait Family {
    /// One unit of the family's work.
    type Job: Copy;
    /// Every job of a full build, in a fixed order.
    fn jobs(&self) -> Vec<Self::Job>;
    /// The files of one job.
    fn render(&self, job: Self::Job) -> Result<Vec<OutputFile>, JobError>;
}

/// The v4 and v3 answers and the API root (`crate::render`).
impl Family for RenderContext<'_> {
    type Job = crate::render::Job;
    fn jobs(&self) -> Vec<Self::Job> {
        RenderContext::jobs(self)
    }
    fn render(&self, job: Self::Job) -> Result<Vec<OutputFile>, JobError> {
        Ok(RenderContext::render(self, job)?)
    }
}

/// The OpenAPI document (`/api/openapi.json`, `/api/openapi/`) and its reference page.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OpenApi<'a> {
    /// The API's public origin, the document's server.
    pub base_url: &'a str,
}

impl Family for OpenApi<'_> {
    type Job = ();
    fn jobs(&self) -> Vec<()> {
        vec![()]
    }
    fn render(&self, (): ()) -> Result<Vec<OutputFile>, JobError> {
        let doc = crate::openapi::document(self.base_url);
        let json = json_bytes(paths::OPENAPI_FILE, &doc)?;
        let html = crate::openapi::render_page(&doc)?.into_bytes();
        Ok(vec![
            OutputFile { path: paths::OPENAPI_FILE.to_owned(), bytes: json.clone() },
            OutputFile { path: format!("{}/index.json", paths::OPENAPI), bytes: json },
            OutputFile { path: format!("{}/index.html", paths::OPENAPI), bytes: html },
        ])
    }
}

/// The bulk downloads (`crate::downloads`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Downloads<'a> {
    /// The model and publication.
    pub ctx: RenderContext<'a>,
    /// The Open Referral UK lists' order (the tabular package's).
    pub oruk: &'a Index,
}

impl Family for Downloads<'_> {
    type Job = ();
    fn jobs(&self) -> Vec<()> {
        vec![()]
    }
    fn render(&self, (): ()) -> Result<Vec<OutputFile>, JobError> {
        let (dir, publication) = (self.ctx.dir, self.ctx.publication);
        Ok(vec![
            OutputFile {
                path: paths::SERVICES_NDJSON_GZ.to_owned(),
                bytes: crate::downloads::services_ndjson_gz(dir, publication)?,
            },
            OutputFile {
                path: paths::OPENREFERRAL_ZIP.to_owned(),
                bytes: crate::downloads::openreferral_zip(dir, publication, self.oruk)?,
            },
            OutputFile { path: paths::LOCATIONS_GEOJSON.to_owned(), bytes: crate::downloads::locations_geojson(dir)? },
        ])
    }
}

/// The Open Referral UK API (`crate::openreferral`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct OpenReferral<'a> {
    /// The model, publication and paging.
    pub ctx: RenderContext<'a>,
    /// The order of its lists.
    pub oruk: &'a Index,
}

impl Family for OpenReferral<'_> {
    type Job = crate::openreferral::Job;
    fn jobs(&self) -> Vec<Self::Job> {
        crate::openreferral::jobs(&self.ctx, self.oruk)
    }
    fn render(&self, job: Self::Job) -> Result<Vec<OutputFile>, JobError> {
        Ok(crate::openreferral::render(&self.ctx, self.oruk, job)?)
    }
}

/// A category's or a service area's listing of services (`crate::listings`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ListingPages<'a> {
    /// The model, publication and paging.
    pub ctx: RenderContext<'a>,
    /// The services of each listing.
    pub listings: &'a Listings,
}

impl Family for ListingPages<'_> {
    type Job = crate::listings::Job;
    fn jobs(&self) -> Vec<Self::Job> {
        self.listings.jobs(self.ctx.import_page_size)
    }
    fn render(&self, job: Self::Job) -> Result<Vec<OutputFile>, JobError> {
        Ok(self.listings.render(&self.ctx, job)?)
    }
}

/// The change record (`crate::changes`): its pages and its state, once the build's other
/// files are written (it records which of them changed).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChangeRecord<'a> {
    /// Its entries, newest first.
    pub builds: &'a [Entry],
    /// The state it records.
    pub state: &'a State,
    /// The API's public origin.
    pub base_url: &'a str,
}

impl Family for ChangeRecord<'_> {
    type Job = ();
    fn jobs(&self) -> Vec<()> {
        vec![()]
    }
    fn render(&self, (): ()) -> Result<Vec<OutputFile>, JobError> {
        Ok(crate::changes::files(self.builds, self.state, self.base_url)?)
    }
}

/// One unit of rendering work, of any family but the change record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Job {
    /// A v4 or v3 answer (`crate::render`).
    Api(crate::render::Job),
    /// The OpenAPI document and its reference page.
    OpenApi,
    /// The bulk downloads.
    Downloads,
    /// A file set of the Open Referral UK API.
    OpenReferral(crate::openreferral::Job),
    /// A page of a category's or a service area's listing.
    Listing(crate::listings::Job),
}

/// What every family's jobs read: the rendering context and the Open Referral UK lists'
/// order (also the tabular package's).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Jobs<'a> {
    /// The model, publication and paging.
    pub ctx: RenderContext<'a>,
    /// The order of the Open Referral UK lists.
    pub oruk: &'a Index,
    /// The services of each listing.
    pub listings: &'a Listings,
}

impl<'a> Jobs<'a> {
    fn open_api(&self) -> OpenApi<'a> {
        OpenApi { base_url: &self.ctx.publication.base_url }
    }

    fn downloads(&self) -> Downloads<'a> {
        Downloads { ctx: self.ctx, oruk: self.oruk }
    }

    fn open_referral(&self) -> OpenReferral<'a> {
        OpenReferral { ctx: self.ctx, oruk: self.oruk }
    }

    fn listing_pages(&self) -> ListingPages<'a> {
        ListingPages { ctx: self.ctx, listings: self.listings }
    }

    /// Every job of a full build, in a fixed order: the one list of the families.
    pub(crate) fn all(&self) -> Vec<Job> {
        let mut jobs: Vec<Job> = Family::jobs(&self.ctx).into_iter().map(Job::Api).collect();
        jobs.extend(self.open_api().jobs().into_iter().map(|()| Job::OpenApi));
        jobs.extend(self.downloads().jobs().into_iter().map(|()| Job::Downloads));
        jobs.extend(self.open_referral().jobs().into_iter().map(Job::OpenReferral));
        jobs.extend(self.listing_pages().jobs().into_iter().map(Job::Listing));
        jobs
    }

    /// Renders one job's files.
    pub(crate) fn render(&self, job: Job) -> Result<Vec<OutputFile>, JobError> {
        match job {
            Job::Api(job) => Family::render(&self.ctx, job),
            Job::OpenApi => self.open_api().render(()),
            Job::Downloads => self.downloads().render(()),
            Job::OpenReferral(job) => self.open_referral().render(job),
            Job::Listing(job) => self.listing_pages().render(job),
        }
    }
}
