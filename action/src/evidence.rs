//! `mode: evidence`: records a completed `workflow_run` on the mission step it proves, after re-reading the run from the API.

use navin_bot::evidence::{
    decide, evaluate, find_step, policy_from, CheckObservation, CheckRunList, WorkflowRunPayload,
};
use navin_bot::render::text::short_sha;
use navin_ledger::model::Actor;
use navin_ledger::store::Committed;
use navin_ledger::Ctx;
use serde_json::Value;

use crate::api::{Api, Need};
use crate::commands;
use crate::error::ActionError;
use crate::ledger;
use crate::modes::{read_payload, status_outputs, Run};

/// Largest number of check-run pages read for one head (100 per page).
const MAX_CHECK_PAGES: u64 = 10;

/// A `GET` helper that names the permission each read needs.
fn need(scope: &'static str, what: &'static str) -> Need {
    Need { scope, what }
}

pub fn run(run: &Run<'_>) -> Result<(), ActionError> {
    let env = run.env;
    if env.event_name != "workflow_run" {
        println!(
            "{}",
            commands::notice(&format!(
                "evidence mode handles workflow_run events; {:?} is not one: nothing to do",
                env.event_name
            ))
        );
        return Ok(());
    }
    let path = env
        .event_path
        .as_deref()
        .ok_or(ActionError::MissingEnv("GITHUB_EVENT_PATH"))?;
    let payload = read_payload(path)?;
    let action = payload["action"].as_str().unwrap_or_default();
    if action != "completed" {
        println!(
            "{}",
            commands::notice(&format!(
                "workflow_run {action:?} is not a completed run: nothing to record"
            ))
        );
        return Ok(());
    }
    let run_id = payload
        .pointer("/workflow_run/id")
        .and_then(Value::as_u64)
        .ok_or_else(|| ActionError::Payload {
            path: path.display().to_string(),
            message: "workflow_run.id is missing".into(),
        })?;

    let (access, ledger) = run.read()?;
    let Some(ledger) = ledger else {
        println!(
            "{}",
            commands::notice(&format!(
                "no mission yet: the ledger branch {} does not exist; run {run_id} proves nothing",
                run.branch
            ))
        );
        return run.outputs(&status_outputs(None));
    };

    // The payload only says which run to look at; what it proves comes from the API.
    let api = Api::new(&env.api_url, run.token)?;
    let fresh = api.get(
        &format!("/repos/{}/actions/runs/{run_id}", run.repo),
        need("actions: read", "read the workflow run that finished"),
    )?;
    let wr: WorkflowRunPayload =
        serde_json::from_value(fresh.clone()).map_err(|e| ActionError::Api {
            method: "GET",
            path: format!("/repos/{}/actions/runs/{run_id}", run.repo),
            message: format!("unexpected workflow run: {e}"),
        })?;
    let this = CheckObservation::from_workflow_run(&wr);
    let attempt = fresh["run_attempt"].as_u64().unwrap_or(1);
    let head_branch = fresh["head_branch"].as_str().unwrap_or_default();

    let mut step = find_step(&ledger.board, &wr.head_sha, &[], head_branch);
    if step.is_none() {
        let prs = linked_prs(&api, run.repo, &fresh)?;
        step = find_step(&ledger.board, &wr.head_sha, &prs, head_branch);
    }
    let Some(task) = step.as_deref().and_then(|id| ledger.board.task(id)) else {
        println!(
            "{}",
            commands::notice(&format!(
                "run {run_id} ({} on {}) is linked to no mission step: nothing to record",
                this.name,
                short_sha(&wr.head_sha)
            ))
        );
        return run.outputs(&status_outputs(Some(&ledger)));
    };

    let mut observations = vec![this.clone()];
    let policy = policy_from(&run.config);
    let head_matches = task
        .links
        .head_sha
        .as_deref()
        .is_some_and(|h| h.trim().eq_ignore_ascii_case(wr.head_sha.trim()));
    if head_matches {
        observations.extend(check_runs(&api, run.repo, &wr.head_sha)?);
    }
    let verdict = evaluate(task, &observations, &policy, run.now);
    let decision = decide(task, &ledger.board, Some(&this), &verdict, &policy);
    let ops = decision.operations(&task.id);
    if ops.is_empty() {
        println!("{}", commands::notice(&decision.describe(&task.id)));
        return run.outputs(&status_outputs(Some(&ledger)));
    }
    println!("{}", decision.describe(&task.id));
    let base = format!("navin-action/workflow_run/{run_id}/attempt/{attempt}");
    let mut latest = None;
    for (i, op) in ops.iter().enumerate() {
        // One id per operation: a re-run job skips the ones already written.
        let op_id = format!("{base}#{i}");
        let ctx = Ctx::new(run.now, Actor::App("github-actions".into())).with_op_id(op_id);
        let committed = access
            .store
            .transact(op, &ctx)
            .map_err(|e| ledger::store_error(e, &run.branch, true))?;
        match committed {
            Committed::Written {
                version,
                reason,
                ledger: after,
                ..
            } => {
                let job = env.run_id.as_deref().unwrap_or("local");
                println!("ledger v{version}: {reason} (job run {job})");
                latest = Some(*after);
            }
            Committed::AlreadyApplied { version } => {
                println!(
                    "{}",
                    commands::notice(&format!(
                        "run {run_id} attempt {attempt} is already in the ledger (v{version}): nothing changed"
                    ))
                );
            }
        }
    }
    let shown = latest.as_ref().unwrap_or(&ledger);
    // Also when a re-run wrote nothing: the earlier run may have stopped before its panel
    // edit landed.
    if let Some(issue) = crate::event::refresh_panel(env, run.token, run.repo, &run.branch, shown)?
    {
        println!("mission panel refreshed on #{issue}");
    }
    run.outputs(&status_outputs(Some(shown)))
}

/// `(body, head ref)` of the pull requests the run lists (same-repository PRs only; forks list none).
fn linked_prs(api: &Api, repo: &str, fresh: &Value) -> Result<Vec<(String, String)>, ActionError> {
    let numbers: Vec<u64> = fresh["pull_requests"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p["number"].as_u64())
                .take(5)
                .collect()
        })
        .unwrap_or_default();
    let mut out = Vec::new();
    for n in numbers {
        let pr = api.get(
            &format!("/repos/{repo}/pulls/{n}"),
            need(
                "pull-requests: read",
                "read the pull request linked to the run",
            ),
        )?;
        out.push((
            pr["body"].as_str().unwrap_or_default().to_string(),
            pr.pointer("/head/ref")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        ));
    }
    Ok(out)
}

/// Every check run on `sha` (`filter=all`: the default `latest` can hide a queued re-run).
fn check_runs(api: &Api, repo: &str, sha: &str) -> Result<Vec<CheckObservation>, ActionError> {
    let mut out = Vec::new();
    for page in 1..=MAX_CHECK_PAGES {
        let value = api.get(
            &format!("/repos/{repo}/commits/{sha}/check-runs?filter=all&per_page=100&page={page}"),
            need("checks: read", "read the check runs on the step's head"),
        )?;
        let list: CheckRunList = serde_json::from_value(value).map_err(|e| ActionError::Api {
            method: "GET",
            path: format!("/repos/{repo}/commits/{sha}/check-runs"),
            message: format!("unexpected check run list: {e}"),
        })?;
        let got = list.check_runs.len();
        out.extend(list.check_runs.iter().map(CheckObservation::from_check_run));
        if got < 100 || out.len() as u64 >= list.total_count {
            break;
        }
    }
    Ok(out)
}
