//! Query string → [`SearchParams`], or [`ParamErrors`] in the shape clients already parse
//! (behaviour.md, Errors).
//!
//! This module owns decoding the query (with a real `application/x-www-form-urlencoded`
//! decoder: `+` and `%20` are both a space), every parameter's rule and message, and the
//! query strings of the `next`/`previous` links. It does not search.
//!
//! Rules where behaviour.md is silent follow the Django REST framework service it
//! describes: a parameter given twice counts with its last value; an empty `q`, `category`,
//! `location_type` or `radius` counts as absent; an empty postcode as missing; an invalid,
//! zero or negative `page_size` falls back to 10 (DRF's `PageNumberPagination`); `radius`
//! accepts what DRF's `IntegerField` accepts (surrounding spaces, a sign, a trailing `.0`).

pub use crate::api::query::{ApiVersion, PageNumber, ParamErrors, RawQuery};
use crate::index::postcodes::PostcodeRef;
use crate::index::{SearchIndex, text};
use crate::model::CategoryIx;
use crate::model::geo::{PostcodeQuery, classify_postcode, normalise_postcode};

/// Default `radius`, metres (api-spec.md, Limits).
pub(crate) const DEFAULT_RADIUS_M: u64 = 5000;
/// Default `page_size`.
pub(crate) const DEFAULT_PAGE_SIZE: usize = 10;
/// Largest `page_size`; larger values are taken as this.
pub(crate) const MAX_PAGE_SIZE: usize = 100;

/// `location_type` (behaviour.md, Search 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocationType {
    /// No service area of kind Country or Region.
    Local,
    /// At least one service area of kind Country or Region.
    National,
}

/// A valid search request.
#[derive(Debug, Clone)]
pub struct SearchParams<'d> {
    /// The live postcode, district or sector searched around.
    pub postcode: PostcodeRef<'d>,
    /// Distinct words of `q` (see [`crate::index::text`]); empty when no `q`.
    pub words: Vec<String>,
    /// Categories given in `category`; a service matches when tagged with any of them or
    /// anything below them. Empty when no `category`.
    pub categories: Vec<CategoryIx>,
    /// `location_type`, if given.
    pub location_type: Option<LocationType>,
    /// `radius`, metres.
    pub radius_m: u64,
    /// `page`.
    pub page: PageNumber,
    /// `page_size`, 1 to `MAX_PAGE_SIZE`.
    pub page_size: usize,
}

