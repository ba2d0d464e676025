//! The closed agent loop on GitHub: an attempt that ran out of time is ended, and a step whose last attempt ended without done gets its next one, told to its worker once.
//!
//! Runs after every ledger change the engine makes (beside the hand-out of ready steps).
//! Each start is written to the ledger first, keyed by its step and number: only the
//! writer that lands it tells the agent, so a redelivery or a racing replica starts it
//! once. A crash between the two leaves an attempt nobody was told about; a dispatched
//! agent's `agents.timeout` ends it and starts the next.

use super::board::transact;
use super::workers::{agent_client, dispatch_agent_workflow, plan_edits_for, reassign_to_copilot};
use super::{EngineError, RepoCtx};
use crate::effects::comments;
use navin_domain::config::AgentKind;
use navin_domain::render::{previous_attempts, step_brief, BriefOptions, Workplace};
use navin_domain::rules::attempts::{due, Due, StartWhy};
use navin_github::ops;
use navin_ledger::model::{Ledger, Task};
use navin_ledger::{Actor, AttemptOutcome, Operation};
use serde::Deserialize;
use serde_json::json;

/// Passes over the due list per change: a timeout ends an attempt and makes the step's
/// next one due at once.
const PASSES: usize = 2;

#[derive(Debug, Deserialize)]
struct PullState {
    state: String,
}

#[derive(Debug, Deserialize)]
struct PullAuthor {
    user: Login,
}

#[derive(Debug, Deserialize)]
struct Login {
    login: String,
    #[serde(default, rename = "type")]
    kind: Option<String>,
}

fn navin() -> Actor {
    Actor::App("navin".to_owned())
}

/// Ends timed-out attempts and starts every next attempt that is due. Returns the
/// ledger as it stands afterwards; a failure is logged and reported and the rest goes
/// on: the next change retries what is still due.
pub(crate) async fn restart_attempts(cx: &RepoCtx<'_>, mut ledger: Ledger) -> Ledger {
    let config = cx.repo_config();
    if !config.dispatch.opens_issues() {
        return ledger;
    }
    for _ in 0..PASSES {
        let items = due(&ledger, &config.agents, cx.now());
        if items.is_empty() {
            break;
        }
        for item in items {
            match carry_out(cx, &ledger, &item).await {
                Ok(Some(after)) => ledger = after,
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(error = %e, repo = %cx.repo, step = item.step(), "the next attempt could not be started; the next change retries");
                    cx.report.engine("start the next attempt", &e);
                }
            }
        }
    }
    ledger
}

async fn carry_out(
    cx: &RepoCtx<'_>,
    ledger: &Ledger,
    item: &Due,
) -> Result<Option<Ledger>, EngineError> {
    let mission = ledger.mission.created_at.timestamp();
    match item {
        Due::TimedOut { step, number } => {
            let timeout = cx.repo_config().agents.timeout;
            let op = Operation::Fail {
                step: step.clone(),
                evidence: None,
                reason: format!(
                    "attempt {number} opened no pull request within {} minutes",
                    timeout.as_secs().div_ceil(60)
                ),
                outcome: AttemptOutcome::TimedOut,
            };
            let op_id = format!("attempt:{mission}:{step}:{number}:timeout");
            write_once(cx, op, &op_id).await
        }
        Due::Start {
            step,
            number,
            why,
            continue_pr,
            start_over,
            supersedes,
        } => {
            let agent = cx.repo_config().dispatch.agent();
            let op = Operation::Attempt {
                step: step.clone(),
                number: *number,
                agent: agent.attempt_agent().to_owned(),
                start_over: *start_over,
            };
            let op_id = format!("attempt:{mission}:{step}:{number}");
            let Some(after) = write_once(cx, op, &op_id).await? else {
                return Ok(None);
            };
            if let (Some(pr), Some(task)) = (supersedes, after.board.task(step)) {
                let start = (task, *number, *why);
                if let Err(e) = close_superseded(cx, *pr, start, &op_id).await {
                    tracing::warn!(error = %e, repo = %cx.repo, step = %step, pr, "the superseded pull request could not be closed");
                    cx.report.engine("close the superseded pull request", &e);
                }
            }
            if let Some(task) = after.board.task(step) {
                let start = Start {
                    task,
                    number: *number,
                    why: *why,
                    continue_pr: *continue_pr,
                    op_id: &op_id,
                };
                if let Err(e) = tell_worker(cx, &after, agent, start).await {
                    tracing::warn!(error = %e, repo = %cx.repo, step = %step, "the attempt is on the ledger but its worker could not be told");
                    cx.report
                        .engine("tell the agent about its next attempt", &e);
                }
            }
            Ok(Some(after))
        }
    }
}

