//! Handing ready steps out after every ledger change: one issue per ready step carrying the sub-agent brief, and, where configured, a `workflow_dispatch` of the agent workflow; then the panel.
//!
//! Runs after every ledger change the engine makes. A step is handed out at most once:
//! its issue number goes on the ledger (`links.issue`), and an issue created just before
//! a crash is found again by its hidden marker under the dispatch label, so no step ever
//! gets two issues. The workflow is started only right after its issue was created, so
//! a retry never starts a second agent for the same step.

use super::answers::hold_for_answers;
use super::attempts::restart_attempts;
use super::board::{read_ledger, transact};
use super::finish::finish_if_done;
use super::panel::{panel_issue, refresh_panel};
use super::workers::ListedIssue;
use super::workers::{assign_to_copilot, dispatch_agent_workflow, plan_edits_for};
use super::{EngineError, RepoCtx};
use navin_domain::config::AgentKind;
use navin_domain::render::{step_brief, step_marker, BriefOptions};
use navin_github::ops;
use navin_github::{GitHubError, InstallationClient, ProbeFuture, WriteOutcome, WriteProbe};
use navin_ledger::model::{MissionStatus, Task};
use navin_ledger::Ledger;
use navin_ledger::{Actor, Operation};
use serde::Deserialize;
use serde_json::json;

/// Issues listed when looking for ones created before a crash (newest first).
const LOOKBACK_PAGES: usize = 3;

#[derive(Debug, Deserialize)]
struct CreatedIssue {
    number: u64,
}

/// Hands out every ready step that has no issue yet, when `dispatch.issues` or an
/// agent (`dispatch.agent`) is configured.
/// Returns the ledger as it stands afterwards. A failure is logged and leaves the
/// step for the next change to retry: it never undoes or fails the command that
/// made the step ready.
/// Then every attempt that is due starts (the closed agent loop, `attempts`).
/// A mission whose every step is done closes first (`finish`).
pub(crate) async fn dispatch_ready(cx: &RepoCtx<'_>, ledger: Ledger) -> Ledger {
    let ledger = finish_if_done(cx, ledger).await;
    track_for_sweeps(cx, &ledger);
    let ledger = hold_for_answers(cx, ledger).await;
    let config = cx.repo_config();
    if !config.dispatch.opens_issues() || ledger.mission.status != MissionStatus::Running {
        return restart_attempts(cx, ledger).await;
    }
    let waiting: Vec<Task> = ledger
        .ready()
        .into_iter()
        .filter(|t| t.links.issue.is_none())
        .cloned()
        .collect();
    let ledger = if waiting.is_empty() {
        ledger
    } else {
        match hand_out(cx, ledger.clone(), &waiting).await {
            Ok(after) => after,
            Err(e) => {
                tracing::warn!(error = %e, repo = %cx.repo, "dispatching ready steps failed; the next change retries");
                ledger
            }
        }
    };
    restart_attempts(cx, ledger).await
}

async fn hand_out(
    cx: &RepoCtx<'_>,
    mut ledger: Ledger,
    waiting: &[Task],
) -> Result<Ledger, EngineError> {
    let config = cx.repo_config();
    let label = config.dispatch.label().to_owned();
    let existing = labelled_issues(cx, &label).await?;
    let policy = navin_domain::evidence::policy_from(&config);
    let model = config.models.for_mode(ledger.mission.mode);
    let agent = config.dispatch.agent();
    // One read of the plan for every brief of this hand-out, not one per step.
    let edits = plan_edits_for(cx, &ledger).await;
    for task in waiting {
        let marker = step_marker(&ledger, &task.id);
        let found = existing
            .iter()
            .find(|i| i.body.as_deref().is_some_and(|b| b.contains(&marker)));
        let (issue, created, assigned) = match found {
            Some(listed) => (listed.number, false, listed.assigned_to_copilot()),
            None => {
                let options = BriefOptions {
                    required_checks: policy.required_for(task.validation),
                    model,
                    plan_edits: edits.as_deref(),
                    checkout: false,
                };
                let (title, body) = step_brief(&ledger, task, &cx.repo_ref(), options);
                let number =
                    create_step_issue(cx, &title, &body, &config.dispatch.labels, &marker).await?;
                (number, true, false)
            }
        };
        // The agent is started before the issue goes on the ledger: a crash in between
        // finds the issue again by its marker (and Copilot among its assignees), so the
        // step is neither left without an agent nor given two.
        // The issue stands on its own: an agent that cannot be started (a missing
        // workflow file, no `actions: write`, no user token) must not hold up the
        // other steps, so failures are reported and the loop goes on.
        match agent {
            AgentKind::Workflow if created => {
                if let Some(workflow) = config.dispatch.workflow.as_deref() {
                    if let Err(e) = start_agent_workflow(cx, workflow, &task.id, issue, model).await
                    {
                        tracing::warn!(error = %e, step = %task.id, workflow, "cannot start the agent workflow");
                        cx.report.github("start the agent workflow", &e);
                    }
                }
            }
            AgentKind::Copilot if !assigned => {
                if let Err(e) = assign_to_copilot(cx, &task.id, issue, model).await {
                    tracing::warn!(error = %e, step = %task.id, issue, "cannot assign the step to Copilot");
                    cx.report.github("assign the step issue to Copilot", &e);
                }
            }
            _ => {}
        }
        ledger = record_dispatch(cx, &ledger, &task.id, issue).await?;
    }
    Ok(ledger)
}

