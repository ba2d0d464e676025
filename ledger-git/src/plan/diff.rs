//! Section-aware differences between a plan and a person's edit of it: JSON for the executor, markdown for people.

use super::model::{FileChange, HandoffContract, Plan, Question, Stage};
use super::render::operation_name;
use super::section::Section;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// What an edit changed, section by section. Edits are binding: files added
/// here are to be created or edited, files removed are not to be touched,
/// answers replace defaults, rewritten free text reshapes the approach.
/// Empty parts are left out of the JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct PlanDiff {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<TextEdit>,
    /// Free-text sections (System Persona through Impact Isolation) that changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sections: Vec<SectionEdit>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files_added: Vec<FileChange>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files_removed: Vec<FileChange>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files_changed: Vec<FileEdit>,
    #[serde(skip_serializing_if = "ListEdit::is_empty")]
    pub new_dependencies: ListEdit,
    #[serde(skip_serializing_if = "ListEdit::is_empty")]
    pub risks: ListEdit,
    #[serde(skip_serializing_if = "ListEdit::is_empty")]
    pub next_steps: ListEdit,
    /// Questions that got an answer or a different answer.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub questions_answered: Vec<AnsweredQuestion>,
    /// Questions whose answer was removed, so the default applies again.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub answers_withdrawn: Vec<Question>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub questions_added: Vec<Question>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub questions_removed: Vec<Question>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub defaults_changed: Vec<DefaultEdit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handoff: Option<HandoffEdit>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<StageEdit>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TextEdit {
    pub before: String,
    pub after: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SectionEdit {
    pub section: Section,
    pub before: String,
    pub after: String,
}

/// A file kept in Proposed Changes whose entry was edited.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileEdit {
    pub path: String,
    pub fields: Vec<FieldEdit>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FieldEdit {
    pub field: FileField,
    pub before: String,
    pub after: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileField {
    Operation,
    Change,
    Rationale,
    Optional,
}

/// Items added and removed (matched by exact text, duplicates counted), and
/// whether the items on both sides now come in a different order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct ListEdit {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub reordered: bool,
}

impl ListEdit {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && !self.reordered
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AnsweredQuestion {
    pub question: String,
    pub default: String,
    pub answer: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_answer: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DefaultEdit {
    pub question: String,
    pub before: String,
    pub after: String,
}

/// The contract was added, removed or changed; `fields` names what differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HandoffEdit {
    pub fields: Vec<ContractField>,
    pub before: Option<HandoffContract>,
    pub after: Option<HandoffContract>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ContractField {
    Objective,
    CompletionCriteria,
    Budgets,
    AllowedTools,
    Scope,
    Verification,
}

impl ContractField {
    const ALL: [ContractField; 6] = [
        ContractField::Objective,
        ContractField::CompletionCriteria,
        ContractField::Budgets,
        ContractField::AllowedTools,
        ContractField::Scope,
        ContractField::Verification,
    ];

    /// The field's name in plain words, for messages.
    pub fn name(self) -> &'static str {
        match self {
            ContractField::Objective => "objective",
            ContractField::CompletionCriteria => "completion criteria",
            ContractField::Budgets => "budgets",
            ContractField::AllowedTools => "allowed tools",
            ContractField::Scope => "scope",
            ContractField::Verification => "verification commands",
        }
    }

    fn differs(self, a: &HandoffContract, b: &HandoffContract) -> bool {
        match self {
            ContractField::Objective => a.objective != b.objective,
            ContractField::CompletionCriteria => a.completion_criteria != b.completion_criteria,
            ContractField::Budgets => a.budgets != b.budgets,
            ContractField::AllowedTools => a.allowed_tools != b.allowed_tools,
            ContractField::Scope => a.scope != b.scope,
            ContractField::Verification => a.verification != b.verification,
        }
    }
}

/// Stages are compared by position ("Stage 2" against "Stage 2").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StageEdit {
    Added {
        number: usize,
        stage: Stage,
    },
    Removed {
        number: usize,
        stage: Stage,
    },
    Changed {
        number: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<TextEdit>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        files_added: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        files_removed: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        verification: Option<TextEdit>,
    },
}

