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
use crate::render::{step_brief, step_marker};
use navin_github::{GitHubError, InstallationClient, ProbeFuture, WriteOutcome, WriteProbe};

/// Issues listed when looking for ones created before a crash (newest first).
const LOOKBACK_PAGES: usize = 3;

#[derive(Debug, Deserialize)]
struct ListedIssue {
    number: u64,
    #[serde(default)]
    body: Option<String>,
}

#[derive(Debug, Deserialize)]
struct CreatedIssue {
    number: u64,
}

impl Session<'_> {
    /// Hands out every ready step that has no issue yet, when `dispatch.issues` is on.
    /// Returns the ledger as it stands afterwards. A failure is logged and leaves the
    /// step for the next change to retry: it never undoes or fails the command that
    /// made the step ready.
    pub(crate) async fn dispatch_ready(&self, ledger: Ledger) -> Ledger {
        let config = self.repo_config();
        if !config.dispatch.issues || ledger.mission.status != MissionStatus::Running {
            return ledger;
        }
        let waiting: Vec<Task> = ledger
            .board
            .ready()
            .into_iter()
            .filter(|t| t.links.issue.is_none())
            .cloned()
            .collect();
        if waiting.is_empty() {
            return ledger;
        }
        match self.hand_out(ledger.clone(), &waiting).await {
            Ok(after) => after,
            Err(e) => {
                tracing::warn!(error = %e, repo = %self.repo, "dispatching ready steps failed; the next change retries");
                ledger
            }
        }
    }

    async fn hand_out(&self, mut ledger: Ledger, waiting: &[Task]) -> Result<Ledger, EngineError> {
        let config = self.repo_config();
        let label = config.dispatch.label().to_owned();
        let existing = self.labelled_issues(&label).await?;
        let policy = crate::evidence::policy_from(&config);
        for task in waiting {
            let marker = step_marker(&ledger, &task.id);
            let found = existing
                .iter()
                .find(|i| i.body.as_deref().is_some_and(|b| b.contains(&marker)))
                .map(|i| i.number);
            let (issue, created) = match found {
                Some(number) => (number, false),
                None => {
                    let (title, body) = step_brief(
                        &ledger,
                        task,
                        &self.repo_ref(),
                        policy.required_for(task.validation),
                    );
                    (
                        self.create_step_issue(&title, &body, &config.dispatch.labels, &marker)
                            .await?,
                        true,
                    )
                }
            };
            ledger = self.record_dispatch(&ledger, &task.id, issue).await?;
            if created {
                if let Some(workflow) = config.dispatch.workflow.as_deref() {
                    // The issue stands on its own; a workflow that cannot start (missing
                    // file, no `actions: write`) must not hold up the other steps.
                    if let Err(e) = self.start_agent_workflow(workflow, &task.id, issue).await {
                        tracing::warn!(error = %e, step = %task.id, workflow, "cannot start the agent workflow");
                    }
                }
            }
        }
        Ok(ledger)
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
    /// with inputs `step` and `issue` (GitHub answers 204; inputs must be strings).
    async fn start_agent_workflow(
        &self,
        workflow: &str,
        step: &str,
        issue: u64,
    ) -> Result<(), GitHubError> {
        let request = ops::dispatch_workflow(
            &self.repo,
            workflow,
            &self.default_branch,
            json!({ "step": step, "issue": issue.to_string() }),
        );
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
