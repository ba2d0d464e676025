//! Pure ledger operations: `(ledger, operation, now, actor) -> (ledger', effects)`, no I/O.

mod attempts;
mod close;
mod ctx;
mod done_gate;
mod mission;
mod progress;
mod steps;

pub use attempts::{continued_pr, next_number as next_attempt_number, pr_left_open};
pub use close::{close_step, StepVerdict};
pub use ctx::{Change, ChangeFrom, Checkout, Ctx};

use crate::error::RuleError;
use crate::model::{
    AttemptOutcome, Budget, Evidence, HistoryEntry, Ledger, MissionMode, MissionStatus, NextActor,
    Origin, PauseReason, StagePolicy, TaskStatus, Validation, HISTORY_WINDOW,
};

/// A step to add to the board.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NewTask {
    pub id: String,
    pub title: String,
    pub description: Option<String>,
    pub depends_on: Vec<String>,
    pub acceptance: Option<String>,
    pub validation: Validation,
    pub agent: Option<String>,
    /// The step's validation commands, in order (see [`crate::model::Task::commands`]).
    pub commands: Vec<String>,
    /// The plan stage it belongs to (see [`crate::model::Task::stage`]).
    pub stage: Option<u32>,
    /// Why starting it is destructive (see [`crate::model::Task::destructive`]).
    pub destructive: Option<String>,
    /// The commit its work starts from (see [`crate::model::Task::base`]).
    pub base: Option<String>,
    /// The files the plan proposes for it (see [`crate::model::Task::scope`]).
    pub scope: Vec<String>,
    /// See [`crate::model::Task::required`].
    pub required: Vec<String>,
    /// See [`crate::model::Task::fail_to_pass`].
    pub fail_to_pass: bool,
}

/// Starts (or replaces) the mission.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InitArgs {
    pub goal: String,
    pub constraints: Vec<String>,
    pub acceptance_criteria: Vec<String>,
    /// What is known when the mission starts (a plan's answered questions and accepted
    /// defaults).
    pub facts: Vec<String>,
    /// What a person still has to say (a plan's questions with neither answer nor default).
    pub missing_info: Vec<String>,
    pub replace: bool,
    /// A draft mission (from an approved plan) waits for an explicit start.
    pub draft: bool,
    pub origin: Option<Origin>,
    pub budget: Option<Budget>,
    pub steps: Vec<NewTask>,
    pub mode: MissionMode,
    /// Whether finished stages wait for `/continue` (used when the steps have stages).
    pub stages: StagePolicy,
    /// Plan questions whose default stands after a wait (`questions.default_after`);
    /// each question is also in `missing_info`.
    pub pending_defaults: Vec<crate::model::PendingDefault>,
    /// The repository's validation commands now (see [`crate::model::Mission::commands`]).
    pub commands: Option<crate::model::ValidationCommands>,
    /// The commit the work of every step without dependencies starts from, when the
    /// step names none: the plan's commit for a mission made from a plan.
    pub base: Option<String>,
}

/// One `progress` report on the current step.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProgressArgs {
    pub step: String,
    pub real_progress: bool,
    /// A hash of (tool, args, target, result): repeats drive loop detection.
    pub fingerprint: Option<String>,
    pub tokens: u64,
    pub cost_usd: f64,
    pub evidence: Option<Evidence>,
}

/// A human (or agent) edit of the task ledger.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UpdateArgs {
    pub goal: Option<String>,
    pub add_facts: Vec<String>,
    pub add_missing_info: Vec<String>,
    /// Missing-info entries with their answers: each entry leaves missing info and
    /// `entry → answer` becomes a fact (`/answer`).
    pub answers: Vec<(String, String)>,
    /// Missing-info entries now answered (matched exactly); they move to facts.
    pub resolve_missing_info: Vec<String>,
    pub add_constraints: Vec<String>,
    pub add_acceptance_criteria: Vec<String>,
    pub budget: Option<Budget>,
    pub next_actor: Option<NextActor>,
    pub reason: String,
}

