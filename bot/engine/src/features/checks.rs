//! The `navin/plan` check run on a pull request, written to match a verdict.

use super::plan_types::PullInfo;
use super::{EngineError, RepoCtx};
use crate::effects::plan_check::{self, PlanCheck};

/// Writes the `navin/plan` check on the pull request's head to match `check`; the run
/// is found by `external_id` first, so a redelivery edits the run it made.
pub(crate) async fn sync_check(
    cx: &RepoCtx<'_>,
    pr: &PullInfo,
    check: &PlanCheck,
    external_id: &str,
) -> Result<(), EngineError> {
    let done = plan_check::sync(
        &cx.client,
        &cx.repo,
        &pr.head_sha,
        check,
        pr.html_url.as_deref(),
        external_id,
    )
    .await?;
    tracing::debug!(repo = %cx.repo, pr = pr.number, ?done, conclusion = check.conclusion(), "navin/plan check");
    Ok(())
}
