//! The listings without a postcode (behaviour.md, "Import and lists"): the services of each
//! category (tagged with it or with anything below it) and of each service area, as static
//! files paged as the import is (same envelope and attribution, pages of
//! `--import-page-size` services in id order, page 1 also at the listing's folder,
//! `page=last` a folder of its own). An output family of its own: `crate::jobs` runs it.

use crate::api::html::Extras;
use crate::api::query::PageNumber;
use crate::model::{AreaIx, CategoryIx, Directory, ServiceIx};
use crate::render::{Links, OutputFile, RenderContext, RenderError, Rendered, paths};
use crate::views::v4::{PagedEnvelope, ServiceContext, ServiceView};

/// The services of every listing, in id order (the directory's order), found once per
/// build so that no page scans the services.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Listings {
    /// Per category node: the services tagged with it or with a node below it.
    categories: Vec<Vec<ServiceIx>>,
    /// Per service area: the services with it.
    areas: Vec<Vec<ServiceIx>>,
}

/// One page of one listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// Page `n` (from 1) of a category's listing.
    Category(CategoryIx, usize),
    /// Page `n` (from 1) of a service area's listing.
    Area(AreaIx, usize),
}

impl Listings {
    /// The listings of a directory.
    pub(crate) fn of(dir: &Directory) -> Listings {
        let mut categories = vec![Vec::new(); dir.categories.nodes.len()];
        let mut areas = vec![Vec::new(); dir.service_areas.len()];
        let mut above: Vec<CategoryIx> = Vec::new();
        for (ix, service) in dir.indexed_services() {
            // Each node a service is tagged with, and every node above it, once.
            above.clear();
            for &tag in &service.categories {
                let mut node = Some(tag);
                while let Some(n) = node {
                    above.push(n);
                    node = dir.categories.nodes[n as usize].parent;
                }
            }
            above.sort_unstable();
            above.dedup();
            for &n in &above {
                categories[n as usize].push(ix);
            }
            for &a in &service.service_areas {
                let list: &mut Vec<ServiceIx> = &mut areas[a as usize];
                // A service lists an area once, even if the record named it twice.
                if list.last() != Some(&ix) {
                    list.push(ix);
                }
            }
        }
        Listings { categories, areas }
    }

    /// The services of a category's listing.
    pub(crate) fn of_category(&self, category: CategoryIx) -> &[ServiceIx] {
        &self.categories[category as usize]
    }

    /// The services of a service area's listing.
    pub(crate) fn of_area(&self, area: AreaIx) -> &[ServiceIx] {
        &self.areas[area as usize]
    }

    /// Every page of every listing, categories first, in a fixed order.
    pub(crate) fn jobs(&self, page_size: usize) -> Vec<Job> {
        let pages = |services: &[ServiceIx]| 1..=page_count(services.len(), page_size);
        let categories = self
            .categories
            .iter()
            .enumerate()
            .flat_map(|(c, services)| pages(services).map(move |n| Job::Category(c as CategoryIx, n)));
        let areas = self
            .areas
            .iter()
            .enumerate()
            .flat_map(|(a, services)| pages(services).map(move |n| Job::Area(a as AreaIx, n)));
        categories.chain(areas).collect()
    }

