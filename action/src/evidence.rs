//! `mode: evidence`: records a completed `workflow_run` on the mission step it proves, after re-reading the run from the API.

use std::collections::HashMap;
use std::time::Duration;

use navin_bot::config::RepoConfig;
use navin_bot::evidence::{
    evaluate, step_from_pr_in, CheckObservation, CheckRunList, ConclusionClass, EvidencePolicy,
    RunKind, Verdict, WorkflowRunPayload,
};
use navin_ledger::model::{Actor, Board, Evidence, EvidenceKind, Task, TaskStatus, Validation};
use navin_ledger::store::Committed;
use navin_ledger::{Ctx, Operation};
use serde_json::Value;

use crate::api::{Api, Need};
use crate::commands;
use crate::error::ActionError;
use crate::ledger;
use crate::modes::{read_payload, status_outputs, Run};

/// Largest number of check-run pages read for one head (100 per page).
const MAX_CHECK_PAGES: u64 = 10;

/// What to do with the step after looking at the run.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Every required check is green: mark the step done (with this run's
    /// evidence unless it is already recorded).
    Done(Option<Evidence>),
    /// This run is green but other required checks are not there yet.
    Record(Evidence),
    /// A required check failed on the step's head: a failed attempt.
    Fail { evidence: Evidence, reason: String },
    /// Nothing to change, and why.
    Skip(String),
}

/// The evidence policy from `.github/navin.yml` (defaults when absent).
pub fn policy_from(config: &RepoConfig) -> EvidencePolicy {
    let e = &config.evidence;
    let mut required_checks = HashMap::new();
    for (validation, names) in [
        (Validation::Test, &e.required_checks.test),
        (Validation::Lint, &e.required_checks.lint),
        (Validation::Verify, &e.required_checks.verify),
    ] {
        if !names.is_empty() {
            required_checks.insert(validation, names.clone());
        }
    }
    EvidencePolicy {
        trusted_app_ids: e.trusted_apps.iter().copied().collect(),
        required_checks,
        min_ci_time: (e.min_ci_time > Duration::ZERO).then_some(e.min_ci_time),
    }
}

/// The step a run is for: a step linked to the run's head SHA, else the step
/// a linked pull request names (`Navin-Step:` in its body, or its
/// `navin/<step>` branch), else the run's own `navin/<step>` head branch.
pub fn find_step(
    board: &Board,
    head_sha: &str,
    prs: &[(String, String)],
    head_branch: &str,
) -> Option<String> {
    let sha = head_sha.trim();
    if !sha.is_empty() {
        if let Some(t) = board.tasks.iter().find(|t| {
            t.links
                .head_sha
                .as_deref()
                .is_some_and(|h| h.trim().eq_ignore_ascii_case(sha))
        }) {
            return Some(t.id.clone());
        }
    }
    prs.iter()
        .find_map(|(body, head_ref)| step_from_pr_in(body, head_ref, board))
        .or_else(|| step_from_pr_in("", head_branch, board))
}

fn short(sha: &str) -> &str {
    sha.get(..7).unwrap_or(sha)
}

/// This run as ledger evidence (for a green run seen while other checks are pending).
pub fn run_evidence(run: &CheckObservation, ok: bool) -> Evidence {
    let conclusion = run.conclusion.clone().unwrap_or_default();
    Evidence {
        url: run.html_url.clone(),
        workflow_run_id: Some(run.id),
        name: Some(run.name.clone()),
        app_id: run.app_id,
        head_sha: Some(run.head_sha.clone()),
        conclusion: Some(conclusion.clone()),
        completed_at: run.completed_at,
        ..Evidence::run(
            EvidenceKind::WorkflowRun,
            ok,
            format!("{} {conclusion} on {}", run.name, short(&run.head_sha)),
        )
    }
}

fn recorded(task: &Task, run: &CheckObservation) -> bool {
    task.evidence
        .iter()
        .any(|e| e.workflow_run_id == Some(run.id) && run.kind == RunKind::WorkflowRun)
}

