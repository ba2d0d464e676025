//! Telling an agent about its work: the user-token client Copilot answers, assigning and reassigning Copilot, dispatching the agent workflow, and the plan edits its brief carries.

use super::records::read_plan_id;
use super::RepoCtx;
use navin_github::ops;
use navin_github::{GitHubError, InstallationClient, ProbeFuture, WriteProbe};
use navin_ledger::model::Ledger;
use serde::Deserialize;
use serde_json::json;

/// The binding edits of the plan the mission came from, for its briefs. A plan that
/// cannot be read costs the brief its edits, never the dispatch: logged.
pub(super) async fn plan_edits_for(cx: &RepoCtx<'_>, ledger: &Ledger) -> Option<String> {
    let id = ledger.mission.origin.as_ref()?.plan_id.as_deref()?;
    match read_plan_id(cx, id).await {
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
    cx: &RepoCtx<'_>,
    step: &str,
    issue: u64,
    model: Option<&str>,
) -> Result<(), GitHubError> {
    let Some(client) = agent_client(cx) else {
        return Ok(());
    };
    let instructions = format!(
        "This issue is step {step} of a Navin mission. Work only on it, and put the line `Navin-Step: {step}` in the pull request body so Navin links the pull request to the step."
    );
    let request = ops::assign_to_copilot(&cx.repo, issue, &cx.default_branch, &instructions, model);
    let probe = CopilotAssigned {
        path: ops::issue(&cx.repo, issue),
    };
    client.write(request, &probe).await?;
    Ok(())
}

/// A next attempt for Copilot with no pull request to continue: Copilot is
/// unassigned, then assigned again, which starts a new session (assigning it while
/// it is assigned would start none).
pub(super) async fn reassign_to_copilot(
    cx: &RepoCtx<'_>,
    step: &str,
    issue: u64,
    model: Option<&str>,
) -> Result<(), GitHubError> {
    let Some(client) = agent_client(cx) else {
        return Ok(());
    };
    client
        .write_idempotent(ops::unassign_copilot(&cx.repo, issue))
        .await?;
    assign_to_copilot(cx, step, issue, model).await
}

/// The installation's client on the engine's user token, which GitHub requires for
/// Copilot assignments; `None` without one.
pub(super) fn agent_client(cx: &RepoCtx<'_>) -> Option<InstallationClient> {
    cx.engine
        .agent_app()
        .map(|agent| agent.installation(cx.client.installation_id()))
}

/// The dispatch itself, with `inputs` (strings) and `model` when configured. A
/// later attempt adds `attempt`, which the agent workflow declares.
pub(super) async fn dispatch_agent_workflow(
    cx: &RepoCtx<'_>,
    workflow: &str,
    mut inputs: serde_json::Value,
    model: Option<&str>,
) -> Result<(), GitHubError> {
    if let Some(model) = model {
        inputs["model"] = json!(model);
    }
    let request = ops::dispatch_workflow(&cx.repo, workflow, &cx.default_branch, inputs);
    // A repeated dispatch would start a second agent: never resent blindly.
    cx.client.write(request, &NeverRepeat).await?;
    Ok(())
}

/// A write that must not be repeated after an ambiguous failure: the probe says it
/// landed, so the retry loop stops (at most one agent run per step).
struct NeverRepeat;

impl WriteProbe for NeverRepeat {
    fn already_applied<'a>(&'a self, _client: &'a InstallationClient) -> ProbeFuture<'a> {
        Box::pin(async { Ok(true) })
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

#[derive(Debug, Deserialize)]
pub(crate) struct ListedIssue {
    pub(crate) number: u64,
    #[serde(default)]
    pub(crate) body: Option<String>,
    #[serde(default)]
    pub(crate) assignees: Vec<Assignee>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Assignee {
    login: String,
}

impl ListedIssue {
    /// GitHub shows the agent as `Copilot` on issues, and takes `copilot-swe-agent[bot]`
    /// when assigning: either means the step is with Copilot already.
    pub(crate) fn assigned_to_copilot(&self) -> bool {
        self.assignees.iter().any(|a| is_copilot(&a.login))
    }
}

fn is_copilot(login: &str) -> bool {
    login.eq_ignore_ascii_case("copilot")
        || login.eq_ignore_ascii_case(ops::COPILOT_AGENT_LOGIN)
        || login.eq_ignore_ascii_case("copilot-swe-agent")
}
