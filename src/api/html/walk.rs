//! The body's markup written as its JSON text is read, without building a tree: what the
//! search's pages are shown with (parsing them into a tree cost more than the search
//! itself), with what a page's map needs read in the same walk.

use std::borrow::Cow;

use super::tree::{EMPTY_ARRAY, EMPTY_OBJECT, NULL, push_escaped, write_code, write_string, write_value};

/// [`super::body_html`] of JSON text, written as the text is read: the same markup, without the
/// tree.
///
/// A search page's markup is most of its HTML view's cost, so the text is read by
/// a walk over the bytes that copies each plain string as it stands in the text
/// (strings with JSON escapes and all numbers are read by serde_json); text that walk does
/// not take is read by serde_json, which then also says what is wrong with it.
pub(crate) fn body_html_from_json(json: &[u8]) -> Result<String, serde_json::Error> {
    Ok(page_html_from_json(json)?.0)
}

/// A result of a page of results as its map reads it: its name, and the latitude and
/// longitude of each of its locations, in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PageResult<'t> {
    /// `name`.
    pub name: Cow<'t, str>,
    /// `(latitude, longitude)` of each of `locations`.
    pub locations: Vec<(f64, f64)>,
}

/// [`body_html_from_json`] of a page of results, with what its map needs, read in the same
/// walk: the name and locations of each result of its `data` (v4) or `results` (v3) list.
/// None for the results when the text has no such list or a result lacks its `name` or a
/// location its `latitude` or `longitude` as a number (the caller then reads them itself).
pub(crate) fn page_html_from_json(json: &[u8]) -> Result<(String, Option<Vec<PageResult<'_>>>), serde_json::Error> {
    let mut out = String::with_capacity(json.len() * 3);
    if let Ok(text) = std::str::from_utf8(json) {
        let mut walk = Markup::new(text, &mut out);
        if walk.document().is_some() {
            let results = walk.page.results();
            return Ok((out, results));
        }
    }
    out.clear();
    body_html_by_serde(json, &mut out)?;
    Ok((out, None))
}

/// The markup of a page of results whose results' markup is written elsewhere: `json` is
/// its JSON with the top's `data` (v4) or `results` (v3) list empty, and the markup is cut
/// at that list, between its `<ol>` and `</ol>`: `(before, after)`. The markup of the whole
/// page is then `before`, each result's [`result_markup`] between `\n<li>` and `</li>`, and
/// `after`. None when the text is not JSON of that shape.
pub(super) fn envelope_markup(json: &[u8]) -> Option<(String, String)> {
    let text = std::str::from_utf8(json).ok()?;
    let mut out = String::with_capacity(json.len() * 3);
    let mut walk = Markup::new(text, &mut out);
    walk.cut_list = true;
    walk.document()?;
    let at = walk.cut_at?;
    let after = out[at..].to_owned();
    out.truncate(at);
    Some((out, after))
}

/// The markup of one result of a page of results (the JSON text of an item of its `data` or
/// `results` list), as the walk of the whole page writes it between `\n<li>` and `</li>`,
/// with its name and locations as that walk reads them for the map (None where it finds
/// none). None when the text is not JSON the walk takes.
pub(super) fn result_markup(json: &[u8]) -> Option<(String, Option<PageResult<'_>>)> {
    let text = std::str::from_utf8(json).ok()?;
    let mut out = String::with_capacity(json.len() * 3);
    let mut walk = Markup::new(text, &mut out);
    // Where the walk of a page reads a result: an item of the top's list.
    walk.keys[0] = "data";
    walk.page.listed = true;
    walk.value(2)?;
    walk.skip_space();
    (walk.at == text.len()).then_some(())?;
    let result = walk.page.results().and_then(|mut results| results.pop().filter(|_| results.is_empty()));
    Some((out, result))
}

