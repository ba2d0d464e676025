//! The plan-required gate: the `navin/plan` check on a pull request's head, from its own plan, the step it carries, or the approved plan its body names.

use super::checks::sync_check;
use super::dispatch::refresh_panel_of;
use super::plan_types::PullInfo;
use super::pulls::changed_files;
use super::records::read_plan_id;
use super::step_drift::step_check;
use super::{EngineError, RepoCtx};
use crate::effects::plan_check::{CheckState, PlanCheck};
use crate::reads::MAX_FILE_PAGES;
use navin_domain::event::PullRequest;
use navin_domain::render::plan_check::{own_plan_check, short};
use navin_domain::rules::drift::{step_drift, with_drift};
use navin_domain::rules::plan_policy;
use navin_github::ops;
use navin_ledger::plan::policy::{plan_requirement, ChangedFile};
use navin_ledger::plan::record::pr_plan_id;
use navin_ledger::plan::record::PlanRecord;

/// After a change to a plan that pull requests may name (`Navin-Plan:`), runs the
/// gate again on every open pull request whose body names it, so approving an
/// issue's plan turns their checks green without a push. Only when
/// `require_plan_for` is set (otherwise no gate exists).
pub(crate) async fn refresh_named_gates(
    cx: &RepoCtx<'_>,
    record: &PlanRecord,
) -> Result<(), EngineError> {
    if plan_policy::plan_triggers(&cx.repo_config()).is_empty() {
        return Ok(());
    }
    let mut next = Some(ops::open_pull_requests(&cx.repo));
    let mut pages = 0;
    while let Some(path) = next {
        pages += 1;
        let page = cx.client.get(&path).await?;
        let pulls: Vec<PullRequest> = page.json(&path)?;
        for pull in &pulls {
            let info = PullInfo::from_payload(pull);
            if plan_policy::referenced_plans(&info.body).contains(&record.id) {
                gate(cx, &info, None).await?;
            }
        }
        next = page.next_page().filter(|_| pages < MAX_FILE_PAGES);
    }
    Ok(())
}

/// The gate: a PR with its own plan gets that plan's check; a PR carrying a step of a
/// mission started from a plan gets the step's check (files outside the plan or its
/// stage, see [`step_check`]); otherwise, when the
/// change sets off `require_plan_for`, the check waits for an approved plan the
/// body names (`Navin-Plan: #12`). Nothing required, no check.
/// `files` is the PR's files list when the caller already read it.
pub(crate) async fn gate(
    cx: &RepoCtx<'_>,
    pr: &PullInfo,
    files: Option<Vec<ChangedFile>>,
) -> Result<(), EngineError> {
    let config = cx.repo_config();
    if let Some((record, doc)) = read_plan_id(cx, &pr_plan_id(pr.number)).await? {
        let mut check = own_plan_check(&record, config.approval.required_approvals, &[]);
        if let Some(files) = &files {
            let drift = step_drift(doc.plan(), None, files);
            check = with_drift(check, &record.id, &drift, config.plan.scope);
        }
        return sync_check(cx, pr, &check, &record.id).await;
    }
    // A mission step's pull request is covered by the plan its mission came from,
    // and held to it: `require_plan_for` asks for nothing more.
    if let Some(step) = step_check(cx, pr, files.as_deref()).await? {
        sync_check(cx, pr, &step.check, &format!("step-{}", pr.number)).await?;
        if let Some(ledger) = step.written {
            refresh_panel_of(cx, &ledger).await?;
        }
        return Ok(());
    }
    let triggers = plan_policy::plan_triggers(&config);
    if triggers.is_empty() {
        return Ok(());
    }
    let files = match files {
        Some(files) => files,
        None => changed_files(cx, pr.number).await?,
    };
    let requirement = plan_requirement(&files, &triggers);
    if !requirement.is_required() {
        return Ok(());
    }
    let why = requirement.reason();
    let mut named = None;
    for id in plan_policy::referenced_plans(&pr.body) {
        if let Some((record, _)) = read_plan_id(cx, &id).await? {
            named = Some(record);
            break;
        }
    }
    let check = match named {
        Some(record) if record.is_approved() => PlanCheck {
            verdict: CheckState::Approved,
            title: format!("Covered by approved plan {}", record.id),
            summary: format!(
                "{why} (`require_plan_for`). The pull request names plan `{}` ({}), approved by {}.",
                record.id,
                short(&record.hash),
                record
                    .current_approvals()
                    .map(|a| format!("@{}", a.approver))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            annotations: Vec::new(),
            actions: Vec::new(),
        },
        Some(record) => PlanCheck {
            verdict: CheckState::Waiting,
            title: format!("Plan {} is not approved", record.id),
            summary: format!(
                "{why} (`require_plan_for`). The pull request names plan `{}`, which is {} rather than approved. Approve it on #{} (a review there, or `/approve` on an issue), then push or edit this pull request to re-run the check.",
                record.id, record.status.word(), record.issue
            ),
            annotations: Vec::new(),
            actions: Vec::new(),
        },
        None => PlanCheck {
            verdict: CheckState::Waiting,
            title: "An approved plan is required".to_owned(),
            summary: format!(
                "{why} (`require_plan_for`), and no approved plan covers this pull request. Either comment `/plan <what this change does>` here and approve the plan with a review, or name an approved plan in the pull request body with a line `Navin-Plan: #<issue>`."
            ),
            annotations: Vec::new(),
            actions: Vec::new(),
        },
    };
    sync_check(cx, pr, &check, &format!("gate-{}", pr.number)).await
}
