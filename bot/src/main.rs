//! The `navin` binary. Only `serve` for now; the lead's CLI replaces this file.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use navin_bot::config::ServeArgs;

#[derive(Debug, Parser)]
#[command(name = "navin", version, about = "Navin: plans and missions on GitHub")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the GitHub App webhook server.
    Serve(ServeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    match cli.command {
        Command::Serve(args) => {
            let runtime = match tokio::runtime::Runtime::new() {
                Ok(rt) => rt,
                Err(e) => {
                    eprintln!("navin: cannot start the async runtime: {e}");
                    return ExitCode::FAILURE;
                }
            };
            match runtime.block_on(navin_bot::server::run(args)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("navin serve: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
