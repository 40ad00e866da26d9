//! The HTML view of a page of search results, copied rather than written: each result's
//! markup, and what the page's map reads of it, are written at build time and stored in the
//! search index beside its JSON ([`ResultFragment`]); a page's markup is then the
//! envelope's (walked as any page is), with its results' stored markup copied into its list
//! ([`ResultsMarkup`]). The bytes are those of the walk of the whole page.

use std::borrow::Cow;

use super::walk::{self, PageResult};

/// A result's share of its page's HTML view, as the index stores it: its markup
/// ([`walk::result_markup`]) and, when the walk finds them, its name and locations for the map.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ResultFragment<'a> {
    /// The result's markup (UTF-8, as written at build time).
    pub markup: &'a [u8],
    /// Its name and locations, None when the walk finds none it can read.
    pub result: Option<PageResult<'a>>,
}

/// The first word of a fragment without a result for the map (else: its number of locations).
const NO_RESULT: u32 = u32::MAX;

impl<'a> ResultFragment<'a> {
    /// The stored form of the fragment of a result's JSON text: the number of its locations
    /// (`u32`, [`NO_RESULT`] without a result), then the length of its name (`u32`), the name
    /// and each location's latitude and longitude (`f64` each), then the markup; all
    /// little-endian. Empty when the walk does not take the text.
    pub(crate) fn encode(json: &[u8]) -> Vec<u8> {
        let Some((markup, result)) = walk::result_markup(json) else { return Vec::new() };
        let mut out = Vec::with_capacity(markup.len() + 256);
        // (A count that does not fit below NO_RESULT leaves the result to the page's walk.)
        let counts = result.as_ref().and_then(|r| {
            let locations = u32::try_from(r.locations.len()).ok().filter(|&n| n != NO_RESULT)?;
            Some((locations, u32::try_from(r.name.len()).ok()?))
        });
        match (result, counts) {
            (Some(result), Some((locations, name))) => {
                out.extend_from_slice(&locations.to_le_bytes());
                out.extend_from_slice(&name.to_le_bytes());
                out.extend_from_slice(result.name.as_bytes());
                for (lat, lon) in result.locations {
                    out.extend_from_slice(&lat.to_le_bytes());
                    out.extend_from_slice(&lon.to_le_bytes());
                }
            }
            _ => out.extend_from_slice(&NO_RESULT.to_le_bytes()),
        }
        out.extend_from_slice(markup.as_bytes());
        out
    }

    /// Reads a stored fragment; None when it is not one (empty, or cut short).
    pub(crate) fn decode(bytes: &'a [u8]) -> Option<ResultFragment<'a>> {
        let (&count, rest) = bytes.split_first_chunk::<4>()?;
        let count = u32::from_le_bytes(count);
        if count == NO_RESULT {
            return Some(ResultFragment { markup: rest, result: None });
        }
        let (&name_len, rest) = rest.split_first_chunk::<4>()?;
        let (name, rest) = rest.split_at_checked(u32::from_le_bytes(name_len) as usize)?;
        let (points, markup) = rest.split_at_checked((count as usize).checked_mul(16)?)?;
        let f64_at = |bytes: &[u8]| f64::from_le_bytes(bytes.try_into().unwrap_or([0; 8]));
        let locations = points.chunks_exact(16).map(|p| (f64_at(&p[..8]), f64_at(&p[8..]))).collect();
        let name = Cow::Borrowed(std::str::from_utf8(name).ok()?);
        Some(ResultFragment { markup, result: Some(PageResult { name, locations }) })
    }
}

/// The markup of a page of results made of its envelope's markup, cut at its list
/// ([`walk::envelope_markup`]), and its results' stored markup.
#[derive(Debug, Clone)]
pub(crate) struct ResultsMarkup<'a> {
    before: String,
    items: Vec<&'a [u8]>,
    after: String,
}

