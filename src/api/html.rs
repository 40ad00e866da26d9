//! The HTML view of any response: the request, the response headers and the body shown
//! readably (objects as definition lists, lists as lists, URLs as links, paging links).
//!
//! One template (`templates/page.html`, embedded in the binary) serves every endpoint,
//! static or searched; minijinja's auto-escaping escapes every value it shows. The body,
//! a JSON tree of any shape, is turned into markup here in Rust: a recursive template macro
//! cost most of a build's time, and this walk escapes each string with the same
//! `v_htmlescape` routine minijinja itself uses.

use std::sync::OnceLock;

use minijinja::{Environment, context};

/// Everything the HTML view of one response shows.
#[derive(Debug, Clone)]
pub(crate) struct HtmlView<'a> {
    /// Page title, e.g. "Service search" or a service's name.
    pub title: String,
    /// The request as a client would make it: path and query, e.g. `/api/v4/services/?postcode=G2+1AL`.
    pub request: String,
    /// HTTP status of the response.
    pub status: u16,
    /// Response headers shown on the page (name, value), in order.
    pub headers: Vec<(String, String)>,
    /// The JSON response body, shown readably.
    pub body: Body<'a>,
    /// Link to the JSON form of the same response.
    pub json_url: String,
    /// What some views show besides the response: a search form, a map, the front page.
    pub extras: Extras,
}

/// The body an HTML view shows.
#[derive(Debug, Clone)]
pub(crate) enum Body<'a> {
    /// A JSON tree.
    Value(&'a serde_json::Value),
    /// Its markup, already written ([`page_html_from_json`]), with its paging links.
    Markup {
        /// The markup, as a safe string (shown as it is, shared without a copy).
        html: minijinja::Value,
        /// `next`, if any.
        next: Option<String>,
        /// `previous`, if any.
        previous: Option<String>,
    },
}

/// What the HTML views of some responses show before the request and the response.
#[derive(Debug, Clone, Default)]
pub(crate) struct Extras {
    /// The front page's introduction (the API root's view).
    pub front: Option<FrontPage>,
    /// A search form's markup (`crate::render::form::SearchForm::render`).
    pub form: Option<String>,
    /// A map's SVG markup (`crate::render::map`).
    pub map: Option<String>,
}

/// What the front page says before the response: what the directory is, its licence and
/// attribution, and the links of the API root.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub(crate) struct FrontPage {
    /// Number of published services.
    pub services: usize,
    /// Number of organisations.
    pub organisations: usize,
    /// `meta.licence`.
    pub licence: String,
    /// `meta.attribution`.
    pub attribution: Vec<crate::views::Attribution>,
    /// `(url, what it is)` of every link of the root.
    pub links: Vec<(String, String)>,
}

impl<'a> HtmlView<'a> {
    /// The view of a JSON answer: the headers shown are those every JSON answer carries
    /// ([`crate::api::headers::json_headers`]).
    pub(crate) fn of_json(
        title: &str,
        request: String,
        status: u16,
        body: &'a serde_json::Value,
        json_url: String,
    ) -> Self {
        let headers = crate::api::headers::json_headers();
        let body = Body::Value(body);
        HtmlView { title: title.to_owned(), request, status, headers, body, json_url, extras: Extras::default() }
    }

    /// The view of a JSON answer whose markup is already written ([`page_html_from_json`]).
    pub(crate) fn of_markup(
        title: &str,
        request: String,
        status: u16,
        markup: String,
        links: (Option<String>, Option<String>),
        json_url: String,
    ) -> Self {
        let headers = crate::api::headers::json_headers();
        let (next, previous) = links;
        let body = Body::Markup { html: minijinja::Value::from_safe_string(markup), next, previous };
        HtmlView { title: title.to_owned(), request, status, headers, body, json_url, extras: Extras::default() }
    }

    /// [`HtmlView::of_json`] for a request whose JSON form is the same path with
    /// `?format=json` (a file of the build, or a fixed body).
    pub(crate) fn of_static(title: &str, request: &str, status: u16, body: &'a serde_json::Value) -> Self {
        let (base, _) = request.split_once('?').unwrap_or((request, ""));
        HtmlView::of_json(title, request.to_owned(), status, body, format!("{base}?format=json"))
    }
}

/// Why rendering failed.
#[derive(Debug, thiserror::Error)]
pub enum HtmlError {
    /// The JSON text given ([`page_html_from_json`]) is not JSON.
    #[error("the body is not JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A template failed.
    #[error("template {name}: {source}")]
    Template {
        /// Template name.
        name: String,
        /// The cause.
        source: minijinja::Error,
    },
}

