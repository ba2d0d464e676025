//! `pull_request` events: step links from PR bodies and branches (then the step's CI judged), the `navin/config` check, plan-file edits, the automatic plan, and the plan-required gate.

use crate::features::auto_plan::auto_plan;
use crate::features::ci::settle;
use crate::features::config_check::sync_config_check;
use crate::features::gate::gate;
use crate::features::links::{closed_pull, link_pull};
use crate::features::plan_file::plan_file;
use crate::features::plan_types::PullInfo;
use crate::features::pulls::changed_files;
use crate::features::EventOrigin;
use crate::features::RepoCtx;
use crate::token_scope::Need;
use crate::Inbound;
use crate::{Engine, EngineError};
use navin_domain::event::PullRequestEvent;
use navin_ledger::Actor;

pub(crate) async fn on_pull_request(
    engine: &Engine,
    event: &PullRequestEvent,
    inbound: &Inbound,
) -> Result<(), EngineError> {
    inbound.delivery.installation()?;
    // Both are idempotent: a retry after a failure in either redoes only what is missing.
    link_steps(engine, event, inbound).await?;
    gate_pull_request(engine, event, inbound).await?;
    Ok(())
}

/// `opened`, `reopened`, `synchronize`, `edited` and `ready_for_review` link the named
/// step to the PR's head and put it in progress (its dependencies done); a draft
/// marked ready has its head judged again. `closed` and merged records
/// the merge and judges the final head (with `evidence.done_on: merged` that is when
/// the step can be done); closed unmerged is a failed attempt, and reopening links
/// the step again and gives it its next attempt.
pub(crate) async fn link_steps(
    engine: &Engine,
    event: &PullRequestEvent,
    inbound: &Inbound,
) -> Result<(), EngineError> {
    if !matches!(
        event.action.as_str(),
        "opened" | "reopened" | "synchronize" | "edited" | "closed" | "ready_for_review"
    ) {
        return Ok(());
    }
    let installation = inbound.delivery.installation()?;
    let pr = &event.pull_request;
    let sender = event.sender.as_ref().unwrap_or(&pr.user);
    let origin = EventOrigin::new(pr.number, &sender.login).on_pull_request(true);
    let cx = RepoCtx::open(
        engine,
        inbound,
        Need::Write,
        installation,
        &event.repository,
        origin,
    )
    .await?;
    let actor = if sender.kind.as_deref() == Some("Bot") || sender.login.ends_with("[bot]") {
        Actor::App(sender.login.clone())
    } else {
        Actor::Human(sender.login.clone())
    };
    let outcome = match event.action.as_str() {
        "closed" => closed_pull(&cx, event, actor).await,
        _ => link_pull(&cx, event, actor).await,
    };
    settle(&cx, outcome, "pull_request")
}

/// `pull_request` opened/synchronize/reopened/edited: the `navin/plan` check on the
/// new head, from the PR's own plan or, under `require_plan_for`, from the plan its
/// body names.
pub(crate) async fn gate_pull_request(
    engine: &Engine,
    event: &PullRequestEvent,
    inbound: &Inbound,
) -> Result<(), EngineError> {
    let wanted = [
        "opened",
        "synchronize",
        "reopened",
        "edited",
        "ready_for_review",
    ];
    if !wanted.contains(&event.action.as_str())
        || event.pull_request.state.as_deref() == Some("closed")
    {
        return Ok(());
    }
    let installation = inbound.delivery.installation()?;
    let pr = PullInfo::from_payload(&event.pull_request);
    let actor = event
        .sender
        .as_ref()
        .map(|s| s.login.clone())
        .unwrap_or_else(|| pr.author.clone());
    let origin = EventOrigin::new(pr.number, &actor)
        .on_pull_request(true)
        .author_id(event.sender.as_ref().and_then(|s| s.id))
        .body(Some(&pr.body));
    let cx = RepoCtx::open(
        engine,
        inbound,
        Need::Write,
        installation,
        &event.repository,
        origin,
    )
    .await?;
    // A new head may carry a fix for the default branch's broken config: its
    // `navin/config` check runs whatever the default branch's file says.
    let new_head = ["opened", "synchronize", "reopened"].contains(&event.action.as_str());
    if let Some(invalid) = &cx.config_error {
        tracing::warn!(repo = %cx.repo, error = %invalid, "invalid config: no plan gate");
        if new_head {
            match changed_files(&cx, pr.number).await {
                Ok(files) => sync_config_check(&cx, &pr, &files).await?,
                Err(e) if e.is_transient() => return Err(e),
                Err(e) => {
                    tracing::warn!(repo = %cx.repo, error = %e, "pull request files unreadable: no navin/config check")
                }
            }
        }
        return Ok(());
    }
    // One files list serves the config check, the plan file, the automatic plan
    // and the `require_plan_for` gate.
    let files = match changed_files(&cx, pr.number).await {
        Ok(files) => Some(files),
        // GitHub does not know the pull request (deleted, or a stale payload): it
        // carries no plan file; the gate decides on its own as before.
        Err(EngineError::GitHub(e)) if e.status() == Some(404) => {
            tracing::warn!(repo = %cx.repo, pr = pr.number, "pull request files not found: no plan file");
            None
        }
        Err(e) => return Err(e),
    };
    if let (Some(files), true) = (&files, new_head) {
        sync_config_check(&cx, &pr, files).await?;
    }
    if let Some(files) = &files {
        if plan_file(&cx, &pr, files).await? {
            return Ok(());
        }
    }
    // After the plan file: a pull request that carries its own plan never gets an
    // automatic one on top.
    if event.action == "opened" {
        let pull = &event.pull_request;
        let title = pull.title.as_deref().unwrap_or_default();
        let body = pull.body.as_deref().unwrap_or_default();
        auto_plan(&cx, title, body, &pull.user).await?;
    }
    gate(&cx, &pr, files).await
}
