//! The board tools: names, descriptions, typed inputs and which are read-only.
//!
//! The names (`ledger_get`, `board_next`, …; the README's "Use Navin from a coding
//! agent" lists them) are fixed so an agent's instructions read the same in every host.
//! Inputs refuse unknown fields: a misspelt argument is an error naming it, not a
//! silently ignored value.

use schemars::JsonSchema;
use serde::Deserialize;

/// Every tool, in the order `tools/list` shows them.
pub const TOOLS: &[ToolSpec] = &[
    ToolSpec::read(
        "ledger_get",
        "The mission (task ledger and progress ledger) and its board. Read it before acting: never guess the queue.",
    ),
    ToolSpec::read(
        "board_digest",
        "The short board digest: goal, version, status, current and ready steps, stall, loop, budget, missing info, the last change and the protocol. A paused mission says so first: then wait for a human.",
    ),
    ToolSpec::read(
        "ledger_digest",
        "The same as board_digest (its older name).",
    ),
    ToolSpec::read(
        "board_next",
        "The ready queue: planned steps whose dependencies are all done.",
    ),
    ToolSpec::read(
        "board_brief",
        "The brief for one step: role, goal, context paths, constraints, done when, do not, its validation and how to report back.",
    ),
    ToolSpec::read(
        "plan_get",
        "A plan record from the ledger branch (the mission's own plan when no id is given): the plan, its hash, approvals and edits.",
    ),
    ToolSpec::write(
        "ledger_init",
        "Start a mission: goal, constraints and acceptance criteria (add steps with the board). Refuses to replace a live mission unless replace=true.",
    ),
    ToolSpec::write("board_start", "Start a ready step."),
    ToolSpec::write(
        "ledger_progress",
        "Report progress on the current step: whether it was real progress, a fingerprint of the action (repeats count as a loop), tokens and cost spent. Budget, stall and loop limits pause the mission.",
    ),
    ToolSpec::write(
        "board_done",
        "Mark a step done. Takes no evidence: Navin looks it up itself (a green CI run Navin recorded for the step's head, or a green run recorded by `navin board verify` for this checkout's clean HEAD).",
    ),
    ToolSpec::write(
        "board_fail",
        "Record a failed attempt on a step (retry within max_retries, then a local replan).",
    ),
    ToolSpec::write(
        "board_retry",
        "Retry a failed step: it goes back to planned for its next attempt, within max_retries (past them, ledger_replan). Read board_brief first: it carries the last failure.",
    ),
    ToolSpec::write(
        "ledger_replan",
        "Local replan: the step and its dependents go back to planned; completed upstream steps stay done.",
    ),
    ToolSpec::write(
        "ledger_pause",
        "Pause the mission (reason manual). You may resume only a pause you made yourself.",
    ),
    ToolSpec::write(
        "ledger_resume",
        "Resume a manual pause you made. Budget, stall, loop and human pauses need a human.",
    ),
    ToolSpec::write(
        "ledger_update",
        "Add missing information (questions for a human) or constraints, or close the mission with status=done (every step done) or status=failed. Facts and answers are a person's: an agent's attempt is refused. Every edit bumps the version.",
    ),
    ToolSpec::write(
        "ask_user",
        "Ask a person a question you cannot answer from the repository: it is recorded as missing info and the mission pauses (human) until a person answers. On GitHub it is posted on the mission's issue once. Do not guess instead.",
    ),
];

/// One tool: its name, what it is for, and whether plan mode allows it.
#[derive(Debug, Clone, Copy)]
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub read_only: bool,
}

impl ToolSpec {
    const fn read(name: &'static str, description: &'static str) -> Self {
        Self {
            name,
            description,
            read_only: true,
        }
    }

    const fn write(name: &'static str, description: &'static str) -> Self {
        Self {
            name,
            description,
            read_only: false,
        }
    }

