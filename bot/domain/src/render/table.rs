//! The panel's step table: one row per step, trimmed to a byte budget with unfinished steps kept first.

use std::collections::HashSet;
use std::fmt::Write;

use navin_ledger::model::{Evidence, EvidenceKind, Ledger, Task, TaskStatus};

use super::mermaid::class_of;
use super::repo::RepoRef;
use super::text::{code, inline, link, prose_cell, short_sha};

/// Steps beyond this many fold the table and the graph into `<details>`, so
/// the panel's first screen stays the summary.
pub const FOLD_AT: usize = 25;

/// How many characters of a title a row shows.
const TITLE_CHARS: usize = 80;
/// How many dependencies, PRs and evidence items a cell lists before "+N".
const DEPS_SHOWN: usize = 4;
const PRS_SHOWN: usize = 3;
const EVIDENCE_SHOWN: usize = 3;

const HEADER: &str = "| Step | Title | Status | Depends on | Validation | Attempts | Evidence |\n| --- | --- | --- | --- | --- | --- | --- |\n";

/// Room kept for the fold wrapper and the "more steps" note.
const OVERHEAD: usize = 600;

/// The `#### Steps` section within `budget` bytes. Rows are chosen by
/// urgency (in progress, failed, ready, waiting, then done), then shown in
/// board order; the steps left out are counted by status in a note.
pub fn section(ledger: &Ledger, ready: &HashSet<&str>, repo: &RepoRef, budget: usize) -> String {
    let tasks = &ledger.board.tasks;
    if tasks.is_empty() {
        return "_No steps yet: add some with `/step add`._\n".to_owned();
    }
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_by_key(|&i| (urgency(&tasks[i], ready), i));

    // Rows are rendered only until the budget runs out, so a huge board
    // costs a sort, not a full table.
    let mut room = budget.saturating_sub(HEADER.len() + OVERHEAD);
    let mut rows: Vec<Option<String>> = vec![None; tasks.len()];
    for &i in &order {
        let r = row(&tasks[i], ready, repo);
        if r.len() > room {
            break;
        }
        room -= r.len();
        rows[i] = Some(r);
    }
    let keep: Vec<bool> = rows.iter().map(Option::is_some).collect();
    let shown = keep.iter().filter(|k| **k).count();

    let mut table = String::with_capacity(budget.min(64 * 1024));
    table.push_str(HEADER);
    for r in rows.iter().flatten() {
        table.push_str(r);
    }
    if shown < tasks.len() {
        let _ = write!(
            table,
            "\n_…and {} more steps not shown ({}); the full board is in {}._\n",
            tasks.len() - shown,
            omitted_summary(tasks, &keep),
            link(
                ".navin/board/board.json",
                Some(&repo.ledger_blob_url(".navin/board/board.json")),
                60
            )
        );
    }
    if tasks.len() > FOLD_AT {
        format!(
            "<details><summary>Steps ({} total, {} shown)</summary>\n\n{table}\n</details>\n",
            tasks.len(),
            shown
        )
    } else {
        format!("#### Steps\n\n{table}")
    }
}

fn urgency(task: &Task, ready: &HashSet<&str>) -> u8 {
    match task.status {
        TaskStatus::InProgress => 0,
        TaskStatus::Failed => 1,
        TaskStatus::Planned if ready.contains(task.id.as_str()) => 2,
        TaskStatus::Planned => 3,
        TaskStatus::Done => 4,
    }
}

