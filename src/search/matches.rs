//! The matches of one search (behaviour.md, Search 3–6) as a set, and the page of them a
//! search shows, in the order of Search 7: candidates from the text index's posting lists
//! or from the postcode's areas and the services near it, filtered by category and
//! location type, then ordered nearest first.

use crate::index::SearchIndex;
use crate::index::ServiceNo;
use crate::index::sets::{ServiceSet, ones_within};
use crate::index::spatial::{ServiceKey, UnitVector, chord2, radius_chord2, unit_vector};
use crate::index::text::field_weight_halves;
use crate::model::Point;
use crate::model::geo::EARTH_RADIUS_M;
use crate::search::params::{LocationType, SearchParams};

use super::deadline::{Deadline, TimedOut};
use super::page::{Hit, select_page};

/// Radius of the first circle a page is looked for in (in a city, a few dozen locations):
/// of 125, 250, 500, 1,000 and 2,000 m, 250 and 500 took the least time over `make
/// bench-search`'s queries at 100,000 services (a smaller first circle looks at fewer
/// locations in all, but scans more circles).
const FIRST_RADIUS_M: f64 = 500.0;
/// Locations looked at per located match before ordering the matches directly costs less:
/// a location looked at is a set lookup in a run of memory; a match ordered directly is its
/// distance over its locations (cache misses) and its share of a selection. Of 4, 8, 16 and
/// 32, 8 took the least time over the same queries.
const SCAN_PER_MATCH: usize = 8;

/// The matches of one request, as a set, with what ordering them needs.
pub(super) struct Matches {
    /// Every matching service.
    pub(super) set: ServiceSet,
    /// With `q`: the services every word matches, ascending, with their relevance.
    pub(super) text: Option<Vec<(ServiceNo, u32)>>,
    /// The postcode's point, and as a unit vector.
    pub(super) point: Point,
    pub(super) centre: UnitVector,
}

impl Matches {
    /// Search 1–6 as set operations.
    pub(super) fn find(
        index: &SearchIndex,
        params: &SearchParams<'_>,
        deadline: Deadline,
    ) -> Result<Matches, TimedOut> {
        let mut ticker = deadline.ticker();
        let dir = &index.directory;
        let services = index.service_count();
        let point = params.postcode.point;
        let centre = unit_vector(point);
        let radius = params.radius_m as f64;

        // Search 1–3: the postcode's area codes (already mapped through the aliases when the
        // directory was built) as service areas; then the area-less services with a location
        // within the radius.
        let mut set = ServiceSet::empty(services);
        for &area in params.postcode.areas {
            if let Some(members) = index.area_sets.get(area as usize) {
                set.union_with(members.words());
            }
        }
        index.radius.within(&index.location_points, point, radius, || ticker.tick(), &mut set)?;

        // Search 5: a category matches itself and everything below it.
        if !params.categories.is_empty() {
            let mut allowed = ServiceSet::empty(services);
            for &c in &params.categories {
                for node in dir.categories.subtree(c) {
                    if let Some(members) = index.category_sets.get(node as usize) {
                        allowed.union_with(members.words());
                    }
                }
            }
            set.intersect_with(allowed.words());
        }
        // Search 6.
        match params.location_type {
            None => {}
            Some(LocationType::National) => set.intersect_with(index.national_set.words()),
            Some(LocationType::Local) => set.subtract(index.national_set.words()),
        }
        // Search 4.
        let text = if params.words.is_empty() {
            None
        } else {
            // Only the services that match so far are looked up: the text matches are then
            // a subset of the set, and replace it.
            let text = text_matches(index, &params.words, &set, deadline)?;
            set = ServiceSet::of(services, text.iter().map(|&(ix, _)| ix));
            Some(text)
        };
        Ok(Matches { set, text, point, centre })
    }

    /// The relevance of a match, in half points.
    pub(super) fn relevance(&self, ix: ServiceNo) -> u32 {
        match &self.text {
            None => 0,
            Some(text) => text.binary_search_by_key(&ix, |&(s, _)| s).map_or(0, |n| text[n].1),
        }
    }

    pub(super) fn hit(&self, index: &SearchIndex, ix: ServiceNo) -> Hit {
        let key = index.service_key(ix);
        let distance_key = if key.locations == 1 {
            chord2(&self.centre, &key.unit)
        } else {
            // NaN-free: only located services get here; an empty list gives infinity.
            index.service_points.get(ix as usize).iter().map(|p| chord2(&self.centre, p)).fold(f64::INFINITY, f64::min)
        };
        self.hit_at(ix, key, distance_key)
    }

    /// The hit of `ix`, whose key is `key`, at the distance key given.
    fn hit_at(&self, ix: ServiceNo, key: ServiceKey, distance_key: f64) -> Hit {
        Hit { service: ix, distance_key, relevance_halves: self.relevance(ix), name_rank: key.name_rank }
    }

