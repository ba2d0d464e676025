//! A click on the `navin/plan` check's "Approve plan" button: checked like `/approve`, recorded as an approval of the text the button was drawn for, then published exactly as after an approving review.

use super::plan_types::{PullInfo, Seen};
use super::plans::owner_approval;
use super::records::{origin_plan_id, update_record};
use super::replies::answer_all;
use super::reviews::sync_reviews;
use super::{Answer, EngineError, RepoCtx};
use crate::cache::permission;
use navin_domain::render::reply;
use navin_domain::rules::plan_button::{self, ClickRefusal, Clicker};
use navin_github::ops;
use navin_ledger::model::Actor;
use navin_ledger::plan::commit_message;
use navin_ledger::plan::record::PlanRecord;

/// `clicker` clicked the button that approves the text with hash digits `clicked`
/// on this pull request's plan. A refused click writes nothing and tells the person
/// why in a reply on the pull request; a delivery seen before is not applied again.
pub(crate) async fn plan_button(
    cx: &RepoCtx<'_>,
    clicker: &Clicker,
    clicked: &str,
) -> Result<(), EngineError> {
    let path = ops::pull_request(&cx.repo, cx.origin.issue);
    let pull: navin_domain::event::PullRequest = cx.client.get_json(&path).await?;
    let pr = PullInfo::from_payload(&pull);
    let config = cx.repo_config();
    // As for `/approve`: a closed pull request takes approvals only when the
    // repository allows the command there.
    let open = pull.state.as_deref() != Some("closed")
        || config
            .allow_on_closed
            .iter()
            .any(|name| name.trim_start_matches('/') == "approve");
    let allow_author = config.approval.allow_author_approval;
    if let Err(refusal) = plan_button::may_click(clicker, &pr.author, open, allow_author) {
        return refuse_click(cx, &refusal).await;
    }
    let role = cx
        .engine
        .permissions
        .role(&cx.client, &cx.repo, &clicker.login, clicker.id)
        .await?;
    if !permission::may_mutate(&role) {
        return refuse_click(cx, &ClickRefusal::Role { role }).await;
    }
    // `approval.require_codeowners`: as with `/approve`, only an owner of the plan's
    // owned files may approve; anyone else is told so and nothing is written.
    if let Err(answer) = owner_approval(cx, &clicker.login).await? {
        let op_id = format!("{}#answers", cx.delivery.id);
        answer_all(cx, vec![answer], &op_id).await?;
        return Ok(());
    }
    let id = origin_plan_id(cx);
    let required = config.approval.required_approvals;
    let now = cx.now();
    let message = commit_message(
        &id,
        "approve",
        &Actor::Human(clicker.login.clone()),
        &format!(
            "Approved with the “{}” button on the navin/plan check.",
            plan_button::LABEL
        ),
        Some(&cx.delivery.id),
    );
    let who = clicker.clone();
    let text = clicked.to_owned();
    let change = move |old: Option<PlanRecord>, _: &Seen| {
        let Some(mut record) = old else {
            return Ok(None);
        };
        plan_button::approve(&mut record, &who, &text, required, now)?;
        Ok(Some(record))
    };
    // The op id makes a redelivered or retried click find its approval recorded.
    let op_id = format!("{}#approve-button", cx.delivery.id);
    match update_record(cx, &id, None, message, Some(&op_id), Box::new(change)).await? {
        // The same path as after an approving review: recount, then the plan
        // comment and the check (which loses its button once approved).
        Ok(Some(_)) => Box::pin(sync_reviews(cx, &pr)).await,
        Ok(None) => {
            tracing::info!(repo = %cx.repo, pr = cx.origin.issue, "approve button clicked on a pull request with no plan");
            Ok(())
        }
        Err(refusal) => refuse_click(cx, &refusal).await,
    }
}

/// Tells the person who clicked why nothing changed: a reply on the pull request that
/// mentions them, since the check run is shared and rewritten by the next event. Bots
/// get no reply. The reply is tagged with the delivery, so a retry posts it once, and
/// counts against the per-person reply cap like a command's.
async fn refuse_click(cx: &RepoCtx<'_>, refusal: &ClickRefusal) -> Result<(), EngineError> {
    tracing::info!(repo = %cx.repo, pr = cx.origin.issue, who = %cx.origin.author, ?refusal, "approve button click refused");
    if *refusal == ClickRefusal::Bot {
        return Ok(());
    }
    let (reason, todo) = refusal.words(&cx.origin.author, &cx.repo);
    let what = format!(
        "you clicked “{}” on the navin/plan check",
        plan_button::LABEL
    );
    let body = reply::refusal_to(&cx.origin.author, &what, &reason, &todo);
    let op_id = format!("{}#answers", cx.delivery.id);
    answer_all(cx, vec![Answer::Reply(body)], &op_id).await?;
    Ok(())
}
