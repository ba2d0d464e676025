//! The plan comment: a status line and a summary people read first, the whole plan folded below, the draft mission it becomes, and the stored edit diff.

use std::fmt::Write;

use chrono::{DateTime, Utc};
use navin_ledger::plan::record::{PlanRecord, RecordStatus};
use navin_ledger::plan::{HandoffContract, PlanDiff, PlanDocument};

use super::fold::{fit, Part};
use super::marker::Marker;
use super::repo::RepoRef;
use super::text::{code, defuse_mentions, inline, link, COMMENT_BUDGET};

/// Where a plan stands, as the comment's header line says it.
#[derive(Debug, Clone, PartialEq)]
pub enum PlanStatus {
    /// Waiting for approval. `stale` says why an earlier approval no longer
    /// counts (the plan text changed since), when one was given.
    Pending { stale: Option<String> },
    /// Approved for the text hash each approval carries.
    Approved { approvals: Vec<PlanApproval> },
    Rejected {
        by: String,
        feedback: Option<String>,
    },
    /// Replaced by a newer plan (its id, when known).
    Superseded { by_plan: Option<String> },
}

/// One recorded approval: who, for which text, through which review, when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanApproval {
    /// A login, or a label such as `auto-accept` for config-approved plans.
    pub approver: String,
    /// The plan content hash the approval is bound to.
    pub plan_hash: String,
    /// The pull-request review, when the approval came from one.
    pub review_id: Option<u64>,
    pub at: DateTime<Utc>,
}

/// Everything the plan comment shows besides the plan itself.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanCommentInfo {
    pub plan_id: String,
    /// Who wrote the plan: `built-in planner`, `openai:<model>`, `command`…
    pub source: String,
    pub status: PlanStatus,
    /// The stored diff of a person's edit against the original plan.
    pub diff: Option<PlanDiff>,
    /// For links to the ledger branch; without it paths are shown as text.
    pub repo: Option<RepoRef>,
    /// The planner run behind the text: the commit it read, its tool calls, and why
    /// the built-in plan stands in when the chosen planner failed.
    pub run: Option<navin_ledger::plan::record::PlannerRun>,
    /// Code owners: whose review was requested or could not be, and which owned files
    /// wait for an owner's approval ([`owner_notes`]).
    pub owner_notes: Vec<String>,
}

/// What the plan comment and the `navin/plan` check say about code owners: the owned
/// files still waiting for an owner's approval (`approval.require_codeowners`), whose
/// review was requested for the current text, and who could not be asked.
pub fn owner_notes(record: &PlanRecord) -> Vec<String> {
    let mut out = Vec::new();
    if record.status == RecordStatus::Pending {
        if let Some(note) =
            crate::rules::codeowners_approval::waiting_note(&record.waiting_for_owners)
        {
            out.push(format!("{note}."));
        }
    }
    if let Some(asked) = record
        .review_requests
        .as_ref()
        .filter(|r| r.hash == record.hash)
    {
        if !asked.requested.is_empty() {
            let who: Vec<String> = asked.requested.iter().map(|w| code(w)).collect();
            out.push(format!(
                "Review requested from the code owners {}.",
                who.join(", ")
            ));
        }
        for refused in &asked.not_requested {
            out.push(format!("Review could not be requested from {refused}."));
        }
    }
    out
}

/// Plan text longer than this folds each long section into `<details>`.
pub const FOLD_PLAN_AT: usize = 12_000;
/// With folding on, sections longer than this are folded.
const FOLD_SECTION_AT: usize = 1_500;

