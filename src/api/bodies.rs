//! The bodies that have no file under `public/` (behaviour.md, "Errors"): the 400 of a
//! malformed request, the 404 of an invalid page and the 405, in JSON and as the HTML view,
//! so that nginx (which embeds them in its configuration) and the preview send the same bytes.

use axum::http::Method;

use super::error::ApiError;
use super::negotiate::Format;
use crate::api::html::{HtmlView, render_html};

/// Placeholder for the method in the 405 bodies rendered ahead of time: the preview puts
/// the request's method there, nginx the method of the request line.
pub(crate) const METHOD_PLACEHOLDER: &str = "SVCDIRREQUESTMETHOD";

/// JSON body of a 400 for a malformed request (Django REST framework's `ParseError`).
pub fn bad_request_body() -> Vec<u8> {
    br#"{"detail":"Malformed request."}"#.to_vec()
}

/// Body of the 404 for an import page that does not exist, in the form asked for.
pub fn invalid_page_body(format: Format) -> Result<Vec<u8>, ViewError> {
    error_view(format, &ApiError::InvalidPage, "Invalid page", "/api/v4/import/")
}

/// Body of the 405, with `METHOD_PLACEHOLDER` where the method goes.
pub fn method_not_allowed_body(format: Format) -> Result<Vec<u8>, ViewError> {
    let placeholder = Method::from_bytes(METHOD_PLACEHOLDER.as_bytes()).map_err(|_| ViewError::Placeholder)?;
    error_view(format, &ApiError::MethodNotAllowed(placeholder), "Method not allowed", "/")
}

/// The 405 body of [`method_not_allowed_body`] for one method.
pub fn method_not_allowed_for(template: &[u8], format: Format, method: &Method) -> Vec<u8> {
    let name = match format {
        Format::Json => serde_json::to_string(method.as_str())
            .map(|quoted| quoted[1..quoted.len() - 1].to_owned())
            .unwrap_or_default(),
        // Methods are tokens; escape anyway, the page must never carry markup from a request.
        Format::Html => v_htmlescape::escape(method.as_str()).to_string(),
    };
    String::from_utf8_lossy(template).replace(METHOD_PLACEHOLDER, &name).into_bytes()
}

/// An error body could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// The HTML view failed.
    #[error(transparent)]
    Html(#[from] crate::api::html::HtmlError),
    /// The method placeholder is not a valid method (a bug).
    #[error("the method placeholder is not a valid HTTP method")]
    Placeholder,
}

fn error_view(format: Format, error: &ApiError, title: &str, request: &str) -> Result<Vec<u8>, ViewError> {
    let body = error.body();
    match format {
        Format::Json => Ok(body.to_string().into_bytes()),
        Format::Html => {
            let view = HtmlView::of_static(title, request, error.status().as_u16(), &body);
            Ok(render_html(&view)?.into_bytes())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_bodies() {
        let detail = ApiError::InvalidPage.to_string();
        assert_eq!(invalid_page_body(Format::Json).unwrap(), ApiError::InvalidPage.body().to_string().into_bytes());
        let html = String::from_utf8(invalid_page_body(Format::Html).unwrap()).unwrap();
        assert!(html.contains(&detail), "{html}");
        let json = method_not_allowed_body(Format::Json).unwrap();
        assert_eq!(
            method_not_allowed_for(&json, Format::Json, &Method::POST),
            br#"{"detail":"Method \"POST\" not allowed."}"#
        );
        assert_eq!(
            String::from_utf8(json).unwrap(),
            ApiError::MethodNotAllowed(Method::from_bytes(METHOD_PLACEHOLDER.as_bytes()).unwrap()).body().to_string()
        );
        let html = method_not_allowed_body(Format::Html).unwrap();
        let odd = Method::from_bytes(b"X'Y").unwrap();
        let page = String::from_utf8(method_not_allowed_for(&html, Format::Html, &odd)).unwrap();
        assert!(page.contains("X&#x27;Y") && !page.contains(METHOD_PLACEHOLDER), "{page}");
    }
}
