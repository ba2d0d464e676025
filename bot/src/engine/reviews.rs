//! `pull_request_review` events: review approvals of the plan a pull request carries.

use super::payload::ReviewEvent;
use super::{installation_of, parse, Engine};
use crate::queue::{Delivery, HandlerError};

impl Engine {
    pub(super) async fn on_review(&self, delivery: &Delivery) -> Result<(), HandlerError> {
        let event: ReviewEvent = parse(delivery, "pull_request_review")?;
        let _installation = installation_of(event.installation.as_ref(), delivery)?;
        // Review approvals are not wired yet.
        Ok(())
    }
}
