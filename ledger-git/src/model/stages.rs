//! Staged release, automatic checkpoints and pending defaults: the parts of a mission that decide what may start next.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Actor, Ledger, MissionStatus, PauseReason, Task, TaskStatus};

/// How an `ask` history entry names its question (`asked: <question>`).
pub const ASKED: &str = "asked: ";

/// How many automatic checkpoints `mission.json` lists; older ones keep their refs.
pub const CHECKPOINT_WINDOW: usize = 20;

/// Stage release for a staged board (see [`Mission::stage_gate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StageGate {
    pub policy: StagePolicy,
    /// The highest stage whose steps may be ready; `/continue` raises it by one.
    pub released: u32,
}

/// Whether a finished stage waits for a person (`stages:` in `.github/navin.yml`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StagePolicy {
    /// A writer inspects each finished stage and releases the next with `/continue`.
    #[default]
    Pause,
    /// The next stage starts as soon as the previous one is done.
    RunAll,
}

impl StagePolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            StagePolicy::Pause => "pause",
            StagePolicy::RunAll => "run_all",
        }
    }
}

/// One automatic checkpoint: `refs/navin/checkpoints/v<version>` and why it was taken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckpointMark {
    pub version: u64,
    pub reason: String,
    pub at: DateTime<Utc>,
}

/// A plan question waiting for an answer, whose default stands after `due_at`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PendingDefault {
    /// The question as listed in `missing_info`.
    pub question: String,
    pub default: String,
    pub due_at: DateTime<Utc>,
    /// The configured wait, as written (`48h`), for the history line.
    pub after: String,
}

/// A staged mission's position (see [`Ledger::stages`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageView {
    /// The stage being worked, or the finished one waiting for `/continue`.
    pub current: u32,
    pub total: u32,
    pub policy: StagePolicy,
    /// Every stage is done.
    pub all_done: bool,
    /// Stage `current` is done and the next waits for a writer's `/continue`.
    pub waiting_for_continue: bool,
    /// The steps `/continue` would release.
    pub release: Vec<String>,
}

impl Ledger {
    /// The ready queue: planned steps whose dependencies are done and whose stage (if
    /// any) is released. Every front end hands out work from this, never from
    /// [`Board::unblocked`], so a held stage is held everywhere.
    pub fn ready(&self) -> Vec<&Task> {
        let mut ready = self.board.unblocked();
        if let Some(gate) = self.mission.stage_gate {
            if gate.policy == StagePolicy::Pause {
                ready.retain(|t| t.stage.is_none_or(|s| s <= gate.released));
            }
        }
        ready
    }

    /// Where a staged mission stands, when the board has stages.
    pub fn stages(&self) -> Option<StageView> {
        let gate = self.mission.stage_gate?;
        let total = self.board.tasks.iter().filter_map(|t| t.stage).max()?;
        let open = |n: u32| {
            self.board
                .tasks
                .iter()
                .filter(|t| t.stage == Some(n) && t.status != TaskStatus::Done)
                .count()
        };
        let current = (1..=total).find(|&n| open(n) > 0).unwrap_or(total);
        let all_done = open(current) == 0;
        let held = (gate.policy == StagePolicy::Pause && gate.released < total)
            .then_some(gate.released + 1)
            .filter(|&next| (1..next).all(|n| open(n) == 0));
        let release: Vec<String> = held
            .map(|n| {
                self.board
                    .tasks
                    .iter()
                    .filter(|t| t.stage == Some(n))
                    .map(|t| t.id.clone())
                    .collect()
            })
            .unwrap_or_default();
        Some(StageView {
            current: held.map_or(current, |n| n - 1),
            total,
            policy: gate.policy,
            all_done: all_done && current == total,
            waiting_for_continue: held.is_some(),
            release,
        })
    }
}

/// A ready step that names missing info: it may not start until someone answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InfoBlock {
    pub step: String,
    /// The missing-info items it names, as listed in `missing_info`.
    pub items: Vec<String>,
}