    /// The hits at positions `start..end` of the full order (Search 7), in order. Consumes
    /// the located members of the set.
    pub(super) fn page(
        &mut self,
        index: &SearchIndex,
        start: usize,
        end: usize,
        deadline: Deadline,
    ) -> Result<Vec<Hit>, TimedOut> {
        if start >= end {
            return Ok(Vec::new());
        }
        // Services with a location come first, then those without.
        let located = self.set.len_within(index.located_set.words());
        let unlocated_from = start.saturating_sub(located);
        let unlocated_to = end.saturating_sub(located);
        let unlocated = if unlocated_to > unlocated_from {
            self.unlocated(index, unlocated_from, unlocated_to)
        } else {
            Vec::new()
        };
        let mut hits = Vec::with_capacity(end - start);
        if start < located {
            let want = end.min(located);
            let mut first = match self.nearest_first(index, want, located, deadline)? {
                Some(first) => first,
                None => self.selected(index, start, want),
            };
            if first.len() > want - start {
                first.drain(..start);
            }
            hits.extend(first);
        }
        hits.extend(unlocated);
        Ok(hits)
    }

    /// The first `want` located matches in order, from circles of growing radius around the
    /// postcode: once a circle holds `want` of them, every match outside it is farther than
    /// each one inside, so the page is among those inside. `None` when the circles would
    /// look at more locations than ordering the matches directly costs (few or distant
    /// matches, deep pages), with the set left as it was.
    pub(super) fn nearest_first(
        &mut self,
        index: &SearchIndex,
        want: usize,
        located: usize,
        deadline: Deadline,
    ) -> Result<Option<Vec<Hit>>, TimedOut> {
        let budget = located.saturating_mul(SCAN_PER_MATCH);
        let whole_globe = std::f64::consts::PI * EARTH_RADIUS_M;
        let mut ticker = deadline.ticker();
        let mut hits: Vec<Hit> = Vec::with_capacity(want + 8);
        let mut near: Vec<(ServiceNo, f64)> = Vec::new();
        let mut scanned = 0usize;
        let mut radius = FIRST_RADIUS_M;
        loop {
            let runs = index.located.runs_near(self.point, radius);
            scanned += runs.iter().map(ExactSizeIterator::len).sum::<usize>();
            if scanned > budget {
                for hit in &hits {
                    self.set.insert(hit.service);
                }
                return Ok(None);
            }
            // Half the globe and more: every location, whatever the rounding of its chord.
            let max_chord2 = if radius < whole_globe { radius_chord2(radius) } else { f64::INFINITY };
            let set = &self.set;
            index.located.scan(
                &runs,
                &self.centre,
                max_chord2,
                || ticker.tick(),
                |ix| set.contains(ix),
                |ix, chord| near.push((ix, chord)),
            )?;
            // A service's key is the least chord over its locations, and its nearest location
            // is in the circle with any other it has there: the least found is its key, with
            // no second look at its locations (issue 24: those lookups were cache misses).
            near.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
            near.dedup_by_key(|&mut (ix, _)| ix);
            // Taken out of the set: a service is a hit once, and the next circle's scan
            // passes over it.
            for (ix, chord) in near.drain(..) {
                if self.set.remove(ix) {
                    hits.push(self.hit_at(ix, index.service_key(ix), chord));
                }
            }
            if hits.len() >= want || radius >= whole_globe {
                break;
            }
            // Wider by the area the matches found so far say the page needs, at least twice
            // and at most four times.
            let factor =
                if hits.is_empty() { 4.0 } else { (want as f64 / hits.len() as f64).sqrt() * 1.25 }.clamp(2.0, 4.0);
            radius = (radius * factor).min(whole_globe);
        }
        select_page(&mut hits, 0, want);
        Ok(Some(hits))
    }

    /// Located matches `start..want` in order, by a selection over all of them.
    pub(super) fn selected(&self, index: &SearchIndex, start: usize, want: usize) -> Vec<Hit> {
        let mut hits: Vec<Hit> =
            ones_within(self.set.words(), index.located_set.words()).map(|ix| self.hit(index, ix)).collect();
        select_page(&mut hits, start, want);
        hits
    }

    /// Matches without location at positions `from..to` among themselves: by relevance,
    /// then name and id.
    pub(super) fn unlocated(&self, index: &SearchIndex, from: usize, to: usize) -> Vec<Hit> {
        let hit = |ix: ServiceNo| Hit {
            service: ix,
            distance_key: f64::INFINITY,
            relevance_halves: self.relevance(ix),
            name_rank: index.service_key(ix).name_rank,
        };
        match &self.text {
            // Relevance is 0 for all: the precomputed name order, filtered.
            None => index
                .unlocated_by_name
                .iter()
                .copied()
                .filter(|&ix| self.set.contains(ix))
                .skip(from)
                .take(to - from)
                .map(hit)
                .collect(),
            Some(text) => {
                let mut hits: Vec<Hit> = text
                    .iter()
                    .map(|&(ix, _)| ix)
                    .filter(|&ix| self.set.contains(ix) && !index.located_set.contains(ix))
                    .map(hit)
                    .collect();
                select_page(&mut hits, from, to);
                hits
            }
        }
    }
}

/// Services of `among` in which every word matches, ascending, with their relevance in
/// half points.
pub(super) fn text_matches(
    index: &SearchIndex,
    words: &[String],
    among: &ServiceSet,
    deadline: Deadline,
) -> Result<Vec<(ServiceNo, u32)>, TimedOut> {
    let mut acc: Vec<(ServiceNo, u32)> = Vec::new();
    for (n, word) in words.iter().enumerate() {
        // A word's lookup scans the vocabulary near its length: checked once per word.
        deadline.check()?;
        let found = index.text.lookup_among(word, |ix| among.contains(ix));
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
