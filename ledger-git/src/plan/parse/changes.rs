//! Reads the `### File:` blocks of Proposed Changes and the `### Stage N:` blocks of Stages.

use super::{append, Parser};
use crate::plan::error::{PlanError, PlanErrorKind};
use crate::plan::model::{FileChange, Operation, Stage};
use crate::plan::rules;
use crate::plan::section::Section;
use crate::plan::text::{self, Comments, Line};

const FILE_FIELDS: &str = "Operation, Change, Rationale, Optional";
const STAGE_FIELDS: &str = "File, Verification";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileField {
    Operation,
    Change,
    Rationale,
    Optional,
}

#[derive(Debug)]
struct FileDraft {
    path: String,
    line: usize,
    operation: Option<Operation>,
    change: Option<(String, usize)>,
    rationale: Option<(String, usize)>,
    optional: Option<bool>,
    last: Option<FileField>,
}

impl FileDraft {
    fn item(&self) -> String {
        rules::file_item(&self.path)
    }

    /// Appends a wrapped line to the text field being written, if any.
    fn continue_field(&mut self, more: &str) -> bool {
        let slot = match self.last {
            Some(FileField::Change) => &mut self.change,
            Some(FileField::Rationale) => &mut self.rationale,
            _ => return false,
        };
        match slot {
            Some((value, _)) => {
                append(value, more);
                true
            }
            None => false,
        }
    }
}

/// `### File: src/lib.rs` / `### File: \`src/lib.rs\`` → `src/lib.rs`.
pub(super) fn clean_path(value: &str) -> &str {
    let mut path = text::strip_code(value);
    while let Some(rest) = path.strip_prefix("./") {
        path = rest;
    }
    path
}

/// `yes`/`no` (or `true`/`false`) of an `Optional` line.
fn parse_optional(value: &str, item: &str) -> Result<bool, PlanErrorKind> {
    let key = value
        .trim()
        .trim_matches(|c| c == '`' || c == '*' || c == '_')
        .trim()
        .trim_end_matches('.');
    match key.to_ascii_lowercase().as_str() {
        "yes" | "true" => Ok(true),
        "no" | "false" => Ok(false),
        _ => Err(PlanErrorKind::UnknownOptional {
            found: text::quote(value),
            item: item.to_owned(),
        }),
    }
}

fn parse_operation(value: &str, item: &str) -> Result<Operation, PlanErrorKind> {
    let key = value
        .trim()
        .trim_matches(|c| c == '`' || c == '*' || c == '_')
        .trim();
    if key.is_empty() {
        return Err(PlanErrorKind::EmptyField {
            field: "Operation",
            item: item.to_owned(),
        });
    }
    match key.to_ascii_lowercase().as_str() {
        "edit" => Ok(Operation::Edit),
        "create" => Ok(Operation::Create),
        "delete" => Ok(Operation::Delete),
        _ => Err(PlanErrorKind::UnknownOperation {
            found: text::quote(value),
        }),
    }
}

