//! Attempts on the ledger: started once per number, ended by whatever ends the work (a failure, a done, a replan, a pause), with their spend and failure.

use super::{position, Ctx, Tx};
use crate::error::RuleError;
use crate::model::{
    clip_excerpt, Attempt, AttemptFailure, AttemptOutcome, CiRound, TaskStatus, FAILURE_EXCERPT_MAX,
};

/// `Operation::Attempt`: Navin starts attempt `number` of `step` for `agent`. The number
/// must be the next one and no attempt may be open, so a redelivered or racing start of
/// the same attempt is refused rather than applied twice. A failed step with retries
/// left goes back to planned: the attempt is its retry. With `start_over` the last
/// attempt is marked so the new one is briefed to start afresh, not continue it.
pub(super) fn start(
    tx: &mut Tx,
    step: &str,
    number: u32,
    agent: &str,
    start_over: bool,
    ctx: &Ctx,
) -> Result<(), RuleError> {
    let pos = position(tx, step)?;
    let task = &tx.ledger.board.tasks[pos];
    let next = next_number(&task.attempts);
    if number != next || task.open_attempt().is_some() {
        return Err(RuleError::AttemptTaken {
            step: step.to_owned(),
            number,
        });
    }
    match task.status {
        TaskStatus::Done => {
            return Err(RuleError::InvalidTransition {
                step: step.to_owned(),
                operation: "start another attempt",
                status: task.status,
            })
        }
        TaskStatus::Failed if task.retry_count >= task.max_retries => {
            return Err(RuleError::RetriesExhausted {
                step: step.to_owned(),
                max: task.max_retries,
            })
        }
        TaskStatus::Failed => tx.ledger.board.task_mut(pos).status = TaskStatus::Planned,
        TaskStatus::Planned | TaskStatus::InProgress => {}
    }
    let task = tx.ledger.board.task_mut(pos);
    if start_over {
        if let Some(last) = task.attempts.last_mut() {
            last.start_over = true;
        }
    }
    // An attempt that starts over leaves the last pull request behind: its head is no
    // longer the step's, so a late green run there (a re-run on a closed or superseded
    // pull request) proves nothing until the new attempt's pull request links a head.
    if continued_pr(task).is_none() {
        if let Some(old) = task.links.head_sha.take() {
            task.evidence
                .retain(|e| e.head_sha.as_deref().is_none_or(|h| h != old));
            task.plan_drift = None;
        }
    }
    push(tx, pos, agent, None, ctx);
    tx.change(format!("{step}: attempt {number} started for {agent}"));
    Ok(())
}

/// The pull request the next attempt of `task` goes on with: the last ended attempt's
/// (or the step's last linked one), unless that attempt was replanned or marked to start
/// over, or its pull request was closed or merged. `None` means the next attempt starts
/// over on a new branch. The brief, the step's branch and the `attempt` operation all
/// read this one rule.
pub fn continued_pr(task: &crate::model::Task) -> Option<u64> {
    let last = task.attempts.iter().rev().find(|a| !a.is_open())?;
    if last.outcome == Some(AttemptOutcome::Replanned) || last.start_over {
        return None;
    }
    pr_left_open(task, last)
}

/// The pull request `last` (an ended attempt of `task`) worked in, or the step's last
/// linked one, while it is neither closed by that attempt's end nor merged.
pub fn pr_left_open(task: &crate::model::Task, last: &Attempt) -> Option<u64> {
    let pr = last.pr.or_else(|| task.links.prs.last().copied())?;
    let gone = last.outcome == Some(AttemptOutcome::Closed) || task.links.merged_pr == Some(pr);
    (!gone).then_some(pr)
}

/// The number the next attempt of a task takes.
pub fn next_number(attempts: &[Attempt]) -> u32 {
    attempts.last().map_or(1, |a| a.number.saturating_add(1))
}

/// Opens the next attempt unless one is open; records `pr` on the open one when it has
/// none. Used where work starts without Navin starting it (a pull request that takes the
/// step up, `board_start`), and by the first dispatch.
pub(super) fn open(tx: &mut Tx, pos: usize, agent: &str, pr: Option<u64>, ctx: &Ctx) {
    let task = tx.ledger.board.task_mut(pos);
    if let Some(open) = task.attempts.last_mut().filter(|a| a.is_open()) {
        if open.pr.is_none() {
            open.pr = pr;
        }
        return;
    }
    push(tx, pos, agent, pr, ctx);
}

