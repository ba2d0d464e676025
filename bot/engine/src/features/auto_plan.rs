//! `plan_mode.auto_threshold`: a request the classifier finds non-trivial (a pull request or an issue opened by a writer) gets a plan as if its author had asked with `/plan`.

use super::plans::plan;
use super::records::read_plan;
use super::{Answer, EngineError, RepoCtx};
use navin_domain::event::User;

/// A request opened by a writer whose title and body score at least the threshold
/// gets a plan on this issue or pull request, as if its author had commented
/// `/plan <title>`. Readers' and bots' requests never spend the planner (an LLM
/// costs money). A redelivery plans nothing twice: a plan already there stands,
/// and one this delivery made is only posted again.
pub(crate) async fn auto_plan(
    cx: &RepoCtx<'_>,
    title: &str,
    body: &str,
    author: &User,
) -> Result<(), EngineError> {
    let Some(threshold) = cx.repo_config().plan_mode.auto_threshold else {
        return Ok(());
    };
    // Apps and agents never spend the planner unasked.
    if navin_domain::rules::approvals::is_bot_account(&author.login, author.kind.as_deref()) {
        return Ok(());
    }
    let score = navin_domain::rules::classify::score(&format!("{title}\n\n{body}"));
    if score.points < threshold {
        return Ok(());
    }
    let op_id = format!("{}#auto-plan", cx.delivery.id);
    // A plan this delivery made already (its comment may not have landed) goes on to
    // `plan`, which only re-posts it; any other plan here stands.
    if let Some((record, _)) = read_plan(cx).await? {
        if !record.op_ids.contains(&op_id) {
            return Ok(());
        }
    }
    let role = cx
        .engine
        .permissions
        .role(&cx.client, &cx.repo, &author.login, author.id)
        .await?;
    if !crate::cache::permission::may_mutate(&role) {
        return Ok(());
    }
    tracing::info!(repo = %cx.repo, issue = cx.origin.issue, points = score.points, signals = ?score.signals, "automatic plan");
    let request = if title.trim().is_empty() { body } else { title };
    if let Answer::Refuse(refusal) = plan(cx, request.trim(), &op_id).await? {
        tracing::warn!(repo = %cx.repo, issue = cx.origin.issue, reason = %refusal.reason(), "automatic plan refused");
    }
    Ok(())
}