/// Checks every parameter of a search request against the index's postcodes and
/// categories.
pub fn parse<'d>(
    query: &RawQuery,
    index: &'d SearchIndex,
    version: ApiVersion,
) -> Result<SearchParams<'d>, ParamErrors> {
    let dir = index.directory();
    let mut errors = ParamErrors::default();
    let non_empty = |name: &str| query.last(name).filter(|v| !v.trim().is_empty());

    let postcode = match non_empty("postcode") {
        None => {
            errors.add("postcode", "This field is required.".into());
            None
        }
        Some(raw) => {
            // A district or a sector is looked up in its own table, built with the index.
            let found = match classify_postcode(raw) {
                PostcodeQuery::Outcode(code) => index.outcodes().find_code(&code).ok_or(code),
                // Named as the directory would store it when it has the form of one, else as given.
                PostcodeQuery::Postcode => {
                    index.postcodes().find(raw).ok_or_else(|| normalise_postcode(raw).unwrap_or_else(|| raw.to_owned()))
                }
            };
            found.map_err(|shown| errors.add("postcode", format!("Object with postcode={shown} does not exist."))).ok()
        }
    };

    let mut categories = Vec::new();
    if let Some(value) = non_empty("category") {
        // Each slug once, however often given: the work stays linear in the query's length.
        let mut seen = std::collections::HashSet::new();
        let mut unknown = Vec::new();
        for slug in value.split(',').map(str::trim).filter(|s| !s.is_empty() && seen.insert(*s)) {
            match dir.categories.by_slug(slug) {
                Some(ix) => categories.push(ix),
                None => unknown.push(format!("Object with slug={slug} does not exist.")),
            }
        }
        if !unknown.is_empty() {
            errors.fields.push(("category", unknown));
        }
    }

    let location_type = match non_empty("location_type") {
        None => None,
        Some("local") => Some(LocationType::Local),
        Some("national") => Some(LocationType::National),
        Some(other) => {
            errors.add("location_type", format!("\"{other}\" is not a valid choice."));
            None
        }
    };

    let radius_m = match non_empty("radius").map(parse_integer) {
        None => DEFAULT_RADIUS_M,
        Some(Some(Integer { negative: false, magnitude })) => magnitude,
        Some(Some(Integer { negative: true, magnitude: 0 })) => 0,
        Some(Some(Integer { negative: true, .. })) => {
            errors.add("radius", "Ensure this value is greater than or equal to 0.".into());
            0
        }
        Some(None) => {
            errors.add("radius", "A valid integer is required.".into());
            0
        }
    };

    let page_size = match version {
        ApiVersion::V3 => DEFAULT_PAGE_SIZE,
        ApiVersion::V4 => match query.last("page_size").and_then(parse_integer) {
            Some(Integer { negative: false, magnitude }) if magnitude > 0 => {
                magnitude.min(MAX_PAGE_SIZE as u64) as usize
            }
            _ => DEFAULT_PAGE_SIZE,
        },
    };

    let page = PageNumber::from_query(query);

    match postcode {
        Some(postcode) if errors.is_empty() => Ok(SearchParams {
            postcode,
            words: query.last("q").map(text::query_words).unwrap_or_default(),
            categories,
            location_type,
            radius_m,
            page,
            page_size,
        }),
        _ => Err(errors),
    }
}

/// A whole number as DRF's `IntegerField` reads one; the magnitude saturates at `u64::MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Integer {
    negative: bool,
    magnitude: u64,
}

