//! `svcdir-search`: the search server. Parses arguments, loads the index, serves until
//! SIGTERM or Ctrl-C.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use clap::Parser;
use svcdir::cli::SearchArgs;
use svcdir::index::SearchIndex;
use svcdir::server::{self, AppState};

fn main() -> ExitCode {
    let args = SearchArgs::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("svcdir-search: error: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("svcdir-search: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: SearchArgs) -> anyhow::Result<()> {
    let base_url = args.base_url.as_deref().map(|url| svcdir::config::origin("--base-url", url)).transpose()?;

    let started = Instant::now();
    let index = SearchIndex::read(&args.index)?;
    let dir = index.directory();
    eprintln!(
        "svcdir-search: loaded {} in {} ms: {} services, {} organisations, {} locations, {} postcodes, {} words",
        args.index.display(),
        started.elapsed().as_millis(),
        dir.services.len(),
        dir.organisations.len(),
        dir.locations.len(),
        dir.postcodes.postcodes.len(),
        index.term_count(),
    );
    let mut state = AppState::new(index);
    if let Some(base_url) = base_url {
        state = state.with_base_url(base_url);
    }
    eprintln!("svcdir-search: links use base URL {}", state.publication().base_url);

    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let address = listener.local_addr().context("cannot read the listening address")?;
    eprintln!("svcdir-search: listening on http://{address}");
    server::serve(listener, Arc::new(state), server::shutdown_signal()).await.context("server failed")?;
    eprintln!("svcdir-search: stopped");
    Ok(())
}
