//! The ledger's persisted types: `mission.json` (task + progress ledger) and `board.json` (tasks).
//!
//! Field names are snake_case and documented in docs/ledger.md. Key order is the field
//! order here, so the pretty-printed JSON diffs cleanly in `git log -p`.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use index::BoardIndex;

mod attempts;
mod ci_round;
mod evidence;
// `Board` owns its index and the index is built from `Task`s, so it lives under the model.
pub(crate) mod index;
mod stages;
mod title;
mod verification;
pub use attempts::{
    clip_excerpt, Attempt, AttemptFailure, AttemptOutcome, CHANGED_MAX, FAILURE_EXCERPT_MAX,
};
pub use ci_round::{CiRound, FileDelta};
pub use evidence::{run_passes, BaseRun, CommandSource, Evidence, EvidenceKind, RunRecord};
pub use stages::{
    CheckpointMark, InfoBlock, PendingDefault, StageGate, StagePolicy, StageView, ASKED,
    CHECKPOINT_WINDOW,
};
pub use title::{clip, MAX_TITLE};
pub use verification::{FailToPass, ScopePolicy, ValidationCommands};

/// The only schema version this build reads and writes.
pub const SCHEMA_VERSION: u32 = 1;

/// How many history entries `mission.json` keeps; older ones live on in the
/// ledger branch's commit log (`navin ledger history`). Keeping the file small
/// keeps every transaction cheap (a transaction's cost grows with the file's size).
pub const HISTORY_WINDOW: usize = 100;

/// How many recent action fingerprints loop detection looks back over.
pub const FINGERPRINT_WINDOW: usize = 8;

/// Both ledger files, as one value: every operation maps a ledger to a ledger.
#[derive(Debug, Clone, PartialEq)]
pub struct Ledger {
    pub mission: Mission,
    pub board: Board,
}

impl Ledger {
    /// `mission.json`'s `steps`: the task ledger's view of the board, one per
    /// task in board order. Derived when written and checked when read, so the
    /// two files can never disagree and no copy is kept in memory.
    pub fn steps(&self) -> Vec<Step> {
        self.board.tasks.iter().map(|t| t.to_step()).collect()
    }
}

/// `.navin/board/mission.json`: the task ledger plus the progress ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Mission {
    /// Always 1 for this format.
    pub schema_version: u32,
    pub goal: String,
    pub status: MissionStatus,
    /// Bumped by every change; also the number in `refs/navin/checkpoints/v<version>`.
    pub version: u64,
    pub constraints: Vec<String>,
    pub facts: Vec<String>,
    pub missing_info: Vec<String>,
    pub acceptance_criteria: Vec<String>,
    /// Where the mission came from (an issue, an approved plan), when known.
    /// (On disk, `steps` follows here: see [`Ledger::steps`].)
    pub origin: Option<Origin>,
    /// The newest [`HISTORY_WINDOW`] changes, oldest first.
    pub history: Vec<HistoryEntry>,
    pub paused_at: Option<DateTime<Utc>>,
    pub pause_reason: Option<PauseReason>,
    /// Who paused it: an agent may resume only a `manual` pause it made itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_by: Option<Actor>,
    /// How steps are handed out: `staged` (one stage after another, `/mission`) or
    /// `cruise` (every step at once, `/cruise`). Picks the model agents get.
    #[serde(default, skip_serializing_if = "MissionMode::is_staged")]
    pub mode: MissionMode,
    /// How a staged plan's stages are released, when the board has stages: stage N+1
    /// waits for every step of stage N and, under `pause`, for a writer's `/continue`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage_gate: Option<StageGate>,
    /// The newest checkpoints Navin took on its own (mission start, before a replan,
    /// before destructive work), newest last: what `/rollback v<N>` can go back to
    /// without digging through the log. At most [`CHECKPOINT_WINDOW`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checkpoints: Vec<CheckpointMark>,
    /// Plan questions whose default becomes a fact at `due_at` unless someone answers
    /// first (`questions.default_after`); each is also listed in `missing_info`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_defaults: Vec<PendingDefault>,
    /// The repository's validation commands (`validation.commands` of
    /// `.github/navin.yml` on the default branch) when the mission was made: what
    /// `navin board verify` runs for a step that names none of its own, so no later edit
    /// of a local branch or remote-tracking ref can choose the command that proves a step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commands: Option<ValidationCommands>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub progress: Progress,
}