fn push(tx: &mut Tx, pos: usize, agent: &str, pr: Option<u64>, ctx: &Ctx) {
    let task = tx.ledger.board.task_mut(pos);
    let number = next_number(&task.attempts);
    task.attempts.push(Attempt {
        number,
        agent: agent.to_owned(),
        started_at: ctx.now,
        ended_at: None,
        outcome: None,
        pr,
        tokens: 0,
        cost_usd: 0.0,
        failure: None,
        note: None,
        spend_unreported: false,
        start_over: false,
    });
}

/// A replan of the task at `pos`: its open attempt ends as replanned; with none open, the
/// last one is marked so the next attempt starts over rather than continuing its pull
/// request (a `/replan` after red CI is a new start, not a fix).
pub(super) fn replanned(tx: &mut Tx, pos: usize, note: &str, ctx: &Ctx) {
    let task = tx.ledger.board.task_mut(pos);
    match task.attempts.last_mut() {
        Some(open) if open.is_open() => end(tx, pos, AttemptOutcome::Replanned, note, ctx),
        Some(last) => last.start_over = true,
        None => {}
    }
}

/// Ends the open attempt of the task at `pos`, if there is one.
pub(super) fn end(tx: &mut Tx, pos: usize, outcome: AttemptOutcome, note: &str, ctx: &Ctx) {
    let task = tx.ledger.board.task_mut(pos);
    if let Some(open) = task.attempts.last_mut().filter(|a| a.is_open()) {
        open.ended_at = Some(ctx.now);
        open.outcome = Some(outcome);
        let note = note.trim();
        if !note.is_empty() {
            open.note = Some(clip_excerpt(note, 300));
        }
        // The Copilot coding agent reports no usage anywhere Navin can read: its
        // attempt ends debited 0, and the panel says the caps could not see it.
        if open.agent == COPILOT && open.tokens == 0 && open.cost_usd == 0.0 {
            open.spend_unreported = true;
        }
    }
}

/// The agent name a Copilot attempt is recorded under.
const COPILOT: &str = "copilot";

/// Ends every open attempt: the mission paused, so whatever was under way is cut off and
/// `/resume` starts it again.
pub(super) fn end_all(tx: &mut Tx, outcome: AttemptOutcome, note: &str, ctx: &Ctx) {
    let open: Vec<usize> = tx
        .ledger
        .board
        .tasks
        .iter()
        .enumerate()
        .filter(|(_, t)| t.open_attempt().is_some())
        .map(|(i, _)| i)
        .collect();
    for pos in open {
        end(tx, pos, outcome, note, ctx);
    }
}

/// Debits spend to the open attempt, or to the last one when the report came after it
/// ended (a runner reports its usage as it exits).
pub(super) fn debit(tx: &mut Tx, pos: usize, tokens: u64, cost_usd: f64) {
    if tokens == 0 && !(cost_usd.is_finite() && cost_usd > 0.0) {
        return;
    }
    let task = tx.ledger.board.task_mut(pos);
    if let Some(last) = task.attempts.last_mut() {
        last.tokens = last.tokens.saturating_add(tokens);
        if cost_usd.is_finite() && cost_usd > 0.0 {
            last.cost_usd += cost_usd;
        }
    }
}

/// A red round's failure goes on the attempt it judged, for the next brief.
pub(super) fn record_failure(tx: &mut Tx, pos: usize, round: &CiRound, excerpt: &str) {
    if round.red.is_empty() {
        return;
    }
    let task = tx.ledger.board.task_mut(pos);
    if let Some(open) = task.attempts.last_mut().filter(|a| a.is_open()) {
        open.failure = Some(AttemptFailure {
            head_sha: round.head_sha.clone(),
            checks: round.red.clone(),
            fingerprint: round.fingerprint.clone(),
            excerpt: clip_excerpt(excerpt, FAILURE_EXCERPT_MAX),
            changed: round
                .changed
                .iter()
                .take(crate::model::CHANGED_MAX)
                .cloned()
                .collect(),
        });
    }
}
