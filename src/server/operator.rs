//! The operator's side of `svcdir-search` (issue 14): `GET /healthz` for a load balancer,
//! `GET /metrics` in the Prometheus text format, and the [`Telemetry`] they report.
//!
//! Neither path is public: the nginx configuration and the CDN edge send only the two
//! search paths here, so both answer only on the operator's network. Metrics are kept by
//! `metrics-exporter-prometheus` in a recorder owned by the [`Telemetry`] (not a global one),
//! so every server, including those tests start in one process, counts only its own
//! requests.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder};
use metrics_util::MetricKindMask;
use serde::Serialize;

use super::{AppState, LiveState};
use crate::api::headers::{CACHE_NONE, JSON};
use crate::api::routing::{V3_PATH, V4_PATH};

/// `Content-Type` of `/metrics`: the Prometheus text exposition format.
pub(crate) const METRICS_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Requests answered, by `route` and `status` (counter).
pub(crate) const REQUESTS: &str = "svcdir_http_requests_total";
/// Time to answer a request, by `route` (histogram, seconds).
pub(crate) const REQUEST_SECONDS: &str = "svcdir_http_request_duration_seconds";
/// Requests being answered now (gauge).
pub(crate) const IN_FLIGHT: &str = "svcdir_http_requests_in_flight";
/// Time the index in force took to read, check and prepare (gauge, seconds).
pub(crate) const INDEX_LOAD_SECONDS: &str = "svcdir_index_load_duration_seconds";
/// Published services in the index in force (gauge).
pub(crate) const INDEX_SERVICES: &str = "svcdir_index_services";
/// The index in force, as its `index_hash` label (info: always 1, one series).
pub(crate) const INDEX_INFO: &str = "svcdir_index_info";
/// SIGHUP reloads, by `outcome` (`ok` or `failed`) (counter).
pub(crate) const RELOADS: &str = "svcdir_index_reloads_total";
/// Polls of the publication (`--from`), by `outcome` (`unchanged`, `swapped` or `failed`)
/// (counter).
pub(crate) const POLLS: &str = "svcdir_index_polls_total";

/// Bucket bounds of [`REQUEST_SECONDS`]: a search takes from tens of microseconds to the
/// 5 s time limit.
const LATENCY_BUCKETS: &[f64] =
    &[0.000_25, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

/// Every route label, in the order of [`Telemetry`]'s handles.
const ROUTES: [&str; 5] = [V4_PATH, V3_PATH, "/healthz", "/metrics", "other"];

/// Status codes with a handle of their own, per route: `100..STATUSES_FROM + STATUSES`.
const STATUSES_FROM: u16 = 100;
const STATUSES: usize = 500;

/// Requests recorded between two drains of the histograms' pending samples: the recorder
/// keeps every sample until a scrape or an upkeep folds it into the buckets, so a server
/// that nobody scrapes grew by about 20 bytes a request (2.5 MB per 120,000 requests,
/// measured) without one.
const UPKEEP_EVERY: u64 = 4096;

/// The route label of a path: the paths this server answers, and `other` for the rest
/// (never the path itself, so that scanning for URLs cannot grow the series without bound).
pub(crate) fn route_label(path: &str) -> &'static str {
    match path {
        V4_PATH | "/api/v4/services" => V4_PATH,
        V3_PATH | "/api/v3/search" => V3_PATH,
        "/healthz" => "/healthz",
        "/metrics" => "/metrics",
        _ => "other",
    }
}

/// What `/healthz` and `/metrics` report: the metrics recorder, the requests in flight and
/// the time the server started.
pub struct Telemetry {
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
    process: metrics_process::Collector,
    in_flight: AtomicI64,
    /// The handles of [`REQUESTS`] by route and status (`route * STATUSES + status - 100`)
    /// and of [`REQUEST_SECONDS`] by route, made on first use: a request then costs no
    /// key built, hashed and looked up in the registry.
    requests: Box<[OnceLock<metrics::Counter>]>,
    seconds: [OnceLock<metrics::Histogram>; ROUTES.len()],
    /// Requests recorded, for [`UPKEEP_EVERY`].
    recorded: AtomicU64,
    started: Instant,
    /// What the last poll of the publication (`--from`) failed with, `Some(None)` once one
    /// succeeds; `None` until a first poll (and always without `--from`).
    last_poll_error: std::sync::Mutex<Option<Option<String>>>,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry").field("in_flight", &self.in_flight).field("started", &self.started).finish()
    }
}

