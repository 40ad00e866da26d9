//! `svcdir`: the static API generator. Parses arguments, calls the library, reports.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Mutex;

use clap::{ColorChoice, CommandFactory, FromArgMatches};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use svcdir::build::{BuildError, Progress};
use svcdir::cli::{
    BuildArgs, Command, ConvertArgs, NginxConfigArgs, PublishArgs, SampleArgs, SchemaArgs, ServeArgs, SvcdirCli,
    ValidateArgs,
};
use svcdir::config::BuildConfig;
use svcdir::report;

/// svcdir's allocator (issue 27, BENCHMARKS.md): with glibc's, a third of a large build's
/// time went to malloc and free. svcdir-search keeps the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Exit codes: 0 success, 1 bad data or a failed run, 2 bad usage (clap's own).
const EXIT_FAILURE: u8 = 1;
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let mut command = SvcdirCli::command();
    // https://no-color.org: any non-empty NO_COLOR turns colour off. clap's own detection
    // also honours it; saying so explicitly keeps help and errors plain whatever the terminal.
    if no_color() {
        command = command.color(ColorChoice::Never);
    }
    let matches = command.get_matches();
    let cli = SvcdirCli::from_arg_matches(&matches).unwrap_or_else(|err| err.exit());
    match cli.command {
        Command::Build(args) => build(args),
        Command::Validate(args) => validate(args),
        Command::Sample(args) => sample(args),
        Command::NginxConfig(args) => nginx_config(args),
        Command::Serve(args) => serve(args),
        Command::Schema(args) => schema(args),
        Command::Convert(args) => convert(args),
        Command::Publish(args) => publish(args),
        Command::CdnConfig(svcdir::cli::CdnConfigCommand::Cloudflare(args)) => cdn_config_cloudflare(args),
    }
}

/// Whether `NO_COLOR` asks for no colour (set and not empty).
fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

