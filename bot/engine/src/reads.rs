//! Reads of the GitHub state evidence is judged by, shared by the engine and `navin mcp`: every check run on a commit, and a step's merge the ledger has not heard of.

use navin_github::{ops, GitHubError, InstallationClient};

use navin_ledger::{Operation, Task};

use crate::config::{DoneOn, Drafts};
use crate::evidence::{CheckObservation, CheckRunList, EvidencePolicy, Hold};

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

/// What `task`'s pull request, read from the API now, holds back: under
/// `evidence.drafts: wait`, an open draft; and when the judgement would close a step
/// that runs something (`closing`), a pull request that changes no file. No request
/// when nothing could be held (no pull request, drafts counted and nothing closing).
/// Read rather than remembered, so a `converted_to_draft` webhook that never came, or
/// a force-push that emptied the diff, changes nothing.
pub async fn pr_hold(
    client: &InstallationClient,
    repo: &str,
    task: &Task,
    policy: &EvidencePolicy,
    closing: bool,
) -> Result<Option<Hold>, GitHubError> {
    let Some(&number) = task.links.prs.last() else {
        return Ok(None);
    };
    let drafts = policy.drafts == Drafts::Wait && task.links.merged_pr.is_none();
    let change = closing && task.validation.needs_run();
    if !drafts && !change {
        return Ok(None);
    }
    let path = ops::pull_request(repo, number);
    let pr: crate::event::PullRequest = client.get_json(&path).await?;
    let open = pr.state.as_deref() != Some("closed");
    if drafts && open && pr.draft == Some(true) {
        return Ok(Some(Hold::Draft(number)));
    }
    if change && pr.changed_files == Some(0) {
        return Ok(Some(Hold::NoChange(number)));
    }
    Ok(None)
}

/// The one judgement of a step on GitHub that a CI completion, `/done` and MCP
/// `board_done` all make: the runs on its head (`this`, the run that triggered the
/// look, among them) judged by the evidence policy, then held back by what its pull
/// request is now ([`pr_hold`]). The pull request is read only when the judgement could
/// move the step (it would close or fail it, or the step is in progress); returns
/// whether a draft held it, as a draft's red runs count no CI round either.
#[allow(clippy::too_many_arguments)]
pub async fn judge_step_on_github(
    client: &InstallationClient,
    repo: &str,
    task: &Task,
    board: &navin_ledger::Board,
    runs: &[CheckObservation],
    this: Option<&CheckObservation>,
    policy: &EvidencePolicy,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(crate::evidence::Judged, bool), GitHubError> {
    let judged = crate::evidence::judge_step(task, board, runs, this, policy, now);
    let movable = matches!(
        judged.decision,
        crate::evidence::Decision::Done { .. } | crate::evidence::Decision::Fail { .. }
    ) || task.status == navin_ledger::TaskStatus::InProgress;
    let hold = match movable {
        true => pr_hold(client, repo, task, policy, judged.closes()).await?,
        false => None,
    };
    let draft = matches!(hold, Some(Hold::Draft(_)));
    Ok((judged.held(hold), draft))
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
