//! Plan documents: the format of docs/plan.md as types, with its renderer, parser, validator, content hash, edit diff, section-aware merge and policies.

pub mod commands;
mod commit;
pub mod convert;
mod diff;
mod diff_markdown;
mod document;
mod error;
mod hash;
mod merge;
mod model;
mod parse;
pub mod policy;
pub mod record;
mod render;
mod rules;
mod section;
mod text;
mod validate;

#[cfg(test)]
mod tests;

pub use commit::commit_message;
pub use diff::{
    diff, AnsweredQuestion, ContractField, DefaultEdit, FieldEdit, FileEdit, FileField,
    HandoffEdit, ListEdit, PlanDiff, SectionEdit, StageEdit, TextEdit,
};
pub use document::PlanDocument;
pub use error::{PlanError, PlanErrorKind};
pub use hash::content_hash;
pub use merge::{merge, MergeOutcome, SectionConflict};
pub use model::*;
pub use parse::parse;
pub use render::{render, ANSWER_HINT, READ_ONLY_PERSONA};
pub use section::Section;
pub use validate::validate;
