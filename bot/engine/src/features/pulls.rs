//! Pull request reads every feature shares: its reviews and its changed files.

use super::{EngineError, RepoCtx};
use navin_domain::rules::approvals::RestReview;
use navin_github::ops;
use navin_ledger::plan::policy::ChangedFile;

/// Every review of the pull request, oldest first.
pub(crate) async fn reviews(cx: &RepoCtx<'_>, number: u64) -> Result<Vec<RestReview>, EngineError> {
    let mut all = Vec::new();
    let mut next = Some(ops::pull_request_reviews(&cx.repo, number));
    while let Some(path) = next {
        let page = cx.client.get(&path).await?;
        let reviews: Vec<RestReview> = page.json(&path)?;
        all.extend(reviews);
        next = page.next_page();
    }
    Ok(all)
}

/// The files the pull request changes, paged.
pub(crate) async fn changed_files(
    cx: &RepoCtx<'_>,
    number: u64,
) -> Result<Vec<ChangedFile>, EngineError> {
    Ok(crate::reads::pull_request_files(&cx.client, &cx.repo, number).await?)
}