fn omitted_summary(tasks: &[std::sync::Arc<Task>], keep: &[bool]) -> String {
    let mut counts = [0usize; 4];
    for (t, _) in tasks.iter().zip(keep).filter(|(_, k)| !**k) {
        let slot = match t.status {
            TaskStatus::Done => 0,
            TaskStatus::Planned => 1,
            TaskStatus::InProgress => 2,
            TaskStatus::Failed => 3,
        };
        counts[slot] += 1;
    }
    let names = ["done", "planned", "in progress", "failed"];
    names
        .iter()
        .zip(counts)
        .filter(|(_, n)| *n > 0)
        .map(|(name, n)| format!("{n} {name}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn status_cell(task: &Task, ready: &HashSet<&str>) -> &'static str {
    match class_of(task, ready) {
        "done" => "✅ done",
        "in_progress" => "🔄 in progress",
        "failed" => "❌ failed",
        "ready" => "🟦 ready",
        _ => "⬜ planned",
    }
}

fn row(task: &Task, ready: &HashSet<&str>, repo: &RepoRef) -> String {
    format!(
        "| {} | {} | {} | {} | {} | {}/{} | {} |\n",
        code(&task.id),
        prose_cell(&task.title, TITLE_CHARS),
        status_cell(task, ready),
        ids(&task.depends_on),
        task.validation,
        task.retry_count,
        task.max_retries,
        evidence_cell(task, repo)
    )
}

/// The step's attempt count, who works the latest and what they all spent, so the
/// panel shows a loop at work (and its cost) without opening the ledger.
fn attempt_part(task: &Task, last: &navin_ledger::model::Attempt) -> String {
    let tokens: u64 = task.attempts.iter().map(|a| a.tokens).sum();
    let cost: f64 = task.attempts.iter().map(|a| a.cost_usd).sum();
    let mut out = format!("attempt {} ({})", last.number, inline(&last.agent, 30));
    if tokens > 0 {
        out.push_str(&format!(" · {tokens} tokens"));
    }
    if cost > 0.0 {
        out.push_str(&format!(" · ${cost:.2}"));
    }
    out
}

fn ids(deps: &[String]) -> String {
    if deps.is_empty() {
        return "—".to_owned();
    }
    let mut out: Vec<String> = deps.iter().take(DEPS_SHOWN).map(|d| code(d)).collect();
    if deps.len() > DEPS_SHOWN {
        out.push(format!("+{}", deps.len() - DEPS_SHOWN));
    }
    out.join(", ")
}

/// Linked PRs (`#12`, which GitHub links within the repository), the head
/// the evidence must be for, and the newest evidence per check name.
fn evidence_cell(task: &Task, repo: &RepoRef) -> String {
    let mut parts: Vec<String> = task
        .links
        .prs
        .iter()
        .take(PRS_SHOWN)
        .map(|n| format!("[#{n}]({})", repo.pull_url(*n)))
        .collect();
    if task.links.prs.len() > PRS_SHOWN {
        parts.push(format!("+{} PRs", task.links.prs.len() - PRS_SHOWN));
    }
    if let Some(issue) = task.links.issue {
        parts.push(format!("brief [#{issue}]({})", repo.issue_url(issue)));
    }
    if let Some(sha) = &task.links.head_sha {
        parts.push(format!("head {}", code(&short_sha(sha))));
    }
    // A first attempt with no spend says nothing the status does not: shown from the
    // second attempt, or once an agent reported what it spent.
    let spent = task
        .attempts
        .iter()
        .any(|a| a.tokens > 0 || a.cost_usd > 0.0);
    if let Some(last) = task
        .attempts
        .last()
        .filter(|_| task.attempts.len() > 1 || spent)
    {
        parts.push(attempt_part(task, last));
    }
    let mut seen: HashSet<String> = HashSet::new();
    let mut items: Vec<String> = Vec::new();
    for e in task.evidence.iter().rev() {
        let key = e.name.clone().unwrap_or_else(|| e.kind.as_str().to_owned());
        if !seen.insert(key) {
            continue;
        }
        if items.len() == EVIDENCE_SHOWN {
            items.push("…".to_owned());
            break;
        }
        items.push(evidence_item(e));
    }
    parts.extend(items);
    if parts.is_empty() {
        "—".to_owned()
    } else {
        parts.join(" · ")
    }
}

fn evidence_item(e: &Evidence) -> String {
    let mark = if e.ok { "✅" } else { "❌" };
    match e.kind {
        EvidenceKind::CheckRun | EvidenceKind::WorkflowRun => {
            let name = e.name.as_deref().unwrap_or(e.kind.as_str());
            let conclusion = match (&e.conclusion, e.ok) {
                (Some(c), false) => format!(" {}", inline(c, 30)),
                _ => String::new(),
            };
            format!("{} {mark}{conclusion}", link(name, e.url.as_deref(), 40))
        }
        EvidenceKind::TestRun | EvidenceKind::LintRun | EvidenceKind::VerifyRun => {
            format!("{} {mark}", link(e.kind.as_str(), e.url.as_deref(), 40))
        }
        EvidenceKind::Prose => format!("📝 {}", inline(&e.summary, 40)),
    }
}
