//! Renders a typed plan into the plan format's markdown, byte-for-byte the same every time.

use super::model::{FileChange, HandoffContract, Operation, Plan, Question, Stage};
use super::section::Section;
use std::fmt::Write;

/// The hint above the questions. An HTML comment, so GitHub hides it while
/// anyone editing the text sees how to answer.
pub const ANSWER_HINT: &str =
    "<!-- To answer a question, write after \"Answer:\". An empty answer keeps the default. -->";

/// The persona statement plan mode writes; planners may use it verbatim.
pub const READ_ONLY_PERSONA: &str = "Operating as a Read-Only Software Architect. No file writes, dependency installs, migrations, service mutations, git mutations, or destructive commands were performed.";

/// Renders `plan` as markdown. Sections appear in the format's order, separated
/// by one blank line; empty lists render as "None." so every required heading
/// is always present. Only plans that pass [`super::validate`] read back
/// unchanged through [`super::parse`].
pub fn render(plan: &Plan) -> String {
    let parts: Vec<(Section, String)> = std::iter::once(Section::Title)
        .chain(Section::ORDER)
        .filter_map(|section| part(plan, section).map(|text| (section, text)))
        .collect();
    assemble(
        parts
            .iter()
            .map(|(section, text)| (*section, text.as_str())),
    )
}

/// One part of the rendered document, so a merge can compare and combine plans part by
/// part with the renderer's own text: the title's summary (without `# Plan: `), or a
/// section's body (what follows its heading, ending in a newline). `None` for `Stages`
/// when the plan has none, the only part that may be absent.
pub(crate) fn part(plan: &Plan, section: Section) -> Option<String> {
    let free = |body: &str| {
        let mut out = String::with_capacity(body.len() + 1);
        line(&mut out, body);
        Some(out)
    };
    let mut out = String::with_capacity(512);
    match section {
        Section::Title => return Some(plan.title.clone()),
        Section::SystemPersona => return free(&plan.persona),
        Section::Goal => return free(&plan.goal),
        Section::RepositoryArchitecture => return free(&plan.architecture),
        Section::FunctionalCapabilities => return free(&plan.capabilities),
        Section::DataFlow => return free(&plan.data_flow),
        Section::TargetState => return free(&plan.target_state),
        Section::ImpactIsolation => return free(&plan.impact_isolation),
        Section::ProposedChanges => {
            if plan.changes.is_empty() {
                line(&mut out, "None.");
            }
            for (i, change) in plan.changes.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                file_block(&mut out, change);
            }
        }
        Section::NewDependencies => bullets(&mut out, &plan.new_dependencies),
        Section::Risks => bullets(&mut out, &plan.risks),
        Section::ActionableNextSteps => {
            if plan.next_steps.is_empty() {
                line(&mut out, "None.");
            }
            for (i, step) in plan.next_steps.iter().enumerate() {
                line(&mut out, &format!("{}. [ ] {step}", i + 1));
            }
        }
        Section::RisksAndAssumptions => questions(&mut out, &plan.questions),
        Section::OptionalGoalHandoffContract => match &plan.handoff {
            None => line(&mut out, "None."),
            Some(contract) => handoff(&mut out, contract),
        },
        Section::Stages => {
            if plan.stages.is_empty() {
                return None;
            }
            for (i, stage) in plan.stages.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                stage_block(&mut out, i + 1, stage);
            }
        }
    }
    Some(out)
}

/// Joins parts (as [`part`] writes them, in document order) into a document: the title
/// line, then each section's heading and body, separated by one blank line. [`render`]
/// is this over every part of a plan, so parts taken from several plans join exactly as
/// each plan would render them.
pub(crate) fn assemble<'a>(parts: impl IntoIterator<Item = (Section, &'a str)>) -> String {
    let mut out = String::with_capacity(4096);
    for (section, text) in parts {
        if section == Section::Title {
            line(&mut out, &format!("# Plan: {text}"));
            continue;
        }
        heading(&mut out, section);
        out.push_str(text);
        if !text.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

fn line(out: &mut String, text: &str) {
    out.push_str(text);
    out.push('\n');
}

fn heading(out: &mut String, section: Section) {
    let _ = write!(out, "\n## {}\n\n", section.heading());
}

fn bullets(out: &mut String, items: &[String]) {
    if items.is_empty() {
        line(out, "None.");
    }
    for item in items {
        line(out, &format!("- {item}"));
    }
}

pub(crate) fn operation_name(op: Operation) -> &'static str {
    match op {
        Operation::Edit => "edit",
        Operation::Create => "create",
        Operation::Delete => "delete",
    }
}

fn file_block(out: &mut String, change: &FileChange) {
    let _ = write!(
        out,
        "### File: {}\n\n- **Operation:** {}\n- **Change:** {}\n- **Rationale:** {}\n",
        change.path,
        operation_name(change.operation),
        change.change,
        change.rationale
    );
    if change.optional {
        out.push_str("- **Optional:** yes\n");
    }
}

fn questions(out: &mut String, questions: &[Question]) {
    if questions.is_empty() {
        line(out, "None.");
        return;
    }
    line(out, ANSWER_HINT);
    out.push('\n');
    for (i, q) in questions.iter().enumerate() {
        let _ = writeln!(out, "{}. {}", i + 1, q.question);
        let _ = writeln!(out, "   - **Default:** {}", q.default);
        match &q.answer {
            Some(answer) => {
                let _ = writeln!(out, "   - **Answer:** {answer}");
            }
            None => line(out, "   - **Answer:**"),
        }
    }
}

fn handoff(out: &mut String, c: &HandoffContract) {
    let _ = writeln!(out, "- **Objective:** {}", c.objective);
    list_field(out, "Completion criteria", &c.completion_criteria, |s| {
        s.to_owned()
    });
    line(out, "- **Budgets:**");
    let _ = writeln!(out, "  - max_retries: {}", c.budgets.max_retries);
    let _ = writeln!(out, "  - max_replans: {}", c.budgets.max_replans);
    let _ = writeln!(out, "  - max_stalls: {}", c.budgets.max_stalls);
    list_field(out, "Allowed tools", &c.allowed_tools, |s| s.to_owned());
    list_field(out, "Scope", &c.scope, |s| s.to_owned());
    list_field(out, "Verification commands", &c.verification, |s| {
        format!("`{s}`")
    });
}

fn list_field(out: &mut String, name: &str, items: &[String], show: impl Fn(&str) -> String) {
    if items.is_empty() {
        let _ = writeln!(out, "- **{name}:** None.");
        return;
    }
    let _ = writeln!(out, "- **{name}:**");
    for item in items {
        let _ = writeln!(out, "  - {}", show(item));
    }
}

fn stage_block(out: &mut String, number: usize, stage: &Stage) {
    let _ = write!(out, "### Stage {number}: {}\n\n", stage.title);
    for file in &stage.files {
        let _ = writeln!(out, "- File: {file}");
    }
    let _ = writeln!(out, "- Verification: {}", stage.verification);
}
