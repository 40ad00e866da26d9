//! `svcdir`: the static API generator. Parses arguments and calls the library.

use std::process::ExitCode;

use clap::Parser;
use svcdir::cli::{Command, SvcdirCli};

fn main() -> ExitCode {
    let cli = SvcdirCli::parse();
    let result = match cli.command {
        Command::Sample(args) => sample(args),
        Command::Build(_) | Command::Validate(_) => Err(anyhow::anyhow!("not yet built")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(1)
        }
    }
}

fn sample(args: svcdir::cli::SampleArgs) -> anyhow::Result<()> {
    let cfg = svcdir::sample::SampleConfig {
        services: args.services,
        seed: args.seed,
        out: args.out,
    };
    let summary = svcdir::sample::generate(&cfg)?;
    println!(
        "sample: {} organisations, {} locations, {} services, {} postcodes in {}",
        summary.organisations,
        summary.locations,
        summary.services,
        summary.postcodes,
        cfg.out.display()
    );
    Ok(())
}
