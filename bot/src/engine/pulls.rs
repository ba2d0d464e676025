//! `pull_request` events: step links from PR bodies and branches, plan-file edits, and the plan-required gate.

use super::payload::PullRequestEvent;
use super::{installation_of, parse, Engine};
use crate::queue::{Delivery, HandlerError};

impl Engine {
    pub(super) async fn on_pull_request(&self, delivery: &Delivery) -> Result<(), HandlerError> {
        let event: PullRequestEvent = parse(delivery, "pull_request")?;
        let _installation = installation_of(event.installation.as_ref(), delivery)?;
        // Both are idempotent: a retry after a failure in either redoes only what is missing.
        self.link_steps(&event, delivery).await?;
        self.gate_pull_request(&event, delivery).await?;
        Ok(())
    }
}
