//! `navin-action`: Navin inside a GitHub Actions job (the engine on the triggering event, ready-steps matrix, job summary, CI evidence; see action/README.md).

mod capture;
mod commands;
mod env;
mod error;
mod event;
mod failure;
mod ledger;
mod modes;

use std::process::ExitCode;

use env::ActionEnv;
use error::ActionError;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let lookup = |name: &str| std::env::var(name).ok();
    // Masking comes before anything else is printed, even a usage error.
    for name in ["INPUT_GITHUB_TOKEN", "GITHUB_TOKEN"] {
        if let Some(t) = lookup(name).filter(|t| !t.trim().is_empty()) {
            println!("{}", commands::add_mask(&t));
        }
    }
    let env = match ActionEnv::from_lookup(&args, lookup) {
        Ok(env) => env,
        Err(e) => return fail(&e, None),
    };
    let token = env.token.clone();
    match modes::run(&env) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e, token.as_deref()),
    }
}

/// Prints the failure as one `::error::` line (the token blanked, should any
/// message ever carry it) and exits 1.
fn fail(e: &ActionError, token: Option<&str>) -> ExitCode {
    let mut message = e.to_string();
    if let Some(t) = token.filter(|t| !t.is_empty()) {
        message = message.replace(t, "***");
    }
    println!("{}", commands::error(&message));
    ExitCode::FAILURE
}
