//! `pull_request_review` events: review approvals of the plan a pull request carries.

use super::payload::ReviewEvent;
use super::{parse, Engine};
use crate::queue::{Delivery, HandlerError};

impl Engine {
    pub(super) async fn on_review(&self, delivery: &Delivery) -> Result<(), HandlerError> {
        let event: ReviewEvent = parse(delivery, "pull_request_review")?;
        self.review_plan(&event, delivery).await
    }
}