impl Parser<'_, '_> {
    pub(super) fn changes(&mut self, body: &[Line<'_>]) -> Result<(), PlanError> {
        const SECTION: Section = Section::ProposedChanges;
        let at = |line: usize, kind| PlanError::at(line, SECTION, kind);
        let mut current: Option<FileDraft> = None;
        let mut blank = false;
        let mut comments = Comments::default();
        for line in body {
            if line.fence {
                self.finish_change(current.take())?;
                return Err(at(line.no, PlanErrorKind::CodeBlockNotAllowed));
            }
            if comments.skip(line.text) {
                continue;
            }
            if line.text.trim().is_empty() {
                blank = true;
                continue;
            }
            let was_blank = std::mem::replace(&mut blank, false);
            if let Some((_, heading)) = text::heading(line.text) {
                self.finish_change(current.take())?;
                let path = match text::label(heading) {
                    Some((label, value)) if label == "file" => clean_path(value),
                    _ => {
                        return Err(at(
                            line.no,
                            PlanErrorKind::ExpectedFileHeading {
                                found: text::quote(line.text),
                            },
                        ))
                    }
                };
                rules::check_path(path).map_err(|k| at(line.no, k))?;
                if let Some(first) = self.draft.paths.get(path) {
                    return Err(at(
                        line.no,
                        PlanErrorKind::DuplicatePath {
                            path: path.to_owned(),
                            first_line: Some(*first),
                        },
                    ));
                }
                self.draft.paths.insert(path.to_owned(), line.no);
                current = Some(FileDraft {
                    path: path.to_owned(),
                    line: line.no,
                    operation: None,
                    change: None,
                    rationale: None,
                    optional: None,
                    last: None,
                });
                continue;
            }
            if let Some(item) = text::list_item(line.text) {
                let Some(draft) = current.as_mut() else {
                    return Err(at(
                        line.no,
                        PlanErrorKind::ExpectedFileHeading {
                            found: text::quote(line.text),
                        },
                    ));
                };
                let labelled = text::label(item.content);
                let field = match labelled.as_ref().map(|(l, _)| l.as_str()) {
                    Some("operation") => Some(FileField::Operation),
                    Some("change") => Some(FileField::Change),
                    Some("rationale") => Some(FileField::Rationale),
                    Some("optional") => Some(FileField::Optional),
                    _ => None,
                };
                let (Some(field), Some((_, value))) = (field, labelled.as_ref()) else {
                    if item.indent >= 2 && draft.continue_field(item.content) {
                        continue;
                    }
                    let found = match &labelled {
                        Some((l, _)) => l.clone(),
                        None => text::quote(item.content),
                    };
                    return Err(at(
                        line.no,
                        PlanErrorKind::UnknownField {
                            found,
                            item: draft.item(),
                            allowed: FILE_FIELDS,
                        },
                    ));
                };
                let duplicate = |name| {
                    at(
                        line.no,
                        PlanErrorKind::DuplicateField {
                            field: name,
                            item: draft.item(),
                        },
                    )
                };
                match field {
                    FileField::Operation => {
                        if draft.operation.is_some() {
                            return Err(duplicate("Operation"));
                        }
                        let op =
                            parse_operation(value, &draft.item()).map_err(|k| at(line.no, k))?;
                        draft.operation = Some(op);
                    }
                    FileField::Change => {
                        if draft.change.is_some() {
                            return Err(duplicate("Change"));
                        }
                        draft.change = Some(((*value).to_owned(), line.no));
                    }
                    FileField::Rationale => {
                        if draft.rationale.is_some() {
                            return Err(duplicate("Rationale"));
                        }
                        draft.rationale = Some(((*value).to_owned(), line.no));
                    }
                    FileField::Optional => {
                        if draft.optional.is_some() {
                            return Err(duplicate("Optional"));
                        }
                        let yes =
                            parse_optional(value, &draft.item()).map_err(|k| at(line.no, k))?;
                        draft.optional = Some(yes);
                    }
                }
                draft.last = Some(field);
                continue;
            }
            let indented = text::indent_width(line.text) >= 2;
            if let Some(draft) = current.as_mut() {
                if (!was_blank || indented) && draft.continue_field(line.text) {
                    continue;
                }
            } else if self.draft.changes.is_empty() && text::is_none_marker(line.text) {
                continue;
            }
            self.finish_change(current.take())?;
            return Err(at(
                line.no,
                PlanErrorKind::ExpectedFileHeading {
                    found: text::quote(line.text),
                },
            ));
        }
        self.finish_change(current)
    }

    fn finish_change(&mut self, draft: Option<FileDraft>) -> Result<(), PlanError> {
        const SECTION: Section = Section::ProposedChanges;
        let Some(draft) = draft else { return Ok(()) };
        let item = draft.item();
        let missing = |field| {
            PlanError::at(
                draft.line,
                SECTION,
                PlanErrorKind::MissingField {
                    field,
                    item: item.clone(),
                },
            )
        };
        let operation = draft.operation.ok_or_else(|| missing("Operation"))?;
        let (change, change_line) = draft.change.clone().ok_or_else(|| missing("Change"))?;
        rules::check_field("Change", &item, &change)
            .map_err(|k| PlanError::at(change_line, SECTION, k))?;
        let (rationale, rationale_line) = draft
            .rationale
            .clone()
            .ok_or_else(|| missing("Rationale"))?;
        rules::check_field("Rationale", &item, &rationale)
            .map_err(|k| PlanError::at(rationale_line, SECTION, k))?;
        self.draft.changes.push(FileChange {
            path: draft.path,
            operation,
            change,
            rationale,
            optional: draft.optional.unwrap_or(false),
        });
        Ok(())
    }

    pub(super) fn stages(&mut self, body: &[Line<'_>]) -> Result<(), PlanError> {
        const SECTION: Section = Section::Stages;
        let at = |line: usize, kind| PlanError::at(line, SECTION, kind);
        let mut current: Option<StageDraft> = None;
        let mut blank = false;
        let mut comments = Comments::default();
        for line in body {
            if line.fence {
                self.finish_stage(current.take())?;
                return Err(at(line.no, PlanErrorKind::CodeBlockNotAllowed));
            }
            if comments.skip(line.text) {
                continue;
            }
            if line.text.trim().is_empty() {
                blank = true;
                continue;
            }
            let was_blank = std::mem::replace(&mut blank, false);
            if let Some((_, heading)) = text::heading(line.text) {
                self.finish_stage(current.take())?;
                let expected = self.draft.stages.len() + 1;
                let Some((number, title)) = stage_heading(heading) else {
                    return Err(at(
                        line.no,
                        PlanErrorKind::ExpectedStageHeading {
                            found: text::quote(line.text),
                        },
                    ));
                };
                if number.parse::<usize>().ok() != Some(expected) {
                    return Err(at(
                        line.no,
                        PlanErrorKind::StageNumber {
                            expected,
                            found: number.to_owned(),
                        },
                    ));
                }
                rules::check_field("title", &rules::stage_item(expected), title)
                    .map_err(|k| at(line.no, k))?;
                current = Some(StageDraft {
                    number: expected,
                    title: title.to_owned(),
                    line: line.no,
                    files: Vec::new(),
                    verification: None,
                });
                continue;
            }
            if let Some(item) = text::list_item(line.text) {
                let Some(draft) = current.as_mut() else {
                    return Err(at(
                        line.no,
                        PlanErrorKind::ExpectedStageHeading {
                            found: text::quote(line.text),
                        },
                    ));
                };
                match text::label(item.content) {
                    Some((label, value)) if label == "file" => {
                        let path = clean_path(value);
                        rules::check_path(path).map_err(|k| at(line.no, k))?;
                        if !self.draft.paths.contains_key(path) {
                            return Err(at(
                                line.no,
                                PlanErrorKind::StageFileNotInChanges {
                                    stage: draft.number,
                                    path: path.to_owned(),
                                },
                            ));
                        }
                        draft.files.push(path.to_owned());
                    }
                    Some((label, value)) if label == "verification" => {
                        if draft.verification.is_some() {
                            return Err(at(
                                line.no,
                                PlanErrorKind::DuplicateField {
                                    field: "Verification",
                                    item: rules::stage_item(draft.number),
                                },
                            ));
                        }
                        draft.verification = Some((value.to_owned(), line.no));
                    }
                    labelled => {
                        if item.indent >= 2 {
                            if let Some((verification, _)) = draft.verification.as_mut() {
                                append(verification, item.content);
                                continue;
                            }
                        }
                        let found = match labelled {
                            Some((l, _)) => l,
                            None => text::quote(item.content),
                        };
                        return Err(at(
                            line.no,
                            PlanErrorKind::UnknownField {
                                found,
                                item: rules::stage_item(draft.number),
                                allowed: STAGE_FIELDS,
                            },
                        ));
                    }
                }
                continue;
            }
            let indented = text::indent_width(line.text) >= 2;
            match current.as_mut() {
                Some(StageDraft {
                    verification: Some((verification, _)),
                    ..
                }) if !was_blank || indented => {
                    append(verification, line.text);
                    continue;
                }
                None if self.draft.stages.is_empty() && text::is_none_marker(line.text) => continue,
                _ => {}
            }
            self.finish_stage(current.take())?;
            return Err(at(
                line.no,
                PlanErrorKind::ExpectedStageHeading {
                    found: text::quote(line.text),
                },
            ));
        }
        self.finish_stage(current)
    }

    fn finish_stage(&mut self, draft: Option<StageDraft>) -> Result<(), PlanError> {
        const SECTION: Section = Section::Stages;
        let Some(draft) = draft else { return Ok(()) };
        if draft.files.is_empty() {
            return Err(PlanError::at(
                draft.line,
                SECTION,
                PlanErrorKind::StageWithoutFiles {
                    stage: draft.number,
                },
            ));
        }
        let item = rules::stage_item(draft.number);
        let Some((verification, line)) = draft.verification else {
            return Err(PlanError::at(
                draft.line,
                SECTION,
                PlanErrorKind::MissingField {
                    field: "Verification",
                    item,
                },
            ));
        };
        rules::check_field("Verification", &item, &verification)
            .map_err(|k| PlanError::at(line, SECTION, k))?;
        self.draft.stages.push(Stage {
            title: draft.title,
            files: draft.files,
            verification,
        });
        Ok(())
    }
}

#[derive(Debug)]
struct StageDraft {
    number: usize,
    title: String,
    line: usize,
    files: Vec<String>,
    verification: Option<(String, usize)>,
}

/// `Stage 2: Migrate read paths` → ("2", "Migrate read paths").
fn stage_heading(heading: &str) -> Option<(&str, &str)> {
    let h = heading.trim();
    let word = h.get(..5)?;
    if !word.eq_ignore_ascii_case("stage") {
        return None;
    }
    let rest = h[5..].trim_start();
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let after = rest[digits..].trim_start();
    let title = after
        .strip_prefix(':')
        .or_else(|| after.strip_prefix('.'))?;
    Some((&rest[..digits], title.trim()))
}
