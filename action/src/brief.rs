//! `brief` mode: one step's brief, the mission digest, the step's branch and model as step outputs, for an agent job.
//!
//! The agent workflow (`action/examples/navin-agent.yml`) gets everything it hands the
//! agent from here, so the brief an Actions agent reads is the one the step's issue
//! carries and `navin board brief` prints.

use navin_domain::config::RepoConfig;
use navin_domain::render::{step_branch, step_brief, BriefOptions, RepoRef};

use crate::error::ActionError;
use crate::ledger;
use crate::run::{status_outputs, Run};

pub fn brief(run: &Run<'_>, config: &RepoConfig) -> Result<(), ActionError> {
    let step = run.env.step.as_deref().ok_or_else(|| {
        ActionError::Step("brief mode needs the `step` input: the id of the step to brief".into())
    })?;
    let (access, ledger) = run.read()?;
    let Some(ledger) = ledger else {
        return Err(ActionError::Step(format!(
            "no mission yet: the ledger branch {} does not exist, so there is no step {step:?} to brief",
            run.branch
        )));
    };
    let Some(task) = ledger.board.task(step) else {
        let ids: Vec<&str> = ledger.board.tasks.iter().map(|t| t.id.as_str()).collect();
        return Err(ActionError::Step(format!(
            "there is no step {step:?} on the board (steps: {})",
            ids.join(", ")
        )));
    };
    let edits = navin_ledger::plan::record::mission_plan_edits(&access.store, &ledger)
        .map_err(|e| ledger::store_error(e, &run.branch))?;
    let policy = navin_domain::evidence::policy_from(config);
    let model = config.models.for_mode(ledger.mission.mode);
    let repo = RepoRef {
        full_name: run.repo.to_owned(),
        html_base: run.env.server_url.clone(),
        ledger_branch: run.branch.clone(),
    };
    let options = BriefOptions {
        required_checks: policy.required_for(task.validation),
        model,
        plan_edits: edits.as_deref(),
        checkout: false,
    };
    let (title, body) = step_brief(&ledger, task, &repo, options);
    println!("brief for {step} (mission v{}):", ledger.mission.version);
    println!("{body}");
    let mut outputs = vec![
        ("step", task.id.clone()),
        ("title", title),
        ("brief", body),
        ("branch", step_branch(task)),
        ("model", model.unwrap_or_default().to_owned()),
        ("step-status", task.status.as_str().to_owned()),
    ];
    outputs.extend(status_outputs(Some(&ledger)));
    run.outputs(&outputs)
}
