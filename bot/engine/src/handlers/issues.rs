//! `issues` events: an issue opened by a writer whose request the classifier scores at least `plan_mode.auto_threshold` gets a plan without `/plan`.

use crate::session::EventOrigin;
use crate::token_scope::Need;
use crate::{Cx, Engine, EngineError};
use navin_domain::event::IssuesEvent;

impl Engine {
    pub(crate) async fn on_issue(&self, event: &IssuesEvent, cx: &Cx) -> Result<(), EngineError> {
        let issue = &event.issue;
        // A pull request's conversation is an issue too; pull requests have their own path.
        if event.action != "opened" || issue.pull_request.is_some() {
            return Ok(());
        }
        let Some(author) = issue.user.as_ref() else {
            return Ok(());
        };
        let installation = cx.delivery.installation()?;
        let origin = EventOrigin::new(issue.number, &author.login)
            .author_id(author.id)
            .body(issue.body.as_deref())
            .closed(issue.closed_for_changes());
        let session = self
            .session(cx, Need::Write, installation, &event.repository, origin)
            .await?;
        if session.config.is_err() || session.origin.closed.is_some() {
            return Ok(());
        }
        let title = issue.title.as_deref().unwrap_or_default();
        let body = issue.body.as_deref().unwrap_or_default();
        session.auto_plan(title, body, author).await
    }
}