/// Decides what `this` run (already evaluated with the other runs on the
/// head into `verdict`) means for `task`. Pure: the caller applies it.
pub fn decide(task: &Task, this: &CheckObservation, verdict: &Verdict) -> Decision {
    if !matches!(task.status, TaskStatus::Planned | TaskStatus::InProgress) {
        return Decision::Skip(format!(
            "step {} is {}: nothing to record",
            task.id, task.status
        ));
    }
    match task.links.head_sha.as_deref().map(str::trim) {
        Some(head) if !head.is_empty() && !head.eq_ignore_ascii_case(this.head_sha.trim()) => {
            return Decision::Skip(format!(
                "run {} is on {} but step {} is linked to head {}: ignored",
                this.id,
                short(&this.head_sha),
                task.id,
                short(head)
            ))
        }
        _ => {}
    }
    let this_first = |list: Vec<Evidence>| -> Option<Evidence> {
        let pos = list
            .iter()
            .position(|e| e.workflow_run_id == Some(this.id))
            .unwrap_or(0);
        list.into_iter().nth(pos)
    };
    match verdict {
        Verdict::Green { .. } => {
            let unrecorded = verdict.unrecorded_evidence(task);
            Decision::Done(this_first(unrecorded))
        }
        Verdict::Red { failed, .. } => {
            let reason = failed
                .iter()
                .map(|f| match &f.note {
                    Some(note) => format!("{} {} ({note})", f.name, f.conclusion),
                    None => format!("{} {}", f.name, f.conclusion),
                })
                .collect::<Vec<_>>()
                .join(", ");
            match this_first(verdict.unrecorded_evidence(task)) {
                Some(evidence) => Decision::Fail {
                    evidence,
                    reason: format!("{reason} on {}", short(&this.head_sha)),
                },
                None => Decision::Skip(format!(
                    "the failure on {} is already recorded for step {}",
                    short(&this.head_sha),
                    task.id
                )),
            }
        }
        Verdict::Pending {
            missing,
            running,
            not_green,
        } => {
            let green = this
                .conclusion()
                .is_some_and(|c| c.class() == ConclusionClass::Green)
                && !not_green.iter().any(|f| f.run_id == this.id);
            if green && !recorded(task, this) {
                return Decision::Record(run_evidence(this, true));
            }
            let mut waiting: Vec<String> = missing.clone();
            waiting.extend(
                running
                    .iter()
                    .map(|r| format!("{} ({})", r.name, r.status.as_str())),
            );
            waiting.extend(
                not_green
                    .iter()
                    .map(|f| format!("{} ({})", f.name, f.conclusion)),
            );
            if waiting.is_empty() {
                waiting.push("a trusted check run".into());
            }
            Decision::Skip(format!(
                "step {} is still waiting for {}",
                task.id,
                waiting.join(", ")
            ))
        }
        Verdict::NotApplicable { reason } => Decision::Skip(format!("step {}: {reason}", task.id)),
    }
}

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
                short(&wr.head_sha)
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
    let decision = decide(task, &this, &verdict);
    let op = match decision {
        Decision::Skip(why) => {
            println!("{}", commands::notice(&why));
            return run.outputs(&status_outputs(Some(&ledger)));
        }
        Decision::Done(evidence) => Operation::Done {
            step: task.id.clone(),
            evidence,
        },
        Decision::Record(evidence) => Operation::RecordEvidence {
            step: task.id.clone(),
            evidence,
        },
        Decision::Fail { evidence, reason } => Operation::Fail {
            step: task.id.clone(),
            evidence: Some(evidence),
            reason,
        },
    };
    let ctx = Ctx::new(run.now, Actor::App("github-actions".into())).with_op_id(format!(
        "navin-action/workflow_run/{run_id}/attempt/{attempt}"
    ));
    let committed = access
        .store
        .transact(&op, &ctx)
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
            if let Some(issue) =
                crate::event::refresh_panel(env, run.token, run.repo, &run.branch, &after)?
            {
                println!("mission panel refreshed on #{issue}");
            }
            run.outputs(&status_outputs(Some(&after)))
        }
        Committed::AlreadyApplied { version } => {
            println!(
                "{}",
                commands::notice(&format!(
                    "run {run_id} attempt {attempt} is already in the ledger (v{version}): nothing changed"
                ))
            );
            // The earlier run may have stopped before its panel edit landed.
            crate::event::refresh_panel(env, run.token, run.repo, &run.branch, &ledger)?;
            run.outputs(&status_outputs(Some(&ledger)))
        }
    }
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

#[cfg(test)]
#[path = "evidence_tests.rs"]
mod tests;