impl Default for Telemetry {
    fn default() -> Telemetry {
        Telemetry::new()
    }
}

impl Telemetry {
    /// A recorder with nothing counted yet; uptime counts from now.
    pub fn new() -> Telemetry {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Full(REQUEST_SECONDS.into()), LATENCY_BUCKETS)
            .expect("the bucket list is not empty")
            // Gauges are all set again just before each render (see `render`): one not set
            // then, the info series of an index no longer in force, is dropped.
            .idle_timeout(MetricKindMask::GAUGE, Some(Duration::ZERO))
            .build_recorder();
        let handle = recorder.handle();
        let process = metrics_process::Collector::default();
        let telemetry = Telemetry {
            recorder,
            handle,
            process,
            in_flight: AtomicI64::new(0),
            requests: (0..ROUTES.len() * STATUSES).map(|_| OnceLock::new()).collect(),
            seconds: Default::default(),
            recorded: AtomicU64::new(0),
            started: Instant::now(),
            last_poll_error: Default::default(),
        };
        telemetry.with(|| {
            metrics::describe_counter!(REQUESTS, "Requests answered, by route and status.");
            metrics::describe_histogram!(
                REQUEST_SECONDS,
                metrics::Unit::Seconds,
                "Time to answer a request, by route."
            );
            metrics::describe_gauge!(IN_FLIGHT, "Requests being answered now.");
            metrics::describe_gauge!(
                INDEX_LOAD_SECONDS,
                metrics::Unit::Seconds,
                "Time the index in force took to read, check and prepare."
            );
            metrics::describe_gauge!(INDEX_SERVICES, "Published services in the index in force.");
            metrics::describe_gauge!(INDEX_INFO, "The index in force (its content hash as a label); always 1.");
            metrics::describe_counter!(RELOADS, "Index reloads on SIGHUP, by outcome (ok, failed).");
            metrics::describe_counter!(
                POLLS,
                "Polls of the publication (--from), by outcome (unchanged, swapped, failed)."
            );
            telemetry.process.describe();
        });
        telemetry
    }

    fn with<T>(&self, f: impl FnOnce() -> T) -> T {
        metrics::with_local_recorder(&self.recorder, f)
    }

    /// Time since the server started.
    pub(crate) fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    /// Counts one answered request.
    pub fn record(&self, route: &'static str, status: StatusCode, took: Duration) {
        let counter = || metrics::counter!(REQUESTS, "route" => route, "status" => status.as_u16().to_string());
        let histogram = || metrics::histogram!(REQUEST_SECONDS, "route" => route);
        match ROUTES.iter().position(|&r| r == route) {
            Some(r) => {
                let slot = status.as_u16().checked_sub(STATUSES_FROM).map(usize::from).filter(|&s| s < STATUSES);
                match slot {
                    Some(s) => self.requests[r * STATUSES + s].get_or_init(|| self.with(counter)).increment(1),
                    None => self.with(counter).increment(1),
                }
                self.seconds[r].get_or_init(|| self.with(histogram)).record(took.as_secs_f64());
            }
            None => self.with(|| {
                counter().increment(1);
                histogram().record(took.as_secs_f64());
            }),
        }
        if self.recorded.fetch_add(1, Ordering::Relaxed) % UPKEEP_EVERY == UPKEEP_EVERY - 1 {
            self.handle.run_upkeep();
        }
    }

    /// Counts one SIGHUP reload and whether it put a new index in force.
    pub fn reloaded(&self, ok: bool) {
        let outcome = if ok { "ok" } else { "failed" };
        self.with(|| metrics::counter!(RELOADS, "outcome" => outcome).increment(1));
    }

    /// Counts one poll of the publication; a failed one is remembered for `/healthz`,
    /// credentials redacted and cut short (a store's answer can be of any size).
    pub(crate) fn polled(&self, outcome: Result<bool, String>) {
        let outcome = outcome.map_err(|message| crate::publish::store::redact(&message));
        let label = match &outcome {
            Ok(true) => "swapped",
            Ok(false) => "unchanged",
            Err(_) => "failed",
        };
        self.with(|| metrics::counter!(POLLS, "outcome" => label).increment(1));
        *self.last_poll_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome.err());
    }

    /// What the last poll failed with (`Some(None)`: it did not fail; `None`: no poll yet).
    pub fn last_poll_error(&self) -> Option<Option<String>> {
        self.last_poll_error.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Every metric in the Prometheus text format, with the index figures of `state` (when
    /// an index is in force).
    pub fn render(&self, state: Option<&AppState>) -> String {
        self.with(|| {
            metrics::gauge!(IN_FLIGHT).set(self.in_flight.load(Ordering::Relaxed) as f64);
            if let Some(state) = state {
                metrics::gauge!(INDEX_SERVICES).set(state.index().service_count() as f64);
                metrics::gauge!(INDEX_LOAD_SECONDS).set(state.load_time().as_secs_f64());
                metrics::gauge!(INDEX_INFO, "index_hash" => state.index_hash().to_owned()).set(1.0);
            }
            self.process.collect();
        });
        self.handle.render()
    }

    /// Tracks a request from here until the returned guard drops.
    pub(super) fn enter(&self) -> InFlight<'_> {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(&self.in_flight)
    }
}