    pub fn find(name: &str) -> Option<&'static ToolSpec> {
        TOOLS.iter().find(|t| t.name == name)
    }

    /// The JSON Schema of this tool's input.
    pub fn input_schema(&self) -> serde_json::Map<String, serde_json::Value> {
        let schema = match self.name {
            "board_brief" | "board_start" | "board_done" | "board_retry" => {
                schemars::schema_for!(StepInput)
            }
            "plan_get" => schemars::schema_for!(PlanGetInput),
            "ledger_progress" => schemars::schema_for!(ProgressInput),
            "board_fail" => schemars::schema_for!(FailInput),
            "ledger_replan" => schemars::schema_for!(ReplanInput),
            "ledger_pause" => schemars::schema_for!(PauseInput),
            "ledger_resume" => schemars::schema_for!(ResumeInput),
            "ledger_update" => schemars::schema_for!(UpdateInput),
            "ledger_init" => schemars::schema_for!(InitInput),
            "ask_user" => schemars::schema_for!(AskInput),
            _ => schemars::schema_for!(NoInput),
        };
        match serde_json::to_value(schema) {
            Ok(serde_json::Value::Object(mut map)) => {
                map.remove("$schema");
                map.remove("title");
                map.entry("type").or_insert_with(|| "object".into());
                map
            }
            _ => {
                let mut map = serde_json::Map::new();
                map.insert("type".into(), "object".into());
                map
            }
        }
    }
}

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoInput {}

/// Write tools may carry a key of the caller's own: the same key applies once for
/// [`crate::mcp::OP_ID_LOOKBACK_DAYS`] days, even across server restarts (without one,
/// the request id within this session is used).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepInput {
    /// The step id, as on the board (e.g. `S1`).
    pub step: String,
    /// Optional idempotency key: a retry with the same key applies nothing twice.
    #[serde(default)]
    pub op_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanGetInput {
    /// A plan id such as `issue-12` or `pr-7`; default: the mission's own plan.
    #[serde(default)]
    pub plan_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProgressInput {
    pub step: String,
    /// Whether this turn moved the step forward; reports without progress count towards a stall.
    pub real_progress: bool,
    /// A short hash of (tool, arguments, target, result); a repeat counts as a loop.
    #[serde(default)]
    pub fingerprint: Option<String>,
    /// Tokens spent since the last report.
    #[serde(default)]
    pub tokens: u64,
    /// Cost spent since the last report, in US dollars.
    #[serde(default)]
    pub cost_usd: f64,
    /// What was done, in a sentence (kept as a prose note; it proves nothing).
    #[serde(default)]
    pub evidence: Option<String>,
    #[serde(default)]
    pub op_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailInput {
    pub step: String,
    /// Why the attempt failed.
    pub reason: String,
    /// What was seen, in a sentence (a prose note).
    #[serde(default)]
    pub evidence: Option<String>,
    #[serde(default)]
    pub op_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplanInput {
    pub step: String,
    /// Why the step needs a new approach (kept in history).
    pub reason: String,
    #[serde(default)]
    pub op_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PauseInput {
    /// Why the mission should wait (what a human must look at).
    pub reason: String,
    #[serde(default)]
    pub op_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResumeInput {
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub op_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateInput {
    /// Facts: only a person may add them (an agent's call is refused).
    #[serde(default)]
    pub add_facts: Vec<String>,
    /// Questions only a human can answer; do not invent the answers.
    #[serde(default)]
    pub add_missing_info: Vec<String>,
    /// Missing-info entries now answered (exact text); they move to facts. Only a
    /// person may.
    #[serde(default)]
    pub resolve_missing_info: Vec<String>,
    #[serde(default)]
    pub add_constraints: Vec<String>,
    /// Close the mission: `done` (every step must be done) or `failed`.
    #[serde(default)]
    pub status: Option<CloseAs>,
    /// Why (kept in history).
    pub reason: String,
    #[serde(default)]
    pub op_id: Option<String>,
}

/// How `ledger_update` may close a mission.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CloseAs {
    Done,
    Failed,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InitInput {
    /// What the mission is for, in one sentence.
    pub goal: String,
    #[serde(default)]
    pub constraints: Vec<String>,
    #[serde(default)]
    pub acceptance_criteria: Vec<String>,
    /// Replace a live mission (its history stays on the ledger branch).
    #[serde(default)]
    pub replace: bool,
    #[serde(default)]
    pub op_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskInput {
    /// The question, as a person should read it.
    pub question: String,
    /// The step that waits on the answer, if one does.
    #[serde(default)]
    pub step: Option<String>,
    #[serde(default)]
    pub op_id: Option<String>,
}
