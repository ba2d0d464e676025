//! The ledger as one event reads and writes it: the store for the repository, its reads, and every operation written under the event's op id.

use super::{blocking, EngineError, RepoCtx};
use crate::ledger;
use navin_ledger::store::{Committed, Reading, Store};
use navin_ledger::{Actor, Effect, Ledger, Operation};
use secrecy::ExposeSecret;
use std::sync::Arc;
/// The ledger store for this repository, with a fresh installation token for git.
pub(crate) async fn store(cx: &RepoCtx<'_>) -> Result<Arc<Store>, EngineError> {
    let token = cx.client.token().await?;
    let data_dir = cx.engine.config.data_dir.clone();
    let repo = cx.repo.clone();
    let url = cx.engine.github.git_remote_url(&cx.repo);
    let branch = cx.repo_config().ledger_branch.clone();
    let token = token.expose_secret().to_owned();
    let key = cx.engine.config.ledger_key.clone();
    let id = cx.repository_id;
    blocking(move || ledger::open_store(&data_dir, &repo, &url, &branch, token, key, id)).await
}

/// Writes one operation as `actor`. `None` when its op id is already in the
/// history (a redelivery): nothing was written.
pub(crate) async fn transact(
    cx: &RepoCtx<'_>,
    op: Operation,
    op_id: &str,
    actor: Actor,
) -> Result<Option<(Ledger, Vec<Effect>)>, EngineError> {
    let ctx = cx.ledger_ctx(actor, op_id);
    transact_in(cx, op, ctx).await
}

/// Writes one operation under `ctx` (see [`transact`]).
pub(crate) async fn transact_in(
    cx: &RepoCtx<'_>,
    op: Operation,
    ctx: navin_ledger::Ctx,
) -> Result<Option<(Ledger, Vec<Effect>)>, EngineError> {
    let store = store(cx).await?;
    blocking(move || match store.transact(&op, &ctx)? {
        Committed::Written {
            ledger, effects, ..
        } => Ok(Some((*ledger, effects))),
        Committed::AlreadyApplied { .. } => Ok(None),
    })
    .await
}

/// The command's operation as its author; on a redelivery, the ledger as it stands.
pub(crate) async fn land(
    cx: &RepoCtx<'_>,
    op: Operation,
    op_id: &str,
) -> Result<Ledger, EngineError> {
    let actor = Actor::Human(cx.origin.author.clone());
    match transact(cx, op, op_id, actor).await? {
        Some((ledger, _)) => Ok(ledger),
        None => read_ledger(cx)
            .await?
            .ok_or_else(|| EngineError::Internal("the ledger vanished after a write".into())),
    }
}

pub(crate) async fn read_ledger(cx: &RepoCtx<'_>) -> Result<Option<Ledger>, EngineError> {
    let store: Arc<Store> = store(cx).await?;
    blocking(move || Ok(store.read()?.map(|s| s.ledger))).await
}

/// [`read_ledger`] for the read-only answers (`/status`) and `/rollback`:
/// a tip holding a commit Navin refuses yields the state below it and the refusal.
pub(crate) async fn read_ledger_or_trusted(cx: &RepoCtx<'_>) -> Result<Reading, EngineError> {
    let store: Arc<Store> = store(cx).await?;
    blocking(move || store.read_or_trusted()).await
}