const PAGE: &str = "page.html";
/// The shell every HTML page extends (`templates/base.html`).
pub(crate) const BASE: &str = "base.html";
/// The search form's template (`templates/search_form.html`), drawn by `crate::render::form`.
pub(crate) const FORM: &str = "search_form.html";
/// [`BASE`]'s source, embedded.
pub(crate) const BASE_SOURCE: &str = include_str!("../../templates/base.html");

/// The templates of the HTML views, parsed once.
pub(crate) fn environment() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        for (name, source) in [
            (BASE, BASE_SOURCE),
            (PAGE, include_str!("../../templates/page.html")),
            (FORM, include_str!("../../templates/search_form.html")),
        ] {
            env.add_template(name, source).expect("the embedded templates parse (tested)");
        }
        env
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        _ => "",
    }
}

/// Renders the HTML view of one response.
pub(crate) fn render_html(view: &HtmlView<'_>) -> Result<String, HtmlError> {
    let (body, previous, next) = match &view.body {
        Body::Value(value) => {
            let link = |key: &str| value.get(key).and_then(|v| v.as_str()).map(str::to_owned);
            (minijinja::Value::from_safe_string(body_html(value)), link("previous"), link("next"))
        }
        Body::Markup { html, next, previous } => (html.clone(), previous.clone(), next.clone()),
    };
    let template =
        environment().get_template(PAGE).map_err(|source| HtmlError::Template { name: PAGE.to_owned(), source })?;
    template
        .render(context! {
            title => &view.title,
            request => &view.request,
            status => view.status,
            reason => reason(view.status),
            headers => &view.headers,
            body_html => body,
            json_url => &view.json_url,
            previous => previous,
            next => next,
            front => view.extras.front.as_ref().map(|front| minijinja::Value::from(minijinja::value::Serde(front))),
            form_html => view.extras.form.clone().map(minijinja::Value::from_safe_string),
            map_svg => view.extras.map.clone().map(minijinja::Value::from_safe_string),
        })
        .map_err(|source| HtmlError::Template { name: PAGE.to_owned(), source })
}

/// The body as nested lists: objects as definition lists, arrays as ordered lists,
/// `http(s)` strings as links; every string escaped.
pub(crate) fn body_html(body: &serde_json::Value) -> String {
    let mut out = String::with_capacity(4096);
    write_value(&mut out, body);
    out
}

/// [`body_html`] of JSON text, written as the text is read: the same markup, without the
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
    pub name: std::borrow::Cow<'t, str>,
    /// `(latitude, longitude)` of each of `locations`.
    pub locations: Vec<(f64, f64)>,
}

/// [`body_html`] of a page of results given as JSON text, written as the text is read (the
/// tree is never built), with what its map needs, read in the same walk: the name and locations of each result of its `data` (v4) or `results` (v3) list.
/// None for the results when the text has no such list or a result lacks its `name` or a
/// location its `latitude` or `longitude` as a number (the caller then reads them itself).
pub(crate) fn page_html_from_json(json: &[u8]) -> Result<(String, Option<Vec<PageResult<'_>>>), serde_json::Error> {
    let mut out = String::with_capacity(json.len() * 3);
    if let Ok(text) = std::str::from_utf8(json) {
        let mut walk = Markup { text, at: 0, out: &mut out, keys: [""; 5], page: Page::default() };
        if walk.document().is_some() {
            let results = walk.page.results();
            return Ok((out, results));
        }
    }
    out.clear();
    body_html_by_serde(json, &mut out)?;
    Ok((out, None))
}

/// The markup of [`page_html_from_json`] through serde_json's reader (with [`MarkupSeed`]).
fn body_html_by_serde(json: &[u8], out: &mut String) -> Result<(), serde_json::Error> {
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_slice(json);
    MarkupSeed(out).deserialize(&mut de)?;
    de.end()
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
}

