//! One search, as a pure function: candidates → filter → rank → page (behaviour.md,
//! Search 3–8). No HTTP here: the server turns the page into a response.
//!
//! Candidates are the services of the postcode's service areas (a union of sets) plus the
//! services without areas found by radius in the grid of their locations; `category`,
//! `location_type` and then `q` narrow them.
//!
//! Relevance (Search 4) is, summed over the distinct words of `q`, the weights of the fields
//! of the service that the word matches in: name 2, description 1.5, category name 1 (so
//! one word scores 0 to 4.5). It is kept in half points, as an exact integer.
//!
//! A search never waits, so a time limit cannot be put on it from outside without moving it
//! off the request workers (which cost 28% of the throughput). Instead it looks at its
//! [`Deadline`] as it goes, once every `CHECK_EVERY` candidates and before each costly
//! step, and gives up with [`SearchError::TimedOut`].

use super::deadline::{Deadline, TimedOut};
use super::matches::Matches;
use super::page::{InvalidPage, ResultPage, page_bounds};
use crate::index::SearchIndex;
use crate::search::params::{PageNumber, SearchParams};

/// Why a search has no page to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    /// See [`InvalidPage`].
    #[error(transparent)]
    InvalidPage(#[from] InvalidPage),
    /// See `TimedOut`.
    #[error(transparent)]
    TimedOut(#[from] TimedOut),
}

/// A search's failure as the contract's error: its status and body are `api`'s.
impl From<SearchError> for crate::api::ApiError {
    fn from(error: SearchError) -> crate::api::ApiError {
        match error {
            SearchError::InvalidPage(_) => crate::api::ApiError::InvalidPage,
            SearchError::TimedOut(_) => crate::api::ApiError::TimedOut,
        }
    }
}

/// Runs a search and cuts out the requested page, giving up once `deadline` has passed.
///
/// The cost follows the page asked for, not the number of matches (issue 12): the matches
/// are a set (a union of the postcode's area sets and the services found by radius, then
/// intersected with the category, `location_type` and `q` sets), so `count` is a
/// population count and a page past the end is known before anything is ordered; the page
/// is then taken from circles of growing radius around the postcode, until one holds it,
/// or, when the circles would look at more locations than ordering the matches themselves
/// costs, from a selection over them that orders only the page.
pub fn run(index: &SearchIndex, params: &SearchParams<'_>, deadline: Deadline) -> Result<ResultPage, SearchError> {
    if params.page == PageNumber::Invalid {
        return Err(InvalidPage.into());
    }
    let mut found = Matches::find(index, params, deadline)?;
    let count = found.set.len();
    let page = params.page.resolve(count, params.page_size).ok_or(InvalidPage)?;
    let (start, end) = page_bounds(page, params.page_size, count)?;
    deadline.check()?;
    let hits = found.page(index, start, end, deadline)?;
    Ok(ResultPage { count, page, hits, has_next: end < count, has_previous: page > 1 })
}
