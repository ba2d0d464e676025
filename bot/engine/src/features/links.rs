//! Step links from pull requests: the step a PR names (`Navin-Step:` line or `navin/<step>-…` branch) follows the PR's head, so only runs on that head count.

use super::board::{read_ledger, transact};
use super::ci::{check_runs, ci_actor, judge, takes_step_operations};
use super::dispatch::refresh_panel_of;
use super::{EngineError, RepoCtx};
use navin_domain::event::is_commit_sha;
use navin_domain::event::PullRequestEvent;
use navin_domain::evidence::step_from_pr_in;
use navin_ledger::{Actor, Ledger, Operation, TaskStatus};

pub(crate) async fn link_pull(
    cx: &RepoCtx<'_>,
    event: &PullRequestEvent,
    actor: Actor,
) -> Result<(), EngineError> {
    if cx.config_error.is_some() {
        return Ok(());
    }
    let pr = &event.pull_request;
    let sha = pr.head.sha.trim();
    if !is_commit_sha(sha) {
        return Ok(());
    }
    let Some(ledger) = read_ledger(cx).await? else {
        return Ok(());
    };
    if !takes_step_operations(&ledger) {
        return Ok(());
    }
    let body = pr.body.as_deref().unwrap_or("");
    let Some(step) = step_from_pr_in(body, &pr.head.name, &ledger.board) else {
        return Ok(());
    };
    let Some(task) = ledger.board.task(&step) else {
        return Ok(());
    };
    if !may_link(cx, pr).await? {
        tracing::info!(repo = %cx.repo, step = %step, pr = pr.number, author = %pr.user.login, "a pull request from a fork by someone without write access cannot link a step");
        return Ok(());
    }
    if task.status == TaskStatus::Done {
        // Relinking would drop the runs that proved it.
        tracing::info!(repo = %cx.repo, step = %step, pr = pr.number, "step already done: link left as it is");
        return Ok(());
    }
    let same_head = task
        .links
        .head_sha
        .as_deref()
        .is_some_and(|h| h.eq_ignore_ascii_case(sha));
    let unchanged = same_head
        && task.links.prs.contains(&pr.number)
        && task.links.branch.as_deref() == Some(pr.head.name.as_str());
    let mut ledger = ledger;
    let mut written = false;
    if !unchanged {
        let op = Operation::Link {
            step: step.clone(),
            pr: Some(pr.number),
            head_sha: Some(sha.to_owned()),
            branch: Some(pr.head.name.clone()),
        };
        let op_id = format!("{}#{step}", cx.delivery.id);
        if let Some((after, _)) = transact(cx, op, &op_id, actor.clone()).await? {
            ledger = after;
            written = true;
        }
    }
    if let Some(after) = retry_on_new_head(cx, &ledger, &step, actor.clone()).await? {
        ledger = after;
        written = true;
    }
    // The PR is the step's work in flight: in progress, out of the ready queue.
    // A step whose dependencies are open stays planned: nothing to write.
    let claimable = ledger.board.task(&step).is_some_and(|t| {
        (t.status == TaskStatus::Planned
            && navin_domain::evidence::pending_dependencies(t, &ledger.board).is_empty())
            || (t.status == TaskStatus::InProgress
                && ledger.mission.progress.next_actor != author_actor(&pr.user))
    });
    if claimable {
        let op = Operation::Claim {
            step: step.clone(),
            pr: pr.number,
            by: author_actor(&pr.user),
        };
        let op_id = format!("{}#{step}#claim", cx.delivery.id);
        if let Some((after, _)) = transact(cx, op, &op_id, actor).await? {
            ledger = after;
            written = true;
        }
    }
    // Runs may have finished on this head before the PR named the step, or while
    // it was a draft (`evidence.drafts: wait` held them).
    if !same_head || event.action == "ready_for_review" {
        let needs_runs = ledger
            .board
            .task(&step)
            .is_some_and(|t| t.validation.needs_run() || t.has_acceptance());
        if needs_runs {
            let runs = check_runs(cx, sha).await?;
            let (after, judged) = judge(cx, ledger, sha, runs, None).await?;
            ledger = after;
            written |= judged;
        }
    }
    if written || cx.delivery.is_retry() {
        refresh_panel_of(cx, &ledger).await?;
    }
    Ok(())
}

