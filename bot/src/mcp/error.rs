//! How a tool call is refused: the error every tool answers with, below both the ledger calls and the GitHub CI reads that return it.

use navin_ledger::store::StoreError;
use navin_ledger::RuleError;
use serde_json::{json, Value};

/// A tool call that did not succeed: a stable code, a sentence, and what to do.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    pub code: String,
    pub message: String,
    pub hint: Option<String>,
}

impl ToolError {
    pub(super) fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
            hint: None,
        }
    }

    pub(super) fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn to_json(&self) -> Value {
        json!({ "code": self.code, "message": self.message, "hint": self.hint })
    }

    /// The sentence an agent reads.
    pub fn text(&self) -> String {
        match &self.hint {
            Some(h) => format!("{} ({}): {h}", self.message, self.code),
            None => format!("{} ({})", self.message, self.code),
        }
    }

    pub fn plan_mode(tool: &str) -> Self {
        Self::new(
            "plan_mode",
            format!("{tool} changes the ledger, and this server runs in plan mode, where only read tools are live"),
        )
        .hint("read with ledger_get, board_digest, board_next, board_brief or plan_get; a human starts `navin mcp --mode agent` to work on steps")
    }

    pub fn unknown_tool(tool: &str) -> Self {
        let names: Vec<&str> = super::tools::TOOLS.iter().map(|t| t.name).collect();
        Self::new("unknown_tool", format!("there is no tool named {tool:?}"))
            .hint(format!("the tools are {}", names.join(", ")))
    }
}

impl From<StoreError> for ToolError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Rule(rule) => {
                let hint = rule_hint(&rule);
                let err = ToolError::new(rule.code(), rule.to_string());
                match hint {
                    Some(h) => err.hint(h),
                    None => err,
                }
            }
            StoreError::Corrupt { .. } => ToolError::new("ledger_corrupt", e.to_string()).hint(
                "the ledger branch does not parse; a human must repair it (nothing was written)",
            ),
            other => ToolError::new("store", other.to_string())
                .hint("nothing was applied; retry the call, with the same op_id if you gave one"),
        }
    }
}

/// What an agent does instead, for the rules whose fix is another tool or command.
fn rule_hint(rule: &RuleError) -> Option<&'static str> {
    use RuleError as R;
    Some(match rule {
        R::NoMission => "a human starts a mission (`/mission GOAL` on GitHub, `navin ledger init --goal TEXT` locally)",
        R::Paused { .. } | R::ResumeNeedsHuman { .. } => "wait for a human to resume the mission; read board_digest for why it paused",
        R::EvidenceRequired { .. } | R::AgentEvidence { .. } | R::ProseNotAccepted { .. } => {
            "run `navin board verify STEP` in the checkout (or push and let CI run), then call board_done again"
        }
        R::GivenCommandRun { .. } => {
            "push your work and let CI on the step's pull request prove it, or ask a human to set validation.commands in .github/navin.yml on the default branch"
        }
        R::StaleRun { .. } | R::DirtyRun { .. } | R::RedRun { .. } => {
            "commit your work, run `navin board verify STEP` again, then call board_done"
        }
        R::DependenciesNotDone { .. } => "call board_next for the steps that are ready",
        R::UnknownStep { .. } => "call board_next or ledger_get for the step ids",
        R::RetriesExhausted { .. } => "call ledger_replan with a reason",
        _ => return None,
    })
}
