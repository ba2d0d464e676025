//! The questions a built-in plan asks: only where the request leaves a choice open.

use navin_ledger::plan::{FileChange, Question};

use crate::detect::map::RepoMap;
use crate::rank::intent::Intent;
use crate::request::Request;
use crate::text;

/// Questions only where the request leaves a real choice open: nothing matched, a
/// request too short to say where, a removal (what replaces it, who still calls it),
/// a new dependency, a schema change, no test convention. A clear request gets none.
pub(crate) fn questions(
    map: &RepoMap,
    changes: &[FileChange],
    intent: &Intent,
    no_match: bool,
    request: &Request,
) -> Vec<Question> {
    let q = |question: String, default: String| Question {
        question,
        default,
        answer: None,
    };
    let first = changes.first().map(|c| c.path.as_str()).unwrap_or(".");
    let words = &request.words;
    let mut out = Vec::new();
    if no_match {
        out.push(q(
            "No file shares vocabulary with the request: which module should own this change?"
                .to_string(),
            format!("`{first}`, the entry point the plan starts from."),
        ));
    } else if words.len() <= 2 {
        out.push(q(
            format!(
                "\u{201c}{}\u{201d} is short: which behaviour should change, and where?",
                text::one_line(request.text(), 80)
            ),
            format!("The files Proposed Changes lists, starting with `{first}`."),
        ));
    }
    // Files the ranking is unsure of are optional; the reviewer says whether they stay.
    let unsure: Vec<&str> = changes
        .iter()
        .filter(|c| c.optional && c.rationale.starts_with("Ranked #"))
        .map(|c| c.path.as_str())
        .collect();
    if !unsure.is_empty() {
        out.push(q(
            match unsure.as_slice() {
                [one] => format!(
                    "Does the change need `{one}` too? It ranks well below `{first}`, so the plan marks it optional."
                ),
                _ => format!(
                    "Does the change need {} too? They rank well below `{first}`, so the plan marks them optional.",
                    text::backticked(&unsure)
                ),
            },
            "Optional, in scope: the step is complete with or without a change there.".to_string(),
        ));
    }
    let lower = &request.lower;
    let removal = [
        "remove",
        "drop",
        "delete",
        "deprecate",
        "replace",
        "get rid of",
    ]
    .iter()
    .any(|w| lower.contains(w));
    if removal && !intent.bumped.is_empty() {
        out.push(q(
            format!(
                "What replaces {}?",
                text::backticked(&intent.bumped)
            ),
            "Nothing: its uses are rewritten on the standard library or code already in the repository.".to_string(),
        ));
    } else if removal {
        out.push(q(
            "Must existing callers of what is removed keep working?".to_string(),
            "Yes: keep a deprecated alias or flag for one release and say so in the changelog."
                .to_string(),
        ));
    }
    if map.test_conventions.is_empty() {
        out.push(q(
            "No test convention was detected: should this change introduce one?".to_string(),
            "No; verify with the existing checks and a manual walkthrough.".to_string(),
        ));
    }
    if !intent.new_dependencies.is_empty() {
        out.push(q(
            format!(
                "May the change add {}?",
                text::backticked(&intent.new_dependencies)
            ),
            "Yes, pinned to the latest compatible release.".to_string(),
        ));
    }
    if intent.schema_change {
        out.push(q(
            "Must the schema change be reversible?".to_string(),
            "Yes: ship a rollback with the migration.".to_string(),
        ));
    }
    out
}
