//! Handing ready steps out: one issue per ready step carrying the sub-agent brief, and, where configured, a `workflow_dispatch` of the agent workflow.
//!
//! Runs after every ledger change the engine makes. A step is handed out at most once:
//! its issue number goes on the ledger (`links.issue`), and an issue created just before
//! a crash is found again by its hidden marker under the dispatch label, so no step ever
//! gets two issues. The workflow is started only right after its issue was created, so
//! a retry never starts a second agent for the same step.

use navin_github::ops;
use navin_ledger::model::{Ledger, MissionStatus, Task};
use navin_ledger::{Actor, Operation};
use serde::Deserialize;
use serde_json::json;

use super::{EngineError, Session};
use navin_domain::config::AgentKind;
use navin_domain::render::{step_brief, step_marker, BriefOptions};
use navin_github::{GitHubError, InstallationClient, ProbeFuture, WriteOutcome, WriteProbe};

/// Issues listed when looking for ones created before a crash (newest first).
const LOOKBACK_PAGES: usize = 3;

#[derive(Debug, Deserialize)]
struct ListedIssue {
    number: u64,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    assignees: Vec<Assignee>,
}

#[derive(Debug, Deserialize)]
struct Assignee {
    login: String,
}

impl ListedIssue {
    /// GitHub shows the agent as `Copilot` on issues, and takes `copilot-swe-agent[bot]`
    /// when assigning: either means the step is with Copilot already.
    fn assigned_to_copilot(&self) -> bool {
        self.assignees.iter().any(|a| is_copilot(&a.login))
    }
}

fn is_copilot(login: &str) -> bool {
    login.eq_ignore_ascii_case("copilot")
        || login.eq_ignore_ascii_case(ops::COPILOT_AGENT_LOGIN)
        || login.eq_ignore_ascii_case("copilot-swe-agent")
}

/// The sentence the panel shows when steps should go to Copilot and cannot: said once,
/// on the panel, rather than per step or not at all.
pub(crate) fn copilot_notice() -> &'static str {
    "Steps go to the Copilot coding agent (`dispatch.agent: copilot`), but this Navin has no user token, so their issues are opened and not assigned. GitHub assigns issues to Copilot only for a user token: give Navin a fine-grained personal access token (or a GitHub App user-to-server token) with `--agent-token-file` on the server or the Action's `agent-token` input, or assign the step issues to Copilot by hand."
}

#[derive(Debug, Deserialize)]
struct CreatedIssue {
    number: u64,
}

