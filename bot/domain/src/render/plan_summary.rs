//! The top of the plan comment, for people: the plan's title and goal, the files it changes as a table, its risks and open questions, and how to approve it.

use std::fmt::Write;

use navin_ledger::plan::record::FileOwners;
use navin_ledger::plan::{Operation, Plan};

use super::text::{code, defuse_mentions, inline};

/// Rows of the file table shown before "and N more".
const MAX_FILES: usize = 25;
/// One Change cell, in characters.
const CHANGE_CHARS: usize = 160;

/// What a reader decides on: everything else is in the full plan below it.
pub(super) fn summary(
    plan: &Plan,
    owners: &[FileOwners],
    on_pull_request: bool,
    pending: bool,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "### {}\n", inline(&plan.title, 200));
    let _ = writeln!(out, "{}\n", md_line(first_paragraph(&plan.goal), 600));
    files(&mut out, plan);
    code_owners(&mut out, owners);
    if !plan.new_dependencies.is_empty() {
        let deps: Vec<String> = plan
            .new_dependencies
            .iter()
            .map(|d| md_line(d, 120))
            .collect();
        let _ = writeln!(out, "**New dependencies:** {}\n", deps.join(" · "));
    }
    if !plan.risks.is_empty() {
        out.push_str("**Risks**\n");
        for r in &plan.risks {
            let _ = writeln!(out, "- {}", md_line(r, 300));
        }
        out.push('\n');
    }
    let open: Vec<_> = plan
        .questions
        .iter()
        .enumerate()
        .filter(|(_, q)| q.answer.as_deref().is_none_or(|a| a.trim().is_empty()))
        .collect();
    if !open.is_empty() {
        out.push_str("**Open questions** (answer them in `/plan edit`; unanswered ones take their default)\n");
        for (i, q) in open {
            let _ = writeln!(
                out,
                "{}. {} · default: {}",
                i + 1,
                md_line(&q.question, 300),
                md_line(&q.default, 200)
            );
        }
        out.push('\n');
    }
    if pending {
        let how = if on_pull_request {
            "approve this pull request in a review (GitHub's review rules apply) or click “Approve plan” on its `navin/plan` check; either way a writer other than its author"
        } else {
            "comment `/approve` (a writer)"
        };
        let _ = writeln!(
            out,
            "**To approve:** {how}. To change it: `/plan edit` with the edited plan, or `/reject <feedback>` for a new one.\n"
        );
    }
    out
}

/// Plan text on one line, its inline markdown (code spans, emphasis) kept: the
/// plan's own words, clipped, with mentions defused, a clipped code span closed,
/// and `|` escaped so a table cell cannot split.
fn md_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut cut: String = flat.chars().take(max).collect();
    if cut.len() < flat.len() {
        cut.push('…');
    }
    if cut.matches('`').count() % 2 == 1 {
        cut.push('`');
    }
    defuse_mentions(&cut).replace('|', "\\|")
}

/// `**Code owners:** @a (`x.rs`, `y.rs`) · @org/team (`docs/z.md`)`: who reviews what,
/// by the repository's CODEOWNERS at the planned commit. Owners are shown as
/// text, never as mentions: a plan comment must not page a team.
fn code_owners(out: &mut String, owners: &[FileOwners]) {
    let mut by_owner: Vec<(&str, Vec<&str>)> = Vec::new();
    for f in owners {
        for o in &f.owners {
            match by_owner.iter_mut().find(|(name, _)| name == o) {
                Some((_, paths)) => paths.push(&f.path),
                None => by_owner.push((o, vec![&f.path])),
            }
        }
    }
    if by_owner.is_empty() {
        return;
    }
    let parts: Vec<String> = by_owner
        .iter()
        .take(10)
        .map(|(o, paths)| {
            let shown: Vec<String> = paths.iter().take(3).map(|p| code(p)).collect();
            let more = if paths.len() > 3 {
                format!(" +{}", paths.len() - 3)
            } else {
                String::new()
            };
            format!("{} ({}{more})", code(o), shown.join(", "))
        })
        .collect();
    let _ = writeln!(out, "**Code owners:** {}\n", parts.join(" · "));
}

fn first_paragraph(text: &str) -> &str {
    text.trim().split("\n\n").next().unwrap_or_default()
}

fn files(out: &mut String, plan: &Plan) {
    if plan.changes.is_empty() {
        out.push_str("**Files to change:** none.\n\n");
        return;
    }
    let _ = writeln!(out, "**Files to change** ({})\n", plan.changes.len());
    out.push_str("| File | | Change |\n| --- | --- | --- |\n");
    for c in plan.changes.iter().take(MAX_FILES) {
        let op = match c.operation {
            Operation::Edit => "edit",
            Operation::Create => "create",
            Operation::Delete => "delete",
        };
        // A code span cannot hold a `|` inside a table cell; paths rarely do.
        let path = code(&c.path).replace('|', "\\|");
        let _ = writeln!(
            out,
            "| {path} | {op} | {} |",
            md_line(&c.change, CHANGE_CHARS)
        );
    }
    if plan.changes.len() > MAX_FILES {
        let _ = writeln!(
            out,
            "\n…and {} more in the full plan.",
            plan.changes.len() - MAX_FILES
        );
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::md_line;

    #[test]
    fn one_line_text_keeps_code_closes_a_cut_span_and_cannot_split_a_cell() {
        assert_eq!(
            md_line("Edit `greet`\n  and @alice | bob", 100),
            "Edit `greet` and @<!-- -->alice \\| bob"
        );
        assert_eq!(md_line("call `a_very_long_name`", 10), "call `a_ve…`");
    }
}
