//! The words of the `navin/plan` check: a pull request's own plan, a plan file that does not parse, and the approvals that were not counted.

use navin_ledger::plan::record::{PlanRecord, RecordStatus, VIA_CHECK_RUN};

use crate::check::{CheckAnnotation, CheckState, PlanCheck, BROKEN_TITLE};
use crate::rules::approvals::NotCounted;
use crate::rules::codeowners_approval::OwnersVerdict;
use crate::rules::plan_button;

/// A content hash cut to a width people can compare at a glance.
pub fn short(hash: &str) -> String {
    let cut: String = hash.chars().take(19).collect();
    format!("{cut}…")
}

/// What the `navin/plan` check says about a PR's own plan.
pub fn own_plan_check(record: &PlanRecord, required: u32, notes: &[String]) -> PlanCheck {
    let id = &record.id;
    let mut summary = String::new();
    let check = |approved: bool, title: String, summary: String| PlanCheck {
        verdict: if approved {
            CheckState::Approved
        } else {
            CheckState::Waiting
        },
        title,
        summary,
        annotations: Vec::new(),
        actions: Vec::new(),
    };
    if record.is_approved() {
        let who: Vec<String> = record
            .current_approvals()
            .map(|a| match (a.review_id, a.via.as_deref()) {
                (Some(r), _) => format!("@{} (review {r})", a.approver),
                (None, Some(VIA_CHECK_RUN)) => {
                    format!("@{} (“{}” button)", a.approver, plan_button::LABEL)
                }
                (None, _) => format!("@{}", a.approver),
            })
            .collect();
        summary.push_str(&format!(
            "Plan `{id}` ({}) is approved by {}. The approved text is `.navin/plans/{id}.md` on the ledger branch.",
            short(&record.hash),
            who.join(", ")
        ));
        return check(true, format!("Plan {id} approved"), summary);
    }
    match record.status {
        RecordStatus::Rejected => {
            let last = record.rejections.last();
            summary.push_str(&format!(
                "Plan `{id}` was rejected by @{}{}. Ask for a new one with `/plan <request>` or `/reject <feedback>`.",
                last.map(|r| r.by.as_str()).unwrap_or("someone"),
                last.and_then(|r| r.feedback.as_deref())
                    .map(|f| format!(": {f}"))
                    .unwrap_or_default()
            ));
            check(false, format!("Plan {id} rejected"), summary)
        }
        _ => {
            summary.push_str(&format!(
                "Plan `{id}` ({}) has {} of {required} required approval(s) from people with write access. Approve it with a pull-request review (“Approve”) or the “{}” button above (it approves this text only); a writer may change it with `/plan edit`.",
                short(&record.hash),
                record.approver_count(),
                plan_button::LABEL,
            ));
            if let Some(stale) = match crate::render::plan_status(record) {
                crate::render::PlanStatus::Pending { stale } => stale,
                _ => None,
            } {
                summary.push_str(&format!("\n\nStale: {stale}"));
            }
            if let Some(edit) = record.edits.last() {
                summary.push_str(&format!(
                    "\n\nThe plan changed: {} by @{} ({} → {}). The plan comment shows the diff against the original text.",
                    edit.via.as_deref().unwrap_or("edited"),
                    edit.by,
                    short(&edit.from_hash),
                    short(&edit.to_hash)
                ));
            }
            for note in crate::render::owner_notes(record) {
                summary.push_str(&format!("\n\n{note}"));
            }
            for note in notes {
                summary.push_str(&format!("\n- Not counted: {note}"));
            }
            let mut waiting = check(false, format!("Plan {id} needs approval"), summary);
            if record.status == RecordStatus::Pending {
                waiting.actions = vec![plan_button::approve_action(&record.hash)];
            }
            waiting
        }
    }
}

/// Why a review was not counted, for the check's notes.
pub fn not_counted(n: &NotCounted) -> String {
    match n {
        NotCounted::Author { login } => format!(
            "@{login} is the pull request's author (`approval.allow_author_approval` is off)."
        ),
        NotCounted::BeforeText { login } => {
            format!("@{login} approved an earlier text of the plan; it changed since.")
        }
    }
}

/// The check for a head whose plan file does not parse. `failure` rather than
/// `action_required`: the fix is a push, as for a failing lint, not a person's approval.
/// With the parser's `line`, the problem is also an annotation at that line of the file.
pub fn broken_check(
    path: &str,
    head_sha: &str,
    problem: &str,
    line: Option<usize>,
    record: Option<&PlanRecord>,
) -> PlanCheck {
    let head: String = head_sha.chars().take(7).collect();
    let kept = match record {
        Some(r) => format!(
            "Plan `{}` keeps its last valid text ({}, {}); nothing was recorded from this commit.",
            r.id,
            short(&r.hash),
            r.status.word()
        ),
        None => "No plan is recorded for this pull request until the file is valid.".to_owned(),
    };
    PlanCheck {
        verdict: CheckState::Broken,
        title: format!("{BROKEN_TITLE}{path} is not valid"),
        summary: format!(
            "`{path}` at {head} is not a valid plan: {problem}.\n\n{kept} Fix the file and push again."
        ),
        annotations: line
            .map(|line| CheckAnnotation {
                path: path.to_owned(),
                line,
                level: "failure",
                title: "Not a valid plan".to_owned(),
                message: format!("{problem}. The plan format is checked by Navin's parser; fix this line and push."),
            })
            .into_iter()
            .collect(),
        actions: Vec::new(),
    }
}

/// What the check summary says about approvals under `approval.require_codeowners`.
pub fn verdict_notes(verdict: &OwnersVerdict) -> Vec<String> {
    let mut notes: Vec<String> = verdict
        .not_owners
        .iter()
        .map(|l| {
            format!("@{l} owns none of the plan's proposed files (`approval.require_codeowners`).")
        })
        .collect();
    if !verdict.refused_teams.is_empty() {
        notes.push(format!(
            "GitHub would not show the membership of {} (403): the App needs the organization permission `members: read` (accept it on the installation's settings page) for team owners' approvals to count.",
            verdict.refused_teams.join(", ")
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_plan_file_fails_the_check_naming_file_and_problem() {
        let check = broken_check(
            "docs/plans/greeting.plan.md",
            "0123456789abcdef",
            "line 5, section \"Goal\": the section is empty",
            Some(5),
            None,
        );
        assert_eq!(check.conclusion(), "failure");
        let mark = &check.annotations[0];
        assert_eq!(
            (mark.path.as_str(), mark.line),
            ("docs/plans/greeting.plan.md", 5)
        );
        assert!(mark.message.contains("the section is empty"));
        assert!(check.title.contains("docs/plans/greeting.plan.md"));
        assert!(check.summary.contains("at 0123456"), "{}", check.summary);
        assert!(check.summary.contains("line 5, section \"Goal\""));
    }
}
