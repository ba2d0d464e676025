//! CI evidence in the engine: the runs on a head re-read from the API, the linked steps judged with the shared evidence policy, and the outcome written to the ledger.

use super::board::{read_ledger, transact, transact_in};
use super::dispatch::refresh_panel_of;
use super::pulls::changed_files;
use super::{EngineError, RepoCtx};
use navin_domain::evidence::{
    policy_from, pr_to_merge, steps_on_head, CheckObservation, ConclusionClass, RunKind,
    WorkflowRunPayload,
};
use navin_github::ops;
use navin_ledger::{Actor, Effect, Ledger, MissionStatus, TaskStatus};
use std::collections::{HashMap, HashSet, VecDeque};

/// Red checks whose annotations one round reads (one request each).
const ANNOTATED_CHECKS: usize = 2;

/// The actor the ledger names for what CI proved.
pub(crate) fn ci_actor() -> Actor {
    Actor::App("navin".to_owned())
}

/// What a completion webhook says, before anything is read from the API.
#[derive(Debug, Clone)]
pub(crate) struct Completion {
    pub head_sha: String,
    /// The app that created the run or suite (`None` is never trusted).
    pub app_id: Option<u64>,
    /// `success`, `failure`, … as the payload has it.
    pub conclusion: Option<String>,
    /// The run that completed; `None` for a check suite.
    pub run: Option<(RunKind, u64)>,
}

impl Completion {
    /// Only a green or red completion can change a step: skipped, neutral,
    /// cancelled and the like are not green and spend no attempt.
    fn can_change_a_step(&self) -> bool {
        matches!(
            self.class(),
            Some(ConclusionClass::Green | ConclusionClass::Red)
        )
    }

    fn class(&self) -> Option<ConclusionClass> {
        self.conclusion
            .as_deref()
            .map(|c| navin_domain::evidence::Conclusion::parse(c).class())
    }
}

/// Whether the mission takes step operations now (paused and draft missions do not).
pub(crate) fn takes_step_operations(ledger: &Ledger) -> bool {
    matches!(
        ledger.mission.status,
        MissionStatus::Running | MissionStatus::Blocked
    )
}

/// An engine error on an event with nobody to reply to: a refused rule is logged
/// (and reported) and the event is done; every other error goes up as it is.
pub(crate) fn settle(
    cx: &RepoCtx<'_>,
    result: Result<(), EngineError>,
    event: &str,
) -> Result<(), EngineError> {
    match result {
        Err(e) => match e.refusal() {
            Some(reason) => {
                tracing::warn!(event, %reason, "the ledger refused the change");
                cx.report.engine("write the ledger", &e);
                Ok(())
            }
            None => Err(e),
        },
        ok => ok,
    }
}

/// A completed check run, check suite or workflow run. Nothing is read from
/// the API unless a step of the live mission is linked to the head; then the
/// runs are re-read (`check-runs?filter=all`, and the workflow run itself)
/// and the linked steps judged.
pub(crate) async fn on_completion(cx: &RepoCtx<'_>, done: Completion) -> Result<(), EngineError> {
    if let Some(invalid) = &cx.config_error {
        tracing::warn!(repo = %cx.repo, %invalid, "invalid config: CI evidence ignored");
        return Ok(());
    }
    let config = &cx.config;
    let policy = policy_from(config);
    if !policy.trusts(done.app_id) {
        tracing::debug!(repo = %cx.repo, app = ?done.app_id, "run from an untrusted app: ignored");
        return Ok(());
    }
    if !done.can_change_a_step() {
        tracing::debug!(repo = %cx.repo, conclusion = ?done.conclusion, "not green and not red: ignored");
        return Ok(());
    }
    let Some(ledger) = read_ledger(cx).await? else {
        return Ok(());
    };
    if !takes_step_operations(&ledger) {
        return Ok(());
    }
    // A red run cannot move a step that already failed on this head.
    let red = done.class() == Some(ConclusionClass::Red);
    let linked = steps_on_head(&ledger.board, &done.head_sha);
    if linked.iter().all(|t| red && t.status == TaskStatus::Failed) {
        return Ok(());
    }
    // The run that completed first (a workflow run is read by its own endpoint),
    // then every run on the head.
    let workflow = match done.run {
        Some((RunKind::WorkflowRun, id)) => Some(workflow_run(cx, id).await?),
        _ => None,
    };
    let mut runs = check_runs(cx, &done.head_sha).await?;
    let this = match done.run {
        Some((RunKind::WorkflowRun, _)) => {
            let fresh = workflow;
            runs.extend(fresh.clone());
            fresh
        }
        Some((RunKind::CheckRun, id)) => runs
            .iter()
            .find(|r| r.kind == RunKind::CheckRun && r.id == id)
            .cloned(),
        None => None,
    };
    let (ledger, written) = judge(cx, ledger, &done.head_sha, runs, this.as_ref()).await?;
    if written || cx.delivery.is_retry() {
        refresh_panel_of(cx, &ledger).await?;
    }
    Ok(())
}