/// [`body_html_from_json`] of text the walk does not take: through serde_json's tree (it
/// says what is wrong with text that is not JSON).
fn body_html_by_serde(json: &[u8], out: &mut String) -> Result<(), serde_json::Error> {
    let tree: serde_json::Value = serde_json::from_slice(json)?;
    write_value(out, &tree);
    Ok(())
}

/// Nesting at which [`Markup`] leaves the text to serde_json (which refuses deeper text).
const MARKUP_MAX_DEPTH: usize = 100;

/// The markup of JSON text, written as the text is walked ([`write_value`]'s markup, case
/// for case). It reads the structure (brackets, commas, colons, `true`, `false`, `null`) and
/// finds where each string and number ends; a string without escapes is the text between
/// its quotes, any other string and every number is decoded by serde_json, so that each
/// value is the one serde_json reads. None when the text is not JSON, or nested deeper than
/// [`MARKUP_MAX_DEPTH`]: the caller then reads it with serde_json.
struct Markup<'t, 'o> {
    text: &'t str,
    at: usize,
    out: &'o mut String,
    /// The key of the value being read in the object at each depth (the first five).
    keys: [&'t str; 5],
    /// What the map needs, read on the way.
    page: Page<'t>,
    /// Whether the top's `data` or `results` list is to be left open for results written
    /// elsewhere ([`envelope_markup`]): the text has it empty, and its `<ol>` and `</ol>` are
    /// written with nothing between them, at `cut_at`.
    cut_list: bool,
    cut_at: Option<usize>,
}

/// The results of a page as [`Markup`] reads them: `(name, locations)` with each location's
/// `(latitude, longitude)` as read, None where the text has none.
#[derive(Debug, Default)]
struct Page<'t> {
    /// Whether a `data` or `results` list was read at the top.
    listed: bool,
    #[allow(clippy::type_complexity)]
    results: Vec<(Option<Cow<'t, str>>, Option<Vec<(Option<f64>, Option<f64>)>>)>,
}

impl<'t> Page<'t> {
    fn results(self) -> Option<Vec<PageResult<'t>>> {
        if !self.listed {
            return None;
        }
        self.results
            .into_iter()
            .map(|(name, locations)| {
                let locations =
                    locations?.into_iter().map(|(lat, lon)| Some((lat?, lon?))).collect::<Option<Vec<_>>>()?;
                Some(PageResult { name: name?, locations })
            })
            .collect()
    }
}

impl<'t, 'o> Markup<'t, 'o> {
    fn new(text: &'t str, out: &'o mut String) -> Self {
        Markup { text, at: 0, out, keys: [""; 5], page: Page::default(), cut_list: false, cut_at: None }
    }

    fn document(&mut self) -> Option<()> {
        self.value(0)?;
        self.skip_space();
        (self.at == self.text.len()).then_some(())
    }

    fn skip_space(&mut self) {
        let bytes = self.text.as_bytes();
        while matches!(bytes.get(self.at), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.at += 1;
        }
    }

    /// The next byte after white space, consumed.
    fn next_byte(&mut self) -> Option<u8> {
        self.skip_space();
        let byte = *self.text.as_bytes().get(self.at)?;
        self.at += 1;
        Some(byte)
    }

