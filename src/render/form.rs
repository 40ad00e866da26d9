//! The search form of the HTML views of the API root and of both searches (behaviour.md,
//! "Import and lists"): a plain HTML GET to the search's HTML view, no JavaScript; postcode,
//! q, category (a choice from the tree), location_type, radius, and page_size on the root and
//! the v4 search; filled in with the current query, each bad field with its 400 message
//! beside it.
//!
//! The category choices are written once per category tree ([`CategoryOptions`]), so a
//! search page only marks the chosen one. The form itself is `templates/search_form.html`,
//! whose auto-escaping escapes every value.

use minijinja::context;
use serde::Serialize;

use crate::api::html::{HtmlError, environment};
use crate::api::query::{ApiVersion, RawQuery};
use crate::api::routing::{V3_PATH, V4_PATH};
use crate::model::CategoryTree;

/// The template of the form.
pub(crate) const TEMPLATE: &str = crate::api::html::FORM;

/// The `<option>`s of the category choice: every node of the tree, depth-first, indented by
/// its depth, escaped once.
///
/// All of them are written once, as one text; a form with a category chosen copies it with
/// ` selected` put into the chosen one's tag (a search page's form cost more than its map
/// when each option was copied on its own).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CategoryOptions {
    /// Every option, each after a line break.
    markup: String,
    /// `(slug, where its option's tag closes in markup)`: ` selected` goes there.
    slugs: Vec<(String, usize)>,
}

impl CategoryOptions {
    /// The options of `tree`.
    pub(crate) fn of(tree: &CategoryTree) -> CategoryOptions {
        let mut markup = String::new();
        let mut slugs = Vec::with_capacity(tree.nodes.len());
        for (ix, node) in tree.nodes.iter().enumerate() {
            let depth = tree.ancestry(ix as crate::model::CategoryIx).count().saturating_sub(1);
            // Em spaces: an option's text has its ASCII white space collapsed, these stay.
            let label = format!("{}{}", "\u{2003}".repeat(2 * depth), node.name);
            markup.push('\n');
            markup.push_str("<option value=\"");
            markup.push_str(&v_htmlescape::escape(&node.slug).to_string());
            markup.push('"');
            slugs.push((node.slug.clone(), markup.len()));
            markup.push('>');
            markup.push_str(&v_htmlescape::escape(&label).to_string());
            markup.push_str("</option>");
        }
        CategoryOptions { markup, slugs }
    }

    /// The options with `chosen` selected; a value that is no single slug of the tree (a
    /// list of slugs, an unknown slug) is kept as a choice of its own, so the form sends back
    /// what was asked.
    fn markup(&self, chosen: &str) -> String {
        let mut out = String::with_capacity(self.markup.len() + 128);
        out.push_str("<option value=\"\">Any category</option>");
        match self.slugs.iter().find(|(slug, _)| slug == chosen) {
            Some(&(_, at)) => {
                out.push_str(&self.markup[..at]);
                out.push_str(" selected");
                out.push_str(&self.markup[at..]);
            }
            None => {
                if !chosen.is_empty() {
                    out.push_str(&format!(
                        "\n<option value=\"{0}\" selected>{0}</option>",
                        v_htmlescape::escape(chosen)
                    ));
                }
                out.push_str(&self.markup);
            }
        }
        out
    }
}

/// One search form, as a view shows it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SearchForm<'a> {
    /// The search it sends to.
    pub version: ApiVersion,
    /// The query to fill it in with (the current request's; empty on the front page).
    pub query: &'a RawQuery,
    /// The 400 body (`{"field": ["message", ...]}`) when the request was refused.
    pub errors: Option<&'a serde_json::Value>,
    /// The category choices.
    pub categories: &'a CategoryOptions,
}

/// One field of the form.
#[derive(Debug, Serialize)]
struct Field {
    name: &'static str,
    label: &'static str,
    /// What the field takes, said beside it.
    hint: &'static str,
    /// The current value (a text field), or "".
    value: String,
    /// The `<option>`s' markup (a choice), or None for a text field.
    options: Option<minijinja::Value>,
    /// `inputmode` of a text field.
    inputmode: &'static str,
    /// The 400's messages for this field.
    errors: Vec<String>,
}

