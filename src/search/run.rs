//! One search, as a pure function: candidates → filter → rank → page (behaviour.md,
//! Search 3–8). No HTTP here: the server turns the page into a response.
//!
//! Candidates come from the cheapest source that contains every match: the services of
//! the text index's posting lists when there is a `q`, else the posting lists of the
//! postcode's service areas plus the services without areas found through the R-tree.
//!
//! Relevance (Search 4) is, summed over the distinct words of `q`, the weights of the fields
//! of the service that the word matches in: name 2, description 1.5, category name 1 (so
//! one word scores 0 to 4.5). It is kept in half points, as an exact integer.

use crate::index::SearchIndex;
use crate::index::spatial::{chord2, unit_vector, within_radius};
use crate::index::text::field_weight_halves;
use crate::model::{Service, ServiceIx};
use crate::search::params::{LocationType, PageNumber, SearchParams};

/// A page past the end, page 0, or a page that is not a number (behaviour.md, Errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("Invalid page.")]
pub struct InvalidPage;

/// One matching service and its sort keys.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The service.
    pub service: ServiceIx,
    /// Squared chord from the postcode to the service's nearest location (orders exactly
    /// like great-circle distance); infinite for a service without locations.
    pub distance_key: f64,
    /// Relevance in half points (0 without `q`).
    pub relevance_halves: u32,
    /// Position of the service in (name, id) order.
    pub name_rank: u32,
}

/// One page of results.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultPage {
    /// Number of matches over all pages.
    pub count: usize,
    /// This page's number.
    pub page: u64,
    /// This page's services, in order.
    pub hits: Vec<Hit>,
    /// Whether a later page exists.
    pub has_next: bool,
    /// Whether an earlier page exists.
    pub has_previous: bool,
}

/// Runs a search and cuts out the requested page.
pub fn run(index: &SearchIndex, params: &SearchParams<'_>) -> Result<ResultPage, InvalidPage> {
    let PageNumber::Number(page) = params.page else {
        return Err(InvalidPage);
    };
    let mut hits = matches(index, params);
    let count = hits.len();
    let size = params.page_size.max(1);
    let start = usize::try_from(page - 1)
        .ok()
        .and_then(|p| p.checked_mul(size))
        .ok_or(InvalidPage)?;
    // Page 1 always exists, even when empty (Django's allow_empty_first_page).
    if page > 1 && start >= count {
        return Err(InvalidPage);
    }
    let end = start.saturating_add(size).min(count);
    let order = compare;
    // Only the first `end` hits need ordering: select them, then sort just those.
    if end < hits.len() && end > 0 {
        hits.select_nth_unstable_by(end - 1, order);
    }
    hits.truncate(end);
    hits.sort_unstable_by(order);
    let page_hits = hits.get(start..).map(<[Hit]>::to_vec).unwrap_or_default();
    Ok(ResultPage {
        count,
        page,
        hits: page_hits,
        has_next: end < count,
        has_previous: page > 1,
    })
}

/// Search 7: nearest location first, services without location last; then relevance
/// (descending), name, id.
pub fn compare(a: &Hit, b: &Hit) -> std::cmp::Ordering {
    a.distance_key
        .total_cmp(&b.distance_key)
        .then_with(|| b.relevance_halves.cmp(&a.relevance_halves))
        .then_with(|| a.name_rank.cmp(&b.name_rank))
}