/// The results of a page as [`Markup`] reads them: `(name, locations)` with each location's
/// `(latitude, longitude)` as read, None where the text has none.
#[derive(Debug, Default)]
struct Page<'t> {
    /// Whether a `data` or `results` list was read at the top.
    listed: bool,
    #[allow(clippy::type_complexity)]
    results: Vec<(Option<std::borrow::Cow<'t, str>>, Option<Vec<(Option<f64>, Option<f64>)>>)>,
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

impl<'t> Markup<'t, '_> {
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
                self.out.push_str(r#"<span class="null">null</span>"#);
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
        self.out.push_str("<code>");
        self.out.push_str(text);
        self.out.push_str("</code>");
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
        if self.empty(b'}', r#"<span class="empty">{}</span>"#) {
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
                    std::borrow::Cow::Borrowed(key) => key,
                    std::borrow::Cow::Owned(_) => "\\",
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
        if self.empty(b']', r#"<span class="empty">[] (none)</span>"#) {
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
    fn string(&mut self) -> Option<std::borrow::Cow<'t, str>> {
        let bytes = self.text.as_bytes();
        let start = self.at;
        let end = start + memchr::memchr2(b'"', b'\\', &bytes[start..])?;
        let plain = &self.text[start..end];
        // (A fold, not `any`: it runs without a branch per byte.)
        if bytes[end] == b'"' && !plain.bytes().fold(false, |control, b| control | (b < 0x20)) {
            self.at = end + 1;
            return Some(std::borrow::Cow::Borrowed(plain));
        }
        // The end of a string with escapes: the first quote no backslash escapes (the four
        // hex digits of a `\u` escape are neither).
        let mut at = end;
        while bytes[at] == b'\\' {
            at += 2;
            at += memchr::memchr2(b'"', b'\\', bytes.get(at..)?)?;
        }
        self.at = at + 1;
        serde_json::from_str::<String>(&self.text[start - 1..=at]).ok().map(std::borrow::Cow::Owned)
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
        self.out.push_str("<code>");
        push_escaped(self.out, &number.to_string());
        self.out.push_str("</code>");
        Some(text)
    }
}

/// A string's markup: a link for `http(s)` text (its escaped text written once and copied),
/// an empty string as such, any other in a `text` span.
fn write_string(out: &mut String, text: &str) {
    if text.starts_with("https://") || text.starts_with("http://") {
        out.push_str("<a href=\"");
        let start = out.len();
        push_escaped(out, text);
        let end = out.len();
        out.push_str("\">");
        out.extend_from_within(start..end);
        out.push_str("</a>");
    } else if text.is_empty() {
        out.push_str(r#"<span class="empty">""</span>"#);
    } else {
        out.push_str(r#"<span class="text">"#);
        push_escaped(out, text);
        out.push_str("</span>");
    }
}

/// Appends `text` escaped by `v_htmlescape`; text with none of the characters it escapes
/// (most keys and values) is copied as it is, without the formatter's cost.
fn push_escaped(out: &mut String, text: &str) {
    use std::fmt::Write as _;
    // (A fold, not `any`: it runs without a branch per byte.)
    if !text.bytes().fold(false, |any, b| any | matches!(b, b'<' | b'>' | b'&' | b'"' | b'\'' | b'/')) {
        out.push_str(text);
        return;
    }
    // Writing to a String cannot fail.
    let _ = write!(out, "{}", v_htmlescape::escape(text));
}

/// Writes the markup of one JSON value as serde reads it (see [`write_value`], which it
/// mirrors case for case).
struct MarkupSeed<'o>(&'o mut String);

impl<'de> serde::de::DeserializeSeed<'de> for MarkupSeed<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for MarkupSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let out = self.0;
        let start = out.len();
        let mut any = false;
        while map.next_key_seed(KeySeed { out: &mut *out, first: !any })?.is_some() {
            any = true;
            out.push_str("</dt><dd>");
            map.next_value_seed(MarkupSeed(&mut *out))?;
            out.push_str("</dd>");
        }
        if any {
            out.push_str("\n</dl>");
        } else {
            out.truncate(start);
            out.push_str(r#"<span class="empty">{}</span>"#);
        }
        Ok(())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let out = self.0;
        let start = out.len();
        out.push_str("<ol>");
        let mut any = false;
        loop {
            let at = out.len();
            out.push_str("\n<li>");
            if seq.next_element_seed(MarkupSeed(&mut *out))?.is_none() {
                out.truncate(at);
                break;
            }
            any = true;
            out.push_str("</li>");
        }
        if any {
            out.push_str("\n</ol>");
        } else {
            out.truncate(start);
            out.push_str(r#"<span class="empty">[] (none)</span>"#);
        }
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        self.0.push_str(r#"<span class="null">null</span>"#);
        Ok(())
    }
    fn visit_str<E>(self, text: &str) -> Result<(), E> {
        let out = self.0;
        if text.starts_with("https://") || text.starts_with("http://") {
            out.push_str("<a href=\"");
            push_escaped(out, text);
            out.push_str("\">");
            push_escaped(out, text);
            out.push_str("</a>");
        } else if text.is_empty() {
            out.push_str(r#"<span class="empty">""</span>"#);
        } else {
            out.push_str(r#"<span class="text">"#);
            push_escaped(out, text);
            out.push_str("</span>");
        }
        Ok(())
    }
    fn visit_bool<E>(self, v: bool) -> Result<(), E> {
        self.code(&v.to_string())
    }
    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        self.code(&v.to_string())
    }
    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        self.code(&v.to_string())
    }
    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        // As a tree shows it: serde_json's own number formatting.
        self.code(&serde_json::Number::from_f64(v).map_or_else(|| "null".to_owned(), |n| n.to_string()))
    }
}

impl MarkupSeed<'_> {
    fn code<E>(self, text: &str) -> Result<(), E> {
        self.0.push_str("<code>");
        push_escaped(self.0, text);
        self.0.push_str("</code>");
        Ok(())
    }
}

/// Writes an object's key: the `<dl>` before the first one.
struct KeySeed<'o> {
    out: &'o mut String,
    first: bool,
}

impl<'de> serde::de::DeserializeSeed<'de> for KeySeed<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_str(self)
    }
}

