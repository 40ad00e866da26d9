//! The HTML view's share of the rendered results: each service's result as markup beside its
//! JSON, written at build time (`crate::api::html::ResultFragment`), so that the HTML view
//! of a page of results copies its results' markup as the JSON copies their JSON.
//!
//! The rendered section holds `RENDERED_KINDS × services` parts: the v4 JSON of every
//! service, then the v3 JSON, then the fragment of each v4 result, then of each v3 one.

use super::{SearchIndex, ServiceNo};
use crate::api::query::ApiVersion;

/// Parts per service in the rendered section: v4 and v3 JSON, v4 and v3 fragments.
pub(super) const RENDERED_KINDS: usize = 4;

/// Part `k` of the rendered section `rendered` of an index of `services` services (empty
/// out of range).
pub(super) fn part(rendered: &[u8], services: usize, k: usize) -> &[u8] {
    let offset = |k: usize| -> usize {
        rendered
            .get(8 * k..8 * k + 8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map_or(0, |b| u64::from_le_bytes(b) as usize)
    };
    let text = 8 * (RENDERED_KINDS * services + 1);
    rendered.get(text + offset(k)..text + offset(k + 1)).unwrap_or(&[])
}

impl SearchIndex {
    /// The stored HTML fragment of service `ix` as a search result of `version`
    /// (`crate::api::html::ResultFragment`; empty for an index out of range).
    pub fn rendered_html(&self, version: ApiVersion, ix: ServiceNo) -> &[u8] {
        let kind = if version == ApiVersion::V3 { 3 } else { 2 };
        if ix as usize >= self.services {
            return &[];
        }
        part(self.rendered_section(), self.services, kind * self.services + ix as usize)
    }
}
