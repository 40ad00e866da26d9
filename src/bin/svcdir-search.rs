//! `svcdir-search`: the search server. Parses arguments, loads the index, serves until
//! SIGTERM or Ctrl-C, and reads the index again on SIGHUP.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Parser;
use svcdir::cli::SearchArgs;
use svcdir::index::SearchIndex;
use svcdir::server::{self, AppState, Limits, LiveState, log};

fn main() -> ExitCode {
    let args = SearchArgs::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            log::line(format_args!("svcdir-search: error: cannot start the async runtime: {err}"));
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            log::line(format_args!("svcdir-search: error: {err:#}"));
            ExitCode::FAILURE
        }
    }
}

async fn run(args: SearchArgs) -> anyhow::Result<()> {
    let base_url = args.base_url.as_deref().map(|url| svcdir::config::origin("--base-url", url)).transpose()?;

    let started = Instant::now();
    let index = SearchIndex::read(&args.index)?;
    let dir = index.directory();
    log::line(format_args!(
        "svcdir-search: loaded {} in {} ms: {} services, {} locations, {} postcodes, {} words",
        args.index.display(),
        started.elapsed().as_millis(),
        index.service_count(),
        index.location_count(),
        dir.postcodes.postcodes.len(),
        index.term_count(),
    ));
    let mut state = AppState::new(index);
    if let Some(base_url) = &base_url {
        state = state.with_base_url(base_url.clone());
    }
    log::line(format_args!("svcdir-search: links use base URL {}", state.publication().base_url));
    let live = Arc::new(LiveState::new(Arc::new(state)));
    let limits = Limits {
        request_timeout: Duration::from_millis(args.request_timeout_ms),
        max_concurrent: args.max_concurrent as usize,
        max_connections: args.max_connections as usize,
        header_timeout: Duration::from_millis(args.header_timeout_ms),
        ..Limits::default()
    };
    // Listen for SIGHUP before serving, so that one sent right after the listening line is
    // a reload and never the default action (which ends the process).
    #[cfg(unix)]
    reload_on_sighup(live.clone(), args.index.clone(), base_url)?;

    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let address = listener.local_addr().context("cannot read the listening address")?;
    log::line(format_args!("svcdir-search: listening on http://{address}"));
    server::serve(listener, live, limits, server::shutdown_signal()).await.context("server failed")?;
    log::line(format_args!("svcdir-search: stopped"));
    Ok(())
}

/// On each SIGHUP, reads the index at `path` again and swaps it in for new requests (issue
/// 6: a new index without restart). A failed read logs an error and keeps the index in force.
#[cfg(unix)]
fn reload_on_sighup(live: Arc<LiveState>, path: PathBuf, base_url: Option<String>) -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hangups = signal(SignalKind::hangup()).context("cannot listen for SIGHUP")?;
    tokio::spawn(async move {
        while hangups.recv().await.is_some() {
            let started = Instant::now();
            let (live, path, base_url) = (live.clone(), path.clone(), base_url.clone());
            // Reading and checking a large index takes a while: off the request workers.
            let outcome =
                tokio::task::spawn_blocking(move || live.reload(&path, base_url.as_deref()).map(|state| (state, path)))
                    .await;
            match outcome {
                Ok(Ok((state, path))) => log::line(format_args!(
                    "svcdir-search: reloaded {} in {} ms: {} services",
                    path.display(),
                    started.elapsed().as_millis(),
                    state.index().service_count(),
                )),
                Ok(Err(err)) => {
                    log::line(format_args!("svcdir-search: error: reload failed, keeping the index in force: {err}"))
                }
                Err(err) => {
                    log::line(format_args!("svcdir-search: error: reload failed, keeping the index in force: {err}"))
                }
            }
        }
    });
    Ok(())
}
