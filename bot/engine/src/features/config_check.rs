//! The `navin/config` check on a pull request that changes `.github/navin.yml`: the file at the head, checked by the same parser the App uses, reported on the head SHA.

use super::plan_file::file_at;
use super::plan_types::PullInfo;
use super::{EngineError, RepoCtx};
use crate::cache::repo_config::{off_workers, too_slow, CONFIG_PATH};
use crate::effects::plan_check::{self, Target};
use navin_domain::rules::config_check::{config_change, config_check, ConfigChange, CHECK_NAME};
use navin_ledger::plan::policy::ChangedFile;

/// Checks the head's `.github/navin.yml` when `files` (the files list the gate reads
/// anyway) touch it; a pull request that leaves the file alone gets no check. Costs
/// one contents read and the check's find-then-write, nothing more.
pub(crate) async fn sync_config_check(
    cx: &RepoCtx<'_>,
    pr: &PullInfo,
    files: &[ChangedFile],
) -> Result<(), EngineError> {
    let Some(change) = config_change(files) else {
        return Ok(());
    };
    let read = match change {
        ConfigChange::Changed => Some(file_at(cx, CONFIG_PATH, &pr.head_sha).await?),
        ConfigChange::Removed => None,
    };
    let (sha, branch) = (pr.head_sha.clone(), cx.default_branch.clone());
    let checked = off_workers(move || {
        let head = match &read {
            Some(Ok(text)) => Ok(text.as_str()),
            Some(Err(why)) => Err(why.as_str()),
            None => Err("removed"),
        };
        config_check(change, head, &sha, &branch)
    })
    .await;
    let check = checked.unwrap_or_else(|| {
        config_check(change, Err(&too_slow()), &pr.head_sha, &cx.default_branch)
    });
    let target = Target {
        repo: &cx.repo,
        sha: &pr.head_sha,
        name: CHECK_NAME,
    };
    let done = plan_check::sync_named(&cx.client, target, &check, pr.html_url.as_deref(), "config")
        .await?;
    tracing::info!(repo = %cx.repo, pr = pr.number, ?done, conclusion = check.conclusion(), "navin/config check");
    Ok(())
}
