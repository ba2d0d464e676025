//! `pull_request_review` events: review approvals of the plan a pull request carries.

use crate::features::plan_types::PullInfo;
use crate::features::reviews::sync_reviews;
use crate::features::EventOrigin;
use crate::features::RepoCtx;
use crate::token_scope::Need;
use crate::Inbound;
use crate::{Engine, EngineError};
use navin_domain::event::ReviewEvent;

/// `pull_request_review` submitted/edited/dismissed: the PR's plan approvals follow
/// its reviews, then the plan comment and the check.
pub(crate) async fn on_review(
    engine: &Engine,
    event: &ReviewEvent,
    inbound: &Inbound,
) -> Result<(), EngineError> {
    if !["submitted", "edited", "dismissed"].contains(&event.action.as_str()) {
        return Ok(());
    }
    let installation = inbound.delivery.installation()?;
    let pr = PullInfo::from_payload(&event.pull_request);
    let actor = event
        .review
        .user
        .as_ref()
        .map(|u| u.login.clone())
        .unwrap_or_else(|| "ghost".to_owned());
    let origin = EventOrigin::new(pr.number, &actor)
        .on_pull_request(true)
        .author_id(event.review.user.as_ref().and_then(|u| u.id));
    let cx = RepoCtx::open(
        engine,
        inbound,
        Need::Write,
        installation,
        &event.repository,
        origin,
    )
    .await?;
    if cx.config_error.is_some() {
        return Ok(());
    }
    sync_reviews(&cx, &pr).await
}