impl<'de> serde::de::Visitor<'de> for KeySeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E>(self, key: &str) -> Result<(), E> {
        if self.first {
            self.out.push_str("<dl>");
        }
        self.out.push_str("\n<dt>");
        push_escaped(self.out, key);
        Ok(())
    }
}

fn write_value(out: &mut String, value: &serde_json::Value) {
    use serde_json::Value;
    let escaped = push_escaped;
    match value {
        Value::Object(map) if map.is_empty() => out.push_str(r#"<span class="empty">{}</span>"#),
        Value::Object(map) => {
            out.push_str("<dl>");
            for (key, item) in map {
                out.push_str("\n<dt>");
                escaped(out, key);
                out.push_str("</dt><dd>");
                write_value(out, item);
                out.push_str("</dd>");
            }
            out.push_str("\n</dl>");
        }
        Value::Array(items) if items.is_empty() => out.push_str(r#"<span class="empty">[] (none)</span>"#),
        Value::Array(items) => {
            out.push_str("<ol>");
            for item in items {
                out.push_str("\n<li>");
                write_value(out, item);
                out.push_str("</li>");
            }
            out.push_str("\n</ol>");
        }
        Value::Null => out.push_str(r#"<span class="null">null</span>"#),
        Value::String(text) if text.starts_with("https://") || text.starts_with("http://") => {
            out.push_str("<a href=\"");
            escaped(out, text);
            out.push_str("\">");
            escaped(out, text);
            out.push_str("</a>");
        }
        Value::String(text) if text.is_empty() => out.push_str(r#"<span class="empty">""</span>"#),
        Value::String(text) => {
            out.push_str(r#"<span class="text">"#);
            escaped(out, text);
            out.push_str("</span>");
        }
        Value::Bool(_) | Value::Number(_) => {
            out.push_str("<code>");
            escaped(out, &value.to_string());
            out.push_str("</code>");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_every_value_and_links_urls() {
        let body = serde_json::json!({
            "data": {
                "name": "<script>alert(1)</script>",
                "url": "https://example.org/?a=1&b=\"2\"",
                "evil": "javascript:alert(1)",
                "list": [1, null, true, ""],
                "empty": []
            },
            "next": "https://api.example.org/api/v4/import/?format=json&page=2",
            "previous": null
        });
        let html = render_html(&HtmlView {
            title: "A <b>title</b>".into(),
            request: "/api/v4/services/x/?q=<i>".into(),
            status: 200,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: Body::Value(&body),
            json_url: "/api/v4/services/x/?format=json".into(),
            extras: Extras::default(),
        })
        .unwrap();
        assert!(!html.contains("<script>alert"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"), "{html}");
        assert!(html.contains("A &lt;b&gt;title&lt;&#x2f;b&gt;"));
        assert!(html.contains("<a href=\"https:&#x2f;&#x2f;example.org&#x2f;?a=1&amp;b=&quot;2&quot;\">"));
        assert!(!html.contains("href=\"javascript"));
        assert!(html.contains("rel=\"next\""));
        assert!(!html.contains("rel=\"prev\""));
        assert!(html.contains("HTTP 200 OK"));
    }

    #[test]
    fn plain_text_is_copied_and_the_rest_escaped_by_v_htmlescape() {
        for text in ["plain", "a/b", "<&>\"'", "é ü", ""] {
            let mut out = String::new();
            push_escaped(&mut out, text);
            assert_eq!(out, v_htmlescape::escape(text).to_string(), "{text:?}");
        }
    }

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
            let mut walk = Markup { text, at: 0, out: &mut walked, keys: [""; 5], page: Page::default() };
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
