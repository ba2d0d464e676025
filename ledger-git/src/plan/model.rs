//! The typed plan document: one struct per section of the plan format (docs/plan.md).

use serde::{Deserialize, Serialize};

/// A plan document as docs/plan.md defines it. Section order in the
/// rendered markdown follows the field order here; `stages` is the only
/// optional section and is rendered last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Plan {
    /// The one-line summary after `# Plan: `.
    pub title: String,
    /// `## System Persona`: the read-only statement.
    pub persona: String,
    /// `## Goal`: 2-4 sentences.
    pub goal: String,
    /// `## Repository Architecture`.
    pub architecture: String,
    /// `## Functional Capabilities`.
    pub capabilities: String,
    /// `## Data Flow`.
    pub data_flow: String,
    /// `## Target State`.
    pub target_state: String,
    /// `## Impact Isolation`.
    pub impact_isolation: String,
    /// `## Proposed Changes`: one `### File: path` block each.
    pub changes: Vec<FileChange>,
    /// `## New dependencies`: one bullet each; empty means none.
    pub new_dependencies: Vec<String>,
    /// `## Risks`: 3 to 5 bullets.
    pub risks: Vec<String>,
    /// `## Actionable Next Steps`: an ordered checklist.
    pub next_steps: Vec<String>,
    /// `## Risks And Assumptions`: clarifying questions, each with a default.
    pub questions: Vec<Question>,
    /// `## Optional Goal Handoff Contract`: `None` renders as an explicit "None.".
    pub handoff: Option<HandoffContract>,
    /// `## Stages`: optional; empty means the section is absent.
    pub stages: Vec<Stage>,
}

/// One `### File: path` block of Proposed Changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileChange {
    pub path: String,
    pub operation: Operation,
    pub change: String,
    pub rationale: String,
    /// `- **Optional:** yes`: the file may change (a caller, a doc page, a file the
    /// planner is unsure of) and is in the step's scope, but the step is complete
    /// without it. Absent means the file must change.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
}

/// The operation a proposed change performs on its file.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    Edit,
    Create,
    Delete,
}

/// A clarifying question with the default used when nobody answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Question {
    pub question: String,
    pub default: String,
    /// Filled in when a person answers the question in an edit of the plan.
    pub answer: Option<String>,
}

/// The draft goal contract an approved plan can become.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HandoffContract {
    pub objective: String,
    pub completion_criteria: Vec<String>,
    pub budgets: HandoffBudgets,
    pub allowed_tools: Vec<String>,
    pub scope: Vec<String>,
    pub verification: Vec<String>,
}

/// Budget ceilings proposed for the mission (the ledger's defaults are 3/5/3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HandoffBudgets {
    pub max_retries: u32,
    pub max_replans: u32,
    pub max_stalls: u32,
}

impl Default for HandoffBudgets {
    fn default() -> Self {
        Self {
            max_retries: 3,
            max_replans: 5,
            max_stalls: 3,
        }
    }
}

/// One `### Stage N: title` block of the optional Stages section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Stage {
    pub title: String,
    /// Paths of the files this stage touches (each should appear in `changes`).
    pub files: Vec<String>,
    pub verification: String,
}