/// A live mission's repository goes on the sweep list (its timed rules need a clock),
/// a finished one comes off it.
fn track_for_sweeps(cx: &RepoCtx<'_>, ledger: &Ledger) {
    if ledger.mission.status.is_live() {
        cx.engine
            .sweeps
            .remember(navin_domain::sweeps::SweepTarget {
                installation: cx.client.installation_id(),
                full_name: cx.repo.clone(),
                id: cx.repository_id,
                default_branch: Some(cx.default_branch.clone()),
            });
    } else {
        cx.engine.sweeps.forget(&cx.repo);
    }
}

async fn labelled_issues(cx: &RepoCtx<'_>, label: &str) -> Result<Vec<ListedIssue>, GitHubError> {
    let mut out = Vec::new();
    let mut next = Some(ops::issues_labelled(&cx.repo, label));
    let mut pages = 0;
    while let Some(path) = next.take() {
        let page = cx.client.get(&path).await?;
        let mut items: Vec<ListedIssue> = page.json(&path)?;
        out.append(&mut items);
        pages += 1;
        if pages < LOOKBACK_PAGES {
            next = page.next_page();
        }
    }
    Ok(out)
}

async fn create_step_issue(
    cx: &RepoCtx<'_>,
    title: &str,
    body: &str,
    labels: &[String],
    marker: &str,
) -> Result<u64, EngineError> {
    let path = ops::issues(&cx.repo);
    let probe = MarkerInIssues {
        repo: cx.repo.clone(),
        label: labels.first().cloned(),
        marker: marker.to_owned(),
    };
    let request = ops::create_issue(&cx.repo, title, body, labels);
    match cx.client.write(request, &probe).await? {
        WriteOutcome::Applied(response) => {
            let created: CreatedIssue = response.json(&path)?;
            Ok(created.number)
        }
        WriteOutcome::AlreadyApplied => {
            let again =
                labelled_issues(cx, labels.first().map_or("navin-step", String::as_str)).await?;
            again
                .into_iter()
                .find(|i| i.body.as_deref().is_some_and(|b| b.contains(marker)))
                .map(|i| i.number)
                .ok_or_else(|| {
                    EngineError::Internal(format!(
                        "the step issue was created but cannot be found under {path}"
                    ))
                })
        }
    }
}

async fn record_dispatch(
    cx: &RepoCtx<'_>,
    ledger: &Ledger,
    step: &str,
    issue: u64,
) -> Result<Ledger, EngineError> {
    let op = Operation::Dispatched {
        step: step.to_owned(),
        issue,
        agent: cx.repo_config().dispatch.agent().attempt_agent().to_owned(),
    };
    let op_id = format!("dispatch/{}/{step}", ledger.mission.created_at.timestamp());
    match transact(cx, op, &op_id, Actor::App("navin".to_owned())).await? {
        Some((after, _)) => Ok(after),
        None => read_ledger(cx)
            .await?
            .ok_or_else(|| EngineError::Internal("the ledger vanished after a dispatch".into())),
    }
}

/// `POST /repos/{o}/{r}/actions/workflows/{file}/dispatches` on the default branch
/// with inputs `step`, `issue` and `model` (GitHub answers 204; inputs are strings).
/// `model` is sent only when configured: GitHub refuses inputs a workflow does not
/// declare, and older agent workflows declare only `step` and `issue`.
async fn start_agent_workflow(
    cx: &RepoCtx<'_>,
    workflow: &str,
    step: &str,
    issue: u64,
    model: Option<&str>,
) -> Result<(), GitHubError> {
    let inputs = json!({ "step": step, "issue": issue.to_string() });
    dispatch_agent_workflow(cx, workflow, inputs, model).await
}

/// Probe for issue creation: an issue under the dispatch label whose body carries the
/// step's marker already exists.
struct MarkerInIssues {
    repo: String,
    label: Option<String>,
    marker: String,
}

impl WriteProbe for MarkerInIssues {
    fn already_applied<'a>(&'a self, client: &'a InstallationClient) -> ProbeFuture<'a> {
        Box::pin(async move {
            let path = match &self.label {
                Some(label) => ops::issues_labelled(&self.repo, label),
                None => ops::issues_all(&self.repo),
            };
            let page = client.get(&path).await?;
            let issues: Vec<ListedIssue> = page.json(&path)?;
            Ok(issues
                .iter()
                .any(|i| i.body.as_deref().is_some_and(|b| b.contains(&self.marker))))
        })
    }
}

/// Steps the change made ready are handed out (when configured), then the panel
/// is refreshed when the mission has an issue to show it on.
pub(crate) async fn refresh_panel_of(cx: &RepoCtx<'_>, ledger: &Ledger) -> Result<(), EngineError> {
    let ledger = dispatch_ready(cx, ledger.clone()).await;
    if panel_issue(cx, &ledger) == 0 {
        return Ok(());
    }
    refresh_panel(cx, &ledger).await.map(|_| ())
}
