//! `navin_sweep`: Navin's own clock tick for one repository, so the waits of the closed agent loop (`agents.idle_after`, `agents.timeout`) and due question defaults fire without a webhook.
//!
//! The server enqueues one per repository with a live mission every sweep interval
//! (into the same queue as webhooks, so it runs in the repository's order); the Action
//! turns a `schedule` run into one. Nothing is written unless something is due or the
//! ledger moved since the last tick (then the panel is brought up to date).

use crate::features::board::read_ledger;
use crate::features::dispatch::dispatch_ready;
use crate::features::panel::{panel_issue, refresh_panel};
use crate::features::EventOrigin;
use crate::features::RepoCtx;
use crate::token_scope::Need;
use crate::{Engine, EngineError, Inbound};
use navin_domain::event::SweepEvent;

pub(crate) async fn on_sweep(
    engine: &Engine,
    event: &SweepEvent,
    inbound: &Inbound,
) -> Result<(), EngineError> {
    let installation = inbound.delivery.installation()?;
    let mut repository = event.repository.clone();
    if repository.default_branch.is_none() {
        // The Action's tick names only the repository; dispatches need the real branch.
        let client = engine.github.installation(installation);
        let path = navin_github::ops::repository(&repository.full_name);
        let found: navin_domain::event::Repository = client.get_json(&path).await?;
        repository.default_branch = found.default_branch;
        repository.id = repository.id.or(found.id);
    }
    let cx = RepoCtx::open(
        engine,
        inbound,
        Need::Write,
        installation,
        &repository,
        EventOrigin::navin(),
    )
    .await?;
    if cx.config_error.is_some() {
        return Ok(());
    }
    let ledger = match read_ledger(&cx).await {
        Ok(Some(ledger)) => ledger,
        Ok(None) => {
            engine.sweeps.forget(&event.repository.full_name);
            return Ok(());
        }
        // A branch Navin will not build on (a forged commit, a rewound history)
        // stays so until a person acts, and their command re-tracks the repository:
        // ticking meanwhile would fail a delivery every interval.
        Err(e) if matches!(e.refusal(), Some(crate::error::LedgerRefusal::Branch(_))) => {
            tracing::warn!(repo = %event.repository.full_name, error = %e, "the ledger branch is refused; sweeps of this repository stop until a command reads it again");
            engine.sweeps.forget(&event.repository.full_name);
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let after = dispatch_ready(&cx, ledger).await;
    // Changed by this tick, or since the last one by a writer that sends no webhook.
    let moved = engine
        .sweeps
        .moved(&event.repository.full_name, after.mission.version);
    if moved && panel_issue(&cx, &after) != 0 {
        refresh_panel(&cx, &after).await?;
    }
    Ok(())
}
