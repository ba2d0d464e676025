//! Step operations: add, start, progress (stall/loop/budget), done (the evidence gate), fail, retry, replan.

use std::sync::Arc;

use super::attempts;
use super::close::{close_step, listed};
use super::done_gate::short;
use super::{position, require_reason, Ctx, Effect, NewTask, ReplanTrigger, Tx};
use crate::error::RuleError;
use crate::model::index::GraphError;
use crate::model::{
    valid_step_id, AttemptOutcome, Evidence, EvidenceKind, Links, NextActor, PauseReason, Task,
    TaskStatus,
};

/// Turns new-step requests into planned tasks, checking ids and the graph.
pub(super) fn build_tasks(new: &[NewTask], max_retries: u32) -> Result<Vec<Arc<Task>>, RuleError> {
    new.iter()
        .map(|n| {
            if !valid_step_id(&n.id) {
                return Err(RuleError::InvalidStepId { id: n.id.clone() });
            }
            if n.title.trim().is_empty() {
                return Err(RuleError::Empty {
                    what: "a step title",
                });
            }
            Ok(Arc::new(Task {
                id: n.id.clone(),
                title: n.title.trim().to_string(),
                description: n.description.clone().filter(|d| !d.trim().is_empty()),
                status: TaskStatus::Planned,
                depends_on: n.depends_on.clone(),
                acceptance: n.acceptance.clone().filter(|a| !a.trim().is_empty()),
                validation: n.validation,
                commands: n
                    .commands
                    .iter()
                    .map(|c| c.trim().to_owned())
                    .filter(|c| !c.is_empty())
                    .collect(),
                retry_count: 0,
                max_retries,
                agent: n.agent.clone(),
                evidence: Vec::new(),
                links: Links::default(),
                ci_round: None,
                stage: n.stage.filter(|&s| s > 0),
                destructive: n.destructive.clone().filter(|d| !d.trim().is_empty()),
                plan_drift: None,
                attempts: Vec::new(),
                base: n.base.clone().filter(|b| !b.trim().is_empty()),
                scope: n.scope.clone(),
                required: n.required.clone(),
                fail_to_pass: n.fail_to_pass,
            }))
        })
        .collect()
}

/// Maps graph problems to the rule that names them.
pub(super) fn graph_rule(e: GraphError) -> RuleError {
    match e {
        GraphError::Duplicate { id } => RuleError::DuplicateStep { id },
        GraphError::Unknown { task, dependency } => RuleError::UnknownDependency {
            step: task,
            dependency,
        },
        GraphError::SelfDependency { task } => RuleError::SelfDependency { step: task },
        GraphError::Cycle { path } => RuleError::Cycle { path },
    }
}

pub(super) fn add(tx: &mut Tx, new: &[NewTask]) -> Result<(), RuleError> {
    if new.is_empty() {
        return Err(RuleError::Empty {
            what: "the list of steps to add",
        });
    }
    let max_retries = tx.ledger.mission.progress.budget.max_retries;
    let tasks = build_tasks(new, max_retries)?;
    let board = &mut tx.ledger.board;
    board.tasks.extend(tasks);
    board.reindex().map_err(graph_rule)?;
    for n in new {
        let deps = if n.depends_on.is_empty() {
            String::new()
        } else {
            format!(" after {}", n.depends_on.join(", "))
        };
        tx.change(format!("added {} {:?}{deps}", n.id, n.title));
    }
    if new.len() > 1 {
        tx.reason = format!("added {} steps", new.len());
    }
    Ok(())
}

/// A step of a stage not yet released may not start: the stage gate holds it back
/// until a writer's `/continue`.
fn require_released(tx: &Tx, pos: usize) -> Result<(), RuleError> {
    let task = &tx.ledger.board.tasks[pos];
    match (tx.ledger.mission.stage_gate, task.stage) {
        (Some(gate), Some(stage))
            if gate.policy == crate::model::StagePolicy::Pause && stage > gate.released =>
        {
            Err(RuleError::StageHeld {
                step: task.id.clone(),
                stage,
                released: gate.released,
            })
        }
        _ => Ok(()),
    }
}

fn require_deps_done(tx: &Tx, pos: usize, operation: &'static str) -> Result<(), RuleError> {
    let board = &tx.ledger.board;
    let pending = board.index.pending_deps(&board.tasks, pos);
    if pending.is_empty() {
        return Ok(());
    }
    Err(RuleError::DependenciesNotDone {
        step: board.tasks[pos].id.clone(),
        operation,
        pending: pending
            .into_iter()
            .map(|p| board.tasks[p].id.clone())
            .collect(),
    })
}

