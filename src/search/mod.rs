//! Search requests: parameters in, one page of matching services out (behaviour.md, Search).
//!
//! [`params`] turns a query string into [`SearchParams`] or the 400 body's errors;
//! [`run`](mod@run) finds, orders and pages the matches over a [`crate::index::SearchIndex`].
//! Nothing here knows about HTTP: the server (`crate::server`) renders the page.

mod deadline;
mod matches;
pub(crate) mod page;
pub mod params;
pub mod run;

pub use deadline::Deadline;
pub use page::{InvalidPage, ResultPage};
pub use params::{ApiVersion, PageNumber, ParamErrors, RawQuery, SearchParams};
pub use run::SearchError;
