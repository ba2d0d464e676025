//! The closed agent loop's one decision: which step's attempt has run out of time, and which step gets its next attempt now, and why.
//!
//! Pure: the ledger, the repository's `agents:` waits and `now` in, a list out. The
//! engine and the Action carry the list out (end the attempt, start the next one keyed
//! by its number), so every front end restarts work by the same rules.

use chrono::{DateTime, Utc};
use navin_ledger::model::{AttemptOutcome, Ledger, MissionStatus, Task, TaskStatus};
use navin_ledger::ops::{continued_pr, next_attempt_number, pr_left_open};

use crate::config::Agents;

/// What is due on one step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Due {
    /// A dispatched agent's open attempt has produced no pull request within
    /// `agents.timeout`: it ends as a failed attempt (`timed_out`).
    TimedOut { step: String, number: u32 },
    /// Start attempt `number`; `continue_pr` is the pull request the brief says to go on
    /// with, `None` to start over on a new branch.
    Start {
        step: String,
        number: u32,
        why: StartWhy,
        continue_pr: Option<u64>,
        /// This start drops a pull request the ledger alone would have continued (red CI
        /// under `agents.after_red`): the start records it, so the brief and the branch
        /// say start over too.
        start_over: bool,
        /// An agent's pull request the last attempt left open that this one does not
        /// continue: Navin closes it, so one pull request at a time carries the step.
        supersedes: Option<u64>,
    },
}

impl Due {
    pub fn step(&self) -> &str {
        match self {
            Due::TimedOut { step, .. } | Due::Start { step, .. } => step,
        }
    }
}

/// Why the next attempt starts: what ended the last one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartWhy {
    /// CI was red and nobody pushed within `agents.idle_after`.
    CiRed,
    /// The pull request was closed without merging.
    Closed,
    /// The agent produced no pull request in time.
    TimedOut,
    /// The attempt was reported failed.
    Failed,
    /// A local replan (or `/retry`) put the step back in the queue.
    Requeued,
    /// The mission was resumed after a pause cut the attempt off.
    Resumed,
}

impl StartWhy {
    /// How the brief and the panel say it.
    pub fn describe(self) -> &'static str {
        match self {
            StartWhy::CiRed => "CI failed on the last attempt and nothing was pushed since",
            StartWhy::Closed => "the last attempt's pull request was closed without merging",
            StartWhy::TimedOut => "the last attempt opened no pull request in time",
            StartWhy::Failed => "the last attempt was reported failed",
            StartWhy::Requeued => "the step was replanned or retried",
            StartWhy::Resumed => "the mission was resumed after a pause cut the last attempt off",
        }
    }
}

/// Agents that open a pull request of their own and so can time out; people take the
/// time they take.
fn times_out(agent: &str) -> bool {
    matches!(agent, "copilot" | "workflow")
}

/// Everything due at `now` on a running (or blocked: nothing moves until an attempt
/// starts) mission, in board order. Only steps Navin handed out (they have an issue) are
/// restarted: a step nobody was given waits for a person.
pub fn due(ledger: &Ledger, agents: &Agents, now: DateTime<Utc>) -> Vec<Due> {
    if !matches!(
        ledger.mission.status,
        MissionStatus::Running | MissionStatus::Blocked
    ) {
        return Vec::new();
    }
    let ready: Vec<&str> = ledger.ready().iter().map(|t| t.id.as_str()).collect();
    ledger
        .board
        .tasks
        .iter()
        .filter(|t| t.links.issue.is_some())
        .filter_map(|t| due_on(t, ready.contains(&t.id.as_str()), agents, now))
        .collect()
}

fn due_on(task: &Task, ready: bool, agents: &Agents, now: DateTime<Utc>) -> Option<Due> {
    let last = task.attempts.last();
    if let Some(open) = last.filter(|a| a.is_open()) {
        let waited = elapsed(open.started_at, now);
        let late = waited.is_some_and(|w| w >= agents.timeout);
        return (times_out(&open.agent) && open.pr.is_none() && late).then(|| Due::TimedOut {
            step: task.id.clone(),
            number: open.number,
        });
    }
    let start_fresh = |why: StartWhy, fresh: bool| {
        let kept = continues(task);
        let continue_pr = if fresh { None } else { kept };
        Some(Due::Start {
            step: task.id.clone(),
            number: next_attempt_number(&task.attempts),
            why,
            continue_pr,
            start_over: fresh && kept.is_some(),
            supersedes: superseded(task, continue_pr),
        })
    };
    let start = |why: StartWhy| start_fresh(why, false);
    match task.status {
        TaskStatus::Done => None,
        TaskStatus::Planned if ready => {
            // A step handed out before attempts were kept has its agent still on it.
            let last = last?;
            if last.outcome == Some(AttemptOutcome::Paused) {
                start(StartWhy::Resumed)
            } else {
                start(StartWhy::Requeued)
            }
        }
        TaskStatus::Planned => None,
        TaskStatus::Failed if task.retry_count >= task.max_retries => None,
        TaskStatus::Failed => match last.and_then(|a| a.outcome.map(|o| (a, o))) {
            Some((a, AttemptOutcome::CiRed)) => {
                let idle = a
                    .ended_at
                    .and_then(|end| elapsed(end, now))
                    .is_some_and(|w| w >= agents.idle_after);
                if idle {
                    start_fresh(StartWhy::CiRed, agents.after_red.starts_over(&a.agent))
                } else {
                    None
                }
            }
            Some((_, AttemptOutcome::Closed)) => start(StartWhy::Closed),
            Some((_, AttemptOutcome::TimedOut)) => start(StartWhy::TimedOut),
            Some((_, AttemptOutcome::Paused)) => start(StartWhy::Resumed),
            Some(_) | None => start(StartWhy::Failed),
        },
        TaskStatus::InProgress => match last {
            Some(a) if a.outcome == Some(AttemptOutcome::Paused) => start(StartWhy::Resumed),
            _ => None,
        },
    }
}

/// The pull request the next attempt of `task` goes on with, `None` to start over: the
/// ledger's one rule ([`continued_pr`]), which its `attempt` operation reads too.
pub fn continues(task: &Task) -> Option<u64> {
    continued_pr(task)
}

/// The pull request an agent's last attempt left open when the next one does not go on
/// with it (a start over after red CI or a replan). A person's pull request is theirs to
/// close, so only those of agents Navin dispatched are named.
fn superseded(task: &Task, continue_pr: Option<u64>) -> Option<u64> {
    if continue_pr.is_some() {
        return None;
    }
    let last = task.attempts.iter().rev().find(|a| !a.is_open())?;
    if !times_out(&last.agent) {
        return None;
    }
    pr_left_open(task, last)
}

/// `now - since`, or `None` when `since` is in the future (a clock step back).
fn elapsed(since: DateTime<Utc>, now: DateTime<Utc>) -> Option<std::time::Duration> {
    (now - since).to_std().ok()
}

#[cfg(test)]
mod tests;