pub(super) fn start(tx: &mut Tx, step: &str, ctx: &Ctx) -> Result<(), RuleError> {
    let pos = position(tx, step)?;
    let status = tx.ledger.board.tasks[pos].status;
    if status != TaskStatus::Planned {
        return Err(RuleError::InvalidTransition {
            step: step.to_string(),
            operation: "start",
            status,
        });
    }
    require_deps_done(tx, pos, "start")?;
    require_released(tx, pos)?;
    let task = tx.ledger.board.task_mut(pos);
    task.status = TaskStatus::InProgress;
    // Started from a checkout, the step's work starts at its `HEAD` unless the mission
    // named a base already (the plan's commit).
    if task.base.is_none() {
        task.base = ctx.checkout.as_ref().map(|c| c.head.clone());
    }
    let progress = &mut tx.ledger.mission.progress;
    progress.current_step_id = Some(step.to_string());
    progress.replan_needed = false;
    progress.next_actor = match &task.agent {
        Some(agent) if agent != "main" => NextActor::Subagent(agent.clone()),
        _ => NextActor::Main,
    };
    attempts::open(tx, pos, &ctx.actor.to_string(), None, ctx);
    tx.change(format!("started {step}"));
    tx.effects.push(Effect::StepStarted {
        step: step.to_string(),
    });
    Ok(())
}

/// Stamps evidence with who recorded it and when.
pub(super) fn stamp(evidence: &Evidence, ctx: &Ctx) -> Evidence {
    let mut e = evidence.clone();
    e.recorded_at = Some(ctx.now);
    e.recorded_by = Some(ctx.actor.clone());
    e
}

pub(super) fn done(
    tx: &mut Tx,
    step: &str,
    evidence: Option<&Evidence>,
    ctx: &Ctx,
) -> Result<(), RuleError> {
    let pos = position(tx, step)?;
    let status = tx.ledger.board.tasks[pos].status;
    if !matches!(status, TaskStatus::Planned | TaskStatus::InProgress) {
        return Err(RuleError::InvalidTransition {
            step: step.to_string(),
            operation: "be marked done",
            status,
        });
    }
    require_deps_done(tx, pos, "be marked done")?;
    // A writer's explicit done is their call; evidence from a PR opened early waits.
    if !ctx.actor.is_human() {
        require_released(tx, pos)?;
    }
    let verdict = close_step(&tx.ledger.board.tasks[pos], evidence, ctx)?;
    let (outside, untouched) = (verdict.outside_scope, verdict.untouched_required);
    let task = tx.ledger.board.task_mut(pos);
    task.status = TaskStatus::Done;
    let recorded = evidence.map(|e| stamp(e, ctx));
    if let Some(e) = &recorded {
        task.evidence.push(e.clone());
    }
    let shown = recorded
        .as_ref()
        .or(task.evidence.iter().rev().find(|e| e.ok));
    let p = &mut tx.ledger.mission.progress;
    p.last_result_ok = Some(true);
    if let Some(e) = shown {
        p.last_evidence = Some(e.clone());
    }
    if p.current_step_id.as_deref() == Some(step) {
        p.current_step_id = None;
    }
    p.real_progress = true;
    p.stall_count = 0;
    p.stall_replanned = false;
    let proof = shown
        .map(|e| format!(" ({}: {})", e.kind, e.summary))
        .unwrap_or_default();
    attempts::end(tx, pos, AttemptOutcome::Done, "", ctx);
    tx.change(format!("{step} done{proof}"));
    if !outside.is_empty() {
        tx.change(format!(
            "{step} changed files outside its scope: {}",
            listed(&outside)
        ));
    }
    if !untouched.is_empty() {
        tx.change(format!(
            "{step} left files the plan says must change untouched: {}",
            listed(&untouched)
        ));
    }
    tx.effects.push(Effect::StepDone {
        step: step.to_string(),
    });
    Ok(())
}

