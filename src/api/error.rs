//! Every error a request can end in, and its status, body and extra headers (behaviour.md,
//! Errors).
//!
//! [`ApiError`] is the only way a handler fails; its JSON body is what clients of the
//! described service parse. When HTML is negotiated the same body is shown in the HTML view.
//! The transport (`crate::server`) turns it into a response.

use axum::http::{Method, StatusCode};
use serde_json::json;

use crate::api::query::ParamErrors;

/// A failed request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// 400: invalid parameters, each with its messages.
    #[error("invalid query parameters")]
    BadRequest(ParamErrors),
    /// 404: page 0, past the end, or not a number.
    #[error("Invalid page.")]
    InvalidPage,
    /// 404: unknown path or unknown `format`.
    #[error("Not found.")]
    NotFound,
    /// 405: a method other than GET, HEAD and OPTIONS.
    #[error("Method \"{0}\" not allowed.")]
    MethodNotAllowed(Method),
    /// 414: the path and query are longer than the server accepts (issue 6, limits).
    #[error("Request-URI too long.")]
    UriTooLong,
    /// 431: the request headers are larger than the server accepts (issue 6, limits).
    #[error("Request header fields too large.")]
    HeadersTooLarge,
    /// 500: a bug (a panic, or a view that failed to render).
    #[error("A server error occurred.")]
    Internal,
    /// 429: as many requests or connections as allowed are already being served (issue 6,
    /// limits), in Django REST framework's `Throttled` wording, with `Retry-After: 1`.
    #[error("Request was throttled. Expected available in 1 second.")]
    Overloaded,
    /// 408: the answer took longer than the time allowed per request (issue 6, limits);
    /// the connection is closed, as RFC 9110 asks of a 408.
    #[error("Request timed out.")]
    TimedOut,
    /// 503: no search index is in force yet (`svcdir-search --from` before its first one).
    #[error("Service temporarily unavailable, try again later.")]
    Unavailable,
}

impl ApiError {
    /// The status code.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::InvalidPage | ApiError::NotFound => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::UriTooLong => StatusCode::URI_TOO_LONG,
            ApiError::HeadersTooLarge => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            ApiError::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            ApiError::Overloaded => StatusCode::TOO_MANY_REQUESTS,
            ApiError::TimedOut => StatusCode::REQUEST_TIMEOUT,
            ApiError::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The headers this error's status calls for beside the usual ones: `Retry-After` on a
    /// 429, and `Connection: close` on a 408 (RFC 9110 asks it of a 408).
    pub(crate) fn extra_headers(&self) -> &'static [(&'static str, &'static str)] {
        match self {
            ApiError::Overloaded => &[("retry-after", "1")],
            ApiError::TimedOut => &[("connection", "close")],
            _ => &[],
        }
    }

    /// The body: the field → messages map for a 400, else `{"detail": ...}` with Django
    /// REST framework's wording.
    pub fn body(&self) -> serde_json::Value {
        match self {
            ApiError::BadRequest(errors) => serde_json::to_value(errors).unwrap_or_else(|_| json!({})),
            other => json!({ "detail": other.to_string() }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_as_clients_parse_them() {
        assert_eq!(ApiError::InvalidPage.body(), json!({"detail": "Invalid page."}));
        assert_eq!(ApiError::NotFound.body(), json!({"detail": "Not found."}));
        assert_eq!(ApiError::MethodNotAllowed(Method::POST).body(), json!({"detail": "Method \"POST\" not allowed."}));
        assert_eq!(ApiError::Internal.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(ApiError::UriTooLong.body(), json!({"detail": "Request-URI too long."}));
        assert_eq!(ApiError::TimedOut.body(), json!({"detail": "Request timed out."}));
        assert_eq!(ApiError::Overloaded.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(ApiError::TimedOut.status(), StatusCode::REQUEST_TIMEOUT);
        assert_eq!(ApiError::Overloaded.extra_headers(), [("retry-after", "1")]);
        assert_eq!(ApiError::TimedOut.extra_headers(), [("connection", "close")]);
        assert!(ApiError::NotFound.extra_headers().is_empty());
        assert_eq!(ApiError::HeadersTooLarge.status(), StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
    }
}
