//! Tests of the command parser, named after what a commenter would see.

mod campaign;
mod commands;
mod edits;
mod errors;
mod help;
mod markdown;
mod props;
mod step_add;

use super::{parse_comment, Command, CommandError, StepId};

/// What every command line of `body` parsed to.
fn results(body: &str) -> Vec<Result<Command, CommandError>> {
    parse_comment(body).into_iter().map(|p| p.result).collect()
}

/// The single command line of `body`.
fn one(body: &str) -> Result<Command, CommandError> {
    let mut all = results(body);
    assert_eq!(
        all.len(),
        1,
        "expected one command in {body:?}, got {all:?}"
    );
    all.remove(0)
}

fn step(id: &str) -> StepId {
    StepId::parse(id).expect("test step id is valid")
}
