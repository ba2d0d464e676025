//! `pull_request_review` events: review approvals of the plan a pull request carries.

use crate::{Cx, Engine, EngineError};
use navin_domain::event::ReviewEvent;

impl Engine {
    pub(crate) async fn on_review(&self, event: &ReviewEvent, cx: &Cx) -> Result<(), EngineError> {
        self.review_plan(event, cx).await
    }
}