pub(super) fn fail(
    tx: &mut Tx,
    step: &str,
    evidence: Option<&Evidence>,
    reason: &str,
    outcome: AttemptOutcome,
    ctx: &Ctx,
) -> Result<(), RuleError> {
    let pos = position(tx, step)?;
    let status = tx.ledger.board.tasks[pos].status;
    if !matches!(status, TaskStatus::Planned | TaskStatus::InProgress) {
        return Err(RuleError::InvalidTransition {
            step: step.to_string(),
            operation: "fail",
            status,
        });
    }
    let task = tx.ledger.board.task_mut(pos);
    task.retry_count += 1;
    let (retries, max) = (task.retry_count, task.max_retries);
    if let Some(e) = evidence {
        let mut e = stamp(e, ctx);
        e.ok = false;
        task.evidence.push(e.clone());
        tx.ledger.mission.progress.last_evidence = Some(e);
    }
    tx.ledger.mission.progress.last_result_ok = Some(false);
    let why = if reason.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", reason.trim())
    };
    attempts::end(tx, pos, outcome, reason, ctx);
    tx.change(format!("{step} failed (attempt {retries} of {max}){why}"));
    tx.effects.push(Effect::StepFailed {
        step: step.to_string(),
        retry_count: retries,
        max_retries: max,
    });
    if retries >= max {
        local_replan(
            tx,
            pos,
            ReplanTrigger::RetriesExhausted,
            "retries exhausted",
            ctx,
        );
    } else {
        tx.ledger.board.task_mut(pos).status = TaskStatus::Failed;
    }
    Ok(())
}

pub(super) fn retry(tx: &mut Tx, step: &str) -> Result<(), RuleError> {
    let pos = position(tx, step)?;
    let task = tx.ledger.board.task_mut(pos);
    if task.status != TaskStatus::Failed {
        return Err(RuleError::InvalidTransition {
            step: step.to_string(),
            operation: "retry",
            status: task.status,
        });
    }
    if task.retry_count >= task.max_retries {
        return Err(RuleError::RetriesExhausted {
            step: step.to_string(),
            max: task.max_retries,
        });
    }
    task.status = TaskStatus::Planned;
    let (n, max) = (task.retry_count + 1, task.max_retries);
    tx.change(format!("retrying {step} (attempt {n} of {max})"));
    Ok(())
}

pub(super) fn replan(tx: &mut Tx, step: &str, reason: &str, ctx: &Ctx) -> Result<(), RuleError> {
    let reason = require_reason(reason, "replan")?;
    let pos = position(tx, step)?;
    local_replan(tx, pos, ReplanTrigger::Requested, &reason, ctx);
    tx.reason = format!("local replan of {step}: {reason}");
    Ok(())
}

/// Resets the step and its transitive dependents to planned, leaving
/// everything upstream (and its evidence) alone. Past the replan budget the
/// mission pauses instead.
pub(super) fn local_replan(tx: &mut Tx, pos: usize, trigger: ReplanTrigger, why: &str, ctx: &Ctx) {
    let p = &mut tx.ledger.mission.progress;
    let step = tx.ledger.board.tasks[pos].id.clone();
    if p.replan_count >= p.budget.max_replans {
        let max = p.budget.max_replans;
        tx.ledger.board.task_mut(pos).status = TaskStatus::Failed;
        pause_for(
            tx,
            PauseReason::Budget,
            format!("{step} needs a replan ({why}) but all {max} replans are used"),
            ctx,
        );
        return;
    }
    p.replan_count += 1;
    p.replan_needed = true;
    let (count, max) = (p.replan_count, p.budget.max_replans);
    let board = &mut tx.ledger.board;
    let affected = board.index.with_dependents(pos);
    let mut reset = Vec::with_capacity(affected.len());
    for &i in &affected {
        attempts::replanned(tx, i, why, ctx);
    }
    let board = &mut tx.ledger.board;
    for i in affected {
        let task = board.task_mut(i);
        task.status = TaskStatus::Planned;
        task.retry_count = 0;
        task.evidence.clear();
        task.ci_round = None;
        reset.push(task.id.clone());
    }
    let p = &mut tx.ledger.mission.progress;
    if p.current_step_id
        .as_ref()
        .is_some_and(|c| reset.contains(c))
    {
        p.current_step_id = None;
    }
    tx.change(format!(
        "local replan {count}/{max} ({}: {why}): {} back to planned",
        trigger.as_str(),
        reset.join(", ")
    ));
    tx.effects.push(Effect::Replanned {
        steps: reset,
        trigger,
    });
}

