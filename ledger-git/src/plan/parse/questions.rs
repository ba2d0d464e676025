//! Reads the clarifying questions of Risks And Assumptions and the Optional Goal Handoff Contract.

use super::{append, unexpected_heading, Bullet, Parser};
use crate::plan::error::{PlanError, PlanErrorKind};
use crate::plan::model::{HandoffBudgets, HandoffContract, Question};
use crate::plan::rules;
use crate::plan::section::Section;
use crate::plan::text::{self, Comments, Line};

const HANDOFF_FIELDS: &str =
    "Objective, Completion criteria, Budgets, Allowed tools, Scope, Verification commands";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum QuestionField {
    Question,
    Default,
    Answer,
}

#[derive(Debug)]
struct QuestionDraft {
    question: String,
    line: usize,
    default: Option<(String, usize)>,
    answer: Option<String>,
    last: QuestionField,
}

impl QuestionDraft {
    fn append(&mut self, more: &str) {
        let slot = match self.last {
            QuestionField::Question => &mut self.question,
            QuestionField::Default => match self.default.as_mut() {
                Some((value, _)) => value,
                None => return,
            },
            QuestionField::Answer => match self.answer.as_mut() {
                Some(value) => value,
                None => return,
            },
        };
        append(slot, more);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HandoffField {
    Objective,
    Criteria,
    Budgets,
    Tools,
    Scope,
    Verification,
}

impl HandoffField {
    fn from_label(label: &str) -> Option<Self> {
        Some(match label {
            "objective" => HandoffField::Objective,
            "completion criteria" | "completion criterion" => HandoffField::Criteria,
            "budgets" | "budget" => HandoffField::Budgets,
            "allowed tools" | "tools" => HandoffField::Tools,
            "scope" => HandoffField::Scope,
            "verification commands" | "verification" => HandoffField::Verification,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            HandoffField::Objective => "Objective",
            HandoffField::Criteria => "Completion criteria",
            HandoffField::Budgets => "Budgets",
            HandoffField::Tools => "Allowed tools",
            HandoffField::Scope => "Scope",
            HandoffField::Verification => "Verification commands",
        }
    }
}

/// A list field of the contract and the line it was declared on.
type ListField = Option<(Vec<Bullet>, usize)>;

#[derive(Debug, Default)]
struct HandoffDraft {
    objective: Option<(String, usize)>,
    criteria: ListField,
    budgets: Option<HandoffBudgets>,
    tools: ListField,
    scope: ListField,
    verification: ListField,
    current: Option<HandoffField>,
}

impl HandoffDraft {
    fn is_set(&self, field: HandoffField) -> bool {
        match field {
            HandoffField::Objective => self.objective.is_some(),
            HandoffField::Budgets => self.budgets.is_some(),
            HandoffField::Criteria => self.criteria.is_some(),
            HandoffField::Tools => self.tools.is_some(),
            HandoffField::Scope => self.scope.is_some(),
            HandoffField::Verification => self.verification.is_some(),
        }
    }

    fn list(&mut self, field: HandoffField) -> &mut ListField {
        match field {
            HandoffField::Tools => &mut self.tools,
            HandoffField::Scope => &mut self.scope,
            HandoffField::Verification => &mut self.verification,
            _ => &mut self.criteria,
        }
    }

    fn any(&self) -> bool {
        self.current.is_some()
    }
}

/// Verification commands may be written as inline code; the code marks go.
fn list_value(field: HandoffField, value: &str) -> String {
    match field {
        HandoffField::Verification => text::strip_code(value).to_owned(),
        _ => value.trim().to_owned(),
    }
}

/// `max_retries: 3`, `Max retries 3`, `retries: 3`.
fn apply_budget(budgets: &mut HandoffBudgets, entry: &str) -> Result<(), PlanErrorKind> {
    let entry = entry.trim();
    if entry.is_empty() {
        return Ok(());
    }
    let (key, value) = match entry.split_once(':') {
        Some(kv) => kv,
        None => entry
            .rsplit_once(char::is_whitespace)
            .unwrap_or((entry, "")),
    };
    let key_words: Vec<String> = key
        .trim()
        .trim_matches(|c| c == '*' || c == '`' || c == '_')
        .split([' ', '_', '-'])
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let key = key_words.join("_");
    let slot = match key.as_str() {
        "max_retries" | "retries" => &mut budgets.max_retries,
        "max_replans" | "replans" => &mut budgets.max_replans,
        "max_stalls" | "stalls" => &mut budgets.max_stalls,
        _ => {
            return Err(PlanErrorKind::UnknownBudget {
                found: text::quote(entry),
            })
        }
    };
    let value = value.trim().trim_matches(|c| c == '*' || c == '`').trim();
    *slot = value.parse().map_err(|_| PlanErrorKind::BadBudget {
        key: key.clone(),
        found: text::quote(value),
    })?;
    Ok(())
}

impl Parser<'_, '_> {
    pub(super) fn questions(&mut self, body: &[Line<'_>]) -> Result<(), PlanError> {
        const SECTION: Section = Section::RisksAndAssumptions;
        let at = |line: usize, kind| PlanError::at(line, SECTION, kind);
        let mut current: Option<QuestionDraft> = None;
        let mut comments = Comments::default();
        for line in body {
            if line.fence {
                self.finish_question(current.take())?;
                return Err(at(line.no, PlanErrorKind::CodeBlockNotAllowed));
            }
            if comments.skip(line.text) || line.text.trim().is_empty() {
                continue;
            }
            if text::heading(line.text).is_some() {
                self.finish_question(current.take())?;
                return Err(unexpected_heading(SECTION, line));
            }
            let expected_question = || {
                at(
                    line.no,
                    PlanErrorKind::ExpectedQuestion {
                        found: text::quote(line.text),
                    },
                )
            };
            let Some(item) = text::list_item(line.text) else {
                match current.as_mut() {
                    Some(draft) => draft.append(line.text),
                    None if self.draft.questions.is_empty() && text::is_none_marker(line.text) => {}
                    None => return Err(expected_question()),
                }
                continue;
            };
            let field = match text::label(item.content) {
                Some((label, value)) if label == "default" => Some((QuestionField::Default, value)),
                Some((label, value)) if label == "answer" => Some((QuestionField::Answer, value)),
                _ => None,
            };
            match (field, current.as_mut()) {
                (Some(_), None) => return Err(expected_question()),
                (Some((field, value)), Some(draft)) => {
                    let taken = match field {
                        QuestionField::Default => draft.default.is_some(),
                        _ => draft.answer.is_some(),
                    };
                    if taken {
                        return Err(at(
                            line.no,
                            PlanErrorKind::DuplicateField {
                                field: if field == QuestionField::Default {
                                    "Default"
                                } else {
                                    "Answer"
                                },
                                item: rules::question_item(&draft.question),
                            },
                        ));
                    }
                    match field {
                        QuestionField::Default => draft.default = Some((value.to_owned(), line.no)),
                        _ => draft.answer = Some(value.to_owned()),
                    }
                    draft.last = field;
                }
                (None, Some(draft)) if item.indent >= 2 => draft.append(item.content),
                (None, _) => {
                    self.finish_question(current.take())?;
                    current = Some(QuestionDraft {
                        question: item.content.to_owned(),
                        line: line.no,
                        default: None,
                        answer: None,
                        last: QuestionField::Question,
                    });
                }
            }
        }
        self.finish_question(current)
    }

    fn finish_question(&mut self, draft: Option<QuestionDraft>) -> Result<(), PlanError> {
        const SECTION: Section = Section::RisksAndAssumptions;
        let Some(draft) = draft else { return Ok(()) };
        rules::check_question_text(&draft.question)
            .map_err(|k| PlanError::at(draft.line, SECTION, k))?;
        let Some((default, default_line)) = draft.default else {
            return Err(PlanError::at(
                draft.line,
                SECTION,
                PlanErrorKind::QuestionWithoutDefault {
                    question: text::quote(&draft.question),
                },
            ));
        };
        rules::check_field("Default", &rules::question_item(&draft.question), &default)
            .map_err(|k| PlanError::at(default_line, SECTION, k))?;
        self.draft.questions.push(Question {
            question: draft.question,
            default,
            answer: draft.answer.filter(|a| !a.trim().is_empty()),
        });
        Ok(())
    }

    pub(super) fn handoff(&mut self, heading: usize, body: &[Line<'_>]) -> Result<(), PlanError> {
        const SECTION: Section = Section::OptionalGoalHandoffContract;
        let at = |line: usize, kind| PlanError::at(line, SECTION, kind);
        let mut draft = HandoffDraft::default();
        let mut comments = Comments::default();
        for line in body {
            if line.fence {
                if self.unclosed == Some(line.no) {
                    return Err(at(
                        line.no,
                        PlanErrorKind::UnclosedFence { opened_at: line.no },
                    ));
                }
                let field = draft
                    .current
                    .filter(|f| !matches!(f, HandoffField::Objective | HandoffField::Budgets));
                let Some(field) = field else {
                    return Err(at(line.no, PlanErrorKind::CodeBlockNotAllowed));
                };
                let content = line.text.trim();
                if !line.fence_edge && !content.is_empty() {
                    if let Some((items, _)) = draft.list(field) {
                        items.push(Bullet {
                            text: list_value(field, content),
                            line: line.no,
                        });
                    }
                }
                continue;
            }
            if comments.skip(line.text) || line.text.trim().is_empty() {
                continue;
            }
            if text::heading(line.text).is_some() {
                return Err(unexpected_heading(SECTION, line));
            }
            let unknown = |found: String| {
                at(
                    line.no,
                    PlanErrorKind::UnknownField {
                        found,
                        item: rules::HANDOFF_ITEM.to_owned(),
                        allowed: HANDOFF_FIELDS,
                    },
                )
            };
            let Some(item) = text::list_item(line.text) else {
                match draft.current {
                    None if text::is_none_marker(line.text) => {}
                    Some(HandoffField::Objective) => {
                        if let Some((objective, _)) = draft.objective.as_mut() {
                            append(objective, line.text);
                        }
                    }
                    Some(
                        field @ (HandoffField::Criteria
                        | HandoffField::Tools
                        | HandoffField::Scope
                        | HandoffField::Verification),
                    ) => {
                        match draft
                            .list(field)
                            .as_mut()
                            .and_then(|(items, _)| items.last_mut())
                        {
                            Some(last) => last.append(line.text),
                            None => {
                                return Err(at(
                                    line.no,
                                    PlanErrorKind::ExpectedListItem {
                                        found: text::quote(line.text),
                                        none_allowed: true,
                                    },
                                ))
                            }
                        }
                    }
                    _ => {
                        return Err(at(
                            line.no,
                            PlanErrorKind::ExpectedListItem {
                                found: text::quote(line.text),
                                none_allowed: !draft.any(),
                            },
                        ))
                    }
                }
                continue;
            };
            let labelled = text::label(item.content);
            let declared = labelled
                .as_ref()
                .filter(|_| item.indent < 2)
                .and_then(|(label, value)| Some((HandoffField::from_label(label)?, *value)));
            if let Some((field, value)) = declared {
                if draft.is_set(field) {
                    return Err(at(
                        line.no,
                        PlanErrorKind::DuplicateField {
                            field: field.name(),
                            item: rules::HANDOFF_ITEM.to_owned(),
                        },
                    ));
                }
                draft.current = Some(field);
                match field {
                    HandoffField::Objective => draft.objective = Some((value.to_owned(), line.no)),
                    HandoffField::Budgets => {
                        let mut budgets = HandoffBudgets::default();
                        for entry in value.split([',', ';']) {
                            apply_budget(&mut budgets, entry).map_err(|k| at(line.no, k))?;
                        }
                        draft.budgets = Some(budgets);
                    }
                    list => {
                        let items = if value.is_empty() || text::is_none_marker(value) {
                            Vec::new()
                        } else {
                            vec![Bullet {
                                text: list_value(list, value),
                                line: line.no,
                            }]
                        };
                        *draft.list(list) = Some((items, line.no));
                    }
                }
                continue;
            }
            // A bold label at the top level is meant as a field, never a value.
            let bold_field =
                item.indent < 2 && item.content.starts_with("**") && labelled.is_some();
            match draft.current.filter(|_| !bold_field) {
                Some(HandoffField::Budgets) => {
                    let budgets = draft.budgets.get_or_insert_with(HandoffBudgets::default);
                    apply_budget(budgets, item.content).map_err(|k| at(line.no, k))?;
                }
                Some(
                    field @ (HandoffField::Criteria
                    | HandoffField::Tools
                    | HandoffField::Scope
                    | HandoffField::Verification),
                ) => {
                    if let Some((items, _)) = draft.list(field) {
                        items.push(Bullet {
                            text: list_value(field, item.content),
                            line: line.no,
                        });
                    }
                }
                _ => {
                    return Err(unknown(match labelled {
                        Some((l, _)) => l,
                        None => text::quote(item.content),
                    }))
                }
            }
        }
        self.draft.handoff = finish_handoff(draft, heading)?;
        Ok(())
    }
}

/// Checks the contract's required parts; an empty section or "None." means no contract.
fn finish_handoff(
    mut draft: HandoffDraft,
    heading: usize,
) -> Result<Option<HandoffContract>, PlanError> {
    const SECTION: Section = Section::OptionalGoalHandoffContract;
    if !draft.any() {
        return Ok(None);
    }
    let item = rules::HANDOFF_ITEM;
    let missing = |field| {
        PlanError::at(
            heading,
            SECTION,
            PlanErrorKind::MissingField {
                field,
                item: item.to_owned(),
            },
        )
    };
    let (objective, objective_line) = draft.objective.take().ok_or_else(|| missing("Objective"))?;
    rules::check_field("Objective", item, &objective)
        .map_err(|k| PlanError::at(objective_line, SECTION, k))?;
    let mut lists = Vec::with_capacity(4);
    for (field, required, what) in [
        (HandoffField::Criteria, true, "completion criterion"),
        (HandoffField::Tools, false, "allowed tool"),
        (HandoffField::Scope, false, "scope"),
        (HandoffField::Verification, true, "verification command"),
    ] {
        let entries = draft.list(field).take();
        let items = match entries {
            None if required => return Err(missing(field.name())),
            None => Vec::new(),
            Some((items, declared)) => {
                if required && items.is_empty() {
                    return Err(PlanError::at(
                        declared,
                        SECTION,
                        PlanErrorKind::EmptyField {
                            field: field.name(),
                            item: item.to_owned(),
                        },
                    ));
                }
                for bullet in &items {
                    rules::check_item(what, &bullet.text)
                        .map_err(|k| PlanError::at(bullet.line, SECTION, k))?;
                    if field == HandoffField::Verification {
                        rules::check_command(&bullet.text)
                            .map_err(|k| PlanError::at(bullet.line, SECTION, k))?;
                    }
                }
                items.into_iter().map(|b| b.text).collect()
            }
        };
        lists.push(items);
    }
    let mut lists = lists.into_iter();
    let mut next = || lists.next().unwrap_or_default();
    Ok(Some(HandoffContract {
        objective,
        completion_criteria: next(),
        budgets: draft.budgets.unwrap_or_default(),
        allowed_tools: next(),
        scope: next(),
        verification: next(),
    }))
}
