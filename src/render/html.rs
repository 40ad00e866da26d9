//! The HTML view of any response (placeholder: being written).

/// Everything the HTML view of one response shows.
#[derive(Debug, Clone)]
pub struct HtmlView<'a> {
    /// Page title, e.g. "Service search" or a service's name.
    pub title: String,
    /// The request as a client would make it: path and query, e.g. `/api/v4/services/?postcode=G2+1AL`.
    pub request: String,
    /// HTTP status of the response.
    pub status: u16,
    /// Response headers shown on the page (name, value), in order.
    pub headers: Vec<(String, String)>,
    /// The JSON response body, shown readably.
    pub body: &'a serde_json::Value,
    /// Link to the JSON form of the same response.
    pub json_url: String,
}

/// Why rendering failed.
#[derive(Debug, thiserror::Error)]
pub enum HtmlError {
    /// A template failed.
    #[error("template {name}: {source}")]
    Template {
        /// Template name.
        name: String,
        /// The cause.
        source: minijinja::Error,
    },
}

/// Renders the HTML view of one response.
pub fn render_html(view: &HtmlView<'_>) -> Result<String, HtmlError> {
    let _ = view;
    todo!("html view")
}