    fn value(&mut self, depth: usize) -> Option<()> {
        if depth > MARKUP_MAX_DEPTH {
            return None;
        }
        let listed = self.in_list();
        // Each result and each of its locations starts an entry; one that is no object stays
        // without its fields, so the page's results are then None.
        if listed && depth == 2 {
            self.page.results.push((None, None));
        } else if listed && depth == 4 && self.keys[2] == "locations" {
            self.location_list()?.push((None, None));
        }
        match self.next_byte()? {
            b'{' => self.object(depth),
            b'[' => {
                if depth == 1 && self.in_list() {
                    self.page.listed = true;
                } else if listed && depth == 3 && self.keys[2] == "locations" {
                    self.page.results.last_mut()?.1 = Some(Vec::new());
                }
                self.array(depth)
            }
            b'"' => {
                let text = self.string()?;
                write_string(self.out, &text);
                if listed && depth == 3 && self.keys[2] == "name" {
                    self.page.results.last_mut()?.0 = Some(text);
                }
                Some(())
            }
            b't' => self.literal("rue", "true"),
            b'f' => self.literal("alse", "false"),
            b'n' => {
                self.expect("ull")?;
                self.out.push_str(NULL);
                Some(())
            }
            b'-' | b'0'..=b'9' => {
                let number = self.number()?;
                if listed && depth == 5 && self.keys[2] == "locations" {
                    let coordinate = match self.keys[4] {
                        "latitude" => Some(0),
                        "longitude" => Some(1),
                        _ => None,
                    };
                    if let Some(which) = coordinate {
                        // As serde_json reads an f64 (which is not always std's reading).
                        let value = serde_json::from_str::<f64>(number).ok()?;
                        let location = self.location_list()?.last_mut()?;
                        *(if which == 0 { &mut location.0 } else { &mut location.1 }) = Some(value);
                    }
                }
                Some(())
            }
            _ => None,
        }
    }

    /// Whether the value being read is within the top's `data` or `results` list.
    fn in_list(&self) -> bool {
        matches!(self.keys[0], "data" | "results")
    }

    /// The locations of the result being read.
    fn location_list(&mut self) -> Option<&mut Vec<(Option<f64>, Option<f64>)>> {
        self.page.results.last_mut()?.1.as_mut()
    }

    fn expect(&mut self, rest: &str) -> Option<()> {
        let end = self.at + rest.len();
        (self.text.get(self.at..end)? == rest).then(|| self.at = end)
    }

    fn literal(&mut self, rest: &str, text: &str) -> Option<()> {
        self.expect(rest)?;
        write_code(self.out, text);
        Some(())
    }

    /// Just after an opening bracket: whether the container is empty (`close` comes next),
    /// and if so writes `markup` for it and reads the `close`.
    fn empty(&mut self, close: u8, markup: &str) -> bool {
        self.skip_space();
        let empty = self.text.as_bytes().get(self.at) == Some(&close);
        if empty {
            self.at += 1;
            self.out.push_str(markup);
        }
        empty
    }

    /// After a member: `,` (another follows, `true`) or `close` (the end, `false`).
    fn more(&mut self, close: u8) -> Option<bool> {
        match self.next_byte()? {
            b',' => Some(true),
            byte if byte == close => Some(false),
            _ => None,
        }
    }

    fn object(&mut self, depth: usize) -> Option<()> {
        if self.empty(b'}', EMPTY_OBJECT) {
            return Some(());
        }
        self.out.push_str("<dl>");
        loop {
            if self.next_byte()? != b'"' {
                return None;
            }
            let key = self.string()?;
            if let Some(slot) = self.keys.get_mut(depth) {
                // A key with escapes is none of those the map reads.
                *slot = match &key {
                    Cow::Borrowed(key) => key,
                    Cow::Owned(_) => "\\",
                };
            }
            self.out.push_str("\n<dt>");
            push_escaped(self.out, &key);
            if self.next_byte()? != b':' {
                return None;
            }
            self.out.push_str("</dt><dd>");
            self.value(depth + 1)?;
            self.out.push_str("</dd>");
            if !self.more(b'}')? {
                break;
            }
        }
        self.out.push_str("\n</dl>");
        Some(())
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        if self.cut_list && depth == 1 && self.in_list() {
            // The envelope's list: empty in the text, its results' markup put in at `cut_at`.
            if self.next_byte()? != b']' || self.cut_at.is_some() {
                return None;
            }
            self.out.push_str("<ol>");
            self.cut_at = Some(self.out.len());
            self.out.push_str("\n</ol>");
            return Some(());
        }
        if self.empty(b']', EMPTY_ARRAY) {
            return Some(());
        }
        self.out.push_str("<ol>");
        loop {
            self.out.push_str("\n<li>");
            self.value(depth + 1)?;
            self.out.push_str("</li>");
            if !self.more(b']')? {
                break;
            }
        }
        self.out.push_str("\n</ol>");
        Some(())
    }

