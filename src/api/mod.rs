//! The HTTP contract of the API, with no transport in it: which paths exist and what each
//! answers ([`routing`], [`path`]), JSON or HTML ([`negotiate`]), the errors and their bodies
//! ([`error`], [`bodies`]), and the headers and cache policy ([`headers`]).
//!
//! Every front end answers from these rules: the search server (`crate::server`), the local
//! preview (`crate::preview`) and the generated nginx configuration (`crate::nginx`). A rule
//! changes here, once; the end-to-end suite (`tests/e2e`) checks that they answer alike.

pub mod bodies;
pub mod error;
pub mod headers;
pub mod negotiate;
pub mod path;
pub mod routing;

pub use error::ApiError;
pub use negotiate::Format;
