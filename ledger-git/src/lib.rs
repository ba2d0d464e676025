//! Navin's domain: mission ledger, task board and plan documents, plus the git2 store for the ledger branch.

pub mod codec;
pub mod digest;
pub mod error;
pub mod model;
pub mod ops;
pub mod paths;
pub mod plan;
pub mod store;

pub use codec::{decode, encode, Corrupt};
pub use error::RuleError;
pub use model::*;
pub use ops::{
    apply, close_step, Applied, Change, ChangeFrom, Checkout, Ctx, Effect, InitArgs, NewTask,
    Operation, Outcome, ProgressArgs, ReplanTrigger, StepVerdict, UpdateArgs,
};