impl<'a> ResultsMarkup<'a> {
    /// The page whose JSON, with its list of results left empty, is `envelope`, and whose
    /// results' markup is `items` ([`ResultFragment::markup`]), in order. None when the
    /// envelope has no such list, or `items` is empty (an empty list has markup of its own).
    pub(crate) fn of(envelope: &[u8], items: Vec<&'a [u8]>) -> Option<ResultsMarkup<'a>> {
        if items.is_empty() {
            return None;
        }
        let (before, after) = walk::envelope_markup(envelope)?;
        Some(ResultsMarkup { before, items, after })
    }

    /// Its length in bytes.
    pub(crate) fn len(&self) -> usize {
        let each = "\n<li></li>".len();
        self.before.len() + self.after.len() + self.items.iter().map(|item| item.len() + each).sum::<usize>()
    }

    /// Appends it to `out`.
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.before.as_bytes());
        for item in &self.items {
            out.extend_from_slice(b"\n<li>");
            out.extend_from_slice(item);
            out.extend_from_slice(b"</li>");
        }
        out.extend_from_slice(self.after.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page's markup made of its envelope's and its results' stored fragments is the walk's
    /// markup of the whole page, and the fragments give the walk's names and locations.
    #[test]
    fn a_page_copied_from_fragments_is_the_page_walked() {
        let results: [&[u8]; 3] = [
            br#"{"name":"A \"b\" <c>","url":"https://x.org/a?b=1&c","locations":[{"latitude":55.5,"longitude":-4.25,"name":"x"},{"longitude":-3,"latitude":56.000001}]}"#,
            br#"{"locations":[],"name":"C","more":{"name":"D","locations":[1]},"n":[1.5e300,-0,null,true]}"#,
            br#"{"name":"E","locations":[{"latitude":1}]}"#,
        ];
        for (list, meta) in [("data", r#""meta":{"licence":"https://l/","x":[]},"#), ("results", "")] {
            let envelope = format!(r#"{{{meta}"count":3,"next":"https://n/?page=2","previous":null,"{list}":[]}}"#);
            let page = format!(
                r#"{{{meta}"count":3,"next":"https://n/?page=2","previous":null,"{list}":[{}]}}"#,
                results.iter().map(|r| std::str::from_utf8(r).unwrap()).collect::<Vec<_>>().join(",")
            );
            let stored: Vec<Vec<u8>> = results.iter().map(|r| ResultFragment::encode(r)).collect();
            let fragments: Vec<ResultFragment<'_>> =
                stored.iter().map(|s| ResultFragment::decode(s).unwrap()).collect();
            let markup = ResultsMarkup::of(envelope.as_bytes(), fragments.iter().map(|f| f.markup).collect()).unwrap();
            let mut copied = Vec::new();
            markup.write(&mut copied);
            assert_eq!(copied.len(), markup.len());
            let (walked, _) = walk::page_html_from_json(page.as_bytes()).unwrap();
            assert_eq!(String::from_utf8(copied).unwrap(), walked, "{list}");
            // The third result's location has no longitude: the map reads nothing of it.
            let two: Vec<u8> = format!(
                r#"{{"{list}":[{},{}]}}"#,
                std::str::from_utf8(results[0]).unwrap(),
                std::str::from_utf8(results[1]).unwrap()
            )
            .into_bytes();
            let (_, read) = walk::page_html_from_json(&two).unwrap();
            let from_fragments: Vec<PageResult<'_>> =
                fragments[..2].iter().map(|f| f.result.clone().unwrap()).collect();
            assert_eq!(read.unwrap(), from_fragments);
            assert_eq!(fragments[2].result, None);
        }
    }

    #[test]
    fn what_is_no_fragment_or_no_envelope_is_refused() {
        assert_eq!(ResultFragment::encode(b"{\"a\":"), Vec::<u8>::new());
        assert_eq!(ResultFragment::decode(b""), None);
        let stored = ResultFragment::encode(br#"{"name":"A","locations":[{"latitude":1,"longitude":2}]}"#);
        // Counts, the name's length, the name and one location: a fragment cut within them is none.
        for cut in 0..4 + 4 + 1 + 16 {
            assert_eq!(ResultFragment::decode(&stored[..cut]), None, "{cut}");
        }
        let whole = ResultFragment::decode(&stored).unwrap();
        assert_eq!(whole.result, Some(PageResult { name: "A".into(), locations: vec![(1.0, 2.0)] }));
        assert!(whole.markup.starts_with(b"<dl>\n<dt>name</dt>"));
        assert!(ResultsMarkup::of(br#"{"data":[]}"#, vec![]).is_none(), "no results");
        assert!(ResultsMarkup::of(br#"{"data":[1]}"#, vec![b"x"]).is_none(), "the list is not empty");
        assert!(ResultsMarkup::of(br#"{"count":1}"#, vec![b"x"]).is_none(), "no list");
        assert!(ResultsMarkup::of(br#"{"data":[],"results":[]}"#, vec![b"x"]).is_none(), "two lists");
    }
}
