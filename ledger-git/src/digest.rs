//! The board digest: the few lines an agent reads at the top of every turn.
//!
//! An agent host puts a short board digest and the mission's lines in front of the
//! agent every turn, so the digest is short (at most [`MAX_CHARS`]), deterministic for a given ledger (no clock,
//! no host), and leads with a pause when there is one: a paused mission means wait for a
//! person, whatever else the lines say.

use serde::Serialize;

use crate::model::{Ledger, MissionStatus, TaskStatus};

/// The digest's upper bound in characters; long goals and lists are cut to fit.
pub const MAX_CHARS: usize = 1500;
/// Ready steps named before "and N more".
const MAX_READY: usize = 8;
/// Open missing-info entries named before "and N more".
const MAX_MISSING: usize = 3;
/// Facts named in the digest, newest first; the brief lists them all.
const MAX_FACTS: usize = 5;

/// The orchestrator protocol, condensed to one line per step.
pub const PROTOCOL: [&str; 7] = [
    "Read ledger_get and board_next; never guess the queue.",
    "Choose one ready step (all independent ready steps in /cruise and /mission).",
    "Act on that step only.",
    "Verify as its validation says (test, lint, verify, manual, none).",
    "Report with ledger_progress (real_progress, fingerprint, tokens, cost).",
    "Decide: next, retry (within max_retries), ledger_replan, or ledger_pause.",
    "Never mark done without a recorded green run when validation is test, lint or verify.",
];

/// The digest's facts, for `--json` and MCP structured content.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Digest {
    pub goal: String,
    pub version: u64,
    pub status: MissionStatus,
    pub paused: bool,
    pub pause_reason: Option<String>,
    pub current_step: Option<String>,
    pub ready: Vec<String>,
    pub stall_count: u32,
    pub max_stalls: u32,
    pub loop_detected: bool,
    pub replans: u32,
    pub max_replans: u32,
    pub tokens_used: u64,
    pub max_tokens: Option<u64>,
    pub cost_used_usd: f64,
    pub max_cost_usd: Option<f64>,
    pub missing_info: Vec<String>,
    /// Facts and answers people gave, newest first: what the agent is to use, not guess.
    pub facts: Vec<String>,
    pub last_reason: Option<String>,
    pub steps_done: usize,
    pub steps_total: usize,
    /// A staged mission's stage (`2/3`), when the board has stages.
    pub stage: Option<String>,
    /// The finished stage waits for a person's `/continue`: nothing new to start.
    pub waiting_for_continue: bool,
    /// The rendered lines, at most [`MAX_CHARS`].
    pub text: String,
}

/// The digest of `ledger`.
pub fn digest(ledger: &Ledger) -> Digest {
    let m = &ledger.mission;
    let p = &m.progress;
    let ready: Vec<String> = ledger.ready().iter().map(|t| t.id.clone()).collect();
    let steps_done = ledger
        .board
        .tasks
        .iter()
        .filter(|t| t.status == TaskStatus::Done)
        .count();
    let mut d = Digest {
        goal: m.goal.clone(),
        version: m.version,
        status: m.status,
        paused: m.status == MissionStatus::Paused,
        pause_reason: m.pause_reason.map(|r| r.as_str().to_string()),
        current_step: p.current_step_id.clone(),
        ready,
        stall_count: p.stall_count,
        max_stalls: p.budget.max_stalls,
        loop_detected: p.loop_detected,
        replans: p.replan_count,
        max_replans: p.budget.max_replans,
        tokens_used: p.tokens_used,
        max_tokens: p.budget.max_tokens,
        cost_used_usd: p.cost_used_usd,
        max_cost_usd: p.budget.max_cost_usd,
        missing_info: m.missing_info.clone(),
        facts: m.facts.iter().rev().cloned().collect(),
        last_reason: m.history.last().map(|h| h.reason.clone()),
        steps_done,
        steps_total: ledger.board.tasks.len(),
        stage: ledger
            .stages()
            .map(|v| format!("{}/{}", v.current, v.total)),
        waiting_for_continue: ledger.stages().is_some_and(|v| v.waiting_for_continue),
        text: String::new(),
    };
    d.text = render(&d);
    d
}

