//! The HTML view of any response: the request, the response headers and the body shown
//! readably (objects as definition lists, lists as lists, URLs as links, paging links).
//!
//! One template (`templates/page.html`, embedded in the binary) serves every endpoint,
//! static or searched; minijinja's auto-escaping escapes every value it shows. The body,
//! a JSON tree of any shape, is turned into markup in Rust ([`tree`]: a recursive template
//! macro cost most of a build's time), from a tree or, for the search's pages, as the JSON
//! text is read ([`walk`]); a page of search results copies its results' markup, written at
//! build time and stored in the index ([`results`]). The template is rendered around a mark
//! where the body goes, and the body written there, so that the body (most of a page's
//! bytes) is written once, straight into the answer.

mod results;
mod tree;
mod walk;

use std::sync::OnceLock;

use minijinja::{Environment, context};

pub(crate) use results::{ResultFragment, ResultsMarkup};
pub(crate) use tree::body_html;
pub(crate) use walk::{PageResult, body_html_from_json, page_html_from_json};

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
        /// The markup (borrowed where one rendering serves several folders).
        html: std::borrow::Cow<'a, str>,
        /// `next`, if any.
        next: Option<String>,
        /// `previous`, if any.
        previous: Option<String>,
    },
    /// A page of search results copied from its results' stored markup ([`ResultsMarkup`]),
    /// with its paging links.
    Results {
        /// The markup.
        markup: ResultsMarkup<'a>,
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
    /// The view of a JSON answer whose body is `body`: the headers shown are those every
    /// JSON answer carries ([`crate::api::headers::json_headers`]).
    pub(crate) fn of_body(title: &str, request: String, status: u16, body: Body<'a>, json_url: String) -> Self {
        let headers = crate::api::headers::json_headers();
        HtmlView { title: title.to_owned(), request, status, headers, body, json_url, extras: Extras::default() }
    }

    /// The view of a JSON answer (a tree).
    pub(crate) fn of_json(
        title: &str,
        request: String,
        status: u16,
        body: &'a serde_json::Value,
        json_url: String,
    ) -> Self {
        HtmlView::of_body(title, request, status, Body::Value(body), json_url)
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
    /// The JSON text of a [`Body::Encoded`] is not JSON.
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
    /// Stored markup of a [`Body::Results`] is not UTF-8 (a damaged index).
    #[error("the stored markup of a result is not UTF-8")]
    NotUtf8,
}

const PAGE: &str = "page.html";
/// The shell every HTML page extends (`templates/base.html`).
pub(crate) const BASE: &str = "base.html";
/// The search form's template (`templates/search_form.html`), drawn by `crate::render::form`.
pub(crate) const FORM: &str = "search_form.html";
/// [`BASE`]'s source, embedded.
pub(crate) const BASE_SOURCE: &str = include_str!("../../../templates/base.html");

/// Where the body goes in the rendered page. Every value shown is escaped (so no `<` of one
/// can start this), and the body is the last value the template shows: the last match is
/// its place.
const BODY_MARK: &str = "<!--svcdir:body-->";

/// The templates of the HTML views, parsed once.
pub(crate) fn environment() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        for (name, source) in [
            (BASE, BASE_SOURCE),
            (PAGE, include_str!("../../../templates/page.html")),
            (FORM, include_str!("../../../templates/search_form.html")),
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

/// A body's markup, to be written at [`BODY_MARK`].
enum BodyMarkup<'v> {
    Text(std::borrow::Cow<'v, str>),
    Results(&'v ResultsMarkup<'v>),
}

/// Renders the HTML view of one response.
pub(crate) fn render_html(view: &HtmlView<'_>) -> Result<String, HtmlError> {
    let (page, body) = render_around_body(view)?;
    let (before, after) = page.rsplit_once(BODY_MARK).expect("page.html shows the body (tested)");
    match body {
        BodyMarkup::Text(text) => {
            let mut out = String::with_capacity(before.len() + text.len() + after.len());
            out.push_str(before);
            out.push_str(&text);
            out.push_str(after);
            Ok(out)
        }
        BodyMarkup::Results(_) => String::from_utf8(render_html_bytes(view)?).map_err(|_| HtmlError::NotUtf8),
    }
}

/// [`render_html`] as bytes: what an answer sends (a [`Body::Results`]'s stored markup is
/// copied as it is).
pub(crate) fn render_html_bytes(view: &HtmlView<'_>) -> Result<Vec<u8>, HtmlError> {
    let (page, body) = render_around_body(view)?;
    let (before, after) = page.rsplit_once(BODY_MARK).expect("page.html shows the body (tested)");
    let len = match &body {
        BodyMarkup::Text(text) => text.len(),
        BodyMarkup::Results(results) => results.len(),
    };
    let mut out = Vec::with_capacity(before.len() + len + after.len());
    out.extend_from_slice(before.as_bytes());
    match body {
        BodyMarkup::Text(text) => out.extend_from_slice(text.as_bytes()),
        BodyMarkup::Results(results) => results.write(&mut out),
    }
    out.extend_from_slice(after.as_bytes());
    Ok(out)
}

/// The page with [`BODY_MARK`] where the body goes, and the body's markup.
fn render_around_body<'v>(view: &'v HtmlView<'_>) -> Result<(String, BodyMarkup<'v>), HtmlError> {
    let (body, previous, next) = match &view.body {
        Body::Value(value) => {
            let link = |key: &str| value.get(key).and_then(|v| v.as_str());
            (BodyMarkup::Text(body_html(value).into()), link("previous"), link("next"))
        }
        Body::Markup { html, next, previous } => {
            (BodyMarkup::Text(html.as_ref().into()), previous.as_deref(), next.as_deref())
        }
        Body::Results { markup, next, previous } => (BodyMarkup::Results(markup), previous.as_deref(), next.as_deref()),
    };
    let template =
        environment().get_template(PAGE).map_err(|source| HtmlError::Template { name: PAGE.to_owned(), source })?;
    let page = template
        .render(context! {
            title => &view.title,
            request => &view.request,
            status => view.status,
            reason => reason(view.status),
            headers => &view.headers,
            body_html => minijinja::Value::from_safe_string(BODY_MARK.to_owned()),
            json_url => &view.json_url,
            previous => previous,
            next => next,
            front => view.extras.front.as_ref().map(|front| minijinja::Value::from(minijinja::value::Serde(front))),
            form_html => view.extras.form.clone().map(minijinja::Value::from_safe_string),
            map_svg => view.extras.map.clone().map(minijinja::Value::from_safe_string),
        })
        .map_err(|source| HtmlError::Template { name: PAGE.to_owned(), source })?;
    Ok((page, body))
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
        let view = HtmlView {
            title: "A <b>title</b> <!--svcdir:body-->".into(),
            request: "/api/v4/services/x/?q=<i>".into(),
            status: 200,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: Body::Value(&body),
            json_url: "/api/v4/services/x/?format=json".into(),
            extras: Extras::default(),
        };
        let html = render_html(&view).unwrap();
        assert_eq!(html.as_bytes(), render_html_bytes(&view).unwrap());
        assert!(!html.contains("<script>alert"), "{html}");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"), "{html}");
        assert!(html.contains("A &lt;b&gt;title&lt;&#x2f;b&gt; &lt;!--svcdir:body--&gt;"));
        assert!(!html.contains(BODY_MARK));
        assert!(html.contains(&format!("</p>\n{}\n</section>", body_html(&body))), "the body in its place");
        assert!(html.contains("<a href=\"https:&#x2f;&#x2f;example.org&#x2f;?a=1&amp;b=&quot;2&quot;\">"));
        assert!(!html.contains("href=\"javascript"));
        assert!(html.contains("rel=\"next\""));
        assert!(!html.contains("rel=\"prev\""));
        assert!(html.contains("HTTP 200 OK"));
    }
}
