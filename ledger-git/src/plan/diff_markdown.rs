//! Writes a plan diff as markdown for people reviewing an edit.

use super::diff::{PlanDiff, StageEdit};
use super::render::operation_name;
use super::section::Section;
use std::fmt::Write;

// `to_markdown` lives beside the writer it calls, so `diff.rs` need not import the
// renderer that imports its types.
impl PlanDiff {
    /// A summary for a PR or issue comment, one `####` block per edited section.
    pub fn to_markdown(&self) -> String {
        render(self)
    }
}

fn render(diff: &PlanDiff) -> String {
    if diff.is_empty() {
        return "No edits: the edited plan is the same as the original.\n".to_owned();
    }
    let mut out = String::new();
    if let Some(title) = &diff.title {
        block(&mut out, "Title");
        let _ = writeln!(out, "- \"{}\" → \"{}\"", title.before, title.after);
    }
    for edit in &diff.sections {
        block(&mut out, edit.section.heading());
        out.push_str("Before:\n\n");
        quote(&mut out, &edit.before);
        out.push_str("\nAfter:\n\n");
        quote(&mut out, &edit.after);
    }
    if !(diff.files_added.is_empty()
        && diff.files_removed.is_empty()
        && diff.files_changed.is_empty())
    {
        block(&mut out, Section::ProposedChanges.heading());
        for c in &diff.files_added {
            let _ = writeln!(
                out,
                "- Added {} ({}): {} Rationale: {}",
                code(&c.path),
                operation_name(c.operation),
                c.change,
                c.rationale
            );
        }
        for c in &diff.files_removed {
            let _ = writeln!(
                out,
                "- Removed {} (was {}): {}",
                code(&c.path),
                operation_name(c.operation),
                c.change
            );
        }
        for c in &diff.files_changed {
            let fields: Vec<String> = c
                .fields
                .iter()
                .map(|f| {
                    let name = match f.field {
                        super::diff::FileField::Operation => "operation",
                        super::diff::FileField::Change => "change",
                        super::diff::FileField::Rationale => "rationale",
                        super::diff::FileField::Optional => "optional",
                    };
                    format!("{name} \"{}\" → \"{}\"", f.before, f.after)
                })
                .collect();
            let _ = writeln!(out, "- Changed {}: {}", code(&c.path), fields.join("; "));
        }
    }
    for (section, list) in [
        (Section::NewDependencies, &diff.new_dependencies),
        (Section::Risks, &diff.risks),
        (Section::ActionableNextSteps, &diff.next_steps),
    ] {
        if list.is_empty() {
            continue;
        }
        block(&mut out, section.heading());
        for item in &list.added {
            let _ = writeln!(out, "- Added: {item}");
        }
        for item in &list.removed {
            let _ = writeln!(out, "- Removed: {item}");
        }
        if list.reordered {
            out.push_str("- The order changed.\n");
        }
    }
    let questions = !(diff.questions_answered.is_empty()
        && diff.answers_withdrawn.is_empty()
        && diff.questions_added.is_empty()
        && diff.questions_removed.is_empty()
        && diff.defaults_changed.is_empty());
    if questions {
        block(&mut out, Section::RisksAndAssumptions.heading());
        for q in &diff.questions_answered {
            let _ = writeln!(
                out,
                "- Answered \"{}\": {} (instead of the default: {})",
                q.question, q.answer, q.default
            );
        }
        for q in &diff.answers_withdrawn {
            let _ = writeln!(
                out,
                "- Answer withdrawn for \"{}\"; the default applies: {}",
                q.question, q.default
            );
        }
        for d in &diff.defaults_changed {
            let _ = writeln!(
                out,
                "- Default of \"{}\": \"{}\" → \"{}\"",
                d.question, d.before, d.after
            );
        }
        for q in &diff.questions_added {
            let _ = writeln!(
                out,
                "- Question added: \"{}\" (default: {})",
                q.question, q.default
            );
        }
        for q in &diff.questions_removed {
            let _ = writeln!(out, "- Question removed: \"{}\"", q.question);
        }
    }
    if let Some(edit) = &diff.handoff {
        block(&mut out, Section::OptionalGoalHandoffContract.heading());
        let what = match (&edit.before, &edit.after) {
            (None, Some(_)) => "- The contract was added.".to_owned(),
            (Some(_), None) => "- The contract was removed.".to_owned(),
            _ => {
                let names: Vec<&str> = edit.fields.iter().map(|f| f.name()).collect();
                format!("- Changed: {}.", names.join(", "))
            }
        };
        let _ = writeln!(out, "{what}");
    }
    if !diff.stages.is_empty() {
        block(&mut out, Section::Stages.heading());
        for edit in &diff.stages {
            stage_line(&mut out, edit);
        }
    }
    out
}

fn stage_line(out: &mut String, edit: &StageEdit) {
    match edit {
        StageEdit::Added { number, stage } => {
            let files: Vec<String> = stage.files.iter().map(|f| code(f)).collect();
            let _ = writeln!(
                out,
                "- Stage {number} added: {} (files: {}; verification: {})",
                stage.title,
                files.join(", "),
                stage.verification
            );
        }
        StageEdit::Removed { number, stage } => {
            let _ = writeln!(out, "- Stage {number} removed: {}", stage.title);
        }
        StageEdit::Changed {
            number,
            title,
            files_added,
            files_removed,
            verification,
        } => {
            let mut parts = Vec::new();
            if let Some(t) = title {
                parts.push(format!("title \"{}\" → \"{}\"", t.before, t.after));
            }
            if !files_added.is_empty() {
                let files: Vec<String> = files_added.iter().map(|f| code(f)).collect();
                parts.push(format!("files added: {}", files.join(", ")));
            }
            if !files_removed.is_empty() {
                let files: Vec<String> = files_removed.iter().map(|f| code(f)).collect();
                parts.push(format!("files removed: {}", files.join(", ")));
            }
            if let Some(v) = verification {
                parts.push(format!("verification \"{}\" → \"{}\"", v.before, v.after));
            }
            let _ = writeln!(out, "- Stage {number} changed: {}", parts.join("; "));
        }
    }
}

fn block(out: &mut String, name: &str) {
    if !out.is_empty() {
        out.push('\n');
    }
    let _ = write!(out, "#### {name}\n\n");
}

fn quote(out: &mut String, text: &str) {
    for line in text.lines() {
        if line.is_empty() {
            out.push_str(">\n");
        } else {
            let _ = writeln!(out, "> {line}");
        }
    }
}

/// Inline code that survives backticks in the value.
fn code(value: &str) -> String {
    let longest = value.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if value.starts_with('`') || value.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{value}{pad}{fence}")
}
