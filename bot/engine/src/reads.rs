//! Reads of the GitHub state evidence is judged by, shared by the engine and `navin mcp`: every check run on a commit, and a step's merge the ledger has not heard of.

use navin_domain::config::{DoneOn, Drafts};
use navin_domain::evidence::{CheckObservation, CheckRunList, Decision, EvidencePolicy, Hold};
use navin_github::{ops, GitHubError, InstallationClient};
use navin_ledger::plan::policy::ChangedFile;
use navin_ledger::{close_step, Actor, Change, ChangeFrom, Ctx, Operation, Task};

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

pub use navin_domain::evidence::annotation::{annotation_lines, Annotation};

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

/// Pages of a pull request's files read at most (GitHub lists up to 3000 files, 100 a
/// page).
pub const MAX_FILE_PAGES: usize = 30;

/// The files pull request `number` changes, as the API lists them now, paged.
pub async fn pull_request_files(
    client: &InstallationClient,
    repo: &str,
    number: u64,
) -> Result<Vec<ChangedFile>, GitHubError> {
    let mut all = Vec::new();
    let mut next = Some(ops::pull_request_files(repo, number));
    let mut pages = 0;
    while let Some(path) = next {
        pages += 1;
        let page = client.get(&path).await?;
        let files: Vec<ChangedFile> = page.json(&path)?;
        all.extend(files);
        next = page.next_page().filter(|_| pages < MAX_FILE_PAGES);
    }
    Ok(all)
}

/// A step judged on GitHub: the judgement, whether an open draft held it, and the
/// change its pull request makes when the judgement would close it (what the ledger's
/// `done` is then applied with, see [`OnGitHub::ctx`]).
#[derive(Debug, Clone)]
pub struct OnGitHub {
    pub judged: navin_domain::evidence::Judged,
    pub draft: bool,
    pub change: Option<Change>,
    scope: navin_ledger::ScopePolicy,
}

impl OnGitHub {
    /// `ctx` with the pull request's change and `evidence.scope`, so the ledger's `done`
    /// checks the very change the judgement was made on, by the same rule.
    pub fn ctx(&self, ctx: Ctx) -> Ctx {
        let ctx = ctx.with_scope_policy(self.scope);
        match &self.change {
            Some(change) => ctx.with_change(change.clone()),
            None => ctx,
        }
    }
}

/// The one judgement of a step on GitHub that a CI completion, `/done` and MCP
/// `board_done` all make: the runs on its head (`this`, the run that triggered the
/// look, among them) judged by the evidence policy; then, read from the API now (so a
/// `converted_to_draft` webhook that never came, or a force-push that emptied the
/// diff, changes nothing), what its pull request holds back: an open draft under
/// `evidence.drafts: wait`, and for a judgement that would close the step, whatever
/// [`close_step`] refuses of the pull request's change (no file changed; files outside
/// the step's scope under `evidence.scope: refuse`). The pull request is read only when
/// the judgement could move the step (it would close or fail it, or the step is in
/// progress), its files only when it would close a step that runs something.
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
) -> Result<OnGitHub, GitHubError> {
    let judged = navin_domain::evidence::judge_step(task, board, runs, this, policy, now);
    let movable = matches!(
        judged.decision,
        Decision::Done { .. } | Decision::Fail { .. }
    ) || task.status == navin_ledger::TaskStatus::InProgress;
    let mut on = OnGitHub {
        judged,
        draft: false,
        change: None,
        scope: policy.scope,
    };
    let Some(&number) = task.links.prs.last().filter(|_| movable) else {
        return Ok(on);
    };
    let drafts = policy.drafts == Drafts::Wait && task.links.merged_pr.is_none();
    let closing = on.judged.closes() && task.validation.needs_run();
    if !drafts && !closing {
        return Ok(on);
    }
    let path = ops::pull_request(repo, number);
    let pr: navin_domain::event::PullRequest = client.get_json(&path).await?;
    let open = pr.state.as_deref() != Some("closed");
    if drafts && open && pr.draft == Some(true) {
        on.judged = on.judged.held(Hold::Draft(number));
        on.draft = true;
        return Ok(on);
    }
    if !closing {
        return Ok(on);
    }
    // GitHub counts the changed files on the pull request itself; they are listed only
    // when the step has a scope to hold them to.
    let (changed_files, files) = match pr.changed_files {
        Some(0) => (0, Vec::new()),
        Some(n) if task.scope.is_empty() => (n, Vec::new()),
        counted => {
            let files = pull_request_files(client, repo, number).await?;
            (counted.unwrap_or(files.len() as u64), files)
        }
    };
    let change = Change {
        base: pr.base.sha.trim().to_owned(),
        head: pr.head.sha.trim().to_owned(),
        files: files.into_iter().map(|f| f.path).collect(),
        from: ChangeFrom::PullRequest {
            number,
            changed_files,
        },
    };
    let ctx = Ctx::new(now, Actor::App("navin".to_owned()))
        .with_scope_policy(policy.scope)
        .with_change(change.clone());
    let given = match &on.judged.decision {
        Decision::Done { evidence, .. } => evidence.first(),
        _ => None,
    };
    match close_step(task, given, &ctx) {
        Ok(_) => on.change = Some(change),
        Err(refused) => {
            on.judged = on.judged.held(Hold::Refused {
                pr: number,
                why: refused,
            })
        }
    }
    Ok(on)
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
    let pr: navin_domain::event::PullRequest = client.get_json(&path).await?;
    if pr.merged != Some(true) && pr.merged_at.is_none() {
        return Ok(None);
    }
    Ok(Some(Operation::Merged {
        step: task.id.clone(),
        pr: number,
        head_sha: pr.head.sha.trim().to_owned(),
    }))
}
