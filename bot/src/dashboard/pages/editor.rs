//! The plan editor: a textarea with the server's live validation and preview, the base hash it started from, and (after a conflicting save) both versions of each conflicting section side by side.

use maud::{html, Markup};

use super::layout::{page, raw, Chrome};
use crate::dashboard::markdown;

/// The parser's first problem, as `navin plan validate` words it.
#[derive(Debug, Clone)]
pub struct Problem {
    pub line: Option<usize>,
    pub section: Option<String>,
    pub message: String,
}

impl Problem {
    pub fn from_error(e: &navin_ledger::plan::PlanError) -> Self {
        Self {
            line: e.line,
            section: e.section.map(|s| s.to_string()),
            message: e.to_string(),
        }
    }
}

/// One section two savers changed differently.
#[derive(Debug, Clone)]
pub struct ConflictView {
    pub section: String,
    pub yours: String,
    pub current: String,
}

/// What the editor shows.
#[derive(Debug)]
pub struct EditorPage<'a> {
    pub repo: &'a str,
    pub plan_id: &'a str,
    pub text: &'a str,
    /// The plan hash the text is based on; sent back with the save.
    pub base_hash: &'a str,
    /// This editing session's idempotency key: a resubmitted save applies once.
    pub edit_id: &'a str,
    pub problem: Option<Problem>,
    pub conflicts: Vec<ConflictView>,
}

pub fn render(chrome: &Chrome<'_>, e: &EditorPage<'_>) -> Markup {
    let action = chrome.path(&format!("/r/{}/plans/{}", e.repo, e.plan_id));
    let validate = chrome.path(&format!("/r/{}/plans/{}/validate", e.repo, e.plan_id));
    let body = html! {
        p.muted { a href=(chrome.path(&format!("/r/{}", e.repo))) { (e.repo) } " / " a href=(action) { "plan " (e.plan_id) } " / edit" }
        h1 { "Edit plan " (e.plan_id) }
        @if !e.conflicts.is_empty() {
            div.flash.bad #conflict {
                "Someone saved this plan while you were editing, and changed the same part differently. Nothing of yours was saved yet. "
                "Below, each such section is shown as you wrote it and as it is now; the editor holds the current plan with your other changes kept. "
                "Copy what you want from your version, then save again."
            }
            @for c in &e.conflicts {
                section.conflict-section {
                    h2 { (c.section) }
                    div.conflict {
                        div { h3 { "Your version" } pre.yours { (c.yours) } }
                        div { h3 { "Current version" } pre.current { (c.current) } }
                    }
                }
            }
        }
        @if let Some(p) = &e.problem {
            div.flash.bad #save-problem data-line=[p.line] { "Not saved: the plan is not valid. " (p.message) }
        }
        form #editor method="post" action=(action) {
            input type="hidden" name="csrf" value=(chrome.csrf);
            input type="hidden" name="base_hash" value=(e.base_hash);
            input type="hidden" name="edit_id" value=(e.edit_id);
            div #validation data-state="idle" { "Checking happens as you type; saving checks too." }
            div.editor {
                div {
                    textarea #plan-text name="text" spellcheck="false" data-validate-url=(validate) { (e.text) }
                    p { button.primary #save type="submit" { "Save" } " " a href=(action) { "Cancel" } }
                    p.muted { "Saving records an edit in the plan's history under your name; approvals of the old text go stale. Edits by others to other sections are merged in." }
                }
                div.preview #preview { (raw(markdown::to_html(e.text))) }
            }
        }
    };
    page(chrome, &format!("Edit {} · {}", e.plan_id, e.repo), body)
}
