//! The CI-evidence policy (docs/engine.md, "Links and evidence"): which CI runs prove a mission step, as pure decisions over observed runs.

pub mod annotation;
mod decide;
pub mod fingerprint;
mod judge;
mod link;
mod message;
mod observation;
mod round;
mod verdict;

#[cfg(test)]
mod tests;

pub use decide::{
    decide, drift_hold, find_step, pending_dependencies, policy_from, pr_to_merge, steps_on_head,
    Decision,
};
pub use judge::{judge_step, not_done, required_checks, unlinked, Hold, Judged, NotDone};
pub use link::{step_from_pr, step_from_pr_in};
pub use message::missing_checks_message;
pub use observation::{
    parse_time, AppRef, CheckObservation, CheckOutput, CheckRunList, CheckRunPayload, CheckStatus,
    Conclusion, ConclusionClass, RunKind, WorkflowRunPayload, GITHUB_ACTIONS_APP_ID,
};
pub use round::ci_round;
pub use verdict::{
    evaluate, own_checks, run_evidence, EvidencePolicy, FinishedCheck, NotApplicable, RunningCheck,
    Verdict, OWN_CHECK_PREFIX, VERIFY_CHECK,
};
