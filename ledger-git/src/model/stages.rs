//! Staged release, automatic checkpoints and pending defaults: the parts of a mission that decide what may start next.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Ledger, Task, TaskStatus};

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
    /// (`Which locale should src/i18n.rs use?` and `Edit src/i18n.rs`). The seed's
    /// rule: when missing info blocks the step, pause and ask; do not invent facts.
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