impl Session<'_> {
    /// Hands out every ready step that has no issue yet, when `dispatch.issues` or an
    /// agent (`dispatch.agent`) is configured.
    /// Returns the ledger as it stands afterwards. A failure is logged and leaves the
    /// step for the next change to retry: it never undoes or fails the command that
    /// made the step ready.
    /// Then every attempt that is due starts (the closed agent loop, `attempts`).
    /// A mission whose every step is done closes first (`finish`).
    pub(crate) async fn dispatch_ready(&self, ledger: Ledger) -> Ledger {
        let ledger = self.finish_if_done(ledger).await;
        self.track_for_sweeps(&ledger);
        let ledger = self.hold_for_answers(ledger).await;
        let config = self.repo_config();
        if !config.dispatch.opens_issues() || ledger.mission.status != MissionStatus::Running {
            return self.restart_attempts(ledger).await;
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
            match self.hand_out(ledger.clone(), &waiting).await {
                Ok(after) => after,
                Err(e) => {
                    tracing::warn!(error = %e, repo = %self.repo, "dispatching ready steps failed; the next change retries");
                    ledger
                }
            }
        };
        self.restart_attempts(ledger).await
    }

    async fn hand_out(&self, mut ledger: Ledger, waiting: &[Task]) -> Result<Ledger, EngineError> {
        let config = self.repo_config();
        let label = config.dispatch.label().to_owned();
        let existing = self.labelled_issues(&label).await?;
        let policy = navin_domain::evidence::policy_from(&config);
        let model = config.models.for_mode(ledger.mission.mode);
        let agent = config.dispatch.agent();
        // One read of the plan for every brief of this hand-out, not one per step.
        let edits = self.plan_edits_for(&ledger).await;
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
                    let (title, body) = step_brief(&ledger, task, &self.repo_ref(), options);
                    let number = self
                        .create_step_issue(&title, &body, &config.dispatch.labels, &marker)
                        .await?;
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
                        if let Err(e) = self
                            .start_agent_workflow(workflow, &task.id, issue, model)
                            .await
                        {
                            tracing::warn!(error = %e, step = %task.id, workflow, "cannot start the agent workflow");
                            self.report.github("start the agent workflow", &e);
                        }
                    }
                }
                AgentKind::Copilot if !assigned => {
                    if let Err(e) = self.assign_to_copilot(&task.id, issue, model).await {
                        tracing::warn!(error = %e, step = %task.id, issue, "cannot assign the step to Copilot");
                        self.report.github("assign the step issue to Copilot", &e);
                    }
                }
                _ => {}
            }
            ledger = self.record_dispatch(&ledger, &task.id, issue).await?;
        }
        Ok(ledger)
    }

    /// A live mission's repository goes on the sweep list (its timed rules need a clock),
    /// a finished one comes off it.
    fn track_for_sweeps(&self, ledger: &Ledger) {
        if ledger.mission.status.is_live() {
            self.engine
                .sweeps
                .remember(navin_domain::sweeps::SweepTarget {
                    installation: self.client.installation_id(),
                    full_name: self.repo.clone(),
                    id: self.repository_id,
                    default_branch: Some(self.default_branch.clone()),
                });
        } else {
            self.engine.sweeps.forget(&self.repo);
        }
    }

    /// The binding edits of the plan the mission came from, for its briefs. A plan that
    /// cannot be read costs the brief its edits, never the dispatch: logged.
    pub(super) async fn plan_edits_for(&self, ledger: &Ledger) -> Option<String> {
        let id = ledger.mission.origin.as_ref()?.plan_id.as_deref()?;
        match self.read_plan_id(id).await {
            Ok(found) => found.and_then(|(record, _)| record.binding_edits()),
            Err(e) => {
                tracing::warn!(error = %e, plan = id, "cannot read the mission's plan for its briefs");
                None
            }
        }
    }

    /// Assigns `issue` to the Copilot coding agent with the engine's user token; without
    /// one nothing is sent (the panel says what is missing, see [`copilot_notice`]).
    pub(super) async fn assign_to_copilot(
        &self,
        step: &str,
        issue: u64,
        model: Option<&str>,
    ) -> Result<(), GitHubError> {
        let Some(client) = self.agent_client() else {
            return Ok(());
        };
        let instructions = format!(
            "This issue is step {step} of a Navin mission. Work only on it, and put the line `Navin-Step: {step}` in the pull request body so Navin links the pull request to the step."
        );
        let request = ops::assign_to_copilot(
            &self.repo,
            issue,
            &self.default_branch,
            &instructions,
            model,
        );
        let probe = CopilotAssigned {
            path: ops::issue(&self.repo, issue),
        };
        client.write(request, &probe).await?;
        Ok(())
    }

    /// A next attempt for Copilot with no pull request to continue: Copilot is
    /// unassigned, then assigned again, which starts a new session (assigning it while
    /// it is assigned would start none).
    pub(super) async fn reassign_to_copilot(
        &self,
        step: &str,
        issue: u64,
        model: Option<&str>,
    ) -> Result<(), GitHubError> {
        let Some(client) = self.agent_client() else {
            return Ok(());
        };
        client
            .write_idempotent(ops::unassign_copilot(&self.repo, issue))
            .await?;
        self.assign_to_copilot(step, issue, model).await
    }

    /// The installation's client on the engine's user token, which GitHub requires for
    /// Copilot assignments; `None` without one.
    pub(super) fn agent_client(&self) -> Option<InstallationClient> {
        self.engine
            .agent_app()
            .map(|agent| agent.installation(self.client.installation_id()))
    }

    async fn labelled_issues(&self, label: &str) -> Result<Vec<ListedIssue>, GitHubError> {
        let mut out = Vec::new();
        let mut next = Some(ops::issues_labelled(&self.repo, label));
        let mut pages = 0;
        while let Some(path) = next.take() {
            let page = self.client.get(&path).await?;
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
        &self,
        title: &str,
        body: &str,
        labels: &[String],
        marker: &str,
    ) -> Result<u64, EngineError> {
        let path = ops::issues(&self.repo);
        let probe = MarkerInIssues {
            repo: self.repo.clone(),
            label: labels.first().cloned(),
            marker: marker.to_owned(),
        };
        let request = ops::create_issue(&self.repo, title, body, labels);
        match self.client.write(request, &probe).await? {
            WriteOutcome::Applied(response) => {
                let created: CreatedIssue = response.json(&path)?;
                Ok(created.number)
            }
            WriteOutcome::AlreadyApplied => {
                let again = self
                    .labelled_issues(labels.first().map_or("navin-step", String::as_str))
                    .await?;
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
        &self,
        ledger: &Ledger,
        step: &str,
        issue: u64,
    ) -> Result<Ledger, EngineError> {
        let op = Operation::Dispatched {
            step: step.to_owned(),
            issue,
            agent: self
                .repo_config()
                .dispatch
                .agent()
                .attempt_agent()
                .to_owned(),
        };
        let op_id = format!("dispatch/{}/{step}", ledger.mission.created_at.timestamp());
        match self
            .transact(op, &op_id, Actor::App("navin".to_owned()))
            .await?
        {
            Some((after, _)) => Ok(after),
            None => self.read_ledger().await?.ok_or_else(|| {
                EngineError::Internal("the ledger vanished after a dispatch".into())
            }),
        }
    }

    /// `POST /repos/{o}/{r}/actions/workflows/{file}/dispatches` on the default branch
    /// with inputs `step`, `issue` and `model` (GitHub answers 204; inputs are strings).
    /// `model` is sent only when configured: GitHub refuses inputs a workflow does not
    /// declare, and older agent workflows declare only `step` and `issue`.
    async fn start_agent_workflow(
        &self,
        workflow: &str,
        step: &str,
        issue: u64,
        model: Option<&str>,
    ) -> Result<(), GitHubError> {
        let inputs = json!({ "step": step, "issue": issue.to_string() });
        self.dispatch_agent_workflow(workflow, inputs, model).await
    }

    /// The dispatch itself, with `inputs` (strings) and `model` when configured. A
    /// later attempt adds `attempt`, which the agent workflow declares.
    pub(super) async fn dispatch_agent_workflow(
        &self,
        workflow: &str,
        mut inputs: serde_json::Value,
        model: Option<&str>,
    ) -> Result<(), GitHubError> {
        if let Some(model) = model {
            inputs["model"] = json!(model);
        }
        let request = ops::dispatch_workflow(&self.repo, workflow, &self.default_branch, inputs);
        // A repeated dispatch would start a second agent: never resent blindly.
        self.client.write(request, &NeverRepeat).await?;
        Ok(())
    }
}

/// A write that must not be repeated after an ambiguous failure: the probe says it
/// landed, so the retry loop stops (at most one agent run per step).
struct NeverRepeat;

impl WriteProbe for NeverRepeat {
    fn already_applied<'a>(&'a self, _client: &'a InstallationClient) -> ProbeFuture<'a> {
        Box::pin(async { Ok(true) })
    }
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

/// Probe for the Copilot assignment: the issue lists Copilot among its assignees.
struct CopilotAssigned {
    path: String,
}

impl WriteProbe for CopilotAssigned {
    fn already_applied<'a>(&'a self, client: &'a InstallationClient) -> ProbeFuture<'a> {
        Box::pin(async move {
            let issue: ListedIssue = client.get_json(&self.path).await?;
            Ok(issue.assigned_to_copilot())
        })
    }
}
