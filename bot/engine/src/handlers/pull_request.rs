//! `pull_request` events: step links from PR bodies and branches, plan-file edits, and the plan-required gate.

use crate::{Cx, Engine, EngineError};
use navin_domain::event::PullRequestEvent;

impl Engine {
    pub(crate) async fn on_pull_request(
        &self,
        event: &PullRequestEvent,
        cx: &Cx,
    ) -> Result<(), EngineError> {
        cx.delivery.installation()?;
        // Both are idempotent: a retry after a failure in either redoes only what is missing.
        self.link_steps(event, cx).await?;
        self.gate_pull_request(event, cx).await?;
        Ok(())
    }
}