fn build(args: BuildArgs) -> ExitCode {
    let cfg = match BuildConfig::from_args(&args) {
        Ok(cfg) => cfg,
        Err(err) => {
            if args.json {
                println!("{}", report::json_failure(&[report::json_error(None, &err.to_string())], 0));
            }
            eprintln!("error: {err}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let bar = progress_bar(args.quiet || args.json);
    let on_progress = |event: Progress| {
        let bar = bar.lock().expect("progress bar lock");
        match event {
            Progress::Stage(stage) => bar.set_message(stage),
            Progress::Jobs(n) => {
                bar.set_style(pages_style());
                bar.set_length(n as u64);
            }
            Progress::JobDone => bar.inc(1),
        }
    };
    let result = svcdir::build::build(&cfg, &on_progress);
    bar.lock().expect("progress bar lock").finish_and_clear();
    match result {
        Ok(summary) => {
            if args.json {
                println!("{}", report::json_summary(&summary));
            } else if !args.quiet {
                println!("{}", report::describe(&cfg, &summary));
            }
            ExitCode::SUCCESS
        }
        Err(err) => {
            if args.json {
                let body = match &err {
                    BuildError::Data(errors) => report::json_failure(
                        &errors.errors.iter().map(report::data_error).collect::<Vec<_>>(),
                        errors.more,
                    ),
                    other => report::json_failure(&[report::json_error(None, &other.to_string())], 0),
                };
                println!("{body}");
            }
            match &err {
                BuildError::Data(_) => eprint!("error: {err}"),
                _ => eprintln!("error: {err}"),
            }
            eprintln!("nothing was changed under {}", cfg.output.display());
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

/// A bar on a terminal, nothing otherwise (CI logs get the one-line summary).
fn progress_bar(quiet: bool) -> Mutex<ProgressBar> {
    let bar = if quiet || !std::io::stderr().is_terminal() {
        ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden())
    } else {
        // A spinner with the stage until the number of pages is known: never "0/0".
        let bar = ProgressBar::new_spinner();
        bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("valid template"));
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        bar
    };
    Mutex::new(bar)
}

/// The bar once the number of pages is known.
fn pages_style() -> ProgressStyle {
    ProgressStyle::with_template("{msg:>10} [{bar:40}] {pos}/{len} pages ({eta})")
        .expect("valid template")
        .progress_chars("=> ")
}

fn validate(args: ValidateArgs) -> ExitCode {
    match svcdir::validate::load_directory(&args.input) {
        Ok(dir) if args.json => {
            let summary = serde_json::json!({
                "ok": true,
                "services": dir.services.len(),
                "organisations": dir.organisations.len(),
                "locations": dir.locations.len(),
                "postcodes": dir.postcodes.postcodes.len(),
            });
            println!("{summary}");
            ExitCode::SUCCESS
        }
        Ok(dir) => {
            println!(
                "{} is valid: {} published services, {} organisations, {} locations, {} live postcodes",
                args.input.display(),
                dir.services.len(),
                dir.organisations.len(),
                dir.locations.len(),
                dir.postcodes.postcodes.len()
            );
            ExitCode::SUCCESS
        }
        Err(errors) => {
            if args.json {
                println!(
                    "{}",
                    report::json_failure(
                        &errors.errors.iter().map(report::data_error).collect::<Vec<_>>(),
                        errors.more
                    )
                );
            }
            eprint!("error: {errors}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

fn sample(args: SampleArgs) -> ExitCode {
    let cfg = svcdir::sample::SampleConfig { services: args.services, seed: args.seed, out: args.out };
    match svcdir::sample::generate(&cfg) {
        Ok(summary) => {
            println!(
                "sample: {} organisations, {} locations, {} services, {} postcodes in {}",
                summary.organisations,
                summary.locations,
                summary.services,
                summary.postcodes,
                cfg.out.display()
            );
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

fn convert(args: ConvertArgs) -> ExitCode {
    let cfg = svcdir::convert::ConvertConfig {
        pages: args.from_import,
        out: args.out,
        categories: args.categories,
        service_areas: args.service_areas,
        postcodes: args.postcodes,
    };
    match svcdir::convert::convert(&cfg) {
        Ok(report) => {
            println!(
                "convert: {} services, {} organisations, {} locations into {}",
                report.services,
                report.organisations,
                report.locations,
                cfg.out.display()
            );
            for line in &report.not_carried {
                println!("  not carried over: {line}");
            }
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

fn schema(args: SchemaArgs) -> ExitCode {
    let schemas = svcdir::schema::all();
    let Some(out) = args.out else {
        let all: serde_json::Map<String, serde_json::Value> =
            schemas.into_iter().map(|(name, schema)| (name.to_owned(), schema)).collect();
        println!("{}", serde_json::to_string_pretty(&all).expect("a JSON value serialises"));
        return ExitCode::SUCCESS;
    };
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(&out)?;
        for (name, schema) in &schemas {
            let text = serde_json::to_string_pretty(schema).expect("a JSON value serialises") + "\n";
            std::fs::write(out.join(name), text)?;
        }
        Ok(())
    };
    match write() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: cannot write the schemas into {}: {err}", out.display());
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

fn nginx_config(args: NginxConfigArgs) -> ExitCode {
    let mut cfg = match svcdir::nginx::NginxConfig::new(&args.public, &args.listen, &args.search, args.daemon_off) {
        Ok(cfg) => cfg,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    cfg.search_cache_mb = args.search_cache_mb;
    if !cfg.looks_built() {
        eprintln!(
            "warning: {} holds no build yet; run `svcdir build --output {}` before starting nginx",
            cfg.public.display(),
            cfg.public.display()
        );
    }
    match cfg.render() {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

fn serve(args: ServeArgs) -> ExitCode {
    let _log = svcdir::server::log::init(args.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            return ExitCode::from(EXIT_FAILURE);
        }
    };
    match runtime.block_on(run_preview(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

async fn run_preview(args: ServeArgs) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let site = svcdir::preview::Site::open(&args.public, &args.index)?;
    // Before anything says it listens: a SIGHUP from then on is a reload, never the end.
    #[cfg(unix)]
    svcdir::server::reload::reload_on_sighup(site.live(), args.index.clone(), None, None)
        .context("cannot listen for SIGHUP")?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let address = listener.local_addr().context("cannot read the listening address")?;
    let url = format!("http://{address}");
    println!("svcdir serve: {} and {} on {url}", args.public.display(), args.index.display());
    println!("  open {url}/api/v4/categories/ (or {url}/api/v4/services/?postcode=... for a search)");
    if site.base_url() != url {
        println!(
            "  note: the build's links (next, permalink, ...) start with {}; build with --base-url {url} to follow them here",
            site.base_url()
        );
    }
    println!("  Ctrl-C stops it; after a rebuild, `kill -HUP {}` reads the search index again", std::process::id());
    // The same start-up event as svcdir-search's, address last.
    tracing::info!("listening on {url}");
    svcdir::preview::serve(listener, site.router(), svcdir::server::shutdown_signal())
        .await
        .context("server failed")?;
    tracing::info!("stopped");
    Ok(())
}

// ---- svcdir publish ----

fn publish(args: PublishArgs) -> ExitCode {
    use svcdir::publish::report;
    let cfg = svcdir::publish::PublishConfig {
        public: args.public.clone(),
        to: args.to.clone(),
        dry_run: args.dry_run,
        max_deletes: args.max_deletes,
        jobs: usize::from(args.jobs),
        verify: args.verify,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            return ExitCode::from(EXIT_FAILURE);
        }
    };
    let bar = progress_bar(args.json);
    if let Ok(bar) = bar.lock() {
        bar.set_style(
            ProgressStyle::with_template("publish [{bar:40}] {pos}/{len} objects ({eta})")
                .expect("valid template")
                .progress_chars("=> "),
        );
    }
    let on_progress = |event: svcdir::publish::Progress| {
        let bar = bar.lock().expect("progress bar lock");
        match event {
            svcdir::publish::Progress::Planned(n) => bar.set_length(n),
            svcdir::publish::Progress::Done => bar.inc(1),
        }
    };
    let result = runtime.block_on(svcdir::publish::publish(&cfg, &on_progress));
    bar.lock().expect("progress bar lock").finish_and_clear();
    match result {
        Ok(summary) => {
            eprint!("{}", report::warnings(&summary));
            if summary.dry_run {
                // The plan: on stdout, or beside the JSON object on stderr.
                let lines = report::plan_lines(&summary);
                if args.json { eprint!("{lines}") } else { print!("{lines}") }
            }
            if args.json {
                println!("{}", report::json_summary(&summary));
            } else {
                println!("{}", report::sentence(&summary, &args.public, &args.to));
            }
            ExitCode::SUCCESS
        }
        Err(err) => {
            if args.json {
                println!("{}", report::json_failure(args.dry_run, &err.to_string()));
            }
            eprintln!("error: {err}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

// ---- svcdir cdn-config cloudflare ----

fn cdn_config_cloudflare(args: svcdir::cli::CloudflareArgs) -> ExitCode {
    let cfg = svcdir::edge::WorkerConfig::new(&args.static_origin, &args.search_origin, &args.listen);
    let cfg = match args.cache_service.as_deref() {
        Some(address) => cfg.and_then(|c| c.with_cache_service(address)),
        None => cfg,
    };
    let cfg = match cfg {
        Ok(cfg) => cfg,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match cfg.write(&args.output) {
        Ok(()) => {
            println!(
                "wrote {dir}/worker.js, {dir}/wrangler.toml and {dir}/workerd.capnp (run locally: workerd serve {dir}/workerd.capnp)",
                dir = args.output.display()
            );
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}
