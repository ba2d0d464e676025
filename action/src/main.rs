//! `navin-action`: Navin inside a GitHub Actions job (the engine on the triggering event, ready-steps matrix, job summary, CI evidence; see action/README.md).

mod brief;
mod capture;
mod ci_files;
mod commands;
mod contain;
mod env;
mod error;
mod event;
mod failure;
mod journal;
mod ledger;
mod modes;
mod progress;
mod run;
mod usage;
mod verify;

use std::process::ExitCode;

use env::ActionEnv;
use error::ActionError;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let lookup = |name: &str| std::env::var(name).ok();
    // Masking comes before anything else is printed, even a usage error.
    for name in ["INPUT_GITHUB_TOKEN", "GITHUB_TOKEN", "INPUT_AGENT_TOKEN"] {
        if let Some(t) = lookup(name).filter(|t| !t.trim().is_empty()) {
            println!("{}", commands::add_mask(&t));
        }
    }
    let env = match ActionEnv::from_lookup(&args, lookup) {
        Ok(env) => env,
        Err(e) => return fail(&e, &[]),
    };
    let tokens = [env.token.clone(), env.agent_token.clone()];
    match modes::run(&env) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e, &tokens),
    }
}

/// Prints the failure as one `::error::` line (the tokens blanked, should any
/// message ever carry one) and exits 1.
fn fail(e: &ActionError, tokens: &[Option<String>]) -> ExitCode {
    let mut message = e.to_string();
    for t in tokens.iter().flatten().filter(|t| !t.is_empty()) {
        message = message.replace(t.as_str(), "***");
    }
    println!("{}", commands::error(&message));
    ExitCode::FAILURE
}
