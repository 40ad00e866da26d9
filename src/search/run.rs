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
//!
//! A search never waits, so a time limit cannot be put on it from outside without moving it
//! off the request workers (which cost 28% of the throughput). Instead it looks at its
//! [`Deadline`] as it goes, once every [`CHECK_EVERY`] candidates and before each costly
//! step, and gives up with [`SearchError::TimedOut`].

use std::time::Instant;

use crate::index::SearchIndex;
use crate::index::spatial::{chord2, unit_vector, within_radius};
use crate::index::text::field_weight_halves;
use crate::model::ServiceIx;
use crate::search::params::{LocationType, PageNumber, SearchParams};

/// A page past the end, page 0, or a page that is not a number (behaviour.md, Errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("Invalid page.")]
pub struct InvalidPage;

/// The search ran past its [`Deadline`] and was given up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("Request timed out.")]
pub struct TimedOut;

/// Why a search has no page to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    /// See [`InvalidPage`].
    #[error(transparent)]
    InvalidPage(#[from] InvalidPage),
    /// See [`TimedOut`].
    #[error(transparent)]
    TimedOut(#[from] TimedOut),
}

/// Candidates looked at between two readings of the clock: a reading costs about 25 ns and
/// a candidate about 20, so the check costs well under 1% and a search overruns its
/// deadline by a few tens of microseconds at most.
pub const CHECK_EVERY: u32 = 1024;

/// The moment by which a search must be done, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Deadline(Option<Instant>);

impl Deadline {
    /// No limit.
    pub const NONE: Deadline = Deadline(None);

    /// Done by `at`.
    pub fn at(at: Instant) -> Deadline {
        Deadline(Some(at))
    }

    /// Err once the deadline has passed.
    pub fn check(&self) -> Result<(), TimedOut> {
        match self.0 {
            Some(at) if Instant::now() >= at => Err(TimedOut),
            _ => Ok(()),
        }
    }

    /// A counter that reads the clock once every [`CHECK_EVERY`] ticks (the first included).
    fn ticker(self) -> Ticker {
        Ticker { deadline: self, ticks: 0 }
    }
}

/// See [`Deadline::ticker`].
struct Ticker {
    deadline: Deadline,
    ticks: u32,
}

impl Ticker {
    #[inline]
    fn tick(&mut self) -> Result<(), TimedOut> {
        let due = self.ticks.is_multiple_of(CHECK_EVERY);
        self.ticks = self.ticks.wrapping_add(1);
        if due { self.deadline.check() } else { Ok(()) }
    }
}

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

/// Runs a search and cuts out the requested page, giving up once `deadline` has passed.
pub fn run(index: &SearchIndex, params: &SearchParams<'_>, deadline: Deadline) -> Result<ResultPage, SearchError> {
    if params.page == PageNumber::Invalid {
        return Err(InvalidPage.into());
    }
    let hits = matches(index, params, deadline)?;
    let page = params.page.resolve(hits.len(), params.page_size).ok_or(InvalidPage)?;
    // Ordering a deep page of a large result is the one step left that can take long.
    deadline.check()?;
    Ok(cut_page(hits, page, params.page_size)?)
}

/// Orders just enough of `hits` to cut out page `page` of `size` (Search 7–8).
pub fn cut_page(mut hits: Vec<Hit>, page: u64, size: usize) -> Result<ResultPage, InvalidPage> {
    let count = hits.len();
    let size = size.max(1);
    let start = page
        .checked_sub(1)
        .and_then(|p| usize::try_from(p).ok())
        .and_then(|p| p.checked_mul(size))
        .ok_or(InvalidPage)?;
    // Page 1 always exists, even when empty (Django's allow_empty_first_page).
    if page > 1 && start >= count {
        return Err(InvalidPage);
    }
    let end = start.saturating_add(size).min(count);
    // Only the first `end` hits need ordering: select them, then sort just those.
    if end < hits.len() && end > 0 {
        hits.select_nth_unstable_by(end - 1, compare);
    }
    hits.truncate(end);
    hits.sort_unstable_by(compare);
    let page_hits = hits.get(start..).map(<[Hit]>::to_vec).unwrap_or_default();
    Ok(ResultPage { count, page, hits: page_hits, has_next: end < count, has_previous: page > 1 })
}

/// Search 7: nearest location first, services without location last; then relevance
/// (descending), name, id.
pub fn compare(a: &Hit, b: &Hit) -> std::cmp::Ordering {
    a.distance_key
        .total_cmp(&b.distance_key)
        .then_with(|| b.relevance_halves.cmp(&a.relevance_halves))
        .then_with(|| a.name_rank.cmp(&b.name_rank))
}

/// Every matching service, unordered; [`TimedOut`] once `deadline` has passed.
pub fn matches(index: &SearchIndex, params: &SearchParams<'_>, deadline: Deadline) -> Result<Vec<Hit>, TimedOut> {
    let mut ticker = deadline.ticker();
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

    let passes_filters = |ix: ServiceIx| {
        let location_ok = match params.location_type {
            None => true,
            Some(LocationType::National) => index.national[ix as usize],
            Some(LocationType::Local) => !index.national[ix as usize],
        };
        location_ok
            && allowed_categories
                .as_ref()
                .is_none_or(|allowed| index.service_categories.get(ix as usize).iter().any(|&c| allowed[c as usize]))
    };
    let hit = |ix: ServiceIx, relevance_halves: u32| {
        let distance_key =
            index.service_points.get(ix as usize).iter().map(|p| chord2(&centre, p)).fold(f64::INFINITY, f64::min);
        Hit { service: ix, distance_key, relevance_halves, name_rank: index.name_rank[ix as usize] }
    };

    let mut hits = Vec::new();
    if params.words.is_empty() {
        let mut seen = Seen::new(dir.services.len());
        for &area in &postcode_areas {
            let entries = index.area_entries.get(area as usize);
            let mut i = 0;
            while i < entries.len() {
                ticker.tick()?;
                let ix = entries[i].service;
                let end = i + entries[i..].iter().take_while(|e| e.service == ix).count();
                if seen.first_time(ix) && passes_filters(ix) {
                    // NaN points (no location) are ignored by `f64::min`.
                    let distance_key =
                        entries[i..end].iter().map(|e| chord2(&centre, &e.point)).fold(f64::INFINITY, f64::min);
                    hits.push(Hit {
                        service: ix,
                        distance_key,
                        relevance_halves: 0,
                        name_rank: index.name_rank[ix as usize],
                    });
                }
                i = end;
            }
        }
        for (loc, chord2) in index.spatial.near(point, radius) {
            ticker.tick()?;
            if !within_radius(chord2, radius, || dir.locations[loc as usize].point.distance_m(point)) {
                continue;
            }
            // Only area-less services are listed per location.
            for &ix in index.location_services.get(loc as usize) {
                if seen.first_time(ix) && passes_filters(ix) {
                    hits.push(hit(ix, 0));
                }
            }
        }
    } else {
        for (ix, relevance) in text_matches(index, &params.words, deadline)? {
            ticker.tick()?;
            if !passes_filters(ix) {
                continue;
            }
            // Search 3: an area among the postcode's, or no areas and a location in range.
            let areas = index.service_areas.get(ix as usize);
            let matches_postcode = if areas.is_empty() {
                let points = index.service_points.get(ix as usize);
                points.iter().enumerate().any(|(n, p)| {
                    within_radius(chord2(&centre, p), radius, || {
                        let location = dir.services[ix as usize].locations[n];
                        dir.locations[location as usize].point.distance_m(point)
                    })
                })
            } else {
                areas.iter().any(|&a| in_postcode[a as usize])
            };
            if matches_postcode {
                hits.push(hit(ix, relevance));
            }
        }
    }
    Ok(hits)
}

/// A set of services as bits: a search touches thousands of candidates, and a bit per
/// service keeps the whole set in cache.
struct Seen(Vec<u64>);

impl Seen {
    fn new(services: usize) -> Seen {
        Seen(vec![0; services.div_ceil(64)])
    }

    /// Adds `ix`; whether it was new.
    #[inline]
    fn first_time(&mut self, ix: ServiceIx) -> bool {
        let (word, bit) = (ix as usize / 64, 1u64 << (ix % 64));
        let new = self.0[word] & bit == 0;
        self.0[word] |= bit;
        new
    }
}

/// Services in which every word matches, ascending, with their relevance in half points.
fn text_matches(index: &SearchIndex, words: &[String], deadline: Deadline) -> Result<Vec<(ServiceIx, u32)>, TimedOut> {
    let mut acc: Vec<(ServiceIx, u32)> = Vec::new();
    for (n, word) in words.iter().enumerate() {
        // A word's lookup scans the vocabulary near its length: checked once per word.
        deadline.check()?;
        let found = index.text.lookup(word);
        if n == 0 {
            acc = found.into_iter().map(|(ix, fields)| (ix, field_weight_halves(fields))).collect();
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
    Ok(acc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn hit(service: u32, distance_key: f64, relevance_halves: u32, name_rank: u32) -> Hit {
        Hit { service, distance_key, relevance_halves, name_rank }
    }

    #[test]
    fn order_is_distance_then_relevance_then_name_and_id() {
        let mut hits = [
            hit(0, f64::INFINITY, 9, 0),
            hit(1, 0.5, 0, 3),
            hit(2, 0.5, 2, 9),
            hit(3, 0.1, 0, 5),
            hit(4, 0.5, 2, 1),
            hit(5, f64::INFINITY, 9, 7),
            hit(6, f64::INFINITY, 1, 2),
        ];
        hits.sort_by(compare);
        let order: Vec<u32> = hits.iter().map(|h| h.service).collect();
        assert_eq!(order, [3, 4, 2, 1, 0, 5, 6]);
    }

    #[test]
    fn a_deadline_is_read_on_the_first_tick_then_once_every_check_every() {
        let mut none = Deadline::NONE.ticker();
        assert!((0..3 * CHECK_EVERY).all(|_| none.tick().is_ok()));

        let mut passed = Deadline::at(Instant::now()).ticker();
        assert_eq!(passed.tick(), Err(TimedOut), "the first tick reads the clock");
        assert!((1..CHECK_EVERY).all(|_| passed.tick().is_ok()), "the next ones do not");
        assert_eq!(passed.tick(), Err(TimedOut));

        let far = Deadline::at(Instant::now() + std::time::Duration::from_secs(3600));
        let mut ticker = far.ticker();
        assert!((0..3 * CHECK_EVERY).all(|_| ticker.tick().is_ok()));
        assert_eq!(far.check(), Ok(()));
    }

    #[test]
    fn pages() {
        let hits: Vec<Hit> = (0..25).map(|i| hit(i, f64::from(i), 0, i)).collect();
        let page = |n| cut_page(hits.clone(), n, 10);
        assert_eq!(page(1).unwrap().hits.len(), 10);
        let third = page(3).unwrap();
        assert_eq!((third.count, third.hits.len(), third.has_next, third.has_previous), (25, 5, false, true));
        assert_eq!(third.hits[0].service, 20);
        assert_eq!(page(4), Err(InvalidPage));
        assert_eq!(page(0), Err(InvalidPage));
        assert_eq!(cut_page(vec![], 1, 10).unwrap().count, 0, "page 1 of nothing exists");
        assert_eq!(cut_page(vec![], 2, 10), Err(InvalidPage));
        assert_eq!(cut_page(hits.clone(), u64::MAX, 100), Err(InvalidPage));
    }

    proptest! {
        #[test]
        fn a_page_is_the_slice_of_the_full_order(
            keys in proptest::collection::vec((0u8..6, 0u32..4), 0..60),
            page in 1u64..8,
            size in 1usize..12,
        ) {
            // Few distinct keys, so that ties are the rule; name ranks unique like (name, id).
            let hits: Vec<Hit> = keys
                .iter()
                .enumerate()
                .map(|(i, &(d, r))| hit(i as u32, if d == 5 { f64::INFINITY } else { f64::from(d) }, r, (i as u32 * 7919) % 1000))
                .collect();
            let mut full = hits.clone();
            full.sort_by(compare);
            let start = (page as usize - 1) * size;
            match cut_page(hits, page, size) {
                Ok(p) => {
                    let want: Vec<u32> = full.iter().skip(start).take(size).map(|h| h.service).collect();
                    let got: Vec<u32> = p.hits.iter().map(|h| h.service).collect();
                    prop_assert_eq!(got, want);
                    prop_assert_eq!(p.has_next, start + size < full.len());
                }
                Err(InvalidPage) => prop_assert!(page > 1 && start >= full.len()),
            }
        }
    }
}