/// Surrounding white space, an optional sign, ASCII digits, and an optional `.` followed by
/// zeros (`"5000.0"` is 5000, `"5000.5"` is not a number).
fn parse_integer(text: &str) -> Option<Integer> {
    let mut s = text.trim();
    if let Some(dot) = s.find('.') {
        if !s[dot + 1..].bytes().all(|b| b == b'0') {
            return None;
        }
        s = &s[..dot];
    }
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let magnitude = digits.parse::<u64>().unwrap_or(u64::MAX);
    Some(Integer { negative, magnitude })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::category::CategoryInput;
    use crate::model::{CategoryTree, Directory, Point, Postcode, PostcodeDirectory};
    use crate::views::Publication;
    use proptest::prelude::*;

    /// The index of a directory with two top-level categories and one postcode.
    fn dir() -> SearchIndex {
        let leaf = |slug: &str| CategoryInput { id: None, name: slug.into(), slug: slug.into(), children: vec![] };
        let mut food = leaf("food-nutrition");
        food.children.push(leaf("foodbank"));
        let directory = Directory {
            organisations: vec![],
            services: vec![],
            locations: vec![],
            categories: CategoryTree::build(&[food, leaf("money")]),
            service_areas: vec![],
            postcodes: PostcodeDirectory {
                postcodes: vec![Postcode {
                    code: "G2 1AL".into(),
                    point: Point { lat: 55.86, lon: -4.25 },
                    areas: vec!["S12000046".into()],
                }],
            },
        };
        SearchIndex::build(&directory, &Publication::with_defaults("http://a.test".into(), "http://a.test".into()))
    }

    fn errors(query: &str) -> Vec<(&'static str, Vec<String>)> {
        let d = dir();
        match parse(&RawQuery::parse(query), &d, ApiVersion::V4) {
            Ok(_) => vec![],
            Err(e) => e.fields().to_vec(),
        }
    }

    fn ok(
        query: &str,
        version: ApiVersion,
    ) -> (Vec<String>, Vec<CategoryIx>, Option<LocationType>, u64, PageNumber, usize) {
        let d = dir();
        let p = parse(&RawQuery::parse(query), &d, version).expect("valid");
        assert_eq!(p.postcode.code, "G2 1AL");
        (p.words, p.categories, p.location_type, p.radius_m, p.page, p.page_size)
    }

    #[test]
    fn every_spelling_of_a_postcode() {
        for q in [
            "postcode=G2+1AL",
            "postcode=g2%201al",
            "postcode=g21al",
            "postcode=%20G2++1AL%20",
            "postcode=x&postcode=G21AL",
        ] {
            ok(q, ApiVersion::V4);
        }
    }

    #[test]
    fn districts_and_sectors() {
        let d = dir();
        for (query, code) in [
            ("postcode=g2", "G2"),
            ("postcode=G2+1", "G2 1"),
            ("postcode=%20g2%20%201%20", "G2 1"),
            ("postcode=G2&version=3", "G2"),
        ] {
            for version in [ApiVersion::V4, ApiVersion::V3] {
                let p = parse(&RawQuery::parse(query), &d, version).expect(query);
                // One postcode: its point and areas are the district's and the sector's.
                assert_eq!(
                    (p.postcode.code, p.postcode.point, p.postcode.areas),
                    (code, d.postcodes().get(0).unwrap().point, d.postcodes().get(0).unwrap().areas),
                    "{query}"
                );
            }
        }
        let unknown = |shown: &str| [("postcode", vec![format!("Object with postcode={shown} does not exist.")])];
        assert_eq!(errors("postcode=ab99+9"), unknown("AB99 9"));
        assert_eq!(errors("postcode=G3"), unknown("G3"));
        assert_eq!(errors("postcode=G2+2"), unknown("G2 2"));
        assert_eq!(errors("postcode=G1"), unknown("G1"), "G1 does not include G12 or G2");
        // Without the space, an outward code and a digit is looked up as a postcode.
        assert_eq!(errors("postcode=G21"), unknown("G21"));
        assert_eq!(errors("postcode=AB101"), unknown("AB 101"));
    }

    #[test]
    fn defaults() {
        assert_eq!(ok("postcode=G21AL", ApiVersion::V4), (vec![], vec![], None, 5000, PageNumber::Number(1), 10));
    }

    #[test]
    fn postcode_messages() {
        let required = vec![("postcode", vec!["This field is required.".to_string()])];
        assert_eq!(errors(""), required);
        assert_eq!(errors("postcode="), required);
        assert_eq!(errors("postcode=+"), required);
        assert_eq!(
            errors("postcode=xx11xx"),
            [("postcode", vec!["Object with postcode=XX1 1XX does not exist.".to_string()])]
        );
        assert_eq!(
            errors("postcode=nope!"),
            [("postcode", vec!["Object with postcode=nope! does not exist.".to_string()])]
        );
    }

    #[test]
    fn several_bad_parameters_in_one_object() {
        assert_eq!(
            errors("radius=-5&location_type=far&category=money,nope,nope,zzz"),
            [
                ("postcode", vec!["This field is required.".to_string()]),
                (
                    "category",
                    vec![
                        "Object with slug=nope does not exist.".to_string(),
                        "Object with slug=zzz does not exist.".to_string()
                    ]
                ),
                ("location_type", vec!["\"far\" is not a valid choice.".to_string()]),
                ("radius", vec!["Ensure this value is greater than or equal to 0.".to_string()]),
            ]
        );
        assert_eq!(errors("postcode=G21AL&radius=5km"), [("radius", vec!["A valid integer is required.".to_string()])]);
    }

    #[test]
    fn radius_like_drf() {
        for (given, metres) in [("0", 0), ("-0", 0), (" 250 ", 250), ("+7", 7), ("5000.0", 5000), ("12.", 12)] {
            assert_eq!(ok(&format!("postcode=G21AL&radius={given}"), ApiVersion::V4).3, metres, "{given}");
        }
        assert_eq!(ok("postcode=G21AL&radius=99999999999999999999999", ApiVersion::V4).3, u64::MAX);
        for bad in ["1.5", "abc", "1e3", "--1", "0x10"] {
            assert_eq!(errors(&format!("postcode=G21AL&radius={bad}")).len(), 1, "{bad}");
        }
    }

    #[test]
    fn paging_parameters() {
        let size = |q: &str, v| ok(&format!("postcode=G21AL&{q}"), v).5;
        assert_eq!(size("page_size=25", ApiVersion::V4), 25);
        assert_eq!(size("page_size=1000", ApiVersion::V4), 100);
        for fallback in ["0", "-3", "x", "", "2.5"] {
            assert_eq!(size(&format!("page_size={fallback}"), ApiVersion::V4), 10, "{fallback}");
        }
        assert_eq!(size("page_size=25", ApiVersion::V3), 10, "v3 has no page_size");
        let page = |q: &str| ok(&format!("postcode=G21AL&{q}"), ApiVersion::V4).4;
        assert_eq!(page("page=3"), PageNumber::Number(3));
        assert_eq!(page("page=last"), PageNumber::Last);
        assert_eq!(page("page=2&page=last"), PageNumber::Last, "the last value counts");
        for invalid in ["page=0", "page=-1", "page=two", "page=", "page=1.0", "page=LAST", "page=+last"] {
            assert_eq!(page(invalid), PageNumber::Invalid, "{invalid}");
        }
    }

    #[test]
    fn filters() {
        let (words, cats, lt, ..) =
            ok("postcode=G21AL&q=Food+banks%20food&category=foodbank,+money,&location_type=national", ApiVersion::V4);
        assert_eq!(words, ["food", "banks"]);
        assert_eq!(cats, [1, 2]);
        assert_eq!(lt, Some(LocationType::National));
        assert_eq!(ok("postcode=G21AL&location_type=", ApiVersion::V4).2, None);
        assert_eq!(errors("postcode=G21AL&location_type=Local").len(), 1);
    }

    #[test]
    fn links_sort_keys_as_the_described_service_does() {
        let q = RawQuery::parse("postcode=g2%201al&page=2&q=caf%C3%A9&format=json&category=a,b&q=x");
        assert_eq!(
            q.encode_with("page", Some(("page", "3"))),
            "category=a%2Cb&format=json&page=3&postcode=g2+1al&q=caf%C3%A9&q=x"
        );
        assert_eq!(q.encode_with("page", None), "category=a%2Cb&format=json&postcode=g2+1al&q=caf%C3%A9&q=x");
    }

    proptest! {
        #[test]
        fn any_query_string_gives_params_or_errors(query in "\\PC{0,80}", version in prop_oneof![Just(ApiVersion::V3), Just(ApiVersion::V4)]) {
            let d = dir();
            match parse(&RawQuery::parse(&query), &d, version) {
                Ok(p) => prop_assert!((1..=MAX_PAGE_SIZE).contains(&p.page_size)),
                Err(e) => prop_assert!(!e.is_empty()),
            }
        }

        #[test]
        fn structured_queries_never_panic(
            postcode in "[ a-zA-Z0-9+%]{0,10}",
            radius in "[-+ .0-9a-z]{0,8}",
            page in "[-0-9a-z]{0,4}",
            page_size in "[-0-9]{0,5}",
            category in "[a-z,-]{0,20}",
        ) {
            let query = format!("postcode={postcode}&radius={radius}&page={page}&page_size={page_size}&category={category}");
            let d = dir();
            let _ = parse(&RawQuery::parse(&query), &d, ApiVersion::V4);
        }
    }
}
