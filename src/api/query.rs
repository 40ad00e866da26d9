//! The contract's query types: the decoded query string, the API version a search path
//! speaks, the page rule shared by the search and every paged list, and the 400 body of bad
//! parameters (behaviour.md, Search 8 and Errors). Leaf types: they depend on nothing above.

use serde::ser::{Serialize, SerializeMap, Serializer};

/// The decoded query string: its `(name, value)` pairs in the order the client sent them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawQuery {
    pairs: Vec<(String, String)>,
}

impl RawQuery {
    /// Decodes a query string (without the `?`).
    pub fn parse(query: &str) -> RawQuery {
        RawQuery { pairs: form_urlencoded::parse(query.as_bytes()).into_owned().collect() }
    }

    /// Every pair, in order.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }

    /// The last value given for `name`.
    pub fn last(&self, name: &str) -> Option<&str> {
        self.pairs.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// The query string of every pair except those named `drop`, with `append` set; keys in
    /// sorted order and a key's values in the order sent, form-encoded (a space is `+`).
    /// This is how the described service (Django REST framework's `replace_query_param`
    /// and `remove_query_param`) writes `next` and `previous`, so clients that compare
    /// links see the same strings.
    pub fn encode_with(&self, drop: &str, append: Option<(&str, &str)>) -> String {
        let mut out = String::new();
        self.append_encoded(&mut out, drop, append);
        out
    }

    /// [`RawQuery::encode_with`] written at the end of `out`; whether it wrote anything.
    /// The `next` and `previous` links of every search answer are built this way, in one
    /// string with their base URL (issue 24: a map and a vector per key, and the query
    /// copied again into the URL, were a twentieth of a search's instructions).
    pub fn append_encoded(&self, out: &mut String, drop: &str, append: Option<(&str, &str)>) -> bool {
        let replaced = append.map(|(k, _)| k);
        let mut pairs: Vec<(&str, &str)> = self
            .pairs
            .iter()
            .filter(|(k, _)| k != drop && Some(k.as_str()) != replaced)
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .chain(append)
            .collect();
        // Stable: a key's values stay in the order sent.
        pairs.sort_by(|x, y| x.0.cmp(y.0));
        let start = out.len();
        let mut serializer = form_urlencoded::Serializer::for_suffix(out, start);
        serializer.extend_pairs(&pairs);
        serializer.finish();
        !pairs.is_empty()
    }
}

/// Which API version asks: v3 has no `page_size` (api-spec.md, v3 endpoints).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiVersion {
    /// `/api/v3/search/`.
    V3,
    /// `/api/v4/services/`.
    V4,
}

/// The requested page, checked against the result count only after the search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageNumber {
    /// A positive page number.
    Number(u64),
    /// `page=last`: the last page, page 1 of an empty result (behaviour.md, Search 8).
    Last,
    /// Zero, negative or not a number: always the invalid-page 404 (behaviour.md, Errors).
    Invalid,
}

impl PageNumber {
    /// The word that names the last page, as Django REST framework's `last_page_strings`.
    pub const LAST: &'static str = "last";

    /// The page rule shared by the search and the import (behaviour.md, Search 8 and
    /// "Import and lists"): the last `page` value of the query; none is page 1; `last`
    /// exactly is the last page; a whole number from 1, white space around it allowed, is
    /// that page; anything else is invalid.
    pub(crate) fn from_query(query: &RawQuery) -> PageNumber {
        match query.last("page") {
            None => PageNumber::Number(1),
            Some(Self::LAST) => PageNumber::Last,
            Some(value) => match value.trim().parse::<u64>() {
                Ok(n) if n >= 1 => PageNumber::Number(n),
                _ => PageNumber::Invalid,
            },
        }
    }

    /// The page number once the result's size is known: `Last` is the last page of `count`
    /// results in pages of `page_size` (1 when there are none); `None` when invalid.
    pub fn resolve(self, count: usize, page_size: usize) -> Option<u64> {
        match self {
            PageNumber::Number(n) => Some(n),
            PageNumber::Last => Some(count.div_ceil(page_size.max(1)).max(1) as u64),
            PageNumber::Invalid => None,
        }
    }
}

/// Invalid parameters: each bad parameter with its messages, in a fixed order (postcode,
/// category, location_type, radius). Serialises as the 400 body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParamErrors {
    pub(crate) fields: Vec<(&'static str, Vec<String>)>,
}

impl ParamErrors {
    pub(crate) fn add(&mut self, field: &'static str, message: String) {
        match self.fields.iter_mut().find(|(f, _)| *f == field) {
            Some((_, messages)) => {
                if !messages.contains(&message) {
                    messages.push(message);
                }
            }
            None => self.fields.push((field, vec![message])),
        }
    }

    /// Whether every parameter is valid.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The bad parameters and their messages.
    pub fn fields(&self) -> &[(&'static str, Vec<String>)] {
        &self.fields
    }
}

impl Serialize for ParamErrors {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.fields.len()))?;
        for (field, messages) in &self.fields {
            map.serialize_entry(field, messages)?;
        }
        map.end()
    }
}
