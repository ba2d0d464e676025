//! `check_run`, `check_suite` and `workflow_run` completions: CI evidence for the steps linked to the run's head.

use super::ci::{settle, Completion};
use super::payload::{CheckRunEvent, CheckSuiteEvent, Repository, WorkflowRunEvent};
use super::{installation_of, parse, Engine};
use crate::evidence::RunKind;
use crate::queue::{Delivery, HandlerError};

impl Engine {
    pub(super) async fn on_check_run(&self, delivery: &Delivery) -> Result<(), HandlerError> {
        let event: CheckRunEvent = parse(delivery, "check_run")?;
        if event.action != "completed" {
            return Ok(());
        }
        let installation = installation_of(event.installation.as_ref(), delivery)?;
        let run = &event.check_run;
        let done = Completion {
            head_sha: run.head_sha.clone(),
            app_id: run.app.as_ref().and_then(|a| a.id),
            conclusion: run.conclusion.clone(),
            run: Some((RunKind::CheckRun, run.id)),
        };
        self.ci_completion(delivery, installation, &event.repository, done, "check_run")
            .await
    }

    pub(super) async fn on_check_suite(&self, delivery: &Delivery) -> Result<(), HandlerError> {
        let event: CheckSuiteEvent = parse(delivery, "check_suite")?;
        if event.action != "completed" {
            return Ok(());
        }
        let installation = installation_of(event.installation.as_ref(), delivery)?;
        let suite = &event.check_suite;
        let done = Completion {
            head_sha: suite.head_sha.clone(),
            app_id: suite.app.as_ref().and_then(|a| a.id),
            conclusion: suite.conclusion.clone(),
            run: None,
        };
        self.ci_completion(
            delivery,
            installation,
            &event.repository,
            done,
            "check_suite",
        )
        .await
    }

    pub(super) async fn on_workflow_run(&self, delivery: &Delivery) -> Result<(), HandlerError> {
        let event: WorkflowRunEvent = parse(delivery, "workflow_run")?;
        if event.action != "completed" {
            return Ok(());
        }
        let installation = installation_of(event.installation.as_ref(), delivery)?;
        let run = &event.workflow_run;
        let done = Completion {
            head_sha: run.head_sha.clone(),
            // Workflow runs are always GitHub Actions' runs.
            app_id: Some(crate::evidence::GITHUB_ACTIONS_APP_ID),
            conclusion: run.conclusion.clone(),
            run: Some((RunKind::WorkflowRun, run.id)),
        };
        self.ci_completion(
            delivery,
            installation,
            &event.repository,
            done,
            "workflow_run",
        )
        .await
    }

    async fn ci_completion(
        &self,
        delivery: &Delivery,
        installation: u64,
        repository: &Repository,
        done: Completion,
        event: &str,
    ) -> Result<(), HandlerError> {
        if !is_commit_sha(&done.head_sha) {
            return Err(HandlerError::Permanent(format!(
                "{event}: head_sha {:?} is not a commit id",
                done.head_sha
            )));
        }
        let session = self
            .session(delivery, installation, repository, 0, "navin")
            .await?;
        settle(session.on_completion(done).await, event)
    }
}

/// 40 (SHA-1) or 64 (SHA-256) hex digits: the only head ids put into API paths.
pub(super) fn is_commit_sha(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.chars().all(|c| c.is_ascii_hexdigit())
}