/// How a mission hands out its steps (see [`Mission::mode`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MissionMode {
    /// Stages in order, each after the previous one (`/mission`).
    #[default]
    Staged,
    /// One stage: every step is ready, and handed out, at once (`/cruise`).
    Cruise,
}

impl MissionMode {
    pub fn is_staged(&self) -> bool {
        *self == MissionMode::Staged
    }

    pub fn as_str(self) -> &'static str {
        match self {
            MissionMode::Staged => "staged",
            MissionMode::Cruise => "cruise",
        }
    }
}

/// Mission lifecycle status (docs/ledger.md, "Statuses and transitions").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MissionStatus {
    Draft,
    Running,
    Paused,
    Blocked,
    Done,
    Failed,
}

impl MissionStatus {
    /// A live mission blocks `init` without `replace`.
    pub fn is_live(self) -> bool {
        !matches!(self, MissionStatus::Done | MissionStatus::Failed)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            MissionStatus::Draft => "draft",
            MissionStatus::Running => "running",
            MissionStatus::Paused => "paused",
            MissionStatus::Blocked => "blocked",
            MissionStatus::Done => "done",
            MissionStatus::Failed => "failed",
        }
    }
}

impl fmt::Display for MissionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a mission is paused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PauseReason {
    Human,
    Budget,
    Stall,
    Loop,
    Manual,
}

impl PauseReason {
    pub fn as_str(self) -> &'static str {
        match self {
            PauseReason::Human => "human",
            PauseReason::Budget => "budget",
            PauseReason::Stall => "stall",
            PauseReason::Loop => "loop",
            PauseReason::Manual => "manual",
        }
    }
}

impl fmt::Display for PauseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a mission came from.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Origin {
    /// `owner/name` on GitHub, when the mission lives there.
    pub repository: Option<String>,
    /// The issue or PR number that carries the mission panel.
    pub issue: Option<u64>,
    /// The approved plan this mission was converted from.
    pub plan_id: Option<String>,
}

/// A mission step: the task ledger's copy of a board task's execution fields.
/// Kept identical to the board on every write; a mismatch on read is corruption.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub id: String,
    pub status: TaskStatus,
    pub depends_on: Vec<String>,
    pub agent: Option<String>,
    pub acceptance: Option<String>,
    pub validation: Validation,
    pub retry_count: u32,
    pub evidence: Vec<Evidence>,
}

/// One change to the ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryEntry {
    pub version: u64,
    pub reason: String,
    pub at: DateTime<Utc>,
    pub actor: Actor,
    pub changes: Vec<String>,
    /// The operation name, e.g. `done`, `replan`.
    pub operation: String,
    /// Idempotency key (a webhook delivery id, a CLI request id); a second
    /// transaction with the same key is recognised and not applied again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op_id: Option<String>,
}

/// The progress ledger: where the mission is and how it is going.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Progress {
    pub current_step_id: Option<String>,
    pub last_result_ok: Option<bool>,
    pub last_evidence: Option<Evidence>,
    pub real_progress: bool,
    pub loop_detected: bool,
    pub stall_count: u32,
    pub replan_needed: bool,
    pub recent_action_fingerprints: Vec<String>,
    pub budget: Budget,
    pub next_actor: NextActor,
    /// Local replans spent so far, against `budget.max_replans`.
    pub replan_count: u32,
    /// Tokens debited so far, against `budget.max_tokens`.
    pub tokens_used: u64,
    /// Cost debited so far (USD), against `budget.max_cost_usd`.
    pub cost_used_usd: f64,
    /// A stall already forced a replan; the next stall pauses (reset by real progress).
    pub stall_replanned: bool,
    /// A loop already forced a replan; the next repeat pauses (reset by a fresh action).
    pub loop_replanned: bool,
}

