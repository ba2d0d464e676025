//! What the planner's composition tests share: planning an in-memory repository and finding a proposed change.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is a failed test

use navin_ledger::plan::FileChange;

use crate::*;

/// Plans `request` on a repository holding `files`.
pub(super) fn plan_of(files: &[(&str, &str)], request: &str) -> PlannerOutput {
    let src = MemorySource::from_files(
        "t",
        files.iter().map(|(p, c)| (p.to_string(), c.to_string())),
    );
    plan_repository(&src, request, &PlannerOptions::default()).unwrap()
}

/// The proposed change for `path`, if the plan has one.
pub(super) fn change<'a>(out: &'a PlannerOutput, path: &str) -> Option<&'a FileChange> {
    out.plan.changes.iter().find(|c| c.path == path)
}
