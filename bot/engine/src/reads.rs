//! Reads of the GitHub state evidence is judged by, shared by the engine and `navin mcp`: every check run on a commit, and a step's merge the ledger has not heard of.

use navin_github::{ops, GitHubError, InstallationClient};

use navin_ledger::{Operation, Task};

use crate::config::{DoneOn, Drafts};
use crate::evidence::{CheckObservation, CheckRunList, EvidencePolicy};

/// Pages of check runs read per commit (100 each): more than any real CI reports.
const MAX_CHECK_PAGES: u32 = 10;

/// Every check run on `sha` in `repo` as the API has it now (not as a webhook said).
pub async fn check_runs(
    client: &InstallationClient,
    repo: &str,
    sha: &str,
) -> Result<Vec<CheckObservation>, GitHubError> {
    let mut out = Vec::new();
    for page in 1..=MAX_CHECK_PAGES {
        let path = ops::check_runs_all(repo, sha, page);
        let list: CheckRunList = client.get_json(&path).await?;
        let got = list.check_runs.len();
        out.extend(list.check_runs.iter().map(CheckObservation::from_check_run));
        if got < 100 || out.len() as u64 >= list.total_count {
            break;
        }
    }
    Ok(out)
}

/// Annotations read per failing check: a reporter's first failures name the failure.
pub const ANNOTATIONS_READ: u32 = 50;

pub use crate::evidence::annotation::{annotation_lines, Annotation};

/// The first [`ANNOTATIONS_READ`] annotations of a check run as [`annotation_lines`],
/// for its failure fingerprint. One request.
pub async fn annotation_messages(
    client: &InstallationClient,
    repo: &str,
    run_id: u64,
) -> Result<Vec<String>, GitHubError> {
    let path = ops::check_run_annotations(repo, run_id, ANNOTATIONS_READ);
    let list: Vec<Annotation> = client.get_json(&path).await?;
    Ok(annotation_lines(&list))
}

/// Under `evidence.drafts: wait`, the number of `task`'s pull request while it is an
/// open draft, so CI on it is held; `None` otherwise, without a request when nothing
/// could be held (no pull request, already merged, or drafts counted). Read from the
/// API rather than remembered, so a `converted_to_draft` webhook that never came
/// changes nothing.
pub async fn open_draft(
    client: &InstallationClient,
    repo: &str,
    task: &Task,
    policy: &EvidencePolicy,
) -> Result<Option<u64>, GitHubError> {
    let Some(&number) = task.links.prs.last() else {
        return Ok(None);
    };
    if policy.drafts != Drafts::Wait || task.links.merged_pr.is_some() {
        return Ok(None);
    }
    let path = ops::pull_request(repo, number);
    let pr: crate::event::PullRequest = client.get_json(&path).await?;
    let open = pr.state.as_deref() != Some("closed");
    Ok((open && pr.draft == Some(true)).then_some(number))
}

/// With `done_on: merged`, the `merged` operation for `task` when its pull request is
/// merged on GitHub but not on the ledger (the `closed` webhook was lost); `None`
/// otherwise, without a request when there is nothing to ask.
pub async fn unrecorded_merge(
    client: &InstallationClient,
    repo: &str,
    task: &Task,
    policy: &EvidencePolicy,
) -> Result<Option<Operation>, GitHubError> {
    let Some(&number) = task.links.prs.last() else {
        return Ok(None);
    };
    if policy.done_on != DoneOn::Merged || task.links.merged_pr.is_some() {
        return Ok(None);
    }
    let path = ops::pull_request(repo, number);
    let pr: crate::event::PullRequest = client.get_json(&path).await?;
    if pr.merged != Some(true) && pr.merged_at.is_none() {
        return Ok(None);
    }
    Ok(Some(Operation::Merged {
        step: task.id.clone(),
        pr: number,
        head_sha: pr.head.sha.trim().to_owned(),
    }))
}
