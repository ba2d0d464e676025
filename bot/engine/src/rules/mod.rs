//! Pure decisions with no I/O: which reviews approve a plan, what the repository's plan settings require, how a task list or a plan becomes mission steps, and who may change a mission.

pub mod approvals;
pub mod plan_policy;
pub mod steps;
pub mod token_scope;
