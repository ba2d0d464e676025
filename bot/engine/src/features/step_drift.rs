//! Plan against actual for mission steps: a step's pull request held to the plan its mission came from (and to the step's stage), recorded on the step and shown on the PR's `navin/plan` check.

use super::board::{read_ledger, transact};
use super::checks::sync_check;
use super::ci::{check_runs, ci_actor, judge, takes_step_operations};
use super::dispatch::refresh_panel_of;
use super::plan_types::PullInfo;
use super::pulls::changed_files;
use super::records::read_plan_id;
use super::{EngineError, RepoCtx};
use crate::effects::plan_check::{CheckState, PlanCheck};
use navin_domain::config::PlanScope;
use navin_domain::render::plan_check::short;
use navin_domain::rules::drift::{step_drift, with_drift, Drift};
use navin_github::ops;
use navin_ledger::plan::policy::ChangedFile;
use navin_ledger::{Ledger, Operation, Task, TaskStatus};

/// The step pull request `number` carries: the open step it was linked to last, on
/// the head `head_sha`. A done step keeps what it was done with.
fn carried_step<'l>(ledger: &'l Ledger, number: u64, head_sha: &str) -> Option<&'l Task> {
    ledger.board.tasks.iter().map(|t| &**t).find(|t| {
        t.status != TaskStatus::Done
            && t.links.prs.last() == Some(&number)
            && t.links
                .head_sha
                .as_deref()
                .is_some_and(|h| h.trim().eq_ignore_ascii_case(head_sha.trim()))
    })
}

/// What the `navin/plan` check says about a step's pull request before its drift is
/// added (see [`with_drift`]): the mission's plan covers it, or it changes more.
pub(crate) fn step_base_check(step: &str, plan_id: &str, hash: &str, drift: &Drift) -> PlanCheck {
    let stage = drift
        .stage
        .map(|s| format!(" (stage {s})"))
        .unwrap_or_default();
    let (title, held_to) = if drift.is_empty() {
        (
            format!("Step {step} follows plan {plan_id}"),
            "It changes only files the plan proposes",
        )
    } else {
        (
            format!("Step {step} changes files outside plan {plan_id}"),
            "It is held to the plan's Proposed Changes",
        )
    };
    let scope = match drift.stage {
        Some(s) => format!("{held_to}, for stage {s}."),
        None => format!("{held_to}."),
    };
    PlanCheck {
        verdict: CheckState::Approved,
        title,
        summary: format!(
            "This pull request carries step `{step}`{stage} of the mission started from plan `{plan_id}` ({}). {scope}",
            short(hash)
        ),
        annotations: Vec::new(),
        // The mission's plan is approved already: nothing here to click.
        actions: Vec::new(),
    }
}

/// A step check and the ledger after recording its drift, when that wrote anything.
pub(crate) struct StepCheck {
    pub check: PlanCheck,
    pub written: Option<Ledger>,
}

/// For a pull request carrying a step of a mission started from a plan: the step's
/// `navin/plan` check, with the files outside the plan (or the step's stage)
/// recorded on the step. `files` is the PR's files list when the caller read it.
/// `None` when the PR carries no open step or the mission's plan is not on the ledger.
pub(crate) async fn step_check(
    cx: &RepoCtx<'_>,
    pr: &PullInfo,
    files: Option<&[ChangedFile]>,
) -> Result<Option<StepCheck>, EngineError> {
    let Some(ledger) = read_ledger(cx).await? else {
        return Ok(None);
    };
    let Some(task) = carried_step(&ledger, pr.number, &pr.head_sha) else {
        return Ok(None);
    };
    let Some(plan_id) = ledger
        .mission
        .origin
        .as_ref()
        .and_then(|o| o.plan_id.clone())
    else {
        return Ok(None);
    };
    let Some((record, doc)) = read_plan_id(cx, &plan_id).await? else {
        return Ok(None);
    };
    let read;
    let files = match files {
        Some(files) => files,
        None => {
            read = changed_files(cx, pr.number).await?;
            &read
        }
    };
    let scope = cx.repo_config().plan.scope;
    let drift = step_drift(doc.plan(), task.stage, files);
    let check = step_base_check(&task.id, &record.id, &record.hash, &drift);
    let check = with_drift(check, &record.id, &drift, scope);
    let step = task.id.clone();
    let written = record_drift(cx, &ledger, &step, &pr.head_sha, &drift, scope).await?;
    Ok(Some(StepCheck { check, written }))
}

/// Writes the step's drift on `head` when it differs from what the step shows.
/// Returns the ledger when something was written.
async fn record_drift(
    cx: &RepoCtx<'_>,
    ledger: &Ledger,
    step: &str,
    head: &str,
    drift: &Drift,
    scope: PlanScope,
) -> Result<Option<Ledger>, EngineError> {
    let wanted = drift.record(head, scope == PlanScope::Strict);
    let shown = ledger.board.task(step).and_then(|t| t.plan_drift.clone());
    if shown == wanted || !takes_step_operations(ledger) {
        return Ok(None);
    }
    let op = Operation::Drift {
        step: step.to_owned(),
        drift: wanted,
    };
    let op_id = format!("{}#{step}#drift", cx.delivery.id);
    Ok(transact(cx, op, &op_id, ci_actor())
        .await?
        .map(|(after, _)| after))
}

/// After plan `plan_id`'s text changed: every open pull request carrying a step of
/// the mission started from it is held to the new text, its check rewritten, and a
/// step no longer held is judged again on its runs (green CI closes it now).
pub(crate) async fn refresh_step_checks(
    cx: &RepoCtx<'_>,
    plan_id: &str,
) -> Result<(), EngineError> {
    let Some(ledger) = read_ledger(cx).await? else {
        return Ok(());
    };
    let from_plan = ledger
        .mission
        .origin
        .as_ref()
        .and_then(|o| o.plan_id.as_deref());
    if from_plan != Some(plan_id) || !takes_step_operations(&ledger) {
        return Ok(());
    }
    let carried: Vec<u64> = ledger
        .board
        .tasks
        .iter()
        .filter(|t| t.status != TaskStatus::Done && t.links.head_sha.is_some())
        .filter_map(|t| t.links.prs.last().copied())
        .collect();
    let mut newest = None;
    for number in carried {
        let path = ops::pull_request(&cx.repo, number);
        let pull: navin_domain::event::PullRequest = cx.client.get_json(&path).await?;
        if pull.state.as_deref() == Some("closed") {
            continue;
        }
        let pr = PullInfo::from_payload(&pull);
        let Some(found) = step_check(cx, &pr, None).await? else {
            continue;
        };
        sync_check(cx, &pr, &found.check, &format!("step-{number}")).await?;
        let Some(mut after) = found.written else {
            continue;
        };
        let runs = check_runs(cx, &pr.head_sha).await?;
        after = judge(cx, after, &pr.head_sha, runs, None).await?.0;
        newest = Some(after);
    }
    if let Some(ledger) = newest {
        refresh_panel_of(cx, &ledger).await?;
    }
    Ok(())
}
