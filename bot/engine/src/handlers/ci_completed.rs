//! `check_run`, `check_suite` and `workflow_run` completions: CI evidence for the steps linked to the run's head.

use crate::features::ci::{on_completion, settle};
use crate::features::Completion;
use crate::features::EventOrigin;
use crate::features::RepoCtx;
use crate::token_scope::Need;
use crate::{Engine, EngineError, Inbound};
use navin_domain::event::{
    is_commit_sha, CheckRunEvent, CheckSuiteEvent, Repository, WorkflowRunEvent,
};
use navin_domain::evidence::RunKind;

pub(crate) async fn on_check_run(
    engine: &Engine,
    event: &CheckRunEvent,
    inbound: &Inbound,
) -> Result<(), EngineError> {
    if event.action != "completed" {
        return Ok(());
    }
    let installation = inbound.delivery.installation()?;
    let run = &event.check_run;
    let done = Completion {
        head_sha: run.head_sha.clone(),
        app_id: run.app.as_ref().and_then(|a| a.id),
        conclusion: run.conclusion.clone(),
        run: Some((RunKind::CheckRun, run.id)),
    };
    ci_completion(
        engine,
        inbound,
        installation,
        &event.repository,
        done,
        "check_run",
    )
    .await
}

pub(crate) async fn on_check_suite(
    engine: &Engine,
    event: &CheckSuiteEvent,
    inbound: &Inbound,
) -> Result<(), EngineError> {
    if event.action != "completed" {
        return Ok(());
    }
    let installation = inbound.delivery.installation()?;
    let suite = &event.check_suite;
    let done = Completion {
        head_sha: suite.head_sha.clone(),
        app_id: suite.app.as_ref().and_then(|a| a.id),
        conclusion: suite.conclusion.clone(),
        run: None,
    };
    ci_completion(
        engine,
        inbound,
        installation,
        &event.repository,
        done,
        "check_suite",
    )
    .await
}

pub(crate) async fn on_workflow_run(
    engine: &Engine,
    event: &WorkflowRunEvent,
    inbound: &Inbound,
) -> Result<(), EngineError> {
    if event.action != "completed" {
        return Ok(());
    }
    let installation = inbound.delivery.installation()?;
    let run = &event.workflow_run;
    let done = Completion {
        head_sha: run.head_sha.clone(),
        // Workflow runs are always GitHub Actions' runs.
        app_id: Some(navin_domain::evidence::GITHUB_ACTIONS_APP_ID),
        conclusion: run.conclusion.clone(),
        run: Some((RunKind::WorkflowRun, run.id)),
    };
    ci_completion(
        engine,
        inbound,
        installation,
        &event.repository,
        done,
        "workflow_run",
    )
    .await
}

async fn ci_completion(
    engine: &Engine,
    inbound: &Inbound,
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
    let cx = RepoCtx::open(
        engine,
        inbound,
        Need::Write,
        installation,
        repository,
        EventOrigin::navin(),
    )
    .await?;
    settle(&cx, on_completion(&cx, done).await, event)
}