/// One request in flight; counted down on drop, even when the request is cancelled.
pub(super) struct InFlight<'a>(&'a AtomicI64);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The body of `/healthz`.
#[derive(Debug, Serialize)]
pub(crate) struct Health<'a> {
    /// `ok` (200) while an index is in force, else `starting` (503: `--from` before its
    /// first index).
    pub status: &'static str,
    /// Published services in the index in force.
    pub services: Option<usize>,
    /// Content hash of the index file in force: the `index` of the build's manifest.
    pub index_hash: Option<&'a str>,
    /// Whole seconds since the server started.
    pub uptime_seconds: u64,
    /// Version of svcdir-search.
    pub version: &'static str,
    /// With `--from`: what the last poll of the publication failed with, `null` once a poll
    /// succeeds. The status stays 200 while an index is in force, so a load balancer keeps
    /// every replica through a store outage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_poll_error: Option<Option<String>>,
}

/// `GET /healthz` and `GET /metrics` over `live` and `telemetry` (HEAD too; other methods 405).
pub(crate) fn routes(live: Arc<LiveState>, telemetry: Arc<Telemetry>) -> Router {
    Router::new().route("/healthz", get(healthz)).route("/metrics", get(metrics)).with_state((live, telemetry))
}

type OperatorState = State<(Arc<LiveState>, Arc<Telemetry>)>;

