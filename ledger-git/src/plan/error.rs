//! The one error type for plan documents: where the first problem is and what it is, in plain words.

use super::section::Section;
use std::fmt;

/// The first problem found in a plan, located as precisely as the input
/// allows. Parsing gives a 1-based `line`; validating a typed [`super::Plan`]
/// has no text, so `line` is `None` there. `section` is the section whose
/// content is wrong; structural problems (a missing or unknown heading) leave
/// it `None` and name the sections in `kind`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct PlanError {
    pub line: Option<usize>,
    pub section: Option<Section>,
    pub kind: PlanErrorKind,
}

impl PlanError {
    pub(crate) fn at(line: usize, section: Section, kind: PlanErrorKind) -> Self {
        Self {
            line: Some(line),
            section: Some(section),
            kind,
        }
    }

    pub(crate) fn structural(line: usize, kind: PlanErrorKind) -> Self {
        Self {
            line: Some(line),
            section: None,
            kind,
        }
    }

    pub(crate) fn in_section(section: Section, kind: PlanErrorKind) -> Self {
        Self {
            line: None,
            section: Some(section),
            kind,
        }
    }
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.section) {
            (Some(line), Some(section)) => write!(f, "line {line}, section \"{section}\": "),
            (Some(line), None) => write!(f, "line {line}: "),
            (None, Some(section)) => write!(f, "section \"{section}\": "),
            (None, None) => Ok(()),
        }?;
        write!(f, "{}", self.kind)
    }
}

/// What is wrong. Messages are written for the person fixing the plan: they
/// quote what was found and say what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanErrorKind {
    #[error("the document is empty; a plan starts with \"# Plan: <one-line summary>\"")]
    EmptyDocument,
    #[error("expected the title line \"# Plan: <one-line summary>\", found \"{found}\"")]
    MissingTitle { found: String },
    #[error("the title after \"# Plan:\" is empty")]
    EmptyTitle,
    #[error("unexpected text before the first section: \"{found}\"")]
    TextBeforeFirstSection { found: String },
    #[error("missing section \"{missing}\" (expected after {})", after_phrase(*after))]
    MissingSection { missing: Section, after: Section },
    #[error("unknown section \"{found}\" ({})", expected_phrase(*expected))]
    UnknownSection {
        found: String,
        expected: Option<Section>,
    },
    #[error("section \"{section}\" appears a second time or out of order")]
    DuplicateSection { section: Section },
    #[error("a level-1 heading is only allowed as the title line, found \"{found}\"; use ### or deeper inside a section, or put it in a code fence")]
    StrayTitle { found: String },
    #[error("the code fence opened on line {opened_at} is never closed")]
    UnclosedFence { opened_at: usize },
    #[error("code blocks are not allowed here; write each item on one line")]
    CodeBlockNotAllowed,
    #[error("unexpected heading \"{found}\" in this section")]
    UnexpectedHeading { found: String },
    #[error("the section is empty")]
    EmptySection,
    #[error("the text has the line \"{found}\", which would start a new section or title; use ### or deeper, or put it in a code fence")]
    HeadingInText { found: String },
    #[error("{field} must be a single line")]
    MultiLine { field: &'static str },
    #[error("expected \"### File: <path>\" blocks or \"None.\", found \"{found}\"")]
    ExpectedFileHeading { found: String },
    #[error("the file path is empty")]
    EmptyPath,
    #[error("file path \"{path}\" {reason}")]
    InvalidPath { path: String, reason: &'static str },
    #[error("file \"{path}\" is listed twice in Proposed Changes{}", first_line.map(|l| format!(" (first on line {l})")).unwrap_or_default())]
    DuplicatePath {
        path: String,
        first_line: Option<usize>,
    },
    #[error("unknown field \"{found}\" in {item}; expected one of: {allowed}")]
    UnknownField {
        found: String,
        item: String,
        allowed: &'static str,
    },
    #[error("{item} has no \"{field}\" line")]
    MissingField { field: &'static str, item: String },
    #[error("{item} has \"{field}\" twice")]
    DuplicateField { field: &'static str, item: String },
    #[error("\"{field}\" of {item} is empty")]
    EmptyField { field: &'static str, item: String },
    #[error("unknown operation \"{found}\"; allowed operations are edit, create, delete")]
    UnknownOperation { found: String },
    #[error("\"Optional\" of {item} is \"{found}\"; write yes or no")]
    UnknownOptional { found: String, item: String },
    #[error("expected a bullet (\"- ...\"){}, found \"{found}\"", if *none_allowed { " or \"None.\"" } else { "" })]
    ExpectedListItem { found: String, none_allowed: bool },
    #[error("empty {what} bullet")]
    EmptyItem { what: &'static str },
    #[error("expected 3 to 5 risk bullets, found {found}")]
    RiskCount { found: usize },
    #[error("expected at least one step, such as \"1. [ ] Run the tests\"")]
    NoNextSteps,
    #[error("expected a numbered question (\"1. <question>\") or \"None.\", found \"{found}\"")]
    ExpectedQuestion { found: String },
    #[error("question \"{question}\" has no default; add \"- **Default:** <what happens if nobody answers>\" below it")]
    QuestionWithoutDefault { question: String },
    #[error("question \"{question}\" reads like a \"Default:\" or \"Answer:\" line; reword it")]
    QuestionLooksLikeField { question: String },
    #[error("budget \"{key}\" must be a whole number, found \"{found}\"")]
    BadBudget { key: String, found: String },
    #[error("unknown budget \"{found}\"; expected max_retries, max_replans or max_stalls")]
    UnknownBudget { found: String },
    #[error("verification command \"{command}\" contains a backtick; use $(...) instead")]
    BacktickInCommand { command: String },
    #[error("expected \"### Stage N: <title>\", found \"{found}\"")]
    ExpectedStageHeading { found: String },
    #[error("expected stage {expected}, found stage {found}")]
    StageNumber { expected: usize, found: String },
    #[error("stage {stage} lists no files; add \"- File: <path>\"")]
    StageWithoutFiles { stage: usize },
    #[error("stage {stage} lists \"{path}\", which is not in Proposed Changes")]
    StageFileNotInChanges { stage: usize, path: String },
}

fn after_phrase(after: Section) -> String {
    match after {
        Section::Title => "the title line".to_owned(),
        other => format!("\"{other}\""),
    }
}

fn expected_phrase(expected: Option<Section>) -> String {
    match expected {
        Some(section) => format!("expected \"{section}\" here"),
        None => "no section may follow \"Stages\"".to_owned(),
    }
}