impl Default for Progress {
    fn default() -> Self {
        Self {
            current_step_id: None,
            last_result_ok: None,
            last_evidence: None,
            real_progress: false,
            loop_detected: false,
            stall_count: 0,
            replan_needed: false,
            recent_action_fingerprints: Vec::new(),
            budget: Budget::default(),
            next_actor: NextActor::Main,
            replan_count: 0,
            tokens_used: 0,
            cost_used_usd: 0.0,
            stall_replanned: false,
            loop_replanned: false,
        }
    }
}

/// Mission budgets: 3 retries, 5 replans, 3 stalls by default; the one set of defaults
/// (the repository config's `budgets` starts from these).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    pub max_retries: u32,
    pub max_replans: u32,
    pub max_stalls: u32,
    pub max_tokens: Option<u64>,
    pub max_cost_usd: Option<f64>,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            max_retries: 3,
            max_replans: 5,
            max_stalls: 3,
            max_tokens: None,
            max_cost_usd: None,
        }
    }
}

/// Who acts next: `main`, `subagent:NAME` or `human`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum NextActor {
    Main,
    Subagent(String),
    Human,
}

impl fmt::Display for NextActor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NextActor::Main => f.write_str("main"),
            NextActor::Human => f.write_str("human"),
            NextActor::Subagent(name) => write!(f, "subagent:{name}"),
        }
    }
}

impl FromStr for NextActor {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "main" => Ok(NextActor::Main),
            "human" => Ok(NextActor::Human),
            other => match other.strip_prefix("subagent:") {
                Some(name) if valid_name(name) => Ok(NextActor::Subagent(name.to_string())),
                _ => Err(format!(
                    "next_actor must be main, human or subagent:NAME, not {other:?}"
                )),
            },
        }
    }
}

/// Who made a change. Humans are `human:LOGIN`; agents are `main` or
/// `subagent:NAME`; GitHub-side automation (check runs, the App) is `app:NAME`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Actor {
    Human(String),
    Main,
    Subagent(String),
    App(String),
}

impl Actor {
    pub fn is_human(&self) -> bool {
        matches!(self, Actor::Human(_))
    }

    /// A coding agent (`main` or `subagent:NAME`): it may report and ask, but never hand
    /// in evidence; what proves its work is looked up or run by Navin itself.
    pub fn is_agent(&self) -> bool {
        matches!(self, Actor::Main | Actor::Subagent(_))
    }
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Actor::Human(login) => write!(f, "human:{login}"),
            Actor::Main => f.write_str("main"),
            Actor::Subagent(name) => write!(f, "subagent:{name}"),
            Actor::App(name) => write!(f, "app:{name}"),
        }
    }
}

impl FromStr for Actor {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "main" {
            return Ok(Actor::Main);
        }
        let (kind, name) = s.split_once(':').ok_or_else(|| {
            format!("actor must be human:LOGIN, main, subagent:NAME or app:NAME, not {s:?}")
        })?;
        if !valid_name(name) {
            return Err(format!(
                "actor {s:?} has an empty or malformed name after '{kind}:'"
            ));
        }
        match kind {
            "human" => Ok(Actor::Human(name.to_string())),
            "subagent" => Ok(Actor::Subagent(name.to_string())),
            "app" => Ok(Actor::App(name.to_string())),
            _ => Err(format!(
                "actor must be human:LOGIN, main, subagent:NAME or app:NAME, not {s:?}"
            )),
        }
    }
}

/// Logins, agent names and step ids: letters, digits and `-_.[]`, no spaces.
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '[' | ']'))
}

/// Step ids: letters, digits and `-_.` (no brackets: they must survive
/// branch names like `navin/S3-fix`, mermaid node ids and slash commands).
pub fn valid_step_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_STEP_ID_LEN
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Longest step id the ledger accepts.
pub const MAX_STEP_ID_LEN: usize = 100;