fn render(d: &Digest) -> String {
    let mut lines: Vec<String> = Vec::new();
    if d.paused {
        let why = d.pause_reason.as_deref().unwrap_or("manual");
        lines.push(format!(
            "PAUSED ({why}): wait for a human to resume the mission; do not start, finish or change steps."
        ));
    } else if matches!(d.status, MissionStatus::Done | MissionStatus::Failed) {
        lines.push(format!(
            "The mission is {}: there is nothing left to work on.",
            d.status
        ));
    }
    lines.push(format!(
        "Mission v{} [{}]: {}",
        d.version,
        d.status,
        line(&d.goal, 300)
    ));
    lines.push(format!(
        "Steps: {}/{} done; current: {}; ready: {}",
        d.steps_done,
        d.steps_total,
        d.current_step.as_deref().unwrap_or("none"),
        list(&d.ready, MAX_READY, 40)
    ));
    if let Some(stage) = &d.stage {
        lines.push(if d.waiting_for_continue {
            format!("Stage {stage} is done: wait for a person's /continue before starting the next stage.")
        } else {
            format!("Stage {stage}: later stages stay closed until this one is done.")
        });
    }
    let mut budget = format!(
        "Stall {}/{}; loop {}; replans {}/{}; tokens {}",
        d.stall_count,
        d.max_stalls,
        if d.loop_detected { "DETECTED" } else { "no" },
        d.replans,
        d.max_replans,
        d.tokens_used
    );
    if let Some(max) = d.max_tokens {
        budget.push_str(&format!("/{max}"));
    }
    budget.push_str(&format!("; cost ${:.2}", d.cost_used_usd));
    if let Some(max) = d.max_cost_usd {
        budget.push_str(&format!("/${max:.2}"));
    }
    lines.push(budget);
    if !d.missing_info.is_empty() {
        lines.push(format!(
            "Missing info (ask, do not invent): {}",
            list(&d.missing_info, MAX_MISSING, 120)
        ));
    }
    let facts_at = lines.len();
    if let Some(reason) = &d.last_reason {
        lines.push(format!("Last change: {}", line(reason, 160)));
    }
    lines.push("Protocol:".to_string());
    for (i, step) in PROTOCOL.iter().enumerate() {
        lines.push(format!("{}. {step}", i + 1));
    }
    // The facts get what room the rest leaves, so they never push the protocol out.
    if !d.facts.is_empty() {
        let used = lines.iter().map(|l| l.chars().count() + 1).sum::<usize>();
        let room = MAX_CHARS.saturating_sub(used + 1);
        if let Some(facts) = facts_line(&d.facts, room) {
            lines.insert(facts_at, facts);
        }
    }
    let text = lines.join("\n");
    cut(&text, MAX_CHARS)
}

/// The facts line in at most `room` characters: as many facts (newest first, each cut
/// to 120 characters) as fit, then how many more; `None` when not even one fits.
fn facts_line(facts: &[String], room: usize) -> Option<String> {
    let shown = |n: usize| {
        let named: Vec<String> = facts.iter().take(n).map(|f| line(f, 120)).collect();
        let more = match facts.len() - n {
            0 => String::new(),
            rest => format!(", and {rest} more"),
        };
        format!("Facts from people (use them): {}{more}", named.join(", "))
    };
    (1..=facts.len().min(MAX_FACTS))
        .rev()
        .map(shown)
        .find(|text| text.chars().count() <= room)
}

/// `items` joined, each cut to `each` characters, at most `max` named.
fn list(items: &[String], max: usize, each: usize) -> String {
    if items.is_empty() {
        return "none".to_string();
    }
    let mut out: Vec<String> = items.iter().take(max).map(|s| line(s, each)).collect();
    if items.len() > max {
        out.push(format!("and {} more", items.len() - max));
    }
    out.join(", ")
}

/// `text` on one line, at most `max` characters.
fn line(text: &str, max: usize) -> String {
    cut(&text.split_whitespace().collect::<Vec<_>>().join(" "), max)
}

/// At most `max` characters, with an ellipsis when cut.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

#[cfg(test)]
mod tests;
