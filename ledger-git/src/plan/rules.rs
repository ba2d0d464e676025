//! The plan rules shared by the parser (which knows line numbers) and the typed validator (which does not).

use super::error::PlanErrorKind;
use super::text;

/// Risks must be a handful: enough to show thought, few enough to read.
pub(crate) const MIN_RISKS: usize = 3;
pub(crate) const MAX_RISKS: usize = 5;

pub(crate) fn check_title(title: &str) -> Result<(), PlanErrorKind> {
    if title.trim().is_empty() {
        return Err(PlanErrorKind::EmptyTitle);
    }
    single_line("the title", title)
}

/// Fields rendered on one line must not carry a line break, or the rendered
/// document would read back as something else.
pub(crate) fn single_line(field: &'static str, value: &str) -> Result<(), PlanErrorKind> {
    if value.contains(['\n', '\r']) {
        return Err(PlanErrorKind::MultiLine { field });
    }
    Ok(())
}

/// A free-text body must be non-empty and must not contain anything the
/// parser would read as a section boundary: a `#`/`##` heading outside a
/// code fence, or a fence that never closes.
pub(crate) fn check_free_text(body: &str) -> Result<(), PlanErrorKind> {
    if body.trim().is_empty() {
        return Err(PlanErrorKind::EmptySection);
    }
    let scan = text::scan(body);
    for line in &scan.lines {
        if line.fence {
            continue;
        }
        if let Some((level, _)) = text::heading(line.text) {
            if level <= 2 {
                return Err(PlanErrorKind::HeadingInText {
                    found: text::quote(line.text),
                });
            }
        }
    }
    if let Some(opened_at) = scan.unclosed_fence {
        return Err(PlanErrorKind::UnclosedFence { opened_at });
    }
    Ok(())
}

/// A path inside the repository, written the way git shows it.
pub(crate) fn check_path(path: &str) -> Result<(), PlanErrorKind> {
    let invalid = |reason| {
        Err(PlanErrorKind::InvalidPath {
            path: text::quote(path),
            reason,
        })
    };
    if path.trim().is_empty() {
        return Err(PlanErrorKind::EmptyPath);
    }
    if path.contains(['\n', '\r']) {
        return invalid("spans more than one line");
    }
    if path != path.trim() {
        return invalid("has leading or trailing spaces");
    }
    if path.starts_with('/') || path.starts_with('~') || has_drive_prefix(path) {
        return invalid("is absolute; write it relative to the repository root");
    }
    if path.contains('\\') {
        return invalid("uses backslashes; separate folders with /");
    }
    if path.ends_with('/') {
        return invalid("names a folder; list the files in it");
    }
    for part in path.split('/') {
        match part {
            ".." => return invalid("contains \"..\"; it must stay inside the repository"),
            "." | "" => return invalid("has an empty or \".\" part; write it like src/lib.rs"),
            _ => {}
        }
    }
    if path.chars().any(char::is_control) {
        return invalid("contains control characters");
    }
    Ok(())
}

fn has_drive_prefix(path: &str) -> bool {
    let b = path.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

pub(crate) fn check_risk_count(found: usize) -> Result<(), PlanErrorKind> {
    if (MIN_RISKS..=MAX_RISKS).contains(&found) {
        Ok(())
    } else {
        Err(PlanErrorKind::RiskCount { found })
    }
}

/// A question whose text is itself a `Default:`/`Answer:` label would be read
/// back as a field of the previous question.
pub(crate) fn check_question_text(question: &str) -> Result<(), PlanErrorKind> {
    if question.trim().is_empty() {
        return Err(PlanErrorKind::EmptyItem { what: "question" });
    }
    single_line("a question", question)?;
    if let Some((label, _)) = text::label(question) {
        if label == "default" || label == "answer" {
            return Err(PlanErrorKind::QuestionLooksLikeField {
                question: text::quote(question),
            });
        }
    }
    Ok(())
}

/// Verification commands are rendered as inline code, which cannot hold a
/// backtick without ambiguity.
pub(crate) fn check_command(command: &str) -> Result<(), PlanErrorKind> {
    if command.contains('`') {
        return Err(PlanErrorKind::BacktickInCommand {
            command: text::quote(command),
        });
    }
    Ok(())
}

/// Non-empty, one line.
pub(crate) fn check_item(what: &'static str, value: &str) -> Result<(), PlanErrorKind> {
    if value.trim().is_empty() {
        return Err(PlanErrorKind::EmptyItem { what });
    }
    single_line(what, value)
}

/// A labelled field of an item (a file block, a question, the contract).
pub(crate) fn check_field(
    field: &'static str,
    item: &str,
    value: &str,
) -> Result<(), PlanErrorKind> {
    if value.trim().is_empty() {
        return Err(PlanErrorKind::EmptyField {
            field,
            item: item.to_owned(),
        });
    }
    single_line(field, value)
}

pub(crate) fn file_item(path: &str) -> String {
    format!("file \"{}\"", text::quote(path))
}

pub(crate) fn question_item(question: &str) -> String {
    format!("question \"{}\"", text::quote(question))
}

pub(crate) const HANDOFF_ITEM: &str = "the handoff contract";

pub(crate) fn stage_item(number: usize) -> String {
    format!("stage {number}")
}
