//! Why the domain refused an operation: each variant names the rule that fired.

use thiserror::Error;

use crate::model::{MissionStatus, PauseReason, TaskStatus, Validation};

/// A rule refused the operation. Nothing changed; the message says which rule. It names
/// no command of any front end: the CLI, the engine and an MCP client each add their
/// own hint of what to do instead.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum RuleError {
    #[error("there is no mission on this ledger yet")]
    NoMission,
    #[error(
        "a mission is already live (status {status}, goal {goal:?}); close or replace it first"
    )]
    MissionLive { goal: String, status: MissionStatus },
    #[error("the mission is paused ({reason}); only resume, update and reads are accepted")]
    Paused { reason: PauseReason },
    #[error("the mission is {status}; it accepts no further changes")]
    Finished { status: MissionStatus },
    #[error("the mission is a draft; start it before working on steps")]
    Draft,
    #[error("the mission is {status}, not a draft")]
    NotDraft { status: MissionStatus },
    #[error("the mission is not paused")]
    NotPaused,
    #[error("{}", unknown_step(id))]
    UnknownStep { id: String },
    #[error("step id {id:?} is already on the board")]
    DuplicateStep { id: String },
    #[error(
        "step id {id:?} is not valid: use letters, digits and -_. only (at most 100 characters)"
    )]
    InvalidStepId { id: String },
    #[error("step {step:?} depends on unknown step {dependency:?}")]
    UnknownDependency { step: String, dependency: String },
    #[error("step {step:?} cannot depend on itself")]
    SelfDependency { step: String },
    #[error("dependency cycle: {} (each step depends on the next)", path.join(" -> "))]
    Cycle { path: Vec<String> },
    #[error("{step} cannot {operation}: its dependencies {} are not done", pending.join(", "))]
    DependenciesNotDone {
        step: String,
        operation: &'static str,
        pending: Vec<String>,
    },
    #[error("{step} is {status}, so it cannot {operation}{}", transition_hint(operation, *status))]
    InvalidTransition {
        step: String,
        operation: &'static str,
        status: TaskStatus,
    },
    #[error("{step} has validation '{validation}' and no green {wanted} evidence")]
    EvidenceRequired {
        step: String,
        validation: Validation,
        wanted: &'static str,
    },
    #[error("{step} has acceptance criteria and no green evidence")]
    AcceptanceEvidenceRequired { step: String },
    #[error(
        "{step}: a run of a command given on the verifier's command line proves nothing; \
         a step's commands come from its plan or the default branch's validation.commands, \
         and {step} has none, so only CI on a linked pull request can prove it"
    )]
    GivenCommandRun { step: String },
    #[error(
        "{step}: prose evidence counts only when a human closes a manual step; \
         record a green check_run, workflow_run or {validation}_run instead"
    )]
    ProseNotAccepted {
        step: String,
        validation: Validation,
    },
    #[error("{step}: {kind} evidence must name its run (run id, app id, head SHA and a success conclusion), and this one lacks {missing}; CI evidence is recorded from GitHub, not typed")]
    UntraceableRun {
        step: String,
        kind: &'static str,
        missing: String,
    },
    #[error("{actor} cannot hand in evidence ({what}) for {step}: an agent's work is proven only by runs Navin records itself, a green CI run for the step's head or a recorded validation run")]
    AgentEvidence {
        step: String,
        actor: String,
        what: String,
    },
    #[error("{step}: the green {kind} is for commit {run_head}, but the checkout is at {head}; run the validation again on this commit")]
    StaleRun {
        step: String,
        kind: &'static str,
        run_head: String,
        head: String,
    },
    /// The newest recorded run for this commit failed: an earlier green run on the same
    /// commit, or the first of several commands passing, does not outweigh it.
    #[error("{step}: the newest {kind} for {head} failed ({}); fix it, commit and run the validation again", or_no_summary(summary))]
    RedRun {
        step: String,
        kind: &'static str,
        head: String,
        summary: String,
    },
    #[error("{step}: the {kind} counts only on a clean tree, and {where_}; commit or stash the changes and run the validation again")]
    DirtyRun {
        step: String,
        kind: &'static str,
        where_: &'static str,
    },
    /// A green run of the tree the step was handed proves the suite, not the step.
    #[error("{step}: nothing changed between the step's base {base} and {head}; make the step's change, commit it and verify again")]
    NoChange {
        step: String,
        base: String,
        head: String,
    },
    /// The step's pull request changes no file: an empty commit pushed for green CI on
    /// the tree the step was handed.
    #[error("{step}: #{pr} changes no file; a step is done when its pull request makes the step's change: push the work to #{pr}")]
    EmptyPullRequest { step: String, pr: u64 },
    #[error("{step} was never started, so nothing records where its change starts; start it (`navin board start {step}`), make the change, commit and verify")]
    NotStarted { step: String },
    #[error("{step}: the change since the step's base {base} was not measured; run the operation through `navin` in the checkout")]
    ChangeUnmeasured { step: String, base: String },
    #[error("{step}: the change touches files outside the step's scope ({files}), and evidence.scope is refuse; the scope is {scope}. Move that work to its own step or widen the scope")]
    OutOfScope {
        step: String,
        files: String,
        scope: String,
    },
    #[error("{step}: the change leaves files the plan says must change untouched ({files}), and evidence.scope is refuse. Make those changes, or edit the plan to mark the file `Optional: yes`")]
    RequiredUntouched { step: String, files: String },
    #[error("{step} needs a test that fails on the step's base and passes now (its plan pairs the change with its test, or evidence.fail_to_pass is required), and the newest test_run for {head} names none; add or repair the test that shows the change, commit and run `navin board verify {step}` again")]
    NoFailToPass { step: String, head: String },
    #[error("{step}: a recorded run must be a test_run, lint_run or verify_run carrying its run record, and ok must match its exit status")]
    NotARecordedRun { step: String },
    #[error("the mission is paused ({reason}{by}); only a human may resume it. An agent may resume only a manual pause it made itself")]
    ResumeNeedsHuman { reason: PauseReason, by: String },
    #[error("an agent pauses with reason manual, not {reason}")]
    AgentPauseReason { reason: PauseReason },
    /// Facts, answers and the mission's goal and budget are a person's word: an agent
    /// that could write them could answer its own questions or relax its own limits.
    #[error("{actor} may not change {field}: only a person (`/answer`, `/update`, or the CLI as human:NAME) does; an agent asks with ask_user")]
    AgentUpdate { actor: String, field: &'static str },
    #[error("the question is empty; say what a person must answer")]
    EmptyQuestion,
    #[error(
        "{step}: evidence for done must be ok=true (this one failed: {})",
        or_no_summary(summary)
    )]
    EvidenceNotGreen { step: String, summary: String },
    #[error("{step} has used all {max} retries; replan it instead")]
    RetriesExhausted { step: String, max: u32 },
    #[error("attempt {number} of {step} was already started (or another attempt is under way)")]
    AttemptTaken { step: String, number: u32 },
    #[error("a whole-plan rewrite needs a changed goal; use a local replan for a failed step")]
    GoalUnchanged,
    #[error("a reason is required for {operation}")]
    ReasonRequired { operation: &'static str },
    #[error("the goal must not be empty")]
    EmptyGoal,
    #[error("{what} must not be empty")]
    Empty { what: &'static str },
    #[error("a cost must be a finite amount of 0 or more US dollars, not {value}")]
    InvalidCost { value: String },
    #[error("only a human may {operation} (actor is {actor})")]
    HumanOnly {
        operation: &'static str,
        actor: String,
    },
    #[error("cannot close as done: {} not done", pending.join(", "))]
    StepsNotDone { pending: Vec<String> },
    #[error("close takes done or failed, not {status}")]
    InvalidCloseStatus { status: MissionStatus },
    #[error("version {version} is not in this ledger's history (current v{current})")]
    UnknownVersion { version: u64, current: u64 },
    #[error("nothing to update: give at least one change")]
    NothingToUpdate,
    #[error("{step} is in stage {stage}, which is not released yet (released: stage {released}); a writer releases it with /continue once stage {released} is done")]
    StageHeld {
        step: String,
        stage: u32,
        released: u32,
    },
    #[error("this mission has no stages to continue to{}", detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    NoStageToRelease { detail: Option<String> },
    #[error("stage {stage} is not done yet: {} still open; /continue releases the next stage once it is", open.join(", "))]
    StageNotDone { stage: u32, open: Vec<String> },
    #[error("no question has a default due yet")]
    NoDefaultDue,
}

impl RuleError {
    /// A stable, machine-readable name for the rule that refused (the variant in
    /// snake_case), for front ends that answer in structured form (MCP tool errors).
    pub fn code(&self) -> &'static str {
        match self {
            RuleError::NoMission => "no_mission",
            RuleError::MissionLive { .. } => "mission_live",
            RuleError::Paused { .. } => "paused",
            RuleError::Finished { .. } => "finished",
            RuleError::Draft => "draft",
            RuleError::NotDraft { .. } => "not_draft",
            RuleError::NotPaused => "not_paused",
            RuleError::UnknownStep { .. } => "unknown_step",
            RuleError::DuplicateStep { .. } => "duplicate_step",
            RuleError::InvalidStepId { .. } => "invalid_step_id",
            RuleError::UnknownDependency { .. } => "unknown_dependency",
            RuleError::SelfDependency { .. } => "self_dependency",
            RuleError::Cycle { .. } => "cycle",
            RuleError::DependenciesNotDone { .. } => "dependencies_not_done",
            RuleError::InvalidTransition { .. } => "invalid_transition",
            RuleError::EvidenceRequired { .. } => "evidence_required",
            RuleError::AcceptanceEvidenceRequired { .. } => "acceptance_evidence_required",
            RuleError::GivenCommandRun { .. } => "given_command_run",
            RuleError::ProseNotAccepted { .. } => "prose_not_accepted",
            RuleError::UntraceableRun { .. } => "untraceable_run",
            RuleError::AgentEvidence { .. } => "agent_evidence",
            RuleError::StaleRun { .. } => "stale_run",
            RuleError::DirtyRun { .. } => "dirty_run",
            RuleError::RedRun { .. } => "red_run",
            RuleError::NotARecordedRun { .. } => "not_a_recorded_run",
            RuleError::NoChange { .. } | RuleError::EmptyPullRequest { .. } => "no_change",
            RuleError::ChangeUnmeasured { .. } => "change_unmeasured",
            RuleError::NotStarted { .. } => "not_started",
            RuleError::OutOfScope { .. } => "out_of_scope",
            RuleError::RequiredUntouched { .. } => "required_untouched",
            RuleError::NoFailToPass { .. } => "no_fail_to_pass",
            RuleError::ResumeNeedsHuman { .. } => "resume_needs_human",
            RuleError::AgentPauseReason { .. } => "agent_pause_reason",
            RuleError::AgentUpdate { .. } => "agent_update",
            RuleError::EmptyQuestion => "empty_question",
            RuleError::EvidenceNotGreen { .. } => "evidence_not_green",
            RuleError::RetriesExhausted { .. } => "retries_exhausted",
            RuleError::AttemptTaken { .. } => "attempt_taken",
            RuleError::GoalUnchanged => "goal_unchanged",
            RuleError::ReasonRequired { .. } => "reason_required",
            RuleError::EmptyGoal => "empty_goal",
            RuleError::Empty { .. } => "empty",
            RuleError::InvalidCost { .. } => "invalid_cost",
            RuleError::HumanOnly { .. } => "human_only",
            RuleError::StepsNotDone { .. } => "steps_not_done",
            RuleError::InvalidCloseStatus { .. } => "invalid_close_status",
            RuleError::UnknownVersion { .. } => "unknown_version",
            RuleError::NothingToUpdate => "nothing_to_update",
            RuleError::StageHeld { .. } => "stage_held",
            RuleError::NoStageToRelease { .. } => "no_stage_to_release",
            RuleError::StageNotDone { .. } => "stage_not_done",
            RuleError::NoDefaultDue => "no_default_due",
        }
    }
}

/// An empty id is a missing argument, not a step called "": say so.
fn unknown_step(id: &str) -> String {
    if id.trim().is_empty() {
        "no step id given: name the step (e.g. S1)".to_owned()
    } else {
        format!("unknown step {id:?}")
    }
}

/// What would make the transition possible, where one step does it.
fn transition_hint(operation: &str, status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Planned if operation != "start" => "; start it first",
        TaskStatus::Failed if operation != "retry" => "; retry or replan it first",
        TaskStatus::Done => " (it is finished)",
        _ => "",
    }
}

/// A run's summary, quoted, or a note that it had none (never a bare `""`).
fn or_no_summary(summary: &str) -> String {
    if summary.trim().is_empty() {
        "with no summary".to_owned()
    } else {
        format!("{summary:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_red_run_without_a_summary_says_so() {
        let e = RuleError::RedRun {
            step: "S1".into(),
            kind: "test_run",
            head: "abc1234".into(),
            summary: String::new(),
        };
        assert_eq!(
            e.to_string(),
            "S1: the newest test_run for abc1234 failed (with no summary); fix it, commit and run the validation again"
        );
    }
}
