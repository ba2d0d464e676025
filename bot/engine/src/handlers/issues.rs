//! `issues` events: an issue opened by a writer whose request the classifier scores at least `plan_mode.auto_threshold` gets a plan without `/plan`.

use crate::features::auto_plan::auto_plan;
use crate::features::EventOrigin;
use crate::features::RepoCtx;
use crate::token_scope::Need;
use crate::{Engine, EngineError, Inbound};
use navin_domain::event::IssuesEvent;

pub(crate) async fn on_issue(
    engine: &Engine,
    event: &IssuesEvent,
    inbound: &Inbound,
) -> Result<(), EngineError> {
    let issue = &event.issue;
    // A pull request's conversation is an issue too; pull requests have their own path.
    if event.action != "opened" || issue.pull_request.is_some() {
        return Ok(());
    }
    let Some(author) = issue.user.as_ref() else {
        return Ok(());
    };
    let installation = inbound.delivery.installation()?;
    let origin = EventOrigin::new(issue.number, &author.login)
        .author_id(author.id)
        .body(issue.body.as_deref())
        .closed(issue.closed_for_changes());
    let cx = RepoCtx::open(
        engine,
        inbound,
        Need::Write,
        installation,
        &event.repository,
        origin,
    )
    .await?;
    if cx.config_error.is_some() || cx.origin.closed.is_some() {
        return Ok(());
    }
    let title = issue.title.as_deref().unwrap_or_default();
    let body = issue.body.as_deref().unwrap_or_default();
    auto_plan(&cx, title, body, author).await
}
