//! A step's attempts: each agent run or person's pull request on it, how it ended and what it cost.
//!
//! The closed agent loop reads these to decide when the next attempt is due and to hand
//! the next agent the last one's failure; the panel and `navin board brief` show them.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The failure output kept per attempt: enough for the next brief to show the error
/// lines, small enough that the board stays cheap to rewrite.
pub const FAILURE_EXCERPT_MAX: usize = 1_500;

/// One go at a step: started by Navin (a dispatched agent, a mention), by a pull request
/// that took the step up, or by `board_start`. At most one is open (no `ended_at`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Attempt {
    /// 1-based; the key a start is made under, so a redelivered or racing start of the
    /// same number applies once.
    pub number: u32,
    /// Who works it: `copilot`, `workflow`, `people`, or the actor that took it up
    /// (`human:<login>`, `subagent:<name>`).
    pub agent: String,
    pub started_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<AttemptOutcome>,
    /// The pull request the attempt worked in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr: Option<u64>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub cost_usd: f64,
    /// What failed, when CI judged the attempt red: the next brief carries it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<AttemptFailure>,
    /// Why the attempt ended, in one line (the reason given, the closed pull request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The agent's run reported no tokens and no cost: it was debited 0, so the token
    /// and cost caps could not see it. The panel warns.
    #[serde(default, skip_serializing_if = "is_false")]
    pub spend_unreported: bool,
    /// The next attempt starts over from the default branch rather than continue this
    /// one's pull request: the step was replanned after this attempt ended, or its red
    /// pull request was superseded (`agents.after_red`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub start_over: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_f64(n: &f64) -> bool {
    *n == 0.0
}

impl Attempt {
    pub fn is_open(&self) -> bool {
        self.ended_at.is_none()
    }
}

/// The failing required checks of a red CI round, as fingerprinted.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttemptFailure {
    pub head_sha: String,
    pub checks: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// The failing checks' normalized output and annotations, clipped to
    /// [`FAILURE_EXCERPT_MAX`] characters.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub excerpt: String,
    /// What the attempt's red head changed, at most [`CHANGED_MAX`] files: the next
    /// brief shows it, so a new attempt knows what was tried.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<super::FileDelta>,
}

/// Files of a failed attempt's change kept for the next brief.
pub const CHANGED_MAX: usize = 30;

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttemptOutcome {
    /// The step was done.
    Done,
    /// Required checks were red on its pull request's head.
    CiRed,
    /// Its pull request was closed without merging.
    Closed,
    /// A dispatched agent produced no pull request in time (`agents.timeout`).
    TimedOut,
    /// Reported failed (`board fail`, `/retry` of an open step).
    Failed,
    /// A local replan reset the step.
    Replanned,
    /// The mission paused while it was open; `/resume` starts the next.
    Paused,
}

impl AttemptOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Done => "done",
            AttemptOutcome::CiRed => "ci_red",
            AttemptOutcome::Closed => "closed",
            AttemptOutcome::TimedOut => "timed_out",
            AttemptOutcome::Failed => "failed",
            AttemptOutcome::Replanned => "replanned",
            AttemptOutcome::Paused => "paused",
        }
    }

    /// How people read it on the panel and in a brief.
    pub fn describe(self) -> &'static str {
        match self {
            AttemptOutcome::Done => "done",
            AttemptOutcome::CiRed => "CI failed",
            AttemptOutcome::Closed => "pull request closed unmerged",
            AttemptOutcome::TimedOut => "no pull request in time",
            AttemptOutcome::Failed => "reported failed",
            AttemptOutcome::Replanned => "replanned",
            AttemptOutcome::Paused => "cut off by a pause",
        }
    }
}

impl fmt::Display for AttemptOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Clips `text` to at most `max` characters on a char boundary, marking the cut.
pub fn clip_excerpt(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}
