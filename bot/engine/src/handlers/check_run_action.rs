//! `check_run` `requested_action`: a button on one of Navin's check runs clicked; the only one is "Approve plan" on a pull request's `navin/plan` check.

use crate::effects::plan_check::CHECK_NAME;
use crate::features::EventOrigin;
use crate::features::RepoCtx;
use crate::token_scope::Need;
use crate::{Engine, EngineError, Inbound};
use navin_domain::event::CheckRunActionEvent;
use navin_domain::rules::plan_button::{self, Clicker};

/// Ignores runs that are not a pull request's own `navin/plan` run and identifiers
/// that are not the button's; otherwise hands the click to the plan's cx.
pub(crate) async fn on_check_run_action(
    engine: &Engine,
    event: &CheckRunActionEvent,
    inbound: &Inbound,
) -> Result<(), EngineError> {
    if event.action != "requested_action" {
        return Ok(());
    }
    let run = &event.check_run;
    let identifier = event.requested_action.identifier.as_str();
    let plan = plan_button::plan_of_run(run.external_id.as_deref());
    let clicked = plan_button::clicked_text(identifier);
    let (Some(number), Some(clicked), true) = (plan, clicked, run.name == CHECK_NAME) else {
        tracing::debug!(run = run.id, name = %run.name, identifier, "not Navin's approve button");
        return Ok(());
    };
    // GitHub sends a click only to the App that created the run; when Navin knows
    // its own id (not in the Action, whose token cannot ask), a run another App
    // made under the same name is not ours either way.
    let theirs = run.app.as_ref().and_then(|a| a.id);
    if let (Some(mine), Some(theirs)) = (engine.me().await.app_id, theirs) {
        if mine != theirs {
            tracing::debug!(run = run.id, app = theirs, "another App's navin/plan run");
            return Ok(());
        }
    }
    let installation = inbound.delivery.installation()?;
    let sender = &event.sender;
    let origin = EventOrigin::new(number, &sender.login)
        .on_pull_request(true)
        .author_id(sender.id);
    let cx = RepoCtx::open(
        engine,
        inbound,
        Need::Write,
        installation,
        &event.repository,
        origin,
    )
    .await?;
    if let Some(invalid) = &cx.config_error {
        tracing::warn!(repo = %cx.repo, error = %invalid, "invalid config: approve button ignored");
        return Ok(());
    }
    let clicker = Clicker {
        login: sender.login.clone(),
        id: sender.id,
        kind: sender.kind.clone(),
    };
    crate::features::plan_button::plan_button(&cx, &clicker, clicked).await
}
