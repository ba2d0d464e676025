//! Mission operations: init, rewrite, pause/resume, human update, activate, close, rollback.

use super::steps::{build_tasks, graph_rule};
use super::{require_reason, Applied, Ctx, Effect, InitArgs, NewTask, Tx, UpdateArgs};
use crate::error::RuleError;
use crate::model::{
    Board, CheckpointMark, HistoryEntry, Ledger, Mission, MissionMode, MissionStatus, NextActor,
    PauseReason, Progress, StageGate, StagePolicy, TaskStatus, SCHEMA_VERSION,
};

fn clean(items: &[String]) -> Vec<String> {
    items
        .iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

pub(super) fn init(
    current: Option<&Ledger>,
    args: &InitArgs,
    ctx: &Ctx,
) -> Result<Applied, RuleError> {
    let goal = args.goal.trim();
    if goal.is_empty() {
        return Err(RuleError::EmptyGoal);
    }
    if let Some(l) = current {
        if l.mission.status.is_live() && !args.replace {
            return Err(RuleError::MissionLive {
                goal: l.mission.goal.clone(),
                status: l.mission.status,
            });
        }
    }
    let progress = Progress {
        budget: args.budget.clone().unwrap_or_default(),
        ..Progress::default()
    };
    let mut board = Board {
        tasks: build_tasks(
            &with_base(&args.steps, args.base.as_deref()),
            progress.budget.max_retries,
        )?,
        ..Board::default()
    };
    board.reindex().map_err(graph_rule)?;
    // Versions keep counting across a replace so checkpoint refs never collide.
    let version = current.map_or(0, |l| l.mission.version) + 1;
    let reason = match current {
        Some(l) if l.mission.status.is_live() => {
            format!("replaced live mission {:?}", l.mission.goal)
        }
        _ => format!("mission started: {goal}"),
    };
    let mut changes = vec![format!("goal: {goal}")];
    changes.extend(
        args.steps
            .iter()
            .map(|s| format!("added {} {:?}", s.id, s.title)),
    );
    let mission = Mission {
        schema_version: SCHEMA_VERSION,
        goal: goal.to_string(),
        status: if args.draft {
            MissionStatus::Draft
        } else {
            MissionStatus::Running
        },
        version,
        constraints: clean(&args.constraints),
        facts: clean(&args.facts),
        missing_info: clean(&args.missing_info),
        acceptance_criteria: clean(&args.acceptance_criteria),
        origin: args.origin.clone(),
        history: vec![HistoryEntry {
            version,
            reason: reason.clone(),
            at: ctx.now,
            actor: ctx.actor.clone(),
            changes,
            operation: "init".to_string(),
            op_id: ctx.op_id.clone(),
        }],
        paused_at: None,
        pause_reason: None,
        paused_by: None,
        mode: args.mode,
        stage_gate: stage_gate(&board, args.mode, args.stages),
        checkpoints: vec![CheckpointMark {
            version,
            reason: "mission start".to_owned(),
            at: ctx.now,
        }],
        pending_defaults: args
            .pending_defaults
            .iter()
            .filter(|d| clean(&args.missing_info).contains(&d.question))
            .cloned()
            .collect(),
        commands: args.commands.clone(),
        created_at: ctx.now,
        updated_at: ctx.now,
        progress,
    };
    let mut ledger = Ledger { mission, board };
    super::refresh_status(&mut ledger);
    let ready: Vec<String> = ledger.ready().iter().map(|t| t.id.clone()).collect();
    let effects = vec![Effect::NowReady { steps: ready }];
    Ok(Applied {
        ledger,
        reason,
        effects,
    })
}

/// `steps`, each with no dependency starting from `base` unless it names its own: a
/// step that waits for others starts from wherever they left the code, which its start
/// records.
fn with_base(steps: &[NewTask], base: Option<&str>) -> Vec<NewTask> {
    steps
        .iter()
        .map(|s| NewTask {
            base: s
                .base
                .clone()
                .or_else(|| base.filter(|_| s.depends_on.is_empty()).map(str::to_owned)),
            ..s.clone()
        })
        .collect()
}

pub(super) fn rewrite(
    tx: &mut Tx,
    goal: &str,
    reason: &str,
    steps: &[NewTask],
) -> Result<(), RuleError> {
    let reason = require_reason(reason, "a whole-plan rewrite")?;
    let goal = goal.trim();
    if goal.is_empty() {
        return Err(RuleError::EmptyGoal);
    }
    if goal == tx.ledger.mission.goal.trim() {
        return Err(RuleError::GoalUnchanged);
    }
    let mut board = Board {
        tasks: build_tasks(steps, tx.ledger.mission.progress.budget.max_retries)?,
        ..Board::default()
    };
    board.reindex().map_err(graph_rule)?;
    let old = std::mem::replace(&mut tx.ledger.mission.goal, goal.to_string());
    let policy = tx
        .ledger
        .mission
        .stage_gate
        .map_or(StagePolicy::default(), |g| g.policy);
    tx.ledger.mission.stage_gate = stage_gate(&board, tx.ledger.mission.mode, policy);
    tx.ledger.board = board;
    let p = &mut tx.ledger.mission.progress;
    p.current_step_id = None;
    p.replan_needed = false;
    tx.reason = format!("goal changed, whole plan rewritten: {reason}");
    tx.change(format!("goal: {old:?} -> {goal:?}"));
    tx.change(format!("plan rewritten with {} steps", steps.len()));
    Ok(())
}

/// A staged board gets a gate starting at stage 1; a cruise mission, or a board
/// without stages, has none.
fn stage_gate(board: &Board, mode: MissionMode, policy: StagePolicy) -> Option<StageGate> {
    let staged = board.tasks.iter().any(|t| t.stage.is_some());
    (staged && mode == MissionMode::Staged).then_some(StageGate {
        policy,
        released: 1,
    })
}

/// Releases the stage after the finished one: `/continue`.
pub(super) fn continue_stage(tx: &mut Tx, note: &str, ctx: &Ctx) -> Result<(), RuleError> {
    if !ctx.actor.is_human() {
        return Err(RuleError::HumanOnly {
            operation: "release the next stage",
            actor: ctx.actor.to_string(),
        });
    }
    let Some(gate) = tx.ledger.mission.stage_gate else {
        return Err(RuleError::NoStageToRelease { detail: None });
    };
    if gate.policy == StagePolicy::RunAll {
        return Err(RuleError::NoStageToRelease {
            detail: Some("stages run one after another without a pause (stages: run-all)".into()),
        });
    }
    let board = &tx.ledger.board;
    let total = board
        .tasks
        .iter()
        .filter_map(|t| t.stage)
        .max()
        .unwrap_or(0);
    if gate.released >= total {
        return Err(RuleError::NoStageToRelease {
            detail: Some(format!("stage {total} is the last, and it is released")),
        });
    }
    for stage in 1..=gate.released {
        let open: Vec<String> = board
            .tasks
            .iter()
            .filter(|t| t.stage == Some(stage) && t.status != TaskStatus::Done)
            .map(|t| t.id.clone())
            .collect();
        if !open.is_empty() {
            return Err(RuleError::StageNotDone { stage, open });
        }
    }
    let next = gate.released + 1;
    let released: Vec<String> = board
        .tasks
        .iter()
        .filter(|t| t.stage == Some(next))
        .map(|t| t.id.clone())
        .collect();
    tx.ledger.mission.stage_gate = Some(StageGate {
        released: next,
        ..gate
    });
    let note = note.trim();
    tx.reason = format!("stage {next} released: {}", released.join(", "));
    if !note.is_empty() {
        tx.reason.push_str(&format!(" ({note})"));
    }
    tx.change(tx.reason.clone());
    Ok(())
}

/// Questions past their `questions.default_after` get their default as a fact.
pub(super) fn apply_defaults(tx: &mut Tx, ctx: &Ctx) -> Result<(), RuleError> {
    let mission = &mut tx.ledger.mission;
    let (due, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut mission.pending_defaults)
        .into_iter()
        .partition(|d| d.due_at <= ctx.now);
    mission.pending_defaults = waiting;
    let mut applied = Vec::new();
    for d in due {
        let Some(i) = mission.missing_info.iter().position(|m| *m == d.question) else {
            continue;
        };
        mission.missing_info.remove(i);
        let fact = format!("{} → {} (default)", d.question, d.default);
        if !mission.facts.contains(&fact) {
            mission.facts.push(fact.clone());
        }
        tx.changes.push(format!("fact: {fact}"));
        applied.push(d.after);
    }
    let Some(after) = applied.first() else {
        return Err(RuleError::NoDefaultDue);
    };
    tx.reason = format!("default applied after {after}");
    Ok(())
}

pub(super) fn pause(tx: &mut Tx, reason: PauseReason, note: &str, ctx: &Ctx) {
    let why = if note.trim().is_empty() {
        "paused".to_string()
    } else {
        note.trim().to_string()
    };
    super::steps::pause_for(tx, reason, why, ctx);
}

pub(super) fn resume(tx: &mut Tx, note: &str, ctx: &Ctx) -> Result<(), RuleError> {
    let mission = &mut tx.ledger.mission;
    if mission.status != MissionStatus::Paused {
        return Err(RuleError::NotPaused);
    }
    if ctx.actor.is_agent() {
        let reason = mission.pause_reason.unwrap_or(PauseReason::Human);
        let own = mission.paused_by.as_ref() == Some(&ctx.actor);
        if reason != PauseReason::Manual || !own {
            let by = match &mission.paused_by {
                Some(actor) => format!(", by {actor}"),
                None => String::new(),
            };
            return Err(RuleError::ResumeNeedsHuman { reason, by });
        }
    }
    let was = mission.pause_reason.map_or("paused", PauseReason::as_str);
    mission.status = MissionStatus::Running;
    mission.paused_at = None;
    mission.pause_reason = None;
    mission.paused_by = None;
    // A person looked at it: start the stall and loop clocks afresh.
    let p = &mut mission.progress;
    p.stall_count = 0;
    p.stall_replanned = false;
    p.loop_detected = false;
    p.loop_replanned = false;
    p.recent_action_fingerprints.clear();
    p.next_actor = NextActor::Main;
    let note = note.trim();
    tx.reason = if note.is_empty() {
        format!("resumed (was {was})")
    } else {
        format!("resumed (was {was}): {note}")
    };
    tx.change(tx.reason.clone());
    tx.effects.push(Effect::Resumed);
    Ok(())
}

pub(super) fn update(tx: &mut Tx, args: &UpdateArgs) -> Result<(), RuleError> {
    let reason = require_reason(&args.reason, "update")?;
    let mission = &mut tx.ledger.mission;
    let mut changes = Vec::new();
    if let Some(goal) = args.goal.as_deref().map(str::trim) {
        if goal.is_empty() {
            return Err(RuleError::EmptyGoal);
        }
        if goal != mission.goal {
            changes.push(format!("goal: {:?} -> {goal:?}", mission.goal));
            mission.goal = goal.to_string();
        }
    }
    for (list, items, what) in [
        (&mut mission.facts, &args.add_facts, "fact"),
        (
            &mut mission.missing_info,
            &args.add_missing_info,
            "missing info",
        ),
        (
            &mut mission.constraints,
            &args.add_constraints,
            "constraint",
        ),
        (
            &mut mission.acceptance_criteria,
            &args.add_acceptance_criteria,
            "acceptance criterion",
        ),
    ] {
        for item in clean(items) {
            if !list.contains(&item) {
                changes.push(format!("{what} added: {item}"));
                list.push(item);
            }
        }
    }
    for (item, answer) in &args.answers {
        let (item, answer) = (item.trim(), answer.trim());
        if answer.is_empty() {
            continue;
        }
        if let Some(i) = mission.missing_info.iter().position(|m| m == item) {
            mission.missing_info.remove(i);
            mission.pending_defaults.retain(|d| d.question != item);
            let fact = format!("{item} → {answer}");
            changes.push(format!("answered: {fact}"));
            if !mission.facts.contains(&fact) {
                mission.facts.push(fact);
            }
        }
    }
    for item in clean(&args.resolve_missing_info) {
        if let Some(i) = mission.missing_info.iter().position(|m| *m == item) {
            mission.missing_info.remove(i);
            mission.pending_defaults.retain(|d| d.question != item);
            changes.push(format!("missing info resolved: {item}"));
            if !mission.facts.contains(&item) {
                mission.facts.push(item);
            }
        }
    }
    if let Some(budget) = &args.budget {
        if *budget != mission.progress.budget {
            changes.push(format!(
                "budget: retries {}, replans {}, stalls {}",
                budget.max_retries, budget.max_replans, budget.max_stalls
            ));
            mission.progress.budget = budget.clone();
        }
    }
    if let Some(next) = &args.next_actor {
        if *next != mission.progress.next_actor {
            changes.push(format!("next actor: {next}"));
            mission.progress.next_actor = next.clone();
        }
    }
    if changes.is_empty() {
        return Err(RuleError::NothingToUpdate);
    }
    tx.reason = reason;
    tx.changes.extend(changes);
    Ok(())
}

/// Records `question` as missing info and pauses the mission (`human`) until a person
/// answers it; the history entry says what was asked, which is what
/// [`Ledger::waits_on_question`] reads.
pub(super) fn ask(
    tx: &mut Tx,
    question: &str,
    step: Option<&str>,
    ctx: &Ctx,
) -> Result<(), RuleError> {
    let question = question.trim();
    if question.is_empty() {
        return Err(RuleError::EmptyQuestion);
    }
    if let Some(step) = step {
        if tx.ledger.board.task(step).is_none() {
            return Err(RuleError::UnknownStep {
                id: step.to_owned(),
            });
        }
    }
    let question = crate::model::clip(question);
    let mission = &mut tx.ledger.mission;
    if !mission.missing_info.contains(&question) {
        mission.missing_info.push(question.clone());
    }
    tx.change(format!("{}{question}", crate::model::ASKED));
    let why = match step {
        Some(step) => format!("{step} waits on a question from {}", ctx.actor),
        None => format!("a question from {}", ctx.actor),
    };
    if tx.ledger.mission.status == MissionStatus::Paused {
        tx.reason = format!("{why} (already paused)");
    } else {
        super::steps::pause_for(tx, PauseReason::Human, why, ctx);
    }
    Ok(())
}

pub(super) fn activate(tx: &mut Tx) -> Result<(), RuleError> {
    if tx.ledger.mission.status != MissionStatus::Draft {
        return Err(RuleError::NotDraft {
            status: tx.ledger.mission.status,
        });
    }
    tx.ledger.mission.status = MissionStatus::Running;
    tx.change("mission started from draft");
    Ok(())
}

pub(super) fn close(
    tx: &mut Tx,
    status: MissionStatus,
    reason: &str,
    ctx: &Ctx,
) -> Result<(), RuleError> {
    if !matches!(status, MissionStatus::Done | MissionStatus::Failed) {
        return Err(RuleError::InvalidCloseStatus { status });
    }
    if tx.ledger.mission.status == MissionStatus::Paused && !ctx.actor.is_human() {
        return Err(RuleError::HumanOnly {
            operation: "close a paused mission",
            actor: ctx.actor.to_string(),
        });
    }
    if status == MissionStatus::Done {
        let pending: Vec<String> = tx
            .ledger
            .board
            .tasks
            .iter()
            .filter(|t| t.status != TaskStatus::Done)
            .map(|t| t.id.clone())
            .collect();
        if !pending.is_empty() {
            return Err(RuleError::StepsNotDone { pending });
        }
    }
    let mission = &mut tx.ledger.mission;
    mission.status = status;
    mission.paused_at = None;
    mission.pause_reason = None;
    mission.progress.current_step_id = None;
    let reason = reason.trim();
    tx.reason = if reason.is_empty() {
        format!("mission closed as {status}")
    } else {
        format!("mission closed as {status}: {reason}")
    };
    tx.change(tx.reason.clone());
    tx.effects.push(Effect::MissionClosed { status });
    Ok(())
}

pub(super) fn rollback(
    tx: &mut Tx,
    to_version: u64,
    target: &Ledger,
    ctx: &Ctx,
) -> Result<(), RuleError> {
    if !ctx.actor.is_human() {
        return Err(RuleError::HumanOnly {
            operation: "roll back",
            actor: ctx.actor.to_string(),
        });
    }
    if target.mission.version != to_version {
        return Err(RuleError::UnknownVersion {
            version: to_version,
            current: tx.ledger.mission.version,
        });
    }
    // Old content, current history: the rollback is itself a change on top. The
    // checkpoint list is kept too: those refs still exist and stay worth going back to.
    let history = std::mem::take(&mut tx.ledger.mission.history);
    let checkpoints = std::mem::take(&mut tx.ledger.mission.checkpoints);
    let version = tx.ledger.mission.version;
    let created = tx.ledger.mission.created_at;
    tx.ledger = target.clone();
    tx.ledger.mission.history = history;
    tx.ledger.mission.checkpoints = checkpoints;
    tx.ledger.mission.version = version;
    tx.ledger.mission.created_at = created;
    tx.reason = format!("rolled back to the content of v{to_version}");
    tx.change(tx.reason.clone());
    Ok(())
}