/// Writes `op` as Navin; `None` when it was applied before or a rule refused it (an
/// attempt another delivery already started, a mission that paused meanwhile).
async fn write_once(
    cx: &RepoCtx<'_>,
    op: Operation,
    op_id: &str,
) -> Result<Option<Ledger>, EngineError> {
    match transact(cx, op, op_id, navin()).await {
        Ok(written) => Ok(written.map(|(ledger, _)| ledger)),
        Err(e) if e.refusal().is_some() => {
            tracing::info!(repo = %cx.repo, op_id, reason = ?e.refusal(), "attempt not started");
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Tells whoever works the step that attempt `number` is theirs, with the brief that
/// carries the last failure: Copilot in a follow-up comment on its pull request (or
/// assigned the step's issue again), the agent workflow by a dispatch with the step
/// and attempt, people by a comment that mentions the last pull request's author.
async fn tell_worker(
    cx: &RepoCtx<'_>,
    ledger: &Ledger,
    agent: AgentKind,
    start: Start<'_>,
) -> Result<(), EngineError> {
    let Some(issue) = start.task.links.issue else {
        return Ok(());
    };
    let config = cx.repo_config();
    let recheck = cx.delivery.is_retry();
    let model = config.models.for_mode(ledger.mission.mode);
    let headline = format!(
        "**Attempt {} of step `{}`** starts: {}.",
        start.number,
        start.task.id,
        start.why.describe()
    );
    match (agent, start.continue_pr) {
        (AgentKind::Copilot, Some(pr)) => {
            let body = format!(
                "@copilot {headline} Keep working in this pull request and fix what failed; the line `Navin-Step: {}` stays in its body.\n\n{}",
                start.task.id,
                previous_attempts(start.task, Workplace::PullRequests)
            );
            // Copilot takes up a mention only from a person with write access, so it
            // goes out on the engine's user token (the one that assigns Copilot); the
            // App's own comment would be ignored. Without one, the App posts it for
            // the people reading the pull request, and the log says why nothing moves.
            let client = match agent_client(cx) {
                Some(agent) => agent,
                None => {
                    tracing::warn!(repo = %cx.repo, pr, "no user token: Copilot ignores the App's mention; give Navin an agent token");
                    cx.client.clone()
                }
            };
            comments::reply_once(&client, &cx.repo, pr, start.op_id, &body, recheck).await?;
        }
        (AgentKind::Copilot, None) => {
            post_brief(cx, ledger, &start, issue, &headline, recheck).await?;
            reassign_to_copilot(cx, &start.task.id, issue, model).await?;
        }
        (AgentKind::Workflow, _) => {
            post_brief(cx, ledger, &start, issue, &headline, recheck).await?;
            if let Some(workflow) = config.dispatch.workflow.as_deref() {
                let inputs = json!({
                    "step": start.task.id,
                    "issue": issue.to_string(),
                    "attempt": start.number.to_string(),
                });
                dispatch_agent_workflow(cx, workflow, inputs, model).await?;
            }
        }
        (AgentKind::None, _) => {
            let who = match start.task.attempts.iter().rev().find_map(|a| a.pr) {
                Some(pr) => pull_author(cx, pr).await?,
                None => None,
            };
            let headline = match who {
                Some(login) => format!("@{login} {headline}"),
                None => headline,
            };
            post_brief(cx, ledger, &start, issue, &headline, recheck).await?;
        }
    }
    Ok(())
}

/// The attempt's whole brief, as a comment on the step's issue: the issue body keeps
/// the first brief, the comments each later one.
async fn post_brief(
    cx: &RepoCtx<'_>,
    ledger: &Ledger,
    start: &Start<'_>,
    issue: u64,
    headline: &str,
    recheck: bool,
) -> Result<(), EngineError> {
    let config = cx.repo_config();
    let policy = navin_domain::evidence::policy_from(&config);
    let edits = plan_edits_for(cx, ledger).await;
    let options = BriefOptions {
        required_checks: policy.required_for(start.task.validation),
        model: config.models.for_mode(ledger.mission.mode),
        plan_edits: edits.as_deref(),
        checkout: false,
    };
    let (_, brief) = step_brief(ledger, start.task, &cx.repo_ref(), options);
    let body = format!("{headline}\n\n{brief}");
    comments::reply_once(&cx.client, &cx.repo, issue, start.op_id, &body, recheck).await?;
    Ok(())
}

/// Closes the agent's pull request a fresh attempt replaces, after a comment that says
/// why and where the work goes on, so one pull request at a time carries the step.
/// One already closed is left as it is. Its `closed` event changes nothing: the
/// attempt it carried has ended.
async fn close_superseded(
    cx: &RepoCtx<'_>,
    pr: u64,
    (task, number, why): (&Task, u32, StartWhy),
    op_id: &str,
) -> Result<(), EngineError> {
    let pull: PullState = cx.client.get_json(&ops::pull_request(&cx.repo, pr)).await?;
    if pull.state != "open" {
        return Ok(());
    }
    let issue = task
        .links
        .issue
        .map(|n| format!(" on #{n}"))
        .unwrap_or_default();
    let body = format!(
        "Attempt {number} of step `{}` starts over on a new branch: {}. Navin closed this pull request so that one pull request at a time carries the step; what failed here and what it changed are in the new attempt's brief{issue}.",
        task.id,
        why.describe()
    );
    let op_id = format!("{op_id}#superseded");
    comments::reply_once(
        &cx.client,
        &cx.repo,
        pr,
        &op_id,
        &body,
        cx.delivery.is_retry(),
    )
    .await?;
    cx.client
        .write_idempotent(ops::close_pull_request(&cx.repo, pr))
        .await?;
    Ok(())
}

/// The login of a pull request's author when it is a person (bots are not mentioned).
async fn pull_author(cx: &RepoCtx<'_>, pr: u64) -> Result<Option<String>, EngineError> {
    let path = ops::pull_request(&cx.repo, pr);
    let pull: PullAuthor = cx.client.get_json(&path).await?;
    let bot = pull.user.kind.as_deref() == Some("Bot") || pull.user.login.ends_with("[bot]");
    Ok((!bot).then_some(pull.user.login))
}

/// One attempt being started, as the worker is told about it.
struct Start<'a> {
    task: &'a Task,
    number: u32,
    why: StartWhy,
    continue_pr: Option<u64>,
    op_id: &'a str,
}
