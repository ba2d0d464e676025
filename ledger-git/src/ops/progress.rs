//! The progress ledger's actions: progress reports, CI rounds and usage, with their one escalation each (budget, loop, stall).

use super::attempts;
use super::steps::{local_replan, pause_for, stamp};
use super::{position, Ctx, Effect, ProgressArgs, ReplanTrigger, Tx};
use crate::error::RuleError;
use crate::model::{PauseReason, TaskStatus, FINGERPRINT_WINDOW};

pub(super) fn progress(tx: &mut Tx, args: &ProgressArgs, ctx: &Ctx) -> Result<(), RuleError> {
    let pos = position(tx, &args.step)?;
    let status = tx.ledger.board.tasks[pos].status;
    if status != TaskStatus::InProgress {
        return Err(RuleError::InvalidTransition {
            step: args.step.clone(),
            operation: "take progress reports",
            status,
        });
    }
    if let Some(e) = &args.evidence {
        let e = stamp(e, ctx);
        tx.ledger.board.task_mut(pos).evidence.push(e.clone());
        let p = &mut tx.ledger.mission.progress;
        p.last_result_ok = Some(e.ok);
        p.last_evidence = Some(e);
    }
    attempts::debit(tx, pos, args.tokens, args.cost_usd);
    let p = &mut tx.ledger.mission.progress;
    p.current_step_id = Some(args.step.clone());
    p.real_progress = args.real_progress;
    p.tokens_used = p.tokens_used.saturating_add(args.tokens);
    if args.cost_usd.is_finite() && args.cost_usd > 0.0 {
        p.cost_used_usd += args.cost_usd;
    }
    tx.changes.push(format!(
        "progress on {}: {}",
        args.step,
        if args.real_progress {
            "real progress"
        } else {
            "no progress"
        }
    ));

    let repeated = remember_fingerprint(tx, args.fingerprint.as_ref());
    let p = &mut tx.ledger.mission.progress;
    if args.real_progress {
        p.stall_count = 0;
        p.stall_replanned = false;
    } else {
        p.stall_count += 1;
    }
    if repeated.is_none() && args.fingerprint.is_some() && args.real_progress {
        p.loop_detected = false;
        p.loop_replanned = false;
    }

    escalate(tx, pos, repeated, ctx);
    Ok(())
}

/// After an action on the progress ledger: one escalation, most severe first: budget,
/// loop, stall. `repeated` is the fingerprint when it was seen before.
fn escalate(tx: &mut Tx, pos: usize, repeated: Option<String>, ctx: &Ctx) {
    if over_budget(tx, ctx) {
        return;
    }
    loop_or_stall(tx, pos, repeated, ctx);
}

/// Pauses the mission (`budget`) when tokens or cost passed their cap; says whether.
fn over_budget(tx: &mut Tx, ctx: &Ctx) -> bool {
    if tx.ledger.mission.status == crate::model::MissionStatus::Paused {
        return false;
    }
    let p = &mut tx.ledger.mission.progress;
    let over_tokens = p.budget.max_tokens.is_some_and(|max| p.tokens_used > max);
    let over_cost = p
        .budget
        .max_cost_usd
        .is_some_and(|max| p.cost_used_usd > max);
    if over_tokens || over_cost {
        let what = if over_tokens {
            format!(
                "token budget exceeded ({} > {})",
                p.tokens_used,
                p.budget.max_tokens.unwrap_or_default()
            )
        } else {
            format!(
                "cost budget exceeded ({:.2} > {:.2} USD)",
                p.cost_used_usd,
                p.budget.max_cost_usd.unwrap_or_default()
            )
        };
        pause_for(tx, PauseReason::Budget, what, ctx);
        return true;
    }
    false
}

/// The loop escalation for a repeated fingerprint, else the stall escalation.
fn loop_or_stall(tx: &mut Tx, pos: usize, repeated: Option<String>, ctx: &Ctx) {
    let p = &mut tx.ledger.mission.progress;
    if let Some(fingerprint) = repeated {
        if !p.loop_detected {
            p.loop_detected = true;
            tx.change(format!("loop detected: action {fingerprint} repeated"));
            tx.effects.push(Effect::LoopDetected { fingerprint });
        } else if !p.loop_replanned {
            p.loop_replanned = true;
            local_replan(tx, pos, ReplanTrigger::Loop, "repeated actions", ctx);
        } else {
            pause_for(
                tx,
                PauseReason::Loop,
                format!("action {fingerprint} still repeating after a replan"),
                ctx,
            );
        }
        return;
    }
    if p.stall_count >= p.budget.max_stalls {
        if !p.stall_replanned {
            p.stall_replanned = true;
            p.stall_count = 0;
            local_replan(tx, pos, ReplanTrigger::Stall, "no progress", ctx);
        } else {
            let n = p.stall_count;
            pause_for(
                tx,
                PauseReason::Stall,
                format!("no progress in {n} reports after a replan"),
                ctx,
            );
        }
    }
}