/// Compares an edited plan with the original it was made from.
pub fn diff(original: &Plan, edited: &Plan) -> PlanDiff {
    let free = |p: &Plan| {
        [
            (Section::SystemPersona, p.persona.clone()),
            (Section::Goal, p.goal.clone()),
            (Section::RepositoryArchitecture, p.architecture.clone()),
            (Section::FunctionalCapabilities, p.capabilities.clone()),
            (Section::DataFlow, p.data_flow.clone()),
            (Section::TargetState, p.target_state.clone()),
            (Section::ImpactIsolation, p.impact_isolation.clone()),
        ]
    };
    let sections = free(original)
        .into_iter()
        .zip(free(edited))
        .filter(|((_, before), (_, after))| before != after)
        .map(|((section, before), (_, after))| SectionEdit {
            section,
            before,
            after,
        })
        .collect();
    let (files_added, files_removed, files_changed) =
        diff_files(&original.changes, &edited.changes);
    let mut out = PlanDiff {
        title: text_edit(&original.title, &edited.title),
        sections,
        files_added,
        files_removed,
        files_changed,
        new_dependencies: list_edit(&original.new_dependencies, &edited.new_dependencies),
        risks: list_edit(&original.risks, &edited.risks),
        next_steps: list_edit(&original.next_steps, &edited.next_steps),
        handoff: diff_handoff(original.handoff.as_ref(), edited.handoff.as_ref()),
        stages: diff_stages(&original.stages, &edited.stages),
        ..PlanDiff::default()
    };
    diff_questions(&mut out, &original.questions, &edited.questions);
    out
}

fn text_edit(before: &str, after: &str) -> Option<TextEdit> {
    (before != after).then(|| TextEdit {
        before: before.to_owned(),
        after: after.to_owned(),
    })
}

fn diff_files(
    before: &[FileChange],
    after: &[FileChange],
) -> (Vec<FileChange>, Vec<FileChange>, Vec<FileEdit>) {
    let old: HashMap<&str, &FileChange> = before.iter().map(|c| (c.path.as_str(), c)).collect();
    let new: HashMap<&str, &FileChange> = after.iter().map(|c| (c.path.as_str(), c)).collect();
    let added = after
        .iter()
        .filter(|c| !old.contains_key(c.path.as_str()))
        .cloned()
        .collect();
    let removed = before
        .iter()
        .filter(|c| !new.contains_key(c.path.as_str()))
        .cloned()
        .collect();
    let mut changed = Vec::new();
    for edited in after {
        let Some(original) = old.get(edited.path.as_str()) else {
            continue;
        };
        let mut fields = Vec::new();
        if original.operation != edited.operation {
            fields.push(FieldEdit {
                field: FileField::Operation,
                before: operation_name(original.operation).to_owned(),
                after: operation_name(edited.operation).to_owned(),
            });
        }
        if original.optional != edited.optional {
            let word = |o: bool| if o { "yes" } else { "no" }.to_owned();
            fields.push(FieldEdit {
                field: FileField::Optional,
                before: word(original.optional),
                after: word(edited.optional),
            });
        }
        for (field, b, a) in [
            (FileField::Change, &original.change, &edited.change),
            (FileField::Rationale, &original.rationale, &edited.rationale),
        ] {
            if b != a {
                fields.push(FieldEdit {
                    field,
                    before: b.clone(),
                    after: a.clone(),
                });
            }
        }
        if !fields.is_empty() {
            changed.push(FileEdit {
                path: edited.path.clone(),
                fields,
            });
        }
    }
    (added, removed, changed)
}