/// Judges every movable step linked to `head` with `runs` (the runs on that
/// head), writes each decision, and follows steps that the writes made ready
/// (a dependent already green on its own head is done right after its
/// dependency). Returns the newest ledger and whether anything was written.
pub(crate) async fn judge(
    cx: &RepoCtx<'_>,
    mut ledger: Ledger,
    head: &str,
    runs: Vec<CheckObservation>,
    this: Option<&CheckObservation>,
) -> Result<(Ledger, bool), EngineError> {
    let policy = policy_from(&cx.repo_config());
    let mut by_head: HashMap<String, Vec<CheckObservation>> = HashMap::new();
    by_head.insert(head.trim().to_ascii_lowercase(), runs);
    let mut queue: VecDeque<String> = steps_on_head(&ledger.board, head)
        .iter()
        .map(|t| t.id.clone())
        .collect();
    let mut seen = HashSet::new();
    // Steps Navin merged during this judgement: judged again as merged, under op ids of
    // their own (the first judgement's ids are in the history already).
    let mut merged_here: HashSet<String> = HashSet::new();
    let mut written = false;
    while let Some(id) = queue.pop_front() {
        if !seen.insert(id.clone()) || !takes_step_operations(&ledger) {
            continue;
        }
        let Some(task) = ledger.board.task(&id) else {
            continue;
        };
        let Some(sha) = task.links.head_sha.as_deref().map(str::trim) else {
            continue;
        };
        let judged_head = sha.to_owned();
        if !(task.validation.needs_run() || task.has_acceptance()) {
            continue;
        }
        let key = sha.to_ascii_lowercase();
        if !by_head.contains_key(&key) {
            let fetched = check_runs(cx, sha).await?;
            by_head.insert(key.clone(), fetched);
        }
        let runs = by_head.get(&key).map(Vec::as_slice).unwrap_or_default();
        let this = this.filter(|r| r.head_sha.trim().eq_ignore_ascii_case(sha));
        let on = crate::reads::judge_step_on_github(
            &cx.client,
            &cx.repo,
            task,
            &ledger.board,
            runs,
            this,
            &policy,
            cx.now(),
        )
        .await?;
        let draft = on.draft;
        let navin_domain::evidence::Judged { verdict, decision } = on.judged.clone();
        tracing::info!(repo = %cx.repo, step = %id, "{}", decision.describe(&id));
        // The round goes on the progress ledger first (stall, loop, fingerprint); if
        // it escalated (a replan, a pause), the decision it was made with is stale.
        // Only a step in progress counts rounds: a done or waiting step's extra checks
        // would write commits that change nothing, and a draft's are work in progress.
        let round = match task.status == TaskStatus::InProgress && !draft {
            true => {
                let annotated = with_annotations(cx, runs, &verdict).await?;
                let round = navin_domain::evidence::ci_round(sha, &verdict, &annotated, &policy);
                match round {
                    Some(round) if !round.red.is_empty() => {
                        Some(with_changed(cx, round, task).await?)
                    }
                    other => other,
                }
            }
            false => None,
        };
        if let Some(round) = round {
            let status = task.status;
            let op_id = format!(
                "{}#{id}{}#round",
                cx.delivery.id,
                pass_tag(&merged_here, &id)
            );
            let op = navin_ledger::Operation::CiRound(round, id.clone());
            if let Some((after, _)) = transact(cx, op, &op_id, ci_actor()).await? {
                ledger = after;
                written = true;
            }
            let moved = ledger.board.task(&id).map(|t| t.status) != Some(status);
            if moved || !takes_step_operations(&ledger) {
                continue;
            }
        }
        for (i, op) in decision.operations(&id).into_iter().enumerate() {
            let op_id = format!("{}#{id}{}#{i}", cx.delivery.id, pass_tag(&merged_here, &id));
            // A `done` is written with the change it was judged on.
            let ctx = on.ctx(cx.ledger_ctx(ci_actor(), &op_id));
            if let Some((after, effects)) = transact_in(cx, op, ctx).await? {
                ledger = after;
                written = true;
                for effect in effects {
                    if let Effect::NowReady { steps } = effect {
                        queue.extend(steps);
                    }
                }
            }
        }
        // `evidence.merge`: a step that waits only for its merge is merged by Navin at
        // the head it was judged on, recorded, and judged again as merged.
        let method = cx.repo_config().evidence.merge.as_api();
        let due = match (method, draft, ledger.board.task(&id)) {
            (Some(method), false, Some(task)) => {
                pr_to_merge(task, &ledger.board, &verdict, &policy).map(|pr| (pr, method))
            }
            _ => None,
        };
        if let Some((pr, method)) = due {
            if let Some(after) = merge_step(cx, &id, pr, &judged_head, method).await? {
                ledger = after;
                written = true;
                seen.remove(&id);
                merged_here.insert(id.clone());
                queue.push_front(id);
            }
        }
    }
    Ok((ledger, written))
}