/// What a step's work cost (see [`super::Operation::Usage`]).
pub(super) fn usage(
    tx: &mut Tx,
    step: &str,
    tokens: u64,
    cost_usd: f64,
    ctx: &Ctx,
) -> Result<(), RuleError> {
    let pos = position(tx, step)?;
    if !cost_usd.is_finite() || cost_usd < 0.0 {
        return Err(RuleError::InvalidCost {
            value: cost_usd.to_string(),
        });
    }
    attempts::debit(tx, pos, tokens, cost_usd);
    let p = &mut tx.ledger.mission.progress;
    p.tokens_used = p.tokens_used.saturating_add(tokens);
    p.cost_used_usd += cost_usd;
    tx.change(format!(
        "usage on {step}: {tokens} tokens, {cost_usd:.2} USD (total {} tokens, {:.2} USD)",
        tx.ledger.mission.progress.tokens_used, tx.ledger.mission.progress.cost_used_usd
    ));
    over_budget(tx, ctx);
    Ok(())
}

/// A run that reported no spend: nothing is debited; the attempt it belongs to (the
/// open one, else the last) says so.
pub(super) fn usage_unreported(tx: &mut Tx, step: &str) -> Result<(), RuleError> {
    let pos = position(tx, step)?;
    let task = tx.ledger.board.task_mut(pos);
    let number = match task.attempts.last_mut() {
        Some(last) => {
            last.spend_unreported = true;
            format!("attempt {}", last.number)
        }
        None => "a run before any attempt".to_owned(),
    };
    tx.change(format!(
        "usage on {step}: not reported ({number}); debited 0, so the token and cost caps cannot see it"
    ));
    Ok(())
}

/// Remembers a fingerprint in the window; returns it when it was seen before.
fn remember_fingerprint(tx: &mut Tx, fingerprint: Option<&String>) -> Option<String> {
    let f = fingerprint?;
    let p = &mut tx.ledger.mission.progress;
    let seen = p.recent_action_fingerprints.contains(f);
    p.recent_action_fingerprints.push(f.clone());
    if p.recent_action_fingerprints.len() > FINGERPRINT_WINDOW {
        let excess = p.recent_action_fingerprints.len() - FINGERPRINT_WINDOW;
        p.recent_action_fingerprints.drain(..excess);
    }
    seen.then(|| f.clone())
}

/// A completed CI round on `step`'s head (see [`super::Operation::CiRound`]). Only an
/// in-progress step counts it; the same head counts once.
pub(super) fn ci_round(
    tx: &mut Tx,
    step: &str,
    round: &crate::model::CiRound,
    ctx: &Ctx,
) -> Result<(), RuleError> {
    let pos = position(tx, step)?;
    let task = &tx.ledger.board.tasks[pos];
    let status = task.status;
    let mut round = round.clone();
    let excerpt = std::mem::take(&mut round.excerpt);
    round.green.sort();
    round.green.dedup();
    round.red.sort();
    round.red.dedup();
    let previous = task.ci_round.clone();
    if previous.as_ref() == Some(&round) {
        tx.change(format!("{step}: CI round on this head already counted"));
        return Ok(());
    }
    let same_head = previous
        .as_ref()
        .is_some_and(|r| r.head_sha == round.head_sha);
    let short = round.head_sha.chars().take(12).collect::<String>();
    tx.ledger.board.task_mut(pos).ci_round = Some(round.clone());
    if status == TaskStatus::InProgress {
        attempts::record_failure(tx, pos, &round, &excerpt);
    }
    if same_head || status != TaskStatus::InProgress {
        tx.change(format!(
            "{step}: CI on {short}: {} green, {} red (not counted again)",
            round.green.len(),
            round.red.len()
        ));
        return Ok(());
    }
    let before: &[String] = previous.as_ref().map_or(&[], |r| r.green.as_slice());
    let real = round.green.iter().any(|g| !before.contains(g));
    let p = &mut tx.ledger.mission.progress;
    p.current_step_id = Some(step.to_string());
    p.real_progress = real;
    p.last_result_ok = Some(round.red.is_empty());
    if real {
        p.stall_count = 0;
        p.stall_replanned = false;
    } else {
        p.stall_count += 1;
    }
    let (stalls, max) = (p.stall_count, p.budget.max_stalls);
    let repeated = remember_fingerprint(tx, round.fingerprint.as_ref());
    if real && repeated.is_none() {
        let p = &mut tx.ledger.mission.progress;
        p.loop_detected = false;
        p.loop_replanned = false;
    }
    tx.change(format!(
        "CI round on {step} at {short}: {} ({} green, {} red; stall {stalls}/{max})",
        if real { "real progress" } else { "no progress" },
        round.green.len(),
        round.red.len()
    ));
    escalate(tx, pos, repeated, ctx);
    Ok(())
}