impl UpdateArgs {
    /// The first part of this edit an agent may not make, by its field name: facts and
    /// answers (only people know them), the goal, the budget and who acts next.
    pub fn agent_forbidden(&self) -> Option<&'static str> {
        if !self.add_facts.is_empty() {
            Some("facts")
        } else if !self.answers.is_empty() || !self.resolve_missing_info.is_empty() {
            Some("missing info (answering it)")
        } else if self.goal.is_some() {
            Some("the goal")
        } else if self.budget.is_some() {
            Some("the budget")
        } else if self.next_actor.is_some() {
            Some("the next actor")
        } else {
            None
        }
    }
}

/// Everything that changes a ledger.
#[derive(Debug, Clone, PartialEq)]
pub enum Operation {
    Init(InitArgs),
    AddSteps(Vec<NewTask>),
    Start {
        step: String,
    },
    Progress(ProgressArgs),
    Done {
        step: String,
        evidence: Option<Evidence>,
    },
    Fail {
        step: String,
        evidence: Option<Evidence>,
        reason: String,
        /// How the attempt under way ended (`failed` for a report, `ci_red`, …).
        outcome: AttemptOutcome,
    },
    Retry {
        step: String,
    },
    Replan {
        step: String,
        reason: String,
    },
    /// Records evidence (e.g. one of several required checks) without a status change.
    RecordEvidence {
        step: String,
        evidence: Evidence,
    },
    /// A validation run Navin made itself (`navin board verify`): a local-run evidence
    /// record carrying its [`crate::model::RunRecord`]. Front ends build it only from a
    /// process they ran, never from input.
    RecordRun {
        step: String,
        evidence: Evidence,
    },
    Link {
        step: String,
        pr: Option<u64>,
        head_sha: Option<String>,
        branch: Option<String>,
    },
    /// A pull request took the step up: a planned step whose dependencies are done goes
    /// in progress, with `by` (the PR's author) as the next actor. Anything else is
    /// left as it is: the link alone is recorded by [`Operation::Link`].
    Claim {
        step: String,
        pr: u64,
        by: crate::model::NextActor,
    },
    /// A completed CI round on the step's linked head, as an action on the progress
    /// ledger: real progress when a required check is green that was not green in the
    /// previous round; the fingerprint of the failure drives loop detection; rounds
    /// without progress count towards a stall. A head counts once: a later round on the
    /// same head only updates what the step shows.
    CiRound(crate::model::CiRound, String),
    /// What an agent's work on a step cost (its tokens and dollars, as its runner
    /// reports them): debited against the budget, which pauses the mission (`budget`)
    /// once exceeded. Not a progress report: it counts towards no stall. Accepted while
    /// paused, since the spend happened.
    Usage {
        step: String,
        tokens: u64,
        cost_usd: f64,
    },
    /// An agent run on the step reported no spend at all (no execution file, no usage
    /// events, no usage lines): debited 0, and the attempt is marked so the panel warns
    /// that the caps cannot see it. Accepted while paused, like `usage`.
    UsageUnreported {
        step: String,
    },
    /// The step's linked pull request was merged at `head_sha`.
    Merged {
        step: String,
        pr: u64,
        head_sha: String,
    },
    /// What the step's pull request changes outside the mission's plan, on its linked
    /// head (`None`: nothing). Navin's reading of GitHub, never an agent's.
    Drift {
        step: String,
        drift: Option<crate::model::PlanDrift>,
    },
    /// The step was handed to an issue of its own (the sub-agent brief). Recorded once:
    /// a step that already has an issue keeps it, so a retried dispatch opens no second one.
    Dispatched {
        step: String,
        issue: u64,
        /// Who the step went to (`copilot`, `workflow`, `people`): its first attempt.
        agent: String,
    },
    /// Navin starts attempt `number` of a step (the closed agent loop): the next number
    /// only, and only when no attempt is open, so each start applies once. The attempt
    /// gets its pull request when one takes the step up or gets a new head.
    Attempt {
        step: String,
        number: u32,
        agent: String,
        /// The new attempt starts over rather than continue the last one's pull request
        /// (red CI under `agents.after_red`): the last attempt is marked so.
        start_over: bool,
    },
    /// Whole-plan rewrite: only with a changed goal.
    Rewrite {
        goal: String,
        reason: String,
        steps: Vec<NewTask>,
    },
    Pause {
        reason: PauseReason,
        note: String,
    },
    Resume {
        note: String,
    },
    Update(UpdateArgs),
    /// A question only a person can answer (the `ask_user` tool): it joins the
    /// missing info and the mission pauses (`human`) until it is answered. Accepted
    /// while paused, so a second question waits with the first.
    Ask {
        question: String,
        /// The step that waits on the answer, when one does.
        step: Option<String>,
    },
    /// A writer inspected the finished stage and releases the next one.
    Continue {
        note: String,
    },
    /// Questions whose default was due by `now` get it as a fact (`questions.default_after`).
    ApplyDefaults,
    Activate,
    Close {
        status: MissionStatus,
        reason: String,
    },
    /// Writes the content of an older version (read by the store) as a new version.
    Rollback {
        to_version: u64,
        target: Box<Ledger>,
    },
}