/// A linked pull request closed. Merged: the merge is recorded and the runs on its
/// final head are read again and judged, so a step waiting for the merge is done now
/// if they are green. Unmerged: one failed attempt of the step it carried (retries,
/// then a local replan, then a pause, as the budget says); the link stays, so a
/// reopened PR takes the step up again.
pub(crate) async fn closed_pull(
    cx: &RepoCtx<'_>,
    event: &PullRequestEvent,
    actor: Actor,
) -> Result<(), EngineError> {
    if cx.config_error.is_some() {
        return Ok(());
    }
    let pr = &event.pull_request;
    let sha = pr.head.sha.trim();
    let Some(ledger) = read_ledger(cx).await? else {
        return Ok(());
    };
    if !takes_step_operations(&ledger) {
        return Ok(());
    }
    // Only the step this PR carries: the one linked to it.
    let Some(task) = ledger
        .board
        .tasks
        .iter()
        .find(|t| t.links.prs.last() == Some(&pr.number))
    else {
        return Ok(());
    };
    let step = task.id.clone();
    let mut ledger = ledger.clone();
    let mut written = false;
    if pr.merged == Some(true) {
        if !is_commit_sha(sha) || task.status == TaskStatus::Done {
            return Ok(());
        }
        let op = Operation::Merged {
            step: step.clone(),
            pr: pr.number,
            head_sha: sha.to_owned(),
        };
        let op_id = format!("{}#{step}#merged", cx.delivery.id);
        if let Some((after, _)) = transact(cx, op, &op_id, ci_actor()).await? {
            ledger = after;
            written = true;
        }
        let runs = check_runs(cx, sha).await?;
        let (after, judged) = judge(cx, ledger, sha, runs, None).await?;
        ledger = after;
        written |= judged;
    } else {
        let open = matches!(task.status, TaskStatus::Planned | TaskStatus::InProgress);
        // A pull request the next attempt does not build on (Navin closes it as that
        // attempt starts over; a replan dropped it) ends nothing more: the open
        // attempt, if any, works elsewhere.
        let dropped = task
            .attempts
            .iter()
            .rev()
            .find(|a| a.pr == Some(pr.number))
            .is_some_and(|a| {
                !a.is_open()
                    && (a.start_over || a.outcome == Some(navin_ledger::AttemptOutcome::Replanned))
            });
        if !open || dropped || task.links.merged_pr.is_some() {
            return Ok(());
        }
        let op = Operation::Fail {
            step: step.clone(),
            evidence: None,
            reason: format!("pull request #{} was closed without merging", pr.number),
            outcome: navin_ledger::AttemptOutcome::Closed,
        };
        let op_id = format!("{}#{step}#closed", cx.delivery.id);
        if let Some((after, _)) = transact(cx, op, &op_id, actor).await? {
            ledger = after;
            written = true;
        }
    }
    if written || cx.delivery.is_retry() {
        refresh_panel_of(cx, &ledger).await?;
    }
    Ok(())
}

/// Whether this PR may carry a step. A head branch in this repository was pushed by
/// someone with write access; a fork's head was not, and its CI runs green on
/// whatever the fork wrote, so a fork PR links only when its author is a writer.
/// Otherwise anyone could move a step's head to their own code and close it.
async fn may_link(
    cx: &RepoCtx<'_>,
    pr: &navin_domain::event::PullRequest,
) -> Result<bool, EngineError> {
    let same_repo = pr
        .head
        .repo
        .as_ref()
        .is_some_and(|r| r.full_name.eq_ignore_ascii_case(&cx.repo));
    if same_repo {
        return Ok(true);
    }
    let role = cx
        .engine
        .permissions
        .role(&cx.client, &cx.repo, &pr.user.login, pr.user.id)
        .await?;
    Ok(super::permission::may_mutate(&role))
}

/// A failed step whose new head has no failure of its own gets its next
/// attempt: the push is the fix the failure asked for. (A step out of
/// retries was already sent back to planned by the ledger.)
async fn retry_on_new_head(
    cx: &RepoCtx<'_>,
    ledger: &Ledger,
    step: &str,
    actor: Actor,
) -> Result<Option<Ledger>, EngineError> {
    let Some(task) = ledger.board.task(step) else {
        return Ok(None);
    };
    let head = task.links.head_sha.as_deref();
    let failed_here = task
        .evidence
        .iter()
        .any(|e| !e.ok && head.is_some() && e.head_sha.as_deref() == head);
    if task.status != TaskStatus::Failed || failed_here {
        return Ok(None);
    }
    let op = Operation::Retry {
        step: step.to_owned(),
    };
    let op_id = format!("{}#{step}#retry", cx.delivery.id);
    Ok(transact(cx, op, &op_id, actor).await?.map(|(l, _)| l))
}

/// Who works a step its pull request carries: an agent for a bot account (the Copilot
/// coding agent is `copilot-swe-agent[bot]`), a person otherwise.
fn author_actor(user: &navin_domain::event::User) -> navin_ledger::NextActor {
    let login = user.login.trim();
    let bot = user.kind.as_deref() == Some("Bot") || login.ends_with("[bot]");
    if bot {
        navin_ledger::NextActor::Subagent(login.trim_end_matches("[bot]").to_owned())
    } else {
        navin_ledger::NextActor::Human
    }
}