async fn healthz(State((live, telemetry)): OperatorState) -> Response {
    let state = live.load();
    let body = Health {
        status: if state.is_some() { "ok" } else { "starting" },
        services: state.as_ref().map(|s| s.index().service_count()),
        index_hash: state.as_ref().map(|s| s.index_hash()),
        uptime_seconds: telemetry.uptime().as_secs(),
        version: env!("CARGO_PKG_VERSION"),
        last_poll_error: telemetry.last_poll_error(),
    };
    let status = if state.is_some() { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    match serde_json::to_vec(&body) {
        Ok(bytes) => {
            (status, [(header::CONTENT_TYPE, JSON), (header::CACHE_CONTROL, CACHE_NONE)], bytes).into_response()
        }
        Err(_) => super::ApiError::Internal.into_response(),
    }
}

async fn metrics(State((live, telemetry)): OperatorState) -> Response {
    let text = telemetry.render(live.load().as_deref());
    let mut response = (StatusCode::OK, text).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(METRICS_CONTENT_TYPE));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_labels_are_a_closed_set() {
        assert_eq!(route_label("/api/v4/services"), V4_PATH);
        assert_eq!(route_label("/api/v4/services/"), V4_PATH);
        assert_eq!(route_label("/api/v3/search"), V3_PATH);
        assert_eq!(route_label("/healthz"), "/healthz");
        assert_eq!(route_label("/metrics"), "/metrics");
        for path in ["/", "/wp-login.php", "/api/v4/services/x", "/HEALTHZ", "/metrics/"] {
            assert_eq!(route_label(path), "other", "{path}");
        }
    }

    #[test]
    fn requests_are_counted_by_route_and_status_with_a_histogram() {
        let telemetry = Telemetry::new();
        telemetry.record(V4_PATH, StatusCode::OK, Duration::from_millis(3));
        telemetry.record(V4_PATH, StatusCode::OK, Duration::from_millis(30));
        telemetry.record("other", StatusCode::NOT_FOUND, Duration::from_micros(100));
        let text = telemetry.handle.render();
        assert!(text.contains(r#"svcdir_http_requests_total{route="/api/v4/services/",status="200"} 2"#), "{text}");
        assert!(text.contains(r#"svcdir_http_requests_total{route="other",status="404"} 1"#), "{text}");
        assert!(text.contains("# TYPE svcdir_http_request_duration_seconds histogram"), "{text}");
        assert!(
            text.contains(r#"svcdir_http_request_duration_seconds_bucket{route="/api/v4/services/",le="0.005"} 1"#)
        );
        assert!(text.contains(r#"svcdir_http_request_duration_seconds_count{route="/api/v4/services/"} 2"#));
    }

    #[test]
    fn a_huge_poll_error_is_kept_cut_short() {
        let telemetry = Telemetry::new();
        telemetry.polled(Err(format!("cannot read http://user:pass@store/x: {}", "x".repeat(1 << 20))));
        let kept = telemetry.last_poll_error().flatten().expect("the error");
        assert!(kept.len() < 1024 && !kept.contains("pass"), "{kept}");
        telemetry.polled(Ok(false));
        assert_eq!(telemetry.last_poll_error(), Some(None));
    }

    #[test]
    fn samples_drained_by_the_upkeep_are_still_counted() {
        let telemetry = Telemetry::new();
        let n = UPKEEP_EVERY * 2 + 5;
        for k in 0..n {
            let status = if k % 2 == 0 { StatusCode::OK } else { StatusCode::NOT_FOUND };
            telemetry.record(V3_PATH, status, Duration::from_micros(k % 700));
        }
        // A route label outside the closed set and a status past the handles' range take
        // the registry's path and are counted the same.
        telemetry.record("elsewhere", StatusCode::OK, Duration::ZERO);
        telemetry.record(V3_PATH, StatusCode::from_u16(999).unwrap(), Duration::ZERO);
        let text = telemetry.handle.render();
        let count = |series: &str| {
            text.lines()
                .find_map(|line| line.strip_prefix(series)?.trim().parse::<u64>().ok())
                .unwrap_or_else(|| panic!("{series} in {text}"))
        };
        assert_eq!(count(r#"svcdir_http_requests_total{route="/api/v3/search/",status="200"}"#), n.div_ceil(2));
        assert_eq!(count(r#"svcdir_http_requests_total{route="/api/v3/search/",status="404"}"#), n / 2);
        assert_eq!(count(r#"svcdir_http_requests_total{route="/api/v3/search/",status="999"}"#), 1);
        assert_eq!(count(r#"svcdir_http_requests_total{route="elsewhere",status="200"}"#), 1);
        assert_eq!(count(r#"svcdir_http_request_duration_seconds_count{route="/api/v3/search/"}"#), n + 1);
        // 0 to 699 us: all of them within 1 ms.
        assert_eq!(count(r#"svcdir_http_request_duration_seconds_bucket{route="/api/v3/search/",le="0.001"}"#), n + 1);
    }
}
