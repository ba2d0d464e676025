//! A pull request's reviews recounted as its plan's approvals (writers only, the current text, code owners when required), then the plan comment and check republished.

use super::owners::{owner_verdict, plan_owners};
use super::plan_types::PullInfo;
use super::plans::publish_plan;
use super::pulls::reviews;
use super::records::{read_plan, update_record};
use super::{permission, EngineError, RepoCtx};
use navin_domain::render::plan_check::{not_counted, verdict_notes};
use navin_domain::rules::approvals::{self, NotCounted};
use navin_ledger::model::Actor;
use navin_ledger::plan::commit_message;
use navin_ledger::plan::record::{CountedReview, PlanRecord};

/// Recounts the PR plan's approvals from `GET /pulls/{n}/reviews`.
pub(crate) async fn sync_reviews(cx: &RepoCtx<'_>, pr: &PullInfo) -> Result<(), EngineError> {
    let Some((record, doc)) = read_plan(cx).await? else {
        return Ok(());
    };
    let reviews = reviews(cx, pr.number).await?;
    let config = cx.repo_config();
    let standing: Vec<u64> = approvals::latest_approvals(&reviews)
        .values()
        .map(|r| r.id)
        .collect();
    let (candidates, refused) = approvals::candidates(
        &reviews,
        &pr.author,
        config.approval.allow_author_approval,
        record.text_at,
    );
    let mut notes: Vec<String> = refused.iter().map(not_counted).collect();
    let now = cx.now();
    let mut counted = Vec::new();
    for c in candidates {
        // Recorded for an earlier text (an edit in the same second as the review).
        let earlier = record
            .approvals
            .iter()
            .any(|a| a.review_id == Some(c.review_id) && a.plan_hash != record.hash);
        if earlier {
            notes.push(not_counted(&NotCounted::BeforeText { login: c.login }));
            continue;
        }
        let role = cx
            .engine
            .permissions
            .role(&cx.client, &cx.repo, &c.login, c.user_id)
            .await?;
        if permission::may_mutate(&role) {
            counted.push(CountedReview {
                review_id: c.review_id,
                login: c.login,
                user_id: c.user_id,
                at: c.at.unwrap_or(now),
            });
        } else {
            notes.push(format!(
                "@{} has role `{role}`; approvals need write access.",
                c.login
            ));
        }
    }
    // `approval.require_codeowners`: only owners of the proposed files count, and
    // every owned file needs one of its owners.
    let mut waiting = Vec::new();
    if config.approval.require_codeowners {
        let files = plan_owners(cx, &doc, Some(&pr.base_ref)).await?;
        // Reviews, and the approvals given without one (the check's button), which
        // the recount keeps; an automatic approval is nobody's and never counts here.
        let mut approvers: Vec<String> = counted.iter().map(|c| c.login.clone()).collect();
        approvers.extend(
            record
                .current_approvals()
                .filter(|a| a.review_id.is_none() && a.note.is_none())
                .map(|a| a.approver.clone()),
        );
        let verdict = owner_verdict(cx, &files, &approvers).await?;
        notes.extend(verdict_notes(&verdict));
        counted.retain(|c| verdict.owners.iter().any(|o| o == &c.login));
        waiting = verdict.waiting;
    }
    let required = config.approval.required_approvals;
    let id = record.id.clone();
    let message = commit_message(
        &id,
        "reviews",
        &Actor::Human(cx.origin.author.clone()),
        "Approvals recounted from the pull request's reviews.",
        Some(&cx.delivery.id),
    );
    let change = move |old: Option<PlanRecord>, _: &super::plan_types::Seen| {
        let Some(mut record) = old else {
            return Ok(None);
        };
        let recounted = record.reconcile_reviews(&standing, &counted, required, now);
        let held = navin_domain::rules::codeowners_approval::hold(&mut record, &waiting);
        Ok((recounted || held).then_some(record))
    };
    let updated = update_record(cx, &id, None, message, None, Box::new(change)).await?;
    let record = match updated {
        Ok(Some(record)) => record,
        Ok(None) => record,
        Err(reason) => return Err(EngineError::Internal(reason)),
    };
    publish_plan(cx, &record, &doc, Some(pr), &notes).await
}
