//! `planner:` in `.github/navin.yml`: which planner writes `/plan`'s plans, its model and its budgets.
//!
//! A repository picks the planner and the model; where the model is served
//! and with which key is the operator's (server or workflow settings), so
//! a repository can never send the operator's key to a URL of its choosing,
//! nor make the server run a command of its choosing.

use std::time::Duration;

use navin_planner::external::{AgentBudgets, ExternalKind};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `planner:`: which planner writes `/plan`'s plans, its model and its budgets. Where the
/// model is served, and with which key, is the operator's setting, never the file's.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PlannerConfig {
    /// `builtin` (offline, deterministic), `llm` (the tool-using model) or
    /// `command` (the operator's plan command). Default: `builtin`.
    pub source: PlannerSource,
    /// The model for `llm`; 1 to 100 characters. Default: `models.plan`, else the
    /// operator's.
    #[schemars(length(min = 1, max = 100))]
    pub model: Option<String>,
    /// Chat requests per plan, the final one (which writes the plan) included; 2 to 100.
    /// Lower it to bound what a plan costs. Default: 16.
    #[schemars(range(min = 2, max = 100))]
    pub max_turns: u32,
    /// Bytes of tool answers per plan, which bounds how much of the repository the model
    /// reads. Default: 196608 (192 KiB).
    pub max_tool_bytes: usize,
    /// Bytes of one tool answer; at least 512 and at most `max_tool_bytes`. Default: 16384.
    #[schemars(range(min = 512))]
    pub max_result_bytes: usize,
    /// Tokens per plan, as the endpoint counts them. Default: 400000.
    pub max_tokens: u64,
    /// Time for the whole conversation, `5s` to `1h`. Default: `5m`.
    #[serde(
        deserialize_with = "super::duration::deserialize",
        serialize_with = "super::duration::serialize"
    )]
    #[schemars(schema_with = "super::duration::schema")]
    pub max_time: Duration,
    /// `builtin` posts the built-in plan, with a note saying why, when the
    /// chosen planner fails; `none` answers with the error. Default: `none`.
    pub fallback: Fallback,
}

impl Default for PlannerConfig {
    fn default() -> Self {
        let b = AgentBudgets::default();
        Self {
            source: PlannerSource::Builtin,
            model: None,
            max_turns: b.max_turns,
            max_tool_bytes: b.max_tool_bytes,
            max_result_bytes: b.max_result_bytes,
            max_tokens: b.max_tokens,
            max_time: b.max_wall,
            fallback: Fallback::None,
        }
    }
}

/// `planner.source`: who writes the plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PlannerSource {
    /// The offline, deterministic planner: no model, no cost.
    #[default]
    Builtin,
    /// A tool-using model on the operator's OpenAI-compatible endpoint.
    Llm,
    /// The operator's plan command.
    Command,
}

impl std::str::FromStr for PlannerSource {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "builtin" => Ok(Self::Builtin),
            "llm" => Ok(Self::Llm),
            "command" => Ok(Self::Command),
            other => Err(format!(
                "`{other}` is not a planner; use builtin, llm or command"
            )),
        }
    }
}

/// `planner.fallback`: what `/plan` answers when the chosen planner fails.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Fallback {
    /// Answer with the planner's error.
    #[default]
    None,
    /// Post the built-in plan, with a note saying why.
    Builtin,
}

impl PlannerConfig {
    pub fn kind(&self) -> Option<ExternalKind> {
        match self.source {
            PlannerSource::Builtin => None,
            PlannerSource::Llm => Some(ExternalKind::Http),
            PlannerSource::Command => Some(ExternalKind::Command),
        }
    }

    pub fn budgets(&self) -> AgentBudgets {
        AgentBudgets {
            max_turns: self.max_turns,
            max_tool_bytes: self.max_tool_bytes,
            max_result_bytes: self.max_result_bytes,
            max_tokens: self.max_tokens,
            max_wall: self.max_time,
        }
    }

    /// The first out-of-range field and why, for the config's one error.
    pub(super) fn invalid(&self) -> Option<(&'static str, String)> {
        if self.max_turns < 2 || self.max_turns > 100 {
            return Some((
                "planner.max_turns",
                "must be 2 to 100 (the last turn writes the plan)".to_owned(),
            ));
        }
        if self.max_result_bytes < 512 || self.max_result_bytes > self.max_tool_bytes {
            return Some((
                "planner.max_result_bytes",
                "must be at least 512 and at most planner.max_tool_bytes".to_owned(),
            ));
        }
        if self.max_time < Duration::from_secs(5) || self.max_time > Duration::from_secs(3600) {
            return Some(("planner.max_time", "must be 5s to 1h".to_owned()));
        }
        if self
            .model
            .as_deref()
            .is_some_and(|m| m.trim().is_empty() || m.len() > 100 || m.contains(char::is_control))
        {
            return Some((
                "planner.model",
                "must be a model name (1 to 100 characters, one line)".to_owned(),
            ));
        }
        None
    }
}

/// `plan:`: how a pull request is held to its own plan (or a step's to its mission's).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PlanSettings {
    /// What files changed outside a pull request's plan (for a mission step's pull
    /// request: outside the mission's plan or the step's stage) do to its `navin/plan`
    /// check and, for a step, to its completion. Default: `advisory` (listed and
    /// annotated as warnings).
    pub scope: PlanScope,
}

/// `plan.scope`: what files changed outside a pull request's plan do to its check.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PlanScope {
    /// Listed in the check summary and annotated as warnings.
    #[default]
    Advisory,
    /// As advisory, and the check fails (and a step is not done on green CI) until the
    /// plan is edited or the files reverted.
    Strict,
}

/// `plan_mode:`: plans without `/plan`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PlanMode {
    /// An issue or pull request opened by a writer whose title and body score at least
    /// this gets a plan without `/plan` (a migration scores 3; dependency changes,
    /// deletions, broad changes and security words 2 each). At least 1. Default: unset
    /// (off).
    #[schemars(range(min = 1))]
    pub auto_threshold: Option<u32>,
}
