//! What every answer of the search server goes through, as one service in front of the
//! router: the telemetry (in flight, by route and status, time), the access log, the
//! [`Limits`] (URL length 414, header size 431, requests at once 429, time per request
//! 408), a panic turned into a 500 JSON body and a log line, and the standard and CORS
//! preflight headers.
//!
//! One service rather than a stack of tower layers: each `from_fn` layer clones the whole
//! stack below it and boxes a future on every request, and a concurrency limit's clone
//! allocates its own. Counted with callgrind at 10,000 services (issue 24), the layers'
//! own work was 6.5 k instructions of a search's 121 k; here a request takes one `Arc`
//! clone and one boxed future.

use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::Router;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use futures::FutureExt as _;
use tokio::sync::Semaphore;
use tower::{Service, ServiceExt as _};

use super::limits::{Limits, panic_message, size_limits};
use super::operator::{Telemetry, route_label};
use super::{body_bytes, insert_preflight_headers, log, set_standard_headers};
use crate::api::ApiError;
use crate::api::headers;
use crate::search::Deadline;

/// The service in front of `router` (see the module's documentation). Cloning it is one
/// `Arc` clone: every clone shares the router, the permits and the telemetry.
#[derive(Clone)]
pub(crate) struct Front(Arc<Shared>);

struct Shared {
    router: Router,
    limits: Limits,
    /// [`Limits::max_concurrent`] permits; a request that finds none is shed with 429.
    permits: Semaphore,
    telemetry: Option<Arc<Telemetry>>,
}

impl Front {
    /// `router` behind the limits, counting every request in `telemetry` when given.
    pub(crate) fn new(router: Router, limits: Limits, telemetry: Option<Arc<Telemetry>>) -> Front {
        let permits = Semaphore::new(limits.max_concurrent);
        Front(Arc::new(Shared { router, limits, permits, telemetry }))
    }
}

impl Service<Request> for Front {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Ready always: a request past the permits is answered 429, not made to wait.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let shared = self.0.clone();
        Box::pin(async move { Ok(shared.answer(request).await) })
    }
}

impl Shared {
    async fn answer(&self, request: Request) -> Response {
        // The time counted and logged is the whole answer, limits included.
        let started = Instant::now();
        let measured = self.telemetry.as_deref().map(|t| (t, route_label(request.uri().path()), t.enter()));
        // Turned off (`RUST_LOG=...,svcdir::access=off`): nothing copied.
        let logged = tracing::enabled!(target: log::ACCESS_TARGET, tracing::Level::INFO)
            .then(|| (request.method().clone(), request.uri().clone()));
        let preflight = headers::preflight_headers(request.method(), request.headers());

        let mut response = match self.limited(request).await {
            Ok(response) => response,
            Err(error) => error.into_response(),
        };
        let map = response.headers_mut();
        set_standard_headers(map);
        insert_preflight_headers(map, preflight);

        let took = started.elapsed();
        if let Some((method, uri)) = logged {
            log::access(&method, uri.path(), uri.query(), response.status(), took, body_bytes(&response));
        }
        if let Some((telemetry, route, in_flight)) = measured {
            drop(in_flight);
            telemetry.record(route, response.status(), took);
        }
        response
    }

    /// The router's answer within the limits: the sizes checked before a permit is taken
    /// (a huge request costs nothing more than its length), the time counted from the
    /// permit, a panic caught.
    async fn limited(&self, mut request: Request) -> Result<Response, ApiError> {
        size_limits(&request, &self.limits)?;
        let Ok(_permit) = self.permits.try_acquire() else { return Err(ApiError::Overloaded) };
        let limit = self.limits.request_timeout;
        // A search computes inline without awaiting, so it reads the deadline as it goes
        // and stops itself; a handler that awaits (the preview's file reads) is cut by the
        // timeout at its next await.
        request.extensions_mut().insert(Deadline::at(Instant::now() + limit));
        let answer = tokio::time::timeout(limit, self.router.clone().oneshot(request));
        match AssertUnwindSafe(answer).catch_unwind().await {
            Ok(Ok(Ok(response))) => Ok(response),
            Ok(Ok(Err(infallible))) => match infallible {},
            Ok(Err(_elapsed)) => Err(ApiError::TimedOut),
            Err(panic) => {
                // issue 6: a panic is a 500 JSON body *and* a log line; the process keeps serving.
                tracing::error!(panic = panic_message(panic.as_ref()), "a handler panicked; answered 500");
                Err(ApiError::Internal)
            }
        }
    }
}