    /// The string whose opening quote was just read: the text itself when it has no escape
    /// (nor a control character, which JSON does not allow in a string), else serde_json's
    /// reading of it.
    fn string(&mut self) -> Option<Cow<'t, str>> {
        let bytes = self.text.as_bytes();
        let start = self.at;
        let end = start + memchr::memchr2(b'"', b'\\', &bytes[start..])?;
        let plain = &self.text[start..end];
        // (A fold, not `any`: it runs without a branch per byte.)
        if bytes[end] == b'"' && !plain.bytes().fold(false, |control, b| control | (b < 0x20)) {
            self.at = end + 1;
            return Some(Cow::Borrowed(plain));
        }
        // The end of a string with escapes: the first quote no backslash escapes (the four
        // hex digits of a `\u` escape are neither).
        let mut at = end;
        while bytes[at] == b'\\' {
            at += 2;
            at += memchr::memchr2(b'"', b'\\', bytes.get(at..)?)?;
        }
        self.at = at + 1;
        serde_json::from_str::<String>(&self.text[start - 1..=at]).ok().map(Cow::Owned)
    }

    /// Writes a number's markup; gives its text.
    fn number(&mut self) -> Option<&'t str> {
        let bytes = self.text.as_bytes();
        let start = self.at - 1;
        let mut end = self.at;
        while matches!(bytes.get(end), Some(b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-')) {
            end += 1;
        }
        self.at = end;
        let text = &self.text[start..end];
        // As serde_json reads it (u64, i64 or f64) and writes it back.
        let number: serde_json::Number = serde_json::from_str(text).ok()?;
        write_code(self.out, &number.to_string());
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::html::body_html;

    #[test]
    fn json_text_gives_the_markup_of_its_tree() {
        let body = serde_json::json!({
            "a": {}, "b": [], "c": [{"x": null, "y": ""}, 1, -2, 2.5, 1e300, true, "http://x/?a<b", "t<e>xt"],
            "k<ey>": {"nested": {"deep": [[], {}]}}, "u": 18446744073709551615u64
        });
        let json = serde_json::to_vec(&body).unwrap();
        assert_eq!(body_html_from_json(&json).unwrap(), body_html(&body));
        assert!(body_html_from_json(b"{\"a\": [1,").is_err());
        assert!(body_html_from_json(b"{} x").is_err());
    }

    /// The walk gives serde_json's reading, markup for markup, on text of every shape: white
    /// space, escapes, numbers at their limits; and leaves bad text to serde_json.
    #[test]
    fn the_walk_reads_as_serde_json_reads() {
        let cases: &[&[u8]] = &[
            b" { \"a\" : [ 1 , -0 , -0.0 , 1E2 , 1.5e-7 , 18446744073709551616 , -9223372036854775809 ] } ",
            br#"{"t":"a\"b\\c\/d\u00e9\ud83d\ude00\n\r\t","u":"http:\/\/x","e":"","k\"":"<'&>"}"#,
            br#"["\\","\\\"",true,false,null,{},[],[[[]]],"\u0000"]"#,
            "\"é ü ✓\"".as_bytes(),
            b"12",
        ];
        for &json in cases {
            let mut by_serde = String::new();
            body_html_by_serde(json, &mut by_serde).unwrap();
            let mut walked = String::new();
            let text = std::str::from_utf8(json).unwrap();
            let mut walk = Markup::new(text, &mut walked);
            assert!(walk.document().is_some(), "{text}");
            assert_eq!(walked, by_serde, "{text}");
        }
        let bad: &[&[u8]] = &[
            b"{\"a\" 1}",
            b"[1 2]",
            b"[1,]",
            b"{\"a\":1,}",
            br#""a\u12""#,
            br#""a\x""#,
            b"\"tab\there\"",
            b"01",
            b"1-2",
            b"tru",
            b"[",
            b"\"",
            b"\"\\",
            b"nul",
            b"{\"a\":1}}",
            b"\xff",
        ];
        for &json in bad {
            let text = String::from_utf8_lossy(json);
            assert!(body_html_from_json(json).is_err(), "{text}");
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(body_html_from_json(deep.as_bytes()).is_err(), "serde_json's own limit");
        let deep_ok = format!("{}{}", "[".repeat(60), "]".repeat(60));
        let mut by_serde = String::new();
        body_html_by_serde(deep_ok.as_bytes(), &mut by_serde).unwrap();
        assert_eq!(body_html_from_json(deep_ok.as_bytes()).unwrap(), by_serde);
    }

    /// The walk reads each result's name and locations as the map's typed records would.
    #[test]
    fn a_page_of_results_gives_its_names_and_locations() {
        let page = br#"{"meta":{"x":[{"name":"no","locations":[]}]},"count":2,"data":[{"name":"A \"b\"","locations":[{"latitude":55.5,"longitude":-4.25,"name":"x"},{"longitude":-3,"latitude":56}]},{"locations":[],"name":"C","more":{"name":"D"}}]}"#;
        let (markup, results) = page_html_from_json(page).unwrap();
        let tree: serde_json::Value = serde_json::from_slice(page).unwrap();
        assert_eq!(markup, body_html(&tree));
        let expected = vec![
            PageResult { name: "A \"b\"".into(), locations: vec![(55.5, -4.25), (56.0, -3.0)] },
            PageResult { name: "C".into(), locations: vec![] },
        ];
        assert_eq!(results, Some(expected));
        let v3 = br#"{"count":1,"next":null,"previous":null,"results":[{"name":"E","locations":[{"latitude":1e0,"longitude":2}]}]}"#;
        let (_, results) = page_html_from_json(v3).unwrap();
        assert_eq!(results, Some(vec![PageResult { name: "E".into(), locations: vec![(1.0, 2.0)] }]));
        // Whatever the map's records would refuse leaves the results to the caller.
        for page in [
            &br#"{"data":[{"locations":[]}]}"#[..],
            br#"{"data":[{"name":"A"}]}"#,
            br#"{"data":[{"name":"A","locations":[{"latitude":1}]}]}"#,
            br#"{"data":[{"name":"A","locations":[{"latitude":null,"longitude":2}]}]}"#,
            br#"{"data":[{"name":"A","locations":[[1,2]]}]}"#,
            br#"{"data":[["A"]]}"#,
            br#"{"data":{"name":"A","locations":[]}}"#,
            br#"{"count":0}"#,
        ] {
            let (markup, results) = page_html_from_json(page).unwrap();
            assert_eq!(results, None, "{}", String::from_utf8_lossy(page));
            assert_eq!(markup, body_html(&serde_json::from_slice(page).unwrap()));
        }
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<u64>().prop_map(serde_json::Value::from),
            any::<f64>().prop_map(serde_json::Value::from),
            any::<String>().prop_map(serde_json::Value::String),
            "(https?://)?[<>&\"'/\\\u{0}-\u{1f}a-z é]{0,12}".prop_map(serde_json::Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
                prop::collection::vec(("[a-z<&\"\\/]{0,6}", inner), 0..6)
                    .prop_map(|entries| serde_json::Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Any JSON, compact or pretty: the walk's markup is the tree's.
        #[test]
        fn any_json_gives_the_markup_of_its_tree(value in json_value()) {
            let tree = body_html(&value);
            let compact = serde_json::to_vec(&value).unwrap();
            proptest::prop_assert_eq!(&body_html_from_json(&compact).unwrap(), &tree);
            let pretty = serde_json::to_vec_pretty(&value).unwrap();
            proptest::prop_assert_eq!(&body_html_from_json(&pretty).unwrap(), &tree);
        }
    }
}