    /// The files of one page: its folder, and the listing's own folder for page 1 and
    /// `page/last` for the last page.
    pub(crate) fn render(&self, ctx: &RenderContext<'_>, job: Job) -> Result<Vec<OutputFile>, RenderError> {
        let dir = ctx.dir;
        let (folder, services, title, n) = match job {
            Job::Category(c, n) => {
                let node = &dir.categories.nodes[c as usize];
                (paths::category_services(&node.slug), self.of_category(c), format!("Services of {}", node.name), n)
            }
            Job::Area(a, n) => {
                let area = &dir.service_areas[a as usize];
                (paths::area_services(&area.code), self.of_area(a), format!("Services of {}", area.name), n)
            }
        };
        let size = ctx.import_page_size;
        let pages = page_count(services.len(), size);
        let start = ((n - 1) * size).min(services.len());
        let end = (start + size).min(services.len());
        let page_url = |p: usize| format!("{}/{folder}/?format=json&page={p}", ctx.publication.base_url);
        let body = PagedEnvelope {
            meta: ctx.publication.meta_full(),
            count: services.len(),
            next: (n < pages).then(|| page_url(n + 1)),
            previous: (n > 1).then(|| page_url(n - 1)),
            data: services[start..end]
                .iter()
                .map(|&s| ServiceView::new(dir, ctx.publication, &dir.services[s], ServiceContext::List))
                .collect::<Vec<_>>(),
        };
        let title = format!("{title}, page {n}");
        let page_folder = format!("{folder}/page/{n}");
        let links = Links { next: body.next.clone(), previous: body.previous.clone() };
        let rendered = Rendered::of(&page_folder, &body, links)?;
        let none = Extras::default();
        let mut files =
            Vec::from(rendered.files(&page_folder, &format!("/{folder}/?format=json&page={n}"), &title, &none)?);
        if n == 1 {
            files.extend(rendered.files(&folder, &format!("/{folder}/"), &title, &none)?);
        }
        if n == pages {
            let last = PageNumber::LAST;
            files.extend(rendered.files(
                &format!("{folder}/page/{last}"),
                &format!("/{folder}/?format=json&page={last}"),
                &title,
                &none,
            )?);
        }
        Ok(files)
    }
}

/// Pages of a listing of `len` services: at least 1 (an empty listing is one empty page).
fn page_count(len: usize, page_size: usize) -> usize {
    len.div_ceil(page_size).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::directory::directory;
    use crate::views::Publication;

    #[test]
    fn a_category_lists_its_subtree_and_an_area_its_services_in_id_order() {
        let dir = directory();
        let listings = Listings::of(&dir);
        for (c, node) in dir.categories.nodes.iter().enumerate() {
            let subtree = c as CategoryIx..node.subtree_end;
            let want: Vec<ServiceIx> = ServiceIx::all(dir.services.len())
                .filter(|&s| dir.services[s].categories.iter().any(|t| subtree.contains(t)))
                .collect();
            assert_eq!(listings.of_category(c as CategoryIx), want, "{}", node.slug);
        }
        for a in 0..dir.service_areas.len() as AreaIx {
            let want: Vec<ServiceIx> =
                ServiceIx::all(dir.services.len()).filter(|&s| dir.services[s].service_areas.contains(&a)).collect();
            assert_eq!(listings.of_area(a), want);
        }
    }

    #[test]
    fn pages_link_and_fill_as_the_import() {
        let dir = directory();
        let publication = Publication::with_defaults("http://a.test".into(), "http://a.test".into());
        let ctx = RenderContext { dir: &dir, publication: &publication, import_page_size: 1 };
        let listings = Listings::of(&dir);
        let (c, services) = (0..dir.categories.nodes.len() as CategoryIx)
            .map(|c| (c, listings.of_category(c)))
            .find(|(_, s)| s.len() >= 2)
            .expect("a category with two services");
        let jobs: Vec<Job> =
            listings.jobs(1).into_iter().filter(|j| matches!(j, Job::Category(x, _) if *x == c)).collect();
        assert_eq!(jobs.len(), services.len());
        let folder = paths::category_services(&dir.categories.nodes[c as usize].slug);
        let first = listings.render(&ctx, jobs[0]).unwrap();
        let json = |files: &[OutputFile], path: &str| -> serde_json::Value {
            let file = files.iter().find(|f| f.path == path).unwrap_or_else(|| panic!("{path}"));
            serde_json::from_slice(&file.bytes).unwrap()
        };
        let page1 = json(&first, &format!("{folder}/index.json"));
        assert_eq!(page1, json(&first, &format!("{folder}/page/1/index.json")));
        assert_eq!(page1["count"], services.len());
        assert_eq!(page1["next"], format!("http://a.test/{folder}/?format=json&page=2"));
        assert_eq!(page1["previous"], serde_json::Value::Null);
        assert_eq!(page1["data"][0]["id"], dir.services[services[0]].id.to_string());
        assert!(first.iter().any(|f| f.path == format!("{folder}/index.html")));
        let last = listings.render(&ctx, *jobs.last().unwrap()).unwrap();
        let last = json(&last, &format!("{folder}/page/last/index.json"));
        assert_eq!(last["next"], serde_json::Value::Null);
        assert_eq!(last["previous"], format!("http://a.test/{folder}/?format=json&page={}", services.len() - 1));
    }
}