impl Operation {
    /// The name used in commit messages and history.
    pub fn name(&self) -> &'static str {
        match self {
            Operation::Init(_) => "init",
            Operation::AddSteps(_) => "add",
            Operation::Start { .. } => "start",
            Operation::Progress(_) => "progress",
            Operation::Done { .. } => "done",
            Operation::Fail { .. } => "fail",
            Operation::Retry { .. } => "retry",
            Operation::Replan { .. } => "replan",
            Operation::RecordEvidence { .. } => "evidence",
            Operation::RecordRun { .. } => "verify",
            Operation::Link { .. } => "link",
            Operation::Claim { .. } => "claim",
            Operation::Merged { .. } => "merged",
            Operation::CiRound(..) => "ci-round",
            Operation::Usage { .. } => "usage",
            Operation::UsageUnreported { .. } => "usage-unreported",
            Operation::Dispatched { .. } => "dispatch",
            Operation::Attempt { .. } => "attempt",
            Operation::Drift { .. } => "drift",
            Operation::Rewrite { .. } => "rewrite",
            Operation::Pause { .. } => "pause",
            Operation::Resume { .. } => "resume",
            Operation::Update(_) => "update",
            Operation::Ask { .. } => "ask",
            Operation::Continue { .. } => "continue",
            Operation::ApplyDefaults => "default",
            Operation::Activate => "activate",
            Operation::Close { .. } => "close",
            Operation::Rollback { .. } => "rollback",
        }
    }

    /// The step an operation is about, for the `Navin-Step` trailer.
    pub fn step(&self) -> Option<&str> {
        match self {
            Operation::Start { step }
            | Operation::Done { step, .. }
            | Operation::Fail { step, .. }
            | Operation::Retry { step }
            | Operation::Replan { step, .. }
            | Operation::RecordEvidence { step, .. }
            | Operation::RecordRun { step, .. }
            | Operation::Link { step, .. }
            | Operation::Claim { step, .. }
            | Operation::Merged { step, .. }
            | Operation::CiRound(_, step)
            | Operation::Usage { step, .. }
            | Operation::UsageUnreported { step }
            | Operation::Dispatched { step, .. }
            | Operation::Attempt { step, .. }
            | Operation::Drift { step, .. } => Some(step),
            Operation::Progress(args) => Some(&args.step),
            _ => None,
        }
    }

    /// Operations a paused mission still accepts.
    fn allowed_while_paused(&self) -> bool {
        matches!(
            self,
            Operation::Resume { .. }
                | Operation::Update(_)
                | Operation::Ask { .. }
                | Operation::ApplyDefaults
                | Operation::Close { .. }
                | Operation::Usage { .. }
                | Operation::UsageUnreported { .. }
        )
    }
}

/// Something the caller may want to act on (notify, dispatch, re-render).
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    StepStarted {
        step: String,
    },
    StepDone {
        step: String,
    },
    StepFailed {
        step: String,
        retry_count: u32,
        max_retries: u32,
    },
    /// Steps reset to planned by a local replan.
    Replanned {
        steps: Vec<String>,
        trigger: ReplanTrigger,
    },
    /// Steps that became ready because of this operation.
    NowReady {
        steps: Vec<String>,
    },
    LoopDetected {
        fingerprint: String,
    },
    Paused {
        reason: PauseReason,
    },
    Resumed,
    MissionClosed {
        status: MissionStatus,
    },
}

