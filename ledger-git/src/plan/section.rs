//! The named parts of a plan document, in the order the plan format puts them (docs/plan.md).

use serde::{Deserialize, Serialize};
use std::fmt;

/// A part of a plan document. `Title` is the `# Plan:` line; the others are
/// the `##` sections. Errors and diffs name sections with this type so callers
/// can branch on them instead of matching strings.
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
#[serde(rename_all = "snake_case")]
pub enum Section {
    Title,
    SystemPersona,
    Goal,
    RepositoryArchitecture,
    FunctionalCapabilities,
    DataFlow,
    TargetState,
    ImpactIsolation,
    ProposedChanges,
    NewDependencies,
    Risks,
    ActionableNextSteps,
    RisksAndAssumptions,
    OptionalGoalHandoffContract,
    Stages,
}

impl Section {
    /// The `##` sections in document order; all but the last (`Stages`) are required.
    pub const ORDER: [Section; 14] = [
        Section::SystemPersona,
        Section::Goal,
        Section::RepositoryArchitecture,
        Section::FunctionalCapabilities,
        Section::DataFlow,
        Section::TargetState,
        Section::ImpactIsolation,
        Section::ProposedChanges,
        Section::NewDependencies,
        Section::Risks,
        Section::ActionableNextSteps,
        Section::RisksAndAssumptions,
        Section::OptionalGoalHandoffContract,
        Section::Stages,
    ];

    /// How many leading entries of [`Section::ORDER`] every plan must have.
    pub const REQUIRED: usize = 13;

    /// The free-text sections, whose bodies are kept as markdown.
    pub const FREE_TEXT: [Section; 7] = [
        Section::SystemPersona,
        Section::Goal,
        Section::RepositoryArchitecture,
        Section::FunctionalCapabilities,
        Section::DataFlow,
        Section::TargetState,
        Section::ImpactIsolation,
    ];

    /// The heading text the renderer writes (and error messages quote).
    pub const fn heading(self) -> &'static str {
        match self {
            Section::Title => "Title",
            Section::SystemPersona => "System Persona",
            Section::Goal => "Goal",
            Section::RepositoryArchitecture => "Repository Architecture",
            Section::FunctionalCapabilities => "Functional Capabilities",
            Section::DataFlow => "Data Flow",
            Section::TargetState => "Target State",
            Section::ImpactIsolation => "Impact Isolation",
            Section::ProposedChanges => "Proposed Changes",
            Section::NewDependencies => "New dependencies",
            Section::Risks => "Risks",
            Section::ActionableNextSteps => "Actionable Next Steps",
            Section::RisksAndAssumptions => "Risks And Assumptions",
            Section::OptionalGoalHandoffContract => "Optional Goal Handoff Contract",
            Section::Stages => "Stages",
        }
    }

    /// Recognises a `##` heading, forgiving case, spacing, emphasis, a
    /// trailing colon, a leading number ("3. Goal") and a few names people
    /// and models use for the same section ("Open Questions").
    pub fn from_heading(text: &str) -> Option<Section> {
        let mut name = text.trim().trim_end_matches('#').trim();
        name = name.trim_matches(|c| c == '*' || c == '_').trim();
        if let Some(rest) = strip_number(name) {
            name = rest;
        }
        let name = name.trim_end_matches(':').trim();
        let words: Vec<String> = name.split_whitespace().map(str::to_lowercase).collect();
        let key = words.join(" ");
        let section = match key.as_str() {
            "system persona" | "persona" => Section::SystemPersona,
            "goal" => Section::Goal,
            "repository architecture" => Section::RepositoryArchitecture,
            "functional capabilities" => Section::FunctionalCapabilities,
            "data flow" => Section::DataFlow,
            "target state" => Section::TargetState,
            "impact isolation" => Section::ImpactIsolation,
            "proposed changes" => Section::ProposedChanges,
            "new dependencies" => Section::NewDependencies,
            "risks" => Section::Risks,
            "actionable next steps" | "next steps" => Section::ActionableNextSteps,
            "risks and assumptions" | "risks & assumptions" | "open questions" => {
                Section::RisksAndAssumptions
            }
            "optional goal handoff contract" | "goal handoff contract" | "handoff contract" => {
                Section::OptionalGoalHandoffContract
            }
            "stages" => Section::Stages,
            _ => return None,
        };
        Some(section)
    }

    /// Position in [`Section::ORDER`]; `Title` comes before all of them.
    pub(crate) fn position(self) -> Option<usize> {
        Section::ORDER.iter().position(|s| *s == self)
    }
}

/// "3. Goal" / "3) Goal" → "Goal".
fn strip_number(name: &str) -> Option<&str> {
    let digits = name.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let rest = &name[digits..];
    let rest = rest.strip_prefix('.').or_else(|| rest.strip_prefix(')'))?;
    Some(rest.trim_start())
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.heading())
    }
}