/// The op-id tag of a step's judgement: empty the first time, `#merged` once Navin
/// merged its pull request in this judgement.
fn pass_tag(merged_here: &HashSet<String>, id: &str) -> &'static str {
    if merged_here.contains(id) {
        "#merged"
    } else {
        ""
    }
}

/// Merges pull request `pr` of step `id` at `head` by `method` and records the merge.
/// `None` when GitHub refused it (branch protection, a conflict, a head that moved):
/// logged, and the step waits for a person as it would without `evidence.merge`. A
/// retried delivery whose first try merged finds the pull request merged at `head` and
/// records it.
async fn merge_step(
    cx: &RepoCtx<'_>,
    id: &str,
    pr: u64,
    head: &str,
    method: &str,
) -> Result<Option<Ledger>, EngineError> {
    let request = ops::merge_pull_request(&cx.repo, pr, head, method);
    match cx.client.write_idempotent(request).await {
        Ok(_) => {}
        Err(e) if matches!(e.status(), Some(405 | 409 | 422)) => {
            let path = ops::pull_request(&cx.repo, pr);
            let pull: navin_domain::event::PullRequest = cx.client.get_json(&path).await?;
            let merged_at_head = pull.merged == Some(true) && pull.head.sha.trim() == head;
            if !merged_at_head {
                tracing::warn!(repo = %cx.repo, step = id, pr, error = %e, "evidence.merge: GitHub did not merge the pull request; it waits for a person");
                cx.report.github("merge a step's pull request", &e);
                return Ok(None);
            }
        }
        // The token cannot merge (`contents: write`): the rest of the event stands; the
        // report names the permission (the Action fails the job with it).
        Err(e) if e.missing_permission().is_some() => {
            cx.report.github("merge a step's pull request", &e);
            return Ok(None);
        }
        Err(e) => return Err(e.into()),
    }
    let op = navin_ledger::Operation::Merged {
        step: id.to_owned(),
        pr,
        head_sha: head.to_owned(),
    };
    let op_id = format!("{}#{id}#merge", cx.delivery.id);
    Ok(transact(cx, op, &op_id, ci_actor()).await?.map(|(l, _)| l))
}

/// A red round with what the step's pull request changes, file by file (one more
/// request a red round): the failed attempt keeps it, so the next brief says what
/// was tried. A step without a pull request keeps the round as it is.
async fn with_changed(
    cx: &RepoCtx<'_>,
    mut round: navin_ledger::model::CiRound,
    task: &navin_ledger::model::Task,
) -> Result<navin_ledger::model::CiRound, EngineError> {
    let Some(&pr) = task.links.prs.last() else {
        return Ok(round);
    };
    let files = changed_files(cx, pr).await?;
    round.changed = files
        .into_iter()
        .take(navin_ledger::model::CHANGED_MAX)
        .map(|f| navin_ledger::model::FileDelta {
            path: f.path,
            additions: f.additions,
            deletions: f.deletions,
        })
        .collect();
    Ok(round)
}

/// `runs` with the annotations of the red required checks appended to their output,
/// so the failure's fingerprint sees the failing tests a reporter annotated. At most
/// [`ANNOTATED_CHECKS`] checks are read, one request each, and only those that have
/// annotations: a round stays a handful of requests.
async fn with_annotations(
    cx: &RepoCtx<'_>,
    runs: &[CheckObservation],
    verdict: &navin_domain::evidence::Verdict,
) -> Result<Vec<CheckObservation>, EngineError> {
    let mut runs = runs.to_vec();
    let navin_domain::evidence::Verdict::Red { failed, .. } = verdict else {
        return Ok(runs);
    };
    let ids: Vec<u64> = failed.iter().map(|f| f.run_id).collect();
    let mut read = 0;
    for run in runs.iter_mut().filter(|r| ids.contains(&r.id)) {
        if run.annotations == 0 || run.kind != RunKind::CheckRun || read == ANNOTATED_CHECKS {
            continue;
        }
        read += 1;
        let messages = crate::reads::annotation_messages(&cx.client, &cx.repo, run.id).await?;
        for message in messages {
            run.output.push('\n');
            run.output.push_str(&message);
        }
    }
    Ok(runs)
}

/// Every check run on `sha`, newest states included (`filter=all`: the default
/// `latest` can hide a queued re-run), paged up to `total_count`.
pub(crate) async fn check_runs(
    cx: &RepoCtx<'_>,
    sha: &str,
) -> Result<Vec<CheckObservation>, EngineError> {
    Ok(crate::reads::check_runs(&cx.client, &cx.repo, sha).await?)
}

/// The workflow run as the API has it now (the webhook only says which one).
async fn workflow_run(cx: &RepoCtx<'_>, id: u64) -> Result<CheckObservation, EngineError> {
    let path = ops::workflow_run(&cx.repo, id);
    let run: WorkflowRunPayload = cx.client.get_after_webhook(&path).await?.json(&path)?;
    Ok(CheckObservation::from_workflow_run(&run))
}
