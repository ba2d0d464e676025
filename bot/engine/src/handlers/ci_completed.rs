//! `check_run`, `check_suite` and `workflow_run` completions: CI evidence for the steps linked to the run's head.

use crate::session::Completion;
use crate::session::EventOrigin;
use crate::token_scope::Need;
use crate::{Cx, Engine, EngineError};
use navin_domain::event::{
    is_commit_sha, CheckRunEvent, CheckSuiteEvent, Repository, WorkflowRunEvent,
};
use navin_domain::evidence::RunKind;

impl Engine {
    pub(crate) async fn on_check_run(
        &self,
        event: &CheckRunEvent,
        cx: &Cx,
    ) -> Result<(), EngineError> {
        if event.action != "completed" {
            return Ok(());
        }
        let installation = cx.delivery.installation()?;
        let run = &event.check_run;
        let done = Completion {
            head_sha: run.head_sha.clone(),
            app_id: run.app.as_ref().and_then(|a| a.id),
            conclusion: run.conclusion.clone(),
            run: Some((RunKind::CheckRun, run.id)),
        };
        self.ci_completion(cx, installation, &event.repository, done, "check_run")
            .await
    }

    pub(crate) async fn on_check_suite(
        &self,
        event: &CheckSuiteEvent,
        cx: &Cx,
    ) -> Result<(), EngineError> {
        if event.action != "completed" {
            return Ok(());
        }
        let installation = cx.delivery.installation()?;
        let suite = &event.check_suite;
        let done = Completion {
            head_sha: suite.head_sha.clone(),
            app_id: suite.app.as_ref().and_then(|a| a.id),
            conclusion: suite.conclusion.clone(),
            run: None,
        };
        self.ci_completion(cx, installation, &event.repository, done, "check_suite")
            .await
    }

    pub(crate) async fn on_workflow_run(
        &self,
        event: &WorkflowRunEvent,
        cx: &Cx,
    ) -> Result<(), EngineError> {
        if event.action != "completed" {
            return Ok(());
        }
        let installation = cx.delivery.installation()?;
        let run = &event.workflow_run;
        let done = Completion {
            head_sha: run.head_sha.clone(),
            // Workflow runs are always GitHub Actions' runs.
            app_id: Some(navin_domain::evidence::GITHUB_ACTIONS_APP_ID),
            conclusion: run.conclusion.clone(),
            run: Some((RunKind::WorkflowRun, run.id)),
        };
        self.ci_completion(cx, installation, &event.repository, done, "workflow_run")
            .await
    }

    async fn ci_completion(
        &self,
        cx: &Cx,
        installation: u64,
        repository: &Repository,
        done: Completion,
        event: &str,
    ) -> Result<(), EngineError> {
        if !is_commit_sha(&done.head_sha) {
            return Err(EngineError::Invalid(format!(
                "{event}: head_sha {:?} is not a commit id",
                done.head_sha
            )));
        }
        let session = self
            .session(
                cx,
                Need::Write,
                installation,
                repository,
                EventOrigin::navin(),
            )
            .await?;
        session.settle(session.on_completion(done).await, event)
    }
}