/// What caused a local replan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplanTrigger {
    Requested,
    RetriesExhausted,
    Stall,
    Loop,
}

impl ReplanTrigger {
    fn as_str(self) -> &'static str {
        match self {
            ReplanTrigger::Requested => "requested",
            ReplanTrigger::RetriesExhausted => "retries exhausted",
            ReplanTrigger::Stall => "stall",
            ReplanTrigger::Loop => "loop",
        }
    }
}

/// The result of an applied operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    pub ledger: Ledger,
    /// One line for the commit message and history.
    pub reason: String,
    pub effects: Vec<Effect>,
}

/// The outcome of [`apply`]: applied, or recognised as already applied (same op id).
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Applied(Box<Applied>),
    AlreadyApplied { version: u64 },
}

/// Working state of one operation: the new ledger plus what it did.
struct Tx {
    ledger: Ledger,
    changes: Vec<String>,
    effects: Vec<Effect>,
    reason: String,
}

impl Tx {
    fn change(&mut self, text: impl Into<String>) {
        self.changes.push(text.into());
    }
}

/// Resolves a step id on the working board. Every operation file needs it, so it sits
/// with `Tx` rather than in one of them.
fn position(tx: &Tx, step: &str) -> Result<usize, RuleError> {
    tx.ledger
        .board
        .position(step)
        .ok_or_else(|| RuleError::UnknownStep {
            id: step.to_string(),
        })
}

/// Applies `op` to `ledger` (None = no ledger yet) as `ctx.actor` at `ctx.now`.
/// On success every change has bumped the version by one and appended history.
pub fn apply(ledger: Option<&Ledger>, op: &Operation, ctx: &Ctx) -> Result<Outcome, RuleError> {
    if let (Some(current), Some(id)) = (ledger, ctx.op_id.as_deref()) {
        if current
            .mission
            .history
            .iter()
            .any(|h| h.op_id.as_deref() == Some(id))
        {
            return Ok(Outcome::AlreadyApplied {
                version: current.mission.version,
            });
        }
    }
    let current = match (op, ledger) {
        (Operation::Init(args), _) => {
            return mission::init(ledger, args, ctx).map(|a| Outcome::Applied(Box::new(a)))
        }
        (_, Some(current)) => current,
        (_, None) => return Err(RuleError::NoMission),
    };
    gate(current, op)?;
    agent_gate(op, ctx)?;
    let ready_before: std::collections::HashSet<&str> =
        current.ready().iter().map(|t| t.id.as_str()).collect();
    let mut tx = Tx {
        ledger: current.clone(),
        changes: Vec::new(),
        effects: Vec::new(),
        reason: String::new(),
    };
    match op {
        Operation::Init(_) => {} // returned above: init builds a fresh ledger
        Operation::AddSteps(tasks) => steps::add(&mut tx, tasks)?,
        Operation::Start { step } => steps::start(&mut tx, step, ctx)?,
        Operation::Progress(args) => progress::progress(&mut tx, args, ctx)?,
        Operation::Done { step, evidence } => steps::done(&mut tx, step, evidence.as_ref(), ctx)?,
        Operation::Fail {
            step,
            evidence,
            reason,
            outcome,
        } => steps::fail(&mut tx, step, evidence.as_ref(), reason, *outcome, ctx)?,
        Operation::Retry { step } => steps::retry(&mut tx, step)?,
        Operation::Replan { step, reason } => steps::replan(&mut tx, step, reason, ctx)?,
        Operation::RecordEvidence { step, evidence } => {
            steps::record_evidence(&mut tx, step, evidence, ctx)?
        }
        Operation::RecordRun { step, evidence } => steps::record_run(&mut tx, step, evidence, ctx)?,
        Operation::Link {
            step,
            pr,
            head_sha,
            branch,
        } => steps::link(&mut tx, step, *pr, head_sha.as_deref(), branch.as_deref())?,
        Operation::Claim { step, pr, by } => steps::claim(&mut tx, step, *pr, by, ctx)?,
        Operation::CiRound(round, step) => progress::ci_round(&mut tx, step, round, ctx)?,
        Operation::Usage {
            step,
            tokens,
            cost_usd,
        } => progress::usage(&mut tx, step, *tokens, *cost_usd, ctx)?,
        Operation::UsageUnreported { step } => progress::usage_unreported(&mut tx, step)?,
        Operation::Merged { step, pr, head_sha } => steps::merged(&mut tx, step, *pr, head_sha)?,
        Operation::Dispatched { step, issue, agent } => {
            steps::dispatched(&mut tx, step, *issue, agent, ctx)?
        }
        Operation::Attempt {
            step,
            number,
            agent,
            start_over,
        } => attempts::start(&mut tx, step, *number, agent, *start_over, ctx)?,
        Operation::Drift { step, drift } => steps::drift(&mut tx, step, drift.as_ref())?,
        Operation::Rewrite {
            goal,
            reason,
            steps,
        } => mission::rewrite(&mut tx, goal, reason, steps)?,
        Operation::Pause { reason, note } => mission::pause(&mut tx, *reason, note, ctx),
        Operation::Resume { note } => mission::resume(&mut tx, note, ctx)?,
        Operation::Update(args) => mission::update(&mut tx, args)?,
        Operation::Ask { question, step } => mission::ask(&mut tx, question, step.as_deref(), ctx)?,
        Operation::Continue { note } => mission::continue_stage(&mut tx, note, ctx)?,
        Operation::ApplyDefaults => mission::apply_defaults(&mut tx, ctx)?,
        Operation::Activate => mission::activate(&mut tx)?,
        Operation::Close { status, reason } => mission::close(&mut tx, *status, reason, ctx)?,
        Operation::Rollback { to_version, target } => {
            mission::rollback(&mut tx, *to_version, target, ctx)?
        }
    }
    mark_checkpoints(&mut tx, current, op, ctx);
    refresh_status(&mut tx.ledger);
    let now_ready: Vec<String> = tx
        .ledger
        .ready()
        .iter()
        .filter(|t| !ready_before.contains(t.id.as_str()))
        .map(|t| t.id.clone())
        .collect();
    if !now_ready.is_empty() {
        tx.effects.push(Effect::NowReady { steps: now_ready });
    }
    Ok(Outcome::Applied(Box::new(finish(tx, op, ctx))))
}

