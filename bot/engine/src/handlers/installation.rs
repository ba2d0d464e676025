//! `installation` and `installation_repositories` events: newly reachable repositories get their config read and, with a ledger already there, their panel refreshed; repositories Navin lost lose their clones and cached entries.

use crate::features::blocking;
use crate::features::board::read_ledger;
use crate::features::panel::refresh_panel;
use crate::features::EventOrigin;
use crate::features::RepoCtx;
use crate::token_scope::Need;
use crate::{Engine, EngineError, Inbound};
use navin_domain::event::{InstallationEvent, InstalledRepository, Repository};
use navin_domain::rules::installation::{installation_work, web_base, MAX_WARMED_PER_EVENT};

pub(crate) async fn on_installation(
    engine: &Engine,
    event: &InstallationEvent,
    repositories_event: bool,
    inbound: &Inbound,
) -> Result<(), EngineError> {
    let installation = event.installation.id;
    let work = installation_work(event, repositories_event);
    if work.forget_grant {
        engine.grants.forget(installation);
    }
    // Forgetting needs no GitHub call: a deleted installation mints no token.
    for repo in &work.forget {
        forget_repository(engine, &repo.full_name).await?;
    }
    if work.not_warmed > 0 {
        tracing::info!(
            installation,
            warmed = work.warm.len(),
            not_warmed = work.not_warmed,
            cap = MAX_WARMED_PER_EVENT,
            "installation event: repositories past the cap are warmed on their first event"
        );
    }
    let base = web_base(event);
    for repo in &work.warm {
        // One repository that cannot be read does not hold up the others; each is
        // warmed again by its own next event anyway.
        let html_url = base.as_ref().map(|b| format!("{b}/{}", repo.full_name));
        if let Err(e) = warm_repository(engine, installation, repo, html_url, inbound).await {
            tracing::warn!(installation, repo = %repo.full_name, error = %e, "cannot warm the repository");
            inbound
                .report
                .engine("warm a newly installed repository", &e);
        }
    }
    Ok(())
}

/// The repository's clones and every cached entry about it go.
async fn forget_repository(engine: &Engine, full_name: &str) -> Result<(), EngineError> {
    engine.configs.forget(full_name);
    engine.permissions.forget(full_name);
    engine.protection.forget(full_name);
    engine.sweeps.forget(full_name);
    let data_dir = engine.config.data_dir.clone();
    let repo = full_name.to_owned();
    let removed = blocking(move || Ok(crate::clones::remove_clones(&data_dir, &repo)?)).await?;
    tracing::info!(
        repo = full_name,
        removed = removed.len(),
        "repository no longer installed: clones and caches dropped"
    );
    Ok(())
}

/// Reads the repository's config (one contents call, cached as every event's is)
/// and its ledger branch by git; when the branch holds a mission shown on an issue,
/// the panel is refreshed. The clone stays either way: removing an empty one here
/// could race the repository's first command, which may be creating it right now.
async fn warm_repository(
    engine: &Engine,
    installation: u64,
    repo: &InstalledRepository,
    html_url: Option<String>,
    inbound: &Inbound,
) -> Result<(), EngineError> {
    let repository = Repository {
        full_name: repo.full_name.clone(),
        id: repo.id,
        default_branch: None,
        html_url,
    };
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
        // Invalid config: nothing of the repository is touched until it is fixed.
        return Ok(());
    }
    let Some(ledger) = read_ledger(&cx).await? else {
        return Ok(());
    };
    if crate::effects::panel::panel_issue(&ledger, &repo.full_name).is_none() {
        return Ok(());
    }
    let done = refresh_panel(&cx, &ledger).await?;
    tracing::info!(repo = %repo.full_name, ?done, "installation event: mission panel refreshed");
    Ok(())
}
