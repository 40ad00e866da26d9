//! `svcdir-search`: the search server. Parses arguments, sets up the log, loads the index,
//! serves until SIGTERM or Ctrl-C, and reads the index again on SIGHUP.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;
use svcdir::cli::SearchArgs;
use svcdir::server::follow::{self, Follower};
use svcdir::server::{self, AppState, Limits, LiveState, Telemetry};

fn main() -> ExitCode {
    let args = SearchArgs::parse();
    let _log = server::log::init(args.log_format);
    // This runtime accepts connections, follows the publication and reloads; the
    // connections are served on runtimes of their own, one per core (server::serve).
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            tracing::error!("cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(run(args));
    // A read stuck in a blocking thread (a file system that never answers) must not hold
    // the exit after SIGTERM: the runtime waits for such threads only this long.
    runtime.shutdown_timeout(Duration::from_secs(1));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!("{err:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: SearchArgs) -> anyhow::Result<()> {
    let base_url = args.base_url.as_deref().map(|url| svcdir::config::origin("--base-url", url)).transpose()?;
    // Uptime counts from before the index is read.
    let telemetry = Arc::new(Telemetry::new());

    let live = match &args.from {
        None => Arc::new(LiveState::new(Arc::new(read_index(&args, base_url.clone())?))),
        Some(source) => {
            let follower = Follower::open(source, args.cache.as_deref(), base_url.clone(), args.max_index_bytes)?;
            tracing::info!(from = %source, poll_seconds = args.poll, "following the publication");
            let live = Arc::new(LiveState::empty());
            tokio::spawn(follow::follow(follower, live.clone(), telemetry.clone(), Duration::from_secs(args.poll)));
            live
        }
    };
    let limits = Limits {
        request_timeout: Duration::from_millis(args.request_timeout_ms),
        max_concurrent: args.max_concurrent as usize,
        max_connections: args.max_connections as usize,
        header_timeout: Duration::from_millis(args.header_timeout_ms),
        ..Limits::default()
    };
    // With --from, the publication is followed and SIGHUP polls it at once (follow.rs);
    // without it, SIGHUP reads --index FILE again.
    #[cfg(unix)]
    if args.from.is_none() {
        server::reload::reload_on_sighup(live.clone(), args.index.clone(), base_url, Some(telemetry.clone()))
            .context("cannot listen for SIGHUP")?;
    }

    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let address = listener.local_addr().context("cannot read the listening address")?;
    // The address last on the line: scripts and tests read it from there.
    tracing::info!("listening on http://{address}");
    server::serve(listener, live, telemetry, limits, server::shutdown_signal()).await.context("server failed")?;
    tracing::info!("stopped");
    Ok(())
}

/// Reads `--index FILE`, logging what it holds.
fn read_index(args: &SearchArgs, base_url: Option<String>) -> anyhow::Result<AppState> {
    let mut state = AppState::read(&args.index)?;
    let index = state.index();
    tracing::info!(
        path = %args.index.display(),
        services = index.service_count(),
        locations = index.location_count(),
        postcodes = index.postcodes().len(),
        words = index.term_count(),
        index_hash = state.index_hash(),
        load_ms = state.load_time().as_millis() as u64,
        "loaded the index",
    );
    if let Some(base_url) = base_url {
        state = state.with_base_url(base_url);
    }
    tracing::info!(base_url = %state.publication().base_url, "links use this base URL");
    Ok(state)
}