/// What an agent may not do whatever the mission's state: hand in evidence that could
/// prove a step. Its progress and failure notes are prose; runs are recorded by Navin.
fn agent_gate(op: &Operation, ctx: &Ctx) -> Result<(), RuleError> {
    if !ctx.actor.is_agent() {
        return Ok(());
    }
    let refuse = |step: &str, what: String| {
        Err(RuleError::AgentEvidence {
            step: step.to_string(),
            actor: ctx.actor.to_string(),
            what,
        })
    };
    let note_only = |e: &Evidence| e.kind == crate::model::EvidenceKind::Prose && e.run.is_none();
    match op {
        Operation::Done {
            step,
            evidence: Some(e),
        } => refuse(step, format!("{} on done", e.kind)),
        Operation::RecordEvidence { step, evidence } => {
            refuse(step, format!("{} recorded directly", evidence.kind))
        }
        Operation::Progress(ProgressArgs {
            step,
            evidence: Some(e),
            ..
        }) if !note_only(e) => refuse(step, format!("{} on progress; notes are prose", e.kind)),
        Operation::Fail {
            step,
            evidence: Some(e),
            ..
        } if !note_only(e) => refuse(step, format!("{} on fail; notes are prose", e.kind)),
        Operation::Pause { reason, .. } if *reason != PauseReason::Manual => {
            Err(RuleError::AgentPauseReason { reason: *reason })
        }
        // A merge and a CI round are GitHub's word, never an agent's.
        Operation::Merged { step, .. } => refuse(step, "a merge".to_owned()),
        Operation::CiRound(_, step) => refuse(step, "a CI round".to_owned()),
        // Clearing it would release a step `plan.scope: strict` holds.
        Operation::Drift { step, .. } => refuse(step, "files outside the plan".to_owned()),
        Operation::Update(args) => match args.agent_forbidden() {
            Some(field) => Err(RuleError::AgentUpdate {
                actor: ctx.actor.to_string(),
                field,
            }),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// Refuses operations the mission's status does not admit.
fn gate(ledger: &Ledger, op: &Operation) -> Result<(), RuleError> {
    let mission = &ledger.mission;
    match mission.status {
        MissionStatus::Done | MissionStatus::Failed => Err(RuleError::Finished {
            status: mission.status,
        }),
        MissionStatus::Paused if !op.allowed_while_paused() => Err(RuleError::Paused {
            reason: mission.pause_reason.unwrap_or(PauseReason::Manual),
        }),
        MissionStatus::Draft
            if !matches!(
                op,
                Operation::AddSteps(_)
                    | Operation::Update(_)
                    | Operation::Activate
                    | Operation::Close { .. }
            ) =>
        {
            Err(RuleError::Draft)
        }
        _ => Ok(()),
    }
}

/// Records the automatic checkpoints this operation calls for, all of the state just
/// before it (the store points `refs/navin/checkpoints/v<N>` at that commit): before a
/// replan or a whole-plan rewrite, and before a destructive step goes in progress.
fn mark_checkpoints(tx: &mut Tx, before: &Ledger, op: &Operation, ctx: &Ctx) {
    let mut why: Vec<String> = Vec::new();
    if matches!(op, Operation::Rewrite { .. }) {
        why.push("before the whole-plan rewrite".to_owned());
    }
    for effect in &tx.effects {
        match effect {
            Effect::Replanned { steps, .. } => {
                why.push(format!("before the replan of {}", steps.join(", ")))
            }
            Effect::StepStarted { step } => {
                if let Some(reason) = tx
                    .ledger
                    .board
                    .task(step)
                    .and_then(|t| t.destructive.as_deref())
                {
                    why.push(format!("before {step}, which {reason}"));
                }
            }
            _ => {}
        }
    }
    if why.is_empty() {
        return;
    }
    let marks = &mut tx.ledger.mission.checkpoints;
    marks.push(crate::model::CheckpointMark {
        version: before.mission.version,
        reason: why.join("; "),
        at: ctx.now,
    });
    if marks.len() > crate::model::CHECKPOINT_WINDOW {
        let excess = marks.len() - crate::model::CHECKPOINT_WINDOW;
        marks.drain(..excess);
    }
}

/// Running and blocked follow the board: blocked when nothing can move.
fn refresh_status(ledger: &mut Ledger) {
    if !matches!(
        ledger.mission.status,
        MissionStatus::Running | MissionStatus::Blocked
    ) {
        return;
    }
    let tasks = &ledger.board.tasks;
    let unfinished = tasks.iter().any(|t| t.status != TaskStatus::Done);
    // A finished stage waiting for `/continue` is waiting for a person, not stuck.
    let moving = tasks.iter().any(|t| t.status == TaskStatus::InProgress)
        || !ledger.ready().is_empty()
        || ledger.stages().is_some_and(|s| s.waiting_for_continue);
    ledger.mission.status = if unfinished && !moving {
        MissionStatus::Blocked
    } else {
        MissionStatus::Running
    };
}

/// Bumps the version, syncs steps from the board, appends history.
fn finish(mut tx: Tx, op: &Operation, ctx: &Ctx) -> Applied {
    let mission = &mut tx.ledger.mission;
    mission.version += 1;
    mission.updated_at = ctx.now;
    if tx.reason.is_empty() {
        tx.reason = tx
            .changes
            .first()
            .cloned()
            .unwrap_or_else(|| op.name().to_string());
    }
    mission.history.push(HistoryEntry {
        version: mission.version,
        reason: tx.reason.clone(),
        at: ctx.now,
        actor: ctx.actor.clone(),
        changes: tx.changes,
        operation: op.name().to_string(),
        op_id: ctx.op_id.clone(),
    });
    if mission.history.len() > HISTORY_WINDOW {
        let excess = mission.history.len() - HISTORY_WINDOW;
        mission.history.drain(..excess);
    }
    Applied {
        ledger: tx.ledger,
        reason: tx.reason,
        effects: tx.effects,
    }
}

fn require_reason(reason: &str, operation: &'static str) -> Result<String, RuleError> {
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(RuleError::ReasonRequired { operation });
    }
    Ok(reason.to_string())
}

#[cfg(test)]
mod tests;
