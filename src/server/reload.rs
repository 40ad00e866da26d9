//! Taking a new index without a restart: on SIGHUP, `svcdir-search` and `svcdir serve` read
//! their index file again and put it in force for the requests that start from then on
//! (issue 6; issue 14: logged, counted, shown by `/healthz`). A file that cannot be read or
//! is not a valid index is refused, and the index in force keeps serving.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::{LiveState, Telemetry};

/// Reads the index at `path` again and puts it in force, logging the outcome (and counting
/// it in `telemetry`, when given). Blocking: reading a large index takes a while.
pub(crate) fn reload_now(live: &LiveState, path: &Path, base_url: Option<&str>, telemetry: Option<&Telemetry>) -> bool {
    let started = Instant::now();
    let outcome = live.reload(path, base_url);
    if let Some(telemetry) = telemetry {
        telemetry.reloaded(outcome.is_ok());
    }
    match outcome {
        Ok(state) => {
            tracing::info!(
                path = %path.display(),
                services = state.index().service_count(),
                index_hash = state.index_hash(),
                load_ms = started.elapsed().as_millis() as u64,
                "reloaded the index",
            );
            true
        }
        Err(err) => {
            tracing::error!(path = %path.display(), error = %err, "reload failed, keeping the index in force");
            false
        }
    }
}

/// Listens for SIGHUP now (so that one sent as soon as the server says it listens is a
/// reload, never the default action, which ends the process) and on each one runs
/// `reload_now` on the blocking pool. Must be called inside a Tokio runtime.
#[cfg(unix)]
pub fn reload_on_sighup(
    live: Arc<LiveState>,
    path: PathBuf,
    base_url: Option<String>,
    telemetry: Option<Arc<Telemetry>>,
) -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hangups = signal(SignalKind::hangup())?;
    tokio::spawn(async move {
        while hangups.recv().await.is_some() {
            tracing::info!(path = %path.display(), "SIGHUP: reading the index again");
            let (live, path, base_url, telemetry) = (live.clone(), path.clone(), base_url.clone(), telemetry.clone());
            // Off the request workers; one reload at a time (the next SIGHUP waits for it).
            let job = move || reload_now(&live, &path, base_url.as_deref(), telemetry.as_deref());
            if let Err(err) = tokio::task::spawn_blocking(job).await {
                tracing::error!(error = %err, "reload failed, keeping the index in force");
            }
        }
    });
    Ok(())
}