/// Renders the plan comment. The plan text is shown as stored (mentions
/// defused so a model-written `@login` pings nobody). Long plans fold their
/// long sections; when the whole comment would still pass
/// [`COMMENT_BUDGET`], the longest parts are cut evenly with a note pointing
/// to `.navin/plans/<id>.md` on the ledger branch, which always has the full text.
pub fn plan_comment(doc: &PlanDocument, info: &PlanCommentInfo) -> String {
    let mut out = String::with_capacity(doc.text().len().min(COMMENT_BUDGET) + 2048);
    let _ = writeln!(
        out,
        "{}",
        Marker::Plan {
            id: info.plan_id.clone(),
            hash: doc.hash().to_owned()
        }
    );
    out.push_str(&header(doc, info));
    if let Some(why) = info.run.as_ref().and_then(|r| r.fallback.as_deref()) {
        let _ = writeln!(
            out,
            "\n⚠️ The configured planner failed, so this is the built-in plan: {}. Check `planner:` in `.github/navin.yml` and the operator's endpoint, then `/plan` again.",
            inline(why, 400)
        );
    }
    out.push('\n');
    let pending = matches!(info.status, PlanStatus::Pending { .. });
    let owners = info.run.as_ref().map_or(&[][..], |r| r.owners.as_slice());
    out.push_str(&super::plan_summary::summary(
        doc.plan(),
        owners,
        info.plan_id.starts_with("pr-"),
        pending,
    ));

    let full_path = format!(".navin/plans/{}.md", info.plan_id);
    let full = match &info.repo {
        Some(repo) => link(&full_path, Some(&repo.ledger_blob_url(&full_path)), 120),
        None => code(&full_path),
    };
    let note = format!(
        "\n\n_…cut to fit a GitHub comment; the full plan is on the ledger branch at {full}._\n"
    );

    // The title is the summary's heading; the folded text starts at its first section.
    let body = doc
        .text()
        .split_once('\n')
        .filter(|(first, _)| first.starts_with("# Plan:"))
        .map_or(doc.text(), |(_, rest)| rest.trim_start_matches('\n'));
    let text = defuse_mentions(body);
    let fold = text.len() > FOLD_PLAN_AT;
    let lines = doc.text().lines().count();
    let mut parts = vec![Part::new(
        &format!("<details><summary>📄 The full plan ({lines} lines)</summary>\n\n"),
        String::new(),
        "",
    )];
    parts.extend(plan_parts(&text, fold));
    parts.push(Part::new("\n</details>\n", String::new(), ""));
    if matches!(info.status, PlanStatus::Approved { .. }) {
        let mission = draft_mission(doc);
        parts.push(Part::new("\n---\n\n#### 🚀 Draft mission\n\n", mission, ""));
    }
    if let Some(diff) = info.diff.as_ref().filter(|d| !d.is_empty()) {
        let record = format!(".navin/plans/{}.json", info.plan_id);
        let record = match &info.repo {
            Some(repo) => link(&record, Some(&repo.ledger_blob_url(&record)), 120),
            None => code(&record),
        };
        parts.push(
            Part::new(
                "\n---\n\n<details><summary>✏️ Edits to the original plan</summary>\n\n",
                defuse_mentions(&diff.to_markdown()),
                "\n</details>\n",
            )
            .with_note(format!(
                "\n\n_…cut to fit a GitHub comment; the full diff is stored with the plan at {record}._\n"
            )),
        );
    }
    let budget = COMMENT_BUDGET.saturating_sub(out.len());
    out.push_str(&fit(parts, budget, &note));
    out
}

fn header(doc: &PlanDocument, info: &PlanCommentInfo) -> String {
    let mut out = format!(
        "**📋 Navin plan {}** · source: {} · ",
        code(&info.plan_id),
        inline(&info.source, 60)
    );
    if let Some(run) = &info.run {
        let short: String = run.commit.chars().take(7).collect();
        if run.tool_calls.is_empty() {
            let _ = write!(out, "planned at {} · ", code(&short));
        } else {
            let _ = write!(
                out,
                "planned at {} with {} read-only tool calls · ",
                code(&short),
                run.tool_calls.len()
            );
        }
    }
    match &info.status {
        PlanStatus::Pending { stale } => {
            out.push_str("⏳ **pending approval**\n");
            // Built by Navin with every owner in a code span, so nobody is pinged.
            for note in &info.owner_notes {
                let _ = writeln!(out, "\n👥 {note}");
            }
            if let Some(why) = stale {
                let _ = writeln!(
                    out,
                    "\n⚠️ An earlier approval is stale: {}",
                    inline(why, 300)
                );
            }
        }
        PlanStatus::Approved { approvals } => {
            out.push_str("✅ **approved**");
            let shown: Vec<String> = approvals.iter().take(5).map(approval).collect();
            if !shown.is_empty() {
                let _ = write!(out, " by {}", shown.join("; "));
            }
            if approvals.len() > 5 {
                let _ = write!(out, " and {} more", approvals.len() - 5);
            }
            out.push('\n');
            if approvals.iter().any(|a| a.plan_hash != doc.hash()) {
                let _ = writeln!(
                    out,
                    "\n⚠️ An approval names a different plan hash than this text ({}).",
                    code(doc.hash())
                );
            }
        }
        PlanStatus::Rejected { by, feedback } => {
            let _ = write!(out, "🚫 **rejected** by {}", code(by));
            match feedback {
                Some(f) if !f.trim().is_empty() => {
                    let _ = writeln!(out, ": {}", inline(f, 500));
                }
                _ => out.push('\n'),
            }
        }
        PlanStatus::Superseded { by_plan } => {
            out.push_str("🗄️ **superseded**");
            if let Some(id) = by_plan {
                let _ = write!(out, " by plan {}", code(id));
            }
            out.push('\n');
        }
    }
    out
}

