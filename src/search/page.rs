//! The order of the results and the cutting of one page out of them (behaviour.md, Search
//! 7–8): what a search does once it has its matches.

use crate::index::ServiceNo;

/// A page past the end, page 0, or a page that is not a number (behaviour.md, Errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the page asked for does not exist")]
pub struct InvalidPage;

/// One matching service and its sort keys.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The service.
    pub service: ServiceNo,
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

/// Positions `start..end` of page `page` of `size` (at least 1) among `count` matches.
/// Page 1 always exists, even when empty (Django's allow_empty_first_page); a later page
/// past the end does not.
pub(super) fn page_bounds(page: u64, size: usize, count: usize) -> Result<(usize, usize), InvalidPage> {
    let size = size.max(1);
    let start = page
        .checked_sub(1)
        .and_then(|p| usize::try_from(p).ok())
        .and_then(|p| p.checked_mul(size))
        .ok_or(InvalidPage)?;
    if page > 1 && start >= count {
        return Err(InvalidPage);
    }
    Ok((start, start.saturating_add(size).min(count)))
}

/// Leaves in `hits` only the hits at positions `start..end` of the full order, in order,
/// without ordering the rest: two selections (linear) and a sort of the page.
pub(super) fn select_page(hits: &mut Vec<Hit>, start: usize, end: usize) {
    if end == 0 || start >= end {
        hits.clear();
        return;
    }
    if end < hits.len() {
        hits.select_nth_unstable_by(end - 1, compare);
        hits.truncate(end);
    }
    if start > 0 {
        hits.select_nth_unstable_by(start, compare);
        hits.drain(..start);
    }
    hits.sort_unstable_by(compare);
}

/// Search 7: nearest location first, services without location last; then relevance
/// (descending), name, id.
pub(crate) fn compare(a: &Hit, b: &Hit) -> std::cmp::Ordering {
    a.distance_key
        .total_cmp(&b.distance_key)
        .then_with(|| b.relevance_halves.cmp(&a.relevance_halves))
        .then_with(|| a.name_rank.cmp(&b.name_rank))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Orders just enough of `hits` to cut out page `page` of `size` (Search 7–8), with
    /// [`page_bounds`] and [`select_page`] as a search does with every match in hand.
    fn cut_page(mut hits: Vec<Hit>, page: u64, size: usize) -> Result<ResultPage, InvalidPage> {
        let count = hits.len();
        let (start, end) = page_bounds(page, size, count)?;
        select_page(&mut hits, start, end);
        Ok(ResultPage { count, page, hits, has_next: end < count, has_previous: page > 1 })
    }

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
