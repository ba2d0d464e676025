//! The evidence policy of DESIGN.md: which CI runs prove a mission step, as pure decisions over observed runs.

mod link;
mod message;
mod observation;
mod verdict;

#[cfg(test)]
mod tests;

pub use link::{step_from_pr, step_from_pr_in};
pub use message::missing_checks_message;
pub use observation::{
    parse_time, AppRef, CheckObservation, CheckRunList, CheckRunPayload, CheckStatus, Conclusion,
    ConclusionClass, RunKind, WorkflowRunPayload, GITHUB_ACTIONS_APP_ID,
};
pub use verdict::{
    evaluate, EvidencePolicy, FinishedCheck, NotApplicable, RunningCheck, Verdict, OWN_CHECK_PREFIX,
};