fn approval(a: &PlanApproval) -> String {
    let review = a
        .review_id
        .map(|r| format!(" (review {r})"))
        .unwrap_or_default();
    let hash: String = a.plan_hash.chars().take(19).collect();
    format!(
        "{}{review} at {} for {}",
        code(&a.approver),
        a.at.format("%Y-%m-%d %H:%M UTC"),
        code(&format!("{hash}…"))
    )
}

/// Splits the plan at its `##` headings (outside code fences) so each
/// section can fold and be cut on its own. The validator guarantees no
/// free-text body holds a level-1/2 heading outside a fence.
fn plan_parts(text: &str, fold: bool) -> Vec<Part> {
    let mut sections: Vec<(String, String)> = vec![(String::new(), String::new())];
    let mut fence: Option<(char, usize)> = None;
    for line in text.split_inclusive('\n') {
        match (fence, super::text::fence_marker(line)) {
            (Some((ch, len)), Some((c, l, rest)))
                if c == ch && l >= len && rest.trim().is_empty() =>
            {
                fence = None
            }
            (None, Some((c, l, _))) => fence = Some((c, l)),
            _ => {}
        }
        if fence.is_none() && line.starts_with("## ") {
            sections.push((line.to_owned(), String::new()));
        } else if let Some(last) = sections.last_mut() {
            last.1.push_str(line);
        }
    }
    sections
        .into_iter()
        .filter(|(h, b)| !(h.is_empty() && b.is_empty()))
        .map(|(heading, body)| {
            if fold && body.len() > FOLD_SECTION_AT {
                let lines = body.lines().count();
                Part::new(
                    &format!(
                        "{heading}\n<details><summary>Show section ({lines} lines)</summary>\n\n"
                    ),
                    body,
                    "\n</details>\n\n",
                )
            } else {
                Part::new(&heading, body, "")
            }
        })
        .collect()
}

/// The goal contract the approved plan converts into. Without a handoff
/// contract in the plan, the mission starts from the plan's goal.
fn draft_mission(doc: &PlanDocument) -> String {
    let plan = doc.plan();
    let mut out = String::new();
    match &plan.handoff {
        Some(h) => contract(&mut out, h),
        None => {
            let _ = writeln!(
                out,
                "**Objective:** {}\n\n_The plan has no handoff contract: criteria, scope and verification come from `/mission` and config._\n",
                inline(&plan.goal, 1000)
            );
        }
    }
    out.push_str("Start it with `/mission`.\n");
    out
}

fn contract(out: &mut String, h: &HandoffContract) {
    let _ = writeln!(out, "**Objective:** {}\n", inline(&h.objective, 1000));
    bullets(out, "Completion criteria", &h.completion_criteria, false);
    let b = &h.budgets;
    let _ = writeln!(
        out,
        "**Budgets:** retries {} · replans {} · stalls {}\n",
        b.max_retries, b.max_replans, b.max_stalls
    );
    bullets(out, "Scope", &h.scope, true);
    bullets(out, "Verification", &h.verification, true);
    bullets(out, "Allowed tools", &h.allowed_tools, true);
}

fn bullets(out: &mut String, title: &str, items: &[String], as_code: bool) {
    let _ = writeln!(out, "**{title}:**");
    if items.is_empty() {
        out.push_str("- none\n");
    }
    for item in items {
        let text = if as_code {
            code(item)
        } else {
            inline(item, 500)
        };
        let _ = writeln!(out, "- {text}");
    }
    out.push('\n');
}

/// A plan record's status as the plan comment shows it.
pub fn plan_status(record: &PlanRecord) -> PlanStatus {
    match record.status {
        RecordStatus::Pending => PlanStatus::Pending {
            stale: record.stale_note(),
        },
        RecordStatus::Approved => PlanStatus::Approved {
            approvals: record
                .current_approvals()
                .map(|a| PlanApproval {
                    approver: a.approver.clone(),
                    plan_hash: a.plan_hash.clone(),
                    review_id: a.review_id,
                    at: a.at,
                })
                .collect(),
        },
        RecordStatus::Rejected => {
            let last = record.rejections.last();
            PlanStatus::Rejected {
                by: last.map(|r| r.by.clone()).unwrap_or_default(),
                feedback: last.and_then(|r| r.feedback.clone()),
            }
        }
        RecordStatus::Superseded => PlanStatus::Superseded { by_plan: None },
    }
}