/// A step id as the ledger spells it: letters, digits, `-`, `_` or `.`, 1 to 100 characters.
///
/// Validated where it is read (a slash command, a PR body, a branch name), so nothing
/// downstream has to guess whether `S3:` was meant as `S3`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StepId(String);

impl StepId {
    /// `None` when `id` breaks the id rule ([`valid_step_id`]).
    pub fn parse(id: &str) -> Option<Self> {
        valid_step_id(id).then(|| StepId(id.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for StepId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for StepId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl From<StepId> for String {
    fn from(id: StepId) -> Self {
        id.0
    }
}

macro_rules! string_serde {
    ($ty:ty, $desc:literal) => {
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
        impl JsonSchema for $ty {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($ty).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({ "type": "string", "description": $desc })
            }
        }
    };
}

string_serde!(Actor, "human:LOGIN, main, subagent:NAME or app:NAME");
string_serde!(NextActor, "main, human or subagent:NAME");

/// `.navin/board/board.json`: the executable steps.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Board {
    pub schema_version: u32,
    /// Shared, copy-on-write: an operation clones the board in O(tasks) pointer
    /// copies and deep-copies only the tasks it changes.
    pub tasks: Vec<Arc<Task>>,
    /// Built once per load (and on structural changes) so the ready queue and
    /// replans never rebuild string-keyed maps per call (measured: 0.9 ms vs
    /// 82 ms at 100k tasks).
    #[serde(skip)]
    #[schemars(skip)]
    pub(crate) index: Arc<BoardIndex>,
}

impl PartialEq for Board {
    fn eq(&self, other: &Self) -> bool {
        self.schema_version == other.schema_version && self.tasks == other.tasks
    }
}

impl Default for Board {
    fn default() -> Self {
        Self {
            schema_version: SCHEMA_VERSION,
            tasks: Vec::new(),
            index: Arc::default(),
        }
    }
}

/// A board task: one executable step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Task {
    pub id: String,
    pub title: String,
    pub description: Option<String>,
    pub status: TaskStatus,
    pub depends_on: Vec<String>,
    /// What "done" means for this card; non-empty acceptance requires evidence.
    pub acceptance: Option<String>,
    pub validation: Validation,
    /// The commands that validate this step (the plan's verification for it), run in
    /// order with no shell by `navin board verify`; the repository config's command
    /// otherwise. Ledgers written before several were kept have one `command`.
    #[serde(
        default,
        alias = "command",
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "one_or_many"
    )]
    pub commands: Vec<String>,
    pub retry_count: u32,
    pub max_retries: u32,
    pub agent: Option<String>,
    pub evidence: Vec<Evidence>,
    pub links: Links,
    /// The newest CI round counted on the step's pull request: real progress is judged
    /// against it, and a head counts as one action however many events report on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_round: Option<CiRound>,
    /// The plan stage this step belongs to (1-based), when the plan had stages; with a
    /// [`Mission::stage_gate`] it is ready only once its stage is released.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<u32>,
    /// Why starting this step is destructive (a delete, a new dependency, a migration):
    /// Navin checkpoints the ledger just before it goes in progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<String>,
    /// Files the step's pull request changes outside the plan the mission came from (or
    /// outside the step's stage of it), as Navin read them on the linked head.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_drift: Option<PlanDrift>,
    /// Every attempt at this step, oldest first: agent runs and people's pull requests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<Attempt>,
    /// The commit the step's work starts from: the plan's commit for a mission made from
    /// a plan, else the checkout's `HEAD` when the step started. A step closed from a
    /// checkout needs a change from here to the checkout's `HEAD`, so a step cannot be
    /// closed by verifying the tree it was handed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// The files the plan proposes for this step: a change outside them is reported when
    /// the step closes, or refused under `evidence.scope: refuse`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scope: Vec<String>,
    /// The files of the scope the plan says must change (those not marked
    /// `Optional`): a measured change that leaves one untouched is reported when the
    /// step closes, or refused under `evidence.scope: refuse`. The rest of the scope
    /// may change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required: Vec<String>,
    /// The plan pairs a source change with its test in this step: closed from a
    /// checkout, it needs a test that fails on its base and passes on its head, unless
    /// `evidence.fail_to_pass` is `off`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fail_to_pass: bool,
}