/// Multiset difference by exact text, plus whether the kept items moved.
fn list_edit(before: &[String], after: &[String]) -> ListEdit {
    let (added, kept_after) = unmatched(after, before);
    let (removed, kept_before) = unmatched(before, after);
    ListEdit {
        added,
        removed,
        reordered: kept_before != kept_after,
    }
}

/// Items of `items` with no counterpart left in `other`, and the rest in order.
fn unmatched(items: &[String], other: &[String]) -> (Vec<String>, Vec<String>) {
    let mut available: HashMap<&str, usize> = HashMap::new();
    for item in other {
        *available.entry(item.as_str()).or_default() += 1;
    }
    let mut missing = Vec::new();
    let mut kept = Vec::new();
    for item in items {
        match available.get_mut(item.as_str()) {
            Some(n) if *n > 0 => {
                *n -= 1;
                kept.push(item.clone());
            }
            _ => missing.push(item.clone()),
        }
    }
    (missing, kept)
}

fn diff_questions(out: &mut PlanDiff, before: &[Question], after: &[Question]) {
    let old: HashMap<&str, &Question> = before.iter().map(|q| (q.question.as_str(), q)).collect();
    let new: HashMap<&str, &Question> = after.iter().map(|q| (q.question.as_str(), q)).collect();
    for q in after {
        let Some(original) = old.get(q.question.as_str()) else {
            out.questions_added.push(q.clone());
            continue;
        };
        if original.default != q.default {
            out.defaults_changed.push(DefaultEdit {
                question: q.question.clone(),
                before: original.default.clone(),
                after: q.default.clone(),
            });
        }
        match (&original.answer, &q.answer) {
            (previous, Some(answer)) if previous.as_ref() != Some(answer) => {
                out.questions_answered.push(AnsweredQuestion {
                    question: q.question.clone(),
                    default: q.default.clone(),
                    answer: answer.clone(),
                    previous_answer: previous.clone(),
                });
            }
            (Some(_), None) => out.answers_withdrawn.push(q.clone()),
            _ => {}
        }
    }
    out.questions_removed = before
        .iter()
        .filter(|q| !new.contains_key(q.question.as_str()))
        .cloned()
        .collect();
}

fn diff_handoff(
    before: Option<&HandoffContract>,
    after: Option<&HandoffContract>,
) -> Option<HandoffEdit> {
    let fields: Vec<ContractField> = match (before, after) {
        (None, None) => return None,
        (Some(a), Some(b)) => ContractField::ALL
            .into_iter()
            .filter(|f| f.differs(a, b))
            .collect(),
        _ => ContractField::ALL.to_vec(),
    };
    (!fields.is_empty()).then(|| HandoffEdit {
        fields,
        before: before.cloned(),
        after: after.cloned(),
    })
}

fn diff_stages(before: &[Stage], after: &[Stage]) -> Vec<StageEdit> {
    let mut edits = Vec::new();
    for (index, (old, new)) in before.iter().zip(after).enumerate() {
        let (files_added, _) = unmatched(&new.files, &old.files);
        let (files_removed, _) = unmatched(&old.files, &new.files);
        let title = text_edit(&old.title, &new.title);
        let verification = text_edit(&old.verification, &new.verification);
        if title.is_some()
            || verification.is_some()
            || !files_added.is_empty()
            || !files_removed.is_empty()
        {
            edits.push(StageEdit::Changed {
                number: index + 1,
                title,
                files_added,
                files_removed,
                verification,
            });
        }
    }
    for (index, stage) in after.iter().enumerate().skip(before.len()) {
        edits.push(StageEdit::Added {
            number: index + 1,
            stage: stage.clone(),
        });
    }
    for (index, stage) in before.iter().enumerate().skip(after.len()) {
        edits.push(StageEdit::Removed {
            number: index + 1,
            stage: stage.clone(),
        });
    }
    edits
}

impl PlanDiff {
    pub fn is_empty(&self) -> bool {
        self == &PlanDiff::default()
    }
}