/// Pauses the mission for a budget, stall or loop reason.
pub(super) fn pause_for(tx: &mut Tx, reason: PauseReason, why: String, ctx: &Ctx) {
    attempts::end_all(tx, AttemptOutcome::Paused, &why, ctx);
    let mission = &mut tx.ledger.mission;
    mission.status = crate::model::MissionStatus::Paused;
    mission.paused_at = Some(ctx.now);
    mission.pause_reason = Some(reason);
    mission.paused_by = Some(ctx.actor.clone());
    mission.progress.next_actor = NextActor::Human;
    tx.reason = format!("paused ({reason}): {why}");
    tx.change(format!("paused ({reason}): {why}"));
    tx.effects.push(Effect::Paused { reason });
}

pub(super) fn record_evidence(
    tx: &mut Tx,
    step: &str,
    evidence: &Evidence,
    ctx: &Ctx,
) -> Result<(), RuleError> {
    let pos = position(tx, step)?;
    let e = stamp(evidence, ctx);
    tx.change(format!(
        "evidence for {step}: {} {} ({})",
        e.kind,
        if e.ok { "green" } else { "red" },
        e.summary
    ));
    tx.ledger.board.task_mut(pos).evidence.push(e);
    Ok(())
}

/// Records a validation run Navin made itself; it may later prove the step.
pub(super) fn record_run(
    tx: &mut Tx,
    step: &str,
    evidence: &Evidence,
    ctx: &Ctx,
) -> Result<(), RuleError> {
    let pos = position(tx, step)?;
    let local = matches!(
        evidence.kind,
        EvidenceKind::TestRun | EvidenceKind::LintRun | EvidenceKind::VerifyRun
    );
    let Some(run) = evidence.run.as_ref().filter(|_| local) else {
        return Err(RuleError::NotARecordedRun {
            step: step.to_string(),
        });
    };
    if evidence.ok != run.passed() {
        return Err(RuleError::NotARecordedRun {
            step: step.to_string(),
        });
    }
    let status = tx.ledger.board.tasks[pos].status;
    if status == TaskStatus::Done {
        return Err(RuleError::InvalidTransition {
            step: step.to_string(),
            operation: "record a validation run",
            status,
        });
    }
    let e = stamp(evidence, ctx);
    let exit = match run.exit_code {
        _ if run.timed_out => "timed out".to_string(),
        Some(c) => format!("exit {c}"),
        None => "killed by a signal".to_string(),
    };
    tx.change(format!(
        "{step}: {} {} (`{}`, {exit}, at {}{})",
        e.kind,
        if e.ok { "passed" } else { "failed" },
        run.command.join(" "),
        short(&run.head),
        if run.dirty { ", dirty tree" } else { "" },
    ));
    let p = &mut tx.ledger.mission.progress;
    p.last_result_ok = Some(e.ok);
    p.last_evidence = Some(e.clone());
    tx.ledger.board.task_mut(pos).evidence.push(e);
    Ok(())
}

pub(super) fn link(
    tx: &mut Tx,
    step: &str,
    pr: Option<u64>,
    head_sha: Option<&str>,
    branch: Option<&str>,
) -> Result<(), RuleError> {
    let pos = position(tx, step)?;
    let task = tx.ledger.board.task_mut(pos);
    let mut changes = Vec::new();
    if let Some(pr) = pr {
        if !task.links.prs.contains(&pr) {
            task.links.prs.push(pr);
            changes.push(format!("linked {step} to PR #{pr}"));
        }
    }
    if let Some(branch) = branch {
        task.links.branch = Some(branch.to_string());
    }
    if let Some(sha) = head_sha {
        if task.links.head_sha.as_deref() != Some(sha) {
            // Runs on another head prove nothing about this one.
            let before = task.evidence.len();
            task.evidence
                .retain(|e| e.head_sha.as_deref().is_none_or(|h| h == sha));
            let dropped = before - task.evidence.len();
            task.links.head_sha = Some(sha.to_string());
            // What the old head changed outside the plan says nothing about this one.
            task.plan_drift = None;
            let short = &sha[..sha.len().min(12)];
            changes.push(format!(
                "{step} head is now {short}; {dropped} stale run(s) dropped"
            ));
            // A new head is work: the attempt under way has its pull request now.
            if let Some(open) = task.attempts.last_mut().filter(|a| a.is_open()) {
                open.pr = open.pr.or(pr);
            }
        }
    }
    if changes.is_empty() {
        changes.push(format!("{step} links unchanged"));
    }
    tx.changes.extend(changes);
    Ok(())
}