/// Plan against actual on a step's linked head: what its pull request changes that the
/// mission's plan does not propose, or proposes for another stage. Navin's reading of
/// GitHub, recorded so the panel shows it and a strict repository's step waits for it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanDrift {
    /// The head the files were read on; a new head clears the record.
    pub head_sha: String,
    /// Changed paths the plan's Proposed Changes do not name (at most a few dozen kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outside_plan: Vec<String>,
    /// Changed paths the plan proposes, but for another stage than the step's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outside_stage: Vec<String>,
    /// Files beyond the kept lists.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted: u32,
    /// Recorded under `plan.scope: strict`: the step is not done on this head.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strict: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl PlanDrift {
    /// No file outside the plan or the stage.
    pub fn is_empty(&self) -> bool {
        self.outside_plan.is_empty() && self.outside_stage.is_empty() && self.omitted == 0
    }

    /// Files outside, kept or not.
    pub fn count(&self) -> usize {
        self.outside_plan.len() + self.outside_stage.len() + self.omitted as usize
    }
}

/// Step status. `planned` steps whose dependencies are all `done` are ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Planned,
    InProgress,
    Done,
    Failed,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Planned => "planned",
            TaskStatus::InProgress => "in_progress",
            TaskStatus::Done => "done",
            TaskStatus::Failed => "failed",
        }
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a step is verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Validation {
    Test,
    Lint,
    Verify,
    Manual,
    #[default]
    None,
}

impl Validation {
    /// Validations whose done needs a recorded green run, never prose.
    pub fn needs_run(self) -> bool {
        matches!(
            self,
            Validation::Test | Validation::Lint | Validation::Verify
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Validation::Test => "test",
            Validation::Lint => "lint",
            Validation::Verify => "verify",
            Validation::Manual => "manual",
            Validation::None => "none",
        }
    }
}

impl fmt::Display for Validation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Validation {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "test" => Ok(Validation::Test),
            "lint" => Ok(Validation::Lint),
            "verify" => Ok(Validation::Verify),
            "manual" => Ok(Validation::Manual),
            "none" => Ok(Validation::None),
            other => Err(format!(
                "validation must be test, lint, verify, manual or none, not {other:?}"
            )),
        }
    }
}

/// Where a step's work lives on GitHub.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Links {
    pub prs: Vec<u64>,
    /// The linked PR's head the evidence must be for.
    pub head_sha: Option<String>,
    pub branch: Option<String>,
    /// The issue a dispatched step got of its own.
    pub issue: Option<u64>,
    /// The linked pull request that was merged, when one was: with `evidence.done_on:
    /// merged` (the default) a step is done only once its pull request is merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_pr: Option<u64>,
}

/// A step's commands as written: a list, or the single `command` string older
/// ledgers carry.
fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(c) => vec![c],
        OneOrMany::Many(c) => c,
    })
}

impl Task {
    /// The mission-side projection of this task.
    pub fn to_step(&self) -> Step {
        Step {
            id: self.id.clone(),
            status: self.status,
            depends_on: self.depends_on.clone(),
            agent: self.agent.clone(),
            acceptance: self.acceptance.clone(),
            validation: self.validation,
            retry_count: self.retry_count,
            evidence: self.evidence.clone(),
        }
    }

    /// The attempt under way, if any.
    pub fn open_attempt(&self) -> Option<&Attempt> {
        self.attempts.last().filter(|a| a.is_open())
    }

    pub fn has_acceptance(&self) -> bool {
        self.acceptance
            .as_deref()
            .is_some_and(|a| !a.trim().is_empty())
    }
}
