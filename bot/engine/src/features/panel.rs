//! The mission panel one event writes: at once, or once at the end of a comment's commands with the newest ledger.

use super::comments::Upserted;
use super::PanelBatch;
use super::{EngineError, RepoCtx};
use navin_ledger::model::Ledger;

/// The issue carrying the mission's panel: its origin when it lives in this
/// repository, else the issue the command came from.
pub(crate) fn panel_issue(cx: &RepoCtx<'_>, ledger: &Ledger) -> u64 {
    crate::effects::panel::panel_issue(ledger, &cx.repo).unwrap_or(cx.origin.issue)
}

pub(crate) async fn refresh_panel(
    cx: &RepoCtx<'_>,
    ledger: &Ledger,
) -> Result<Upserted, EngineError> {
    {
        let mut batch = cx
            .panel_batch
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let PanelBatch::Deferred(due) = &mut *batch {
            *due = Some(Box::new(ledger.clone()));
            return Ok(Upserted::Unchanged);
        }
    }
    write_panel(cx, ledger).await
}

/// From here until [`flush_panel`], panel refreshes only note the newest
/// ledger: a comment of ten commands edits the panel once.
pub(crate) fn defer_panel(cx: &RepoCtx<'_>) {
    *cx.panel_batch
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = PanelBatch::Deferred(None);
}

/// Writes the panel of the newest ledger noted since [`defer_panel`], if any.
pub(crate) async fn flush_panel(cx: &RepoCtx<'_>) -> Result<(), EngineError> {
    let batch = std::mem::take(
        &mut *cx
            .panel_batch
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    if let PanelBatch::Deferred(Some(ledger)) = batch {
        write_panel(cx, &ledger).await?;
    }
    Ok(())
}

async fn write_panel(cx: &RepoCtx<'_>, ledger: &Ledger) -> Result<Upserted, EngineError> {
    let issue = panel_issue(cx, ledger);
    let mut ctx = navin_domain::render::PanelContext::new(cx.repo_ref());
    let config = cx.repo_config();
    let me = match &cx.admin_client {
        Some(admin) => Some((admin, cx.engine.me().await)),
        None => None,
    };
    let admin = me.as_ref().map(|(client, me)| (*client, me));
    if let Some(notice) = cx
        .engine
        .protection
        .notice(&cx.client, &cx.repo, &config.ledger_branch, admin)
        .await
    {
        ctx.notices.push(notice);
    }
    if config.dispatch.agent() == navin_domain::config::AgentKind::Copilot
        && cx.engine.agent_app().is_none()
    {
        ctx.notices.push(copilot_notice().to_owned());
    }
    Ok(crate::effects::panel::refresh_panel(&cx.client, &ctx, issue, ledger).await?)
}

/// The sentence the panel shows when steps should go to Copilot and cannot: said once,
/// on the panel, rather than per step or not at all.
pub(crate) fn copilot_notice() -> &'static str {
    "Steps go to the Copilot coding agent (`dispatch.agent: copilot`), but this Navin has no user token, so their issues are opened and not assigned. GitHub assigns issues to Copilot only for a user token: give Navin a fine-grained personal access token (or a GitHub App user-to-server token) with `--agent-token-file` on the server or the Action's `agent-token` input, or assign the step issues to Copilot by hand."
}