/// Every matching service, unordered.
pub fn matches(index: &SearchIndex, params: &SearchParams<'_>) -> Vec<Hit> {
    let dir = &index.directory;
    let point = params.postcode.point;
    let centre = unit_vector(point);
    let radius = params.radius_m as f64;

    // Search 1–2: the postcode's area codes (already mapped through the aliases when the
    // directory was built) as service areas.
    let mut in_postcode = vec![false; dir.service_areas.len()];
    let mut postcode_areas = Vec::with_capacity(params.postcode.areas.len());
    for code in &params.postcode.areas {
        if let Some(&area) = index.area_by_code.get(code)
            && !in_postcode[area as usize]
        {
            in_postcode[area as usize] = true;
            postcode_areas.push(area);
        }
    }

    // Search 5: a category matches itself and everything below it.
    let allowed_categories = (!params.categories.is_empty()).then(|| {
        let mut allowed = vec![false; dir.categories.nodes.len()];
        for &c in &params.categories {
            for node in dir.categories.subtree(c) {
                allowed[node as usize] = true;
            }
        }
        allowed
    });

    let passes_filters = |ix: ServiceIx, service: &Service| {
        let location_ok = match params.location_type {
            None => true,
            Some(LocationType::National) => index.national[ix as usize],
            Some(LocationType::Local) => !index.national[ix as usize],
        };
        location_ok
            && allowed_categories
                .as_ref()
                .is_none_or(|allowed| service.categories.iter().any(|&c| allowed[c as usize]))
    };
    let hit = |ix: ServiceIx, relevance_halves: u32| {
        let distance_key = index
            .service_points
            .get(ix as usize)
            .iter()
            .map(|p| chord2(&centre, p))
            .fold(f64::INFINITY, f64::min);
        Hit {
            service: ix,
            distance_key,
            relevance_halves,
            name_rank: index.name_rank[ix as usize],
        }
    };

    let mut hits = Vec::new();
    if params.words.is_empty() {
        let mut seen = vec![false; dir.services.len()];
        for &area in &postcode_areas {
            for &ix in index.area_services.get(area as usize) {
                if !std::mem::replace(&mut seen[ix as usize], true) && passes_filters(ix, &dir.services[ix as usize]) {
                    hits.push(hit(ix, 0));
                }
            }
        }
        for (loc, chord2) in index.spatial.near(point, radius) {
            if !within_radius(chord2, radius, || dir.locations[loc as usize].point.distance_m(point)) {
                continue;
            }
            // Only area-less services are listed per location.
            for &ix in index.location_services.get(loc as usize) {
                if !std::mem::replace(&mut seen[ix as usize], true) && passes_filters(ix, &dir.services[ix as usize]) {
                    hits.push(hit(ix, 0));
                }
            }
        }
    } else {
        for (ix, relevance) in text_matches(index, &params.words) {
            let service = &dir.services[ix as usize];
            if !passes_filters(ix, service) {
                continue;
            }
            // Search 3: an area among the postcode's, or no areas and a location in range.
            let matches_postcode = if service.service_areas.is_empty() {
                let points = index.service_points.get(ix as usize);
                service.locations.iter().zip(points).any(|(&loc, p)| {
                    within_radius(chord2(&centre, p), radius, || {
                        dir.locations[loc as usize].point.distance_m(point)
                    })
                })
            } else {
                service.service_areas.iter().any(|&a| in_postcode[a as usize])
            };
            if matches_postcode {
                hits.push(hit(ix, relevance));
            }
        }
    }
    hits
}

/// Services in which every word matches, ascending, with their relevance in half points.
fn text_matches(index: &SearchIndex, words: &[String]) -> Vec<(ServiceIx, u32)> {
    let mut acc: Vec<(ServiceIx, u32)> = Vec::new();
    for (n, word) in words.iter().enumerate() {
        let found = index.text.lookup(word);
        if n == 0 {
            acc = found
                .into_iter()
                .map(|(ix, fields)| (ix, field_weight_halves(fields)))
                .collect();
        } else {
            // Intersect two ascending lists in place.
            let mut kept = 0;
            let mut j = 0;
            for i in 0..acc.len() {
                let (ix, relevance) = acc[i];
                while j < found.len() && found[j].0 < ix {
                    j += 1;
                }
                if j < found.len() && found[j].0 == ix {
                    acc[kept] = (ix, relevance + field_weight_halves(found[j].1));
                    kept += 1;
                }
            }
            acc.truncate(kept);
        }
        if acc.is_empty() {
            break;
        }
    }
    acc
}