/// A pull request took the step up: planned with its dependencies done → in progress,
/// with the PR's author as the next actor. A step already in progress only gets its
/// next actor; any other status, or dependencies not done, leaves the step as it is.
pub(super) fn claim(
    tx: &mut Tx,
    step: &str,
    pr: u64,
    by: &NextActor,
    ctx: &Ctx,
) -> Result<(), RuleError> {
    let pos = position(tx, step)?;
    let status = tx.ledger.board.tasks[pos].status;
    match status {
        TaskStatus::Planned
            if require_deps_done(tx, pos, "start").is_ok() && require_released(tx, pos).is_ok() =>
        {
            tx.ledger.board.task_mut(pos).status = TaskStatus::InProgress;
            attempts::open(tx, pos, &by.to_string(), Some(pr), ctx);
            let progress = &mut tx.ledger.mission.progress;
            progress.current_step_id = Some(step.to_string());
            progress.replan_needed = false;
            progress.next_actor = by.clone();
            tx.change(format!("{step} in progress: PR #{pr} by {by}"));
            tx.effects.push(Effect::StepStarted {
                step: step.to_string(),
            });
        }
        TaskStatus::InProgress if tx.ledger.mission.progress.next_actor != *by => {
            tx.ledger.mission.progress.next_actor = by.clone();
            tx.change(format!("{step}: PR #{pr} by {by}"));
        }
        _ => tx.change(format!("{step} is {status}: PR #{pr} noted")),
    }
    Ok(())
}

/// The linked pull request was merged: the step may now be done on green checks.
pub(super) fn merged(tx: &mut Tx, step: &str, pr: u64, head_sha: &str) -> Result<(), RuleError> {
    let pos = position(tx, step)?;
    let task = tx.ledger.board.task_mut(pos);
    if task.links.merged_pr == Some(pr) {
        tx.change(format!("{step}: PR #{pr} already merged"));
        return Ok(());
    }
    task.links.merged_pr = Some(pr);
    if !task.links.prs.contains(&pr) {
        task.links.prs.push(pr);
    }
    if task.links.head_sha.as_deref() != Some(head_sha) {
        task.evidence
            .retain(|e| e.head_sha.as_deref().is_none_or(|h| h == head_sha));
        task.links.head_sha = Some(head_sha.to_string());
    }
    let short = &head_sha[..head_sha.len().min(12)];
    tx.change(format!("{step}: PR #{pr} merged at {short}"));
    Ok(())
}

/// Records (or, with `None`, clears) what the step's pull request changes outside the
/// mission's plan. A done step keeps what it was done with.
pub(super) fn drift(
    tx: &mut Tx,
    step: &str,
    drift: Option<&crate::model::PlanDrift>,
) -> Result<(), RuleError> {
    let pos = position(tx, step)?;
    let task = tx.ledger.board.task_mut(pos);
    if task.status == TaskStatus::Done {
        return Err(RuleError::InvalidTransition {
            step: step.to_owned(),
            operation: "record files outside the plan",
            status: task.status,
        });
    }
    let drift = drift.filter(|d| !d.is_empty()).cloned();
    let change = match &drift {
        Some(d) => {
            let short = &d.head_sha[..d.head_sha.len().min(12)];
            format!(
                "{step}: {} file(s) changed outside the plan on {short}",
                d.count()
            )
        }
        None => format!("{step}: nothing changed outside the plan"),
    };
    task.plan_drift = drift;
    tx.change(change);
    Ok(())
}

/// Remembers the issue a step was handed to; the first issue wins, and opens the step's
/// first attempt for `agent` unless work on it is already under way.
pub(super) fn dispatched(
    tx: &mut Tx,
    step: &str,
    issue: u64,
    agent: &str,
    ctx: &Ctx,
) -> Result<(), RuleError> {
    let pos = position(tx, step)?;
    let task = tx.ledger.board.task_mut(pos);
    let change = match task.links.issue {
        Some(existing) => format!("{step} already handed to #{existing}"),
        None => {
            task.links.issue = Some(issue);
            attempts::open(tx, pos, agent, None, ctx);
            format!("{step} handed to #{issue} ({agent})")
        }
    };
    tx.changes.push(change);
    Ok(())
}