impl SearchForm<'_> {
    /// The form's markup.
    pub(crate) fn render(&self) -> Result<String, HtmlError> {
        let value = |name: &str| self.query.last(name).unwrap_or("").to_owned();
        let errors = |name: &str| -> Vec<String> {
            self.errors
                .and_then(|body| body.get(name))
                .and_then(|messages| messages.as_array())
                .map(|list| list.iter().filter_map(|m| m.as_str().map(str::to_owned)).collect())
                .unwrap_or_default()
        };
        let text = |name: &'static str, label: &'static str, hint: &'static str, inputmode: &'static str| Field {
            name,
            label,
            hint,
            value: value(name),
            options: None,
            inputmode,
            errors: errors(name),
        };
        let choice = |name: &'static str, label: &'static str, hint: &'static str, markup: String| Field {
            name,
            label,
            hint,
            value: String::new(),
            options: Some(minijinja::Value::from_safe_string(markup)),
            inputmode: "",
            errors: errors(name),
        };
        let mut fields = vec![
            text("postcode", "Postcode", "A full postcode, a district (G2) or a sector (G2 1).", "text"),
            text("q", "Keywords", "Every word must match the name, the description or a category.", "text"),
            choice("category", "Category", "With everything below it in the tree.", {
                self.categories.markup(&value("category"))
            }),
            choice(
                "location_type",
                "Reach",
                "Local: no national or regional area.",
                location_types(&value("location_type")),
            ),
            text("radius", "Radius (metres)", "From the postcode; 5000 when empty.", "numeric"),
        ];
        let action = match self.version {
            ApiVersion::V4 => {
                fields.push(text("page_size", "Results per page", "10 when empty, at most 100.", "numeric"));
                V4_PATH
            }
            ApiVersion::V3 => V3_PATH,
        };
        let template = environment()
            .get_template(TEMPLATE)
            .map_err(|source| HtmlError::Template { name: TEMPLATE.to_owned(), source })?;
        template
            .render(context! { action => minijinja::Value::from_safe_string(action.to_owned()), fields => minijinja::Value::from(minijinja::value::Serde(&fields)) })
            .map_err(|source| HtmlError::Template { name: TEMPLATE.to_owned(), source })
    }
}

/// The choices of `location_type`: any, local, national, and the current value when it is
/// none of these.
fn location_types(chosen: &str) -> String {
    let mut out = String::new();
    let known = ["", "local", "national"].contains(&chosen);
    for (value, label) in [("", "Any"), ("local", "Local"), ("national", "National")] {
        let selected = if value == chosen { " selected" } else { "" };
        out.push_str(&format!("<option value=\"{value}\"{selected}>{label}</option>\n"));
    }
    if !known {
        out.push_str(&format!("<option value=\"{0}\" selected>{0}</option>\n", v_htmlescape::escape(chosen)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(query: &str, errors: Option<&serde_json::Value>, version: ApiVersion) -> String {
        let dir = crate::test_support::directory::tiny();
        let categories = CategoryOptions::of(&dir.categories);
        let query = RawQuery::parse(query);
        SearchForm { version, query: &query, errors, categories: &categories }.render().unwrap()
    }

    #[test]
    fn the_form_is_filled_in_with_the_query() {
        let html = form("postcode=g2+1al&q=%3Cb%3E&radius=800&location_type=local&format=api", None, ApiVersion::V4);
        assert!(html.contains("<form method=\"get\" action=\"/api/v4/services/\""), "{html}");
        assert!(html.contains("<input type=\"hidden\" name=\"format\" value=\"api\">"), "{html}");
        assert!(html.contains("name=\"postcode\" value=\"g2 1al\""), "{html}");
        assert!(html.contains("name=\"q\" value=\"&lt;b&gt;\""), "{html}");
        assert!(html.contains("name=\"radius\" value=\"800\""), "{html}");
        assert!(html.contains("<option value=\"local\" selected>Local</option>"), "{html}");
        assert!(html.contains("name=\"page_size\""));
        assert!(!html.contains("<script"));
        let v3 = form("", None, ApiVersion::V3);
        assert!(v3.contains("action=\"/api/v3/search/\"") && !v3.contains("page_size"), "{v3}");
    }

    #[test]
    fn a_bad_field_shows_its_message_beside_it() {
        let errors = serde_json::json!({"radius": ["A valid integer is required."], "category": ["Object with slug=nope does not exist."]});
        let html = form("postcode=G2+1AL&radius=far&category=nope", Some(&errors), ApiVersion::V4);
        assert!(html.contains("A valid integer is required."), "{html}");
        assert!(html.contains("aria-describedby=\"radius-hint radius-error\" aria-invalid=\"true\""), "{html}");
        assert!(html.contains("<option value=\"nope\" selected>nope</option>"), "{html}");
        assert!(html.contains("name=\"radius\" value=\"far\""), "{html}");
    }

    #[test]
    fn the_chosen_category_is_selected_once() {
        let dir = crate::test_support::directory::tiny();
        let categories = CategoryOptions::of(&dir.categories);
        let slug = dir.categories.nodes.last().unwrap().slug.clone();
        let markup = categories.markup(&slug);
        assert_eq!(markup.matches(" selected").count(), 1, "{markup}");
        assert!(markup.contains(&format!("<option value=\"{slug}\" selected>")), "{markup}");
        assert_eq!(categories.markup("").matches(" selected").count(), 0);
    }
}