impl Ledger {
    /// Ready steps whose context (id, title, description, acceptance, commands) names a
    /// missing-info item: the item mentions the step's id or a path the step names
    /// (`Which locale should src/i18n.rs use?` and `Edit src/i18n.rs`). The
    /// orchestrator's rule: when missing info blocks the step, pause and ask; do not
    /// invent facts.
    pub fn info_blocks(&self) -> Vec<InfoBlock> {
        let missing = &self.mission.missing_info;
        if missing.is_empty() {
            return Vec::new();
        }
        let item_names: Vec<Vec<String>> = missing.iter().map(|m| item_names(m)).collect();
        self.ready()
            .into_iter()
            .filter_map(|task| {
                let names = step_names(task);
                let items: Vec<String> = missing
                    .iter()
                    .zip(&item_names)
                    .filter(|(_, ws)| ws.iter().any(|w| names.contains(w)))
                    .map(|(m, _)| m.clone())
                    .collect();
                (!items.is_empty()).then(|| InfoBlock {
                    step: task.id.clone(),
                    items,
                })
            })
            .collect()
    }
}

impl Ledger {
    /// Open question `number` as `/answer` and `navin ledger answer` count them (from 1),
    /// or, when there is none, the open questions listed for the refusal.
    pub fn open_question(&self, number: usize) -> Result<&str, String> {
        let open = &self.mission.missing_info;
        match number.checked_sub(1).and_then(|i| open.get(i)) {
            Some(q) => Ok(q),
            None if open.is_empty() => Err("nothing is missing".to_owned()),
            None => Err(open
                .iter()
                .enumerate()
                .map(|(i, q)| format!("{}. {q}", i + 1))
                .collect::<Vec<_>>()
                .join("; ")),
        }
    }

    /// The number `/answer` takes for `question` (the next one when it is not open).
    pub fn question_number(&self, question: &str) -> usize {
        let open = &self.mission.missing_info;
        open.iter()
            .position(|m| m == question.trim())
            .map_or(open.len() + 1, |i| i + 1)
    }

    /// The op id of the pause that holds for `blocks`: the same open questions on the
    /// same steps hold once, on GitHub and locally, even after a person resumes
    /// without answering.
    pub fn hold_id(&self, blocks: &[InfoBlock]) -> String {
        use sha2::{Digest, Sha256};
        let mut hash = Sha256::new();
        hash.update(self.mission.created_at.timestamp().to_be_bytes());
        for b in blocks {
            hash.update(b.step.as_bytes());
            for item in &b.items {
                hash.update([0]);
                hash.update(item.as_bytes());
            }
            hash.update([1]);
        }
        format!("ask:{}", hex::encode(&hash.finalize()[..8]))
    }

    /// Questions asked with `ask` since the mission paused that are still open.
    pub fn open_asks(&self) -> Vec<&str> {
        let m = &self.mission;
        let Some(since) = m.paused_at else {
            return Vec::new();
        };
        let mut open: Vec<&str> = m
            .history
            .iter()
            .filter(|h| h.operation == "ask" && h.at >= since)
            .flat_map(|h| h.changes.iter())
            .filter_map(|c| c.strip_prefix(ASKED))
            .filter(|q| m.missing_info.iter().any(|i| i == q))
            .collect();
        open.dedup();
        open
    }

    /// Whether the mission waits for answers that have all come: paused (`human`) by
    /// Navin's own hold or an agent's question, with no open question left that a ready
    /// step names or that was asked since the pause. Then it may resume as the person
    /// who answered, on GitHub and locally alike.
    pub fn answered(&self) -> bool {
        let m = &self.mission;
        let held = m.status == MissionStatus::Paused
            && m.pause_reason == Some(PauseReason::Human)
            && m.paused_by
                .as_ref()
                .is_some_and(|a| matches!(a, Actor::App(_)) || a.is_agent());
        held && self.info_blocks().is_empty() && self.open_asks().is_empty()
    }
}

/// What an open question can name a step by: its words (a step id is one) and its paths.
fn item_names(item: &str) -> Vec<String> {
    let mut names: Vec<String> = item
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.')))
                .trim_end_matches('.')
        })
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    names.extend(crate::paths::text_paths(item));
    names
}

/// What a step answers to in free text: its id and every path its context names.
fn step_names(task: &Task) -> Vec<String> {
    let texts = [
        Some(task.title.as_str()),
        task.description.as_deref(),
        task.acceptance.as_deref(),
    ];
    let mut names = vec![task.id.clone()];
    for text in texts
        .into_iter()
        .flatten()
        .chain(task.commands.iter().map(String::as_str))
    {
        names.extend(crate::paths::text_paths(text));
    }
    names
}
