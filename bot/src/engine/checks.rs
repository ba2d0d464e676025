//! `check_run`, `check_suite` and `workflow_run` completions: CI evidence for the steps linked to the run's head.

use super::payload::{CheckRunEvent, CheckSuiteEvent, WorkflowRunEvent};
use super::{installation_of, parse, Engine};
use crate::queue::{Delivery, HandlerError};

impl Engine {
    pub(super) async fn on_check_run(&self, delivery: &Delivery) -> Result<(), HandlerError> {
        let event: CheckRunEvent = parse(delivery, "check_run")?;
        let _installation = installation_of(event.installation.as_ref(), delivery)?;
        Ok(())
    }

    pub(super) async fn on_check_suite(&self, delivery: &Delivery) -> Result<(), HandlerError> {
        let event: CheckSuiteEvent = parse(delivery, "check_suite")?;
        let _installation = installation_of(event.installation.as_ref(), delivery)?;
        Ok(())
    }

    pub(super) async fn on_workflow_run(&self, delivery: &Delivery) -> Result<(), HandlerError> {
        let event: WorkflowRunEvent = parse(delivery, "workflow_run")?;
        let _installation = installation_of(event.installation.as_ref(), delivery)?;
        Ok(())
    }
}
