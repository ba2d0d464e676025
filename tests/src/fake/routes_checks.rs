//! Checks endpoints: check runs (create/update/get, list for a ref with filters) and check suites.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Extension, Router};
use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::auth::Caller;
use super::git;
use super::http::{created, ok, paginate, parse_body, str_field, with_link, ApiError, ApiResult};
use super::model::{CheckRun, Model};
use super::render::Renderer;
use super::routes_repos::access;
use super::Inner;

pub(super) fn routes() -> Router<Arc<Inner>> {
    Router::new()
        .route("/repos/{owner}/{repo}/check-runs", post(create_run))
        .route(
            "/repos/{owner}/{repo}/check-runs/{id}",
            get(get_run).patch(update_run).post(update_run),
        )
        .route(
            "/repos/{owner}/{repo}/check-runs/{id}/annotations",
            get(list_annotations),
        )
        .route(
            "/repos/{owner}/{repo}/commits/{ref}/check-runs",
            get(list_runs_for_ref),
        )
        .route(
            "/repos/{owner}/{repo}/commits/{ref}/check-suites",
            get(list_suites_for_ref),
        )
        .route("/repos/{owner}/{repo}/check-suites/{id}", get(get_suite))
}

const STATUSES: [&str; 6] = [
    "queued",
    "in_progress",
    "completed",
    "waiting",
    "requested",
    "pending",
];
const CONCLUSIONS: [&str; 8] = [
    "action_required",
    "cancelled",
    "failure",
    "neutral",
    "success",
    "skipped",
    "stale",
    "timed_out",
];

fn parse_time(body: &Value, field: &str) -> Result<Option<DateTime<Utc>>, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => DateTime::parse_from_rfc3339(s)
            .map(|t| Some(t.with_timezone(&Utc)))
            .map_err(|_| ApiError::validation("CheckRun", field, "invalid")),
        Some(_) => Err(ApiError::validation("CheckRun", field, "invalid")),
    }
}

/// Applies the writable fields of a create/update body; completes the run when a conclusion is set.
fn apply(run: &mut CheckRun, body: &Value, now: DateTime<Utc>) -> Result<(), ApiError> {
    if let Some(name) = str_field(body, "name") {
        run.name = name.to_string();
    }
    if let Some(v) = str_field(body, "details_url") {
        run.details_url = Some(v.to_string());
    }
    if let Some(v) = str_field(body, "external_id") {
        run.external_id = Some(v.to_string());
    }
    if let Some(t) = parse_time(body, "started_at")? {
        run.started_at = t;
    }
    if let Some(status) = str_field(body, "status") {
        if !STATUSES.contains(&status) {
            return Err(ApiError::validation("CheckRun", "status", "invalid"));
        }
        run.status = status.to_string();
    }
    if let Some(conclusion) = str_field(body, "conclusion") {
        if !CONCLUSIONS.contains(&conclusion) {
            return Err(ApiError::validation("CheckRun", "conclusion", "invalid"));
        }
        run.conclusion = Some(conclusion.to_string());
        run.status = "completed".into();
    }
    if let Some(t) = parse_time(body, "completed_at")? {
        run.completed_at = Some(t);
    }
    if run.status == "completed" {
        if run.conclusion.is_none() {
            return Err(ApiError::unprocessable(
                "Invalid request.\n\nNo conclusion given for completed check run.",
            ));
        }
        run.completed_at.get_or_insert(now);
    }
    if let Some(output) = body.get("output").filter(|o| o.is_object()) {
        run.output = output.clone();
    }
    if let Some(actions) = body.get("actions") {
        run.actions = valid_actions(actions)?;
        for id in run.actions.iter().filter_map(|a| a["identifier"].as_str()) {
            if !run.shown_identifiers.iter().any(|s| s == id) {
                run.shown_identifiers.push(id.to_owned());
            }
        }
    }
    Ok(())
}

/// GitHub's limits on `actions` (REST description of checks/create and checks/update):
/// at most 3, each with a label of at most 20 characters, a description of at most 40
/// and an identifier of at most 20, all three required. Anything else is a 422 naming
/// the offending value, as GitHub's schema validation does.
fn valid_actions(actions: &Value) -> Result<Vec<Value>, ApiError> {
    let invalid = |detail: String| ApiError::unprocessable(format!("Invalid request.\n\n{detail}"));
    let Some(list) = actions.as_array() else {
        return Err(invalid(format!(
            "For 'properties/actions', {actions} is not an array."
        )));
    };
    if list.len() > 3 {
        return Err(invalid(format!(
            "For 'properties/actions', {actions} is too long (maximum is 3 elements)."
        )));
    }
    for action in list {
        for (field, max) in [("label", 20), ("description", 40), ("identifier", 20)] {
            match action.get(field) {
                Some(Value::String(text)) if text.chars().count() > max => {
                    return Err(invalid(format!(
                        "For 'properties/{field}', {} is too long (maximum is {max} characters).",
                        Value::String(text.clone())
                    )))
                }
                Some(Value::String(_)) => {}
                Some(other) => {
                    return Err(invalid(format!(
                        "For 'properties/{field}', {other} is not a string."
                    )))
                }
                None => {
                    return Err(invalid(format!(
                        "For 'items', {action} is not valid: \"{field}\" wasn't supplied."
                    )))
                }
            }
        }
    }
    Ok(list.clone())
}

fn caller_app(caller: &Caller) -> Result<u64, ApiError> {
    caller.app_id().ok_or_else(|| {
        ApiError::new(
            StatusCode::FORBIDDEN,
            "You must authenticate via a GitHub App.",
        )
    })
}

async fn create_run(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo)): Path<(String, String)>,
    body: Bytes,
) -> ApiResult {
    let body = parse_body(&body)?;
    let name = str_field(&body, "name")
        .ok_or_else(|| ApiError::validation("CheckRun", "name", "missing_field"))?;
    let head_sha = str_field(&body, "head_sha")
        .ok_or_else(|| ApiError::validation("CheckRun", "head_sha", "missing_field"))?;
    let mut model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "checks", "write")?;
    let app_id = caller_app(&caller)?;
    let full = r.full_name();
    let sha = git::resolve_commit(&r.git_dir, head_sha)
        .map_err(|_| ApiError::unprocessable(format!("No commit found for SHA: {head_sha}")))?;
    let suite = model.suite_for(&full, &sha, app_id, None);
    let id = model.next_id();
    let now = Utc::now();
    let mut run = CheckRun {
        id,
        repo: full,
        head_sha: sha,
        name: name.to_string(),
        status: "queued".into(),
        conclusion: None,
        started_at: now,
        completed_at: None,
        app_id,
        check_suite_id: suite,
        external_id: None,
        details_url: None,
        output: json!({}),
        actions: Vec::new(),
        shown_identifiers: Vec::new(),
    };
    apply(&mut run, &body, now)?;
    model.check_runs.insert(id, run.clone());
    model.refresh_suite(suite);
    created(
        Renderer {
            base: &inner.base_url,
            model: &model,
        }
        .check_run(&run),
    )
}

fn find_run<'m>(model: &'m Model, full: &str, id: u64) -> Result<&'m CheckRun, ApiError> {
    model
        .check_runs
        .get(&id)
        .filter(|r| r.repo.eq_ignore_ascii_case(full))
        .ok_or_else(ApiError::not_found)
}

async fn get_run(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, id)): Path<(String, String, u64)>,
) -> ApiResult {
    let model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "checks", "read")?;
    let run = find_run(&model, &r.full_name(), id)?;
    ok(Renderer {
        base: &inner.base_url,
        model: &model,
    }
    .check_run(run))
}

/// `GET /repos/{o}/{r}/check-runs/{id}/annotations`: a plain array, paginated.
async fn list_annotations(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, id)): Path<(String, String, u64)>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult {
    let model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "checks", "read")?;
    let full = r.full_name();
    let run = find_run(&model, &full, id)?;
    let items = Renderer {
        base: &inner.base_url,
        model: &model,
    }
    .annotations(run);
    let page_url = format!(
        "{}/repos/{full}/check-runs/{id}/annotations",
        inner.base_url
    );
    let (page, link) = paginate(items, &query, &page_url);
    Ok(with_link(StatusCode::OK, json!(page), link))
}

/// Only the app that created a run may update it.
async fn update_run(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, id)): Path<(String, String, u64)>,
    body: Bytes,
) -> ApiResult {
    let body = parse_body(&body)?;
    let mut model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "checks", "write")?;
    let full = r.full_name();
    let app_id = caller_app(&caller)?;
    let mut run = find_run(&model, &full, id)?.clone();
    if run.app_id != app_id {
        return Err(ApiError::forbidden_integration());
    }
    apply(&mut run, &body, Utc::now())?;
    let suite = run.check_suite_id;
    model.check_runs.insert(id, run.clone());
    model.refresh_suite(suite);
    ok(Renderer {
        base: &inner.base_url,
        model: &model,
    }
    .check_run(&run))
}

/// A branch, tag or sha to a commit sha (unknown 40-hex shas are taken as is).
fn resolve_ref(dir: &std::path::Path, rev: &str) -> Result<String, ApiError> {
    match git::resolve_commit(dir, rev) {
        Ok(sha) => Ok(sha),
        Err(_) if rev.len() == 40 && rev.chars().all(|c| c.is_ascii_hexdigit()) => {
            Ok(rev.to_string())
        }
        Err(_) => Err(ApiError::unprocessable(format!(
            "No commit found for SHA: {rev}"
        ))),
    }
}

/// `filter=latest` (default) keeps, per app and name, the run with the latest `completed_at`
/// (runs not completed count as oldest), so a queued rerun hides behind a finished run.
async fn list_runs_for_ref(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, rev)): Path<(String, String, String)>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult {
    let model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "checks", "read")?;
    let full = r.full_name();
    let sha = resolve_ref(&r.git_dir, &rev)?;
    let filter = query.get("filter").map(String::as_str).unwrap_or("latest");
    if filter != "latest" && filter != "all" {
        return Err(ApiError::validation("CheckRun", "filter", "invalid"));
    }
    let app_filter = match query.get("app_id") {
        Some(v) => Some(
            v.parse::<u64>()
                .map_err(|_| ApiError::validation("CheckRun", "app_id", "invalid"))?,
        ),
        None => None,
    };
    let mut runs: Vec<&CheckRun> = model
        .check_runs
        .values()
        .filter(|run| run.repo.eq_ignore_ascii_case(&full) && run.head_sha == sha)
        .filter(|run| query.get("check_name").is_none_or(|n| &run.name == n))
        .filter(|run| query.get("status").is_none_or(|s| &run.status == s))
        .filter(|run| app_filter.is_none_or(|a| run.app_id == a))
        .collect();
    if filter == "latest" {
        let mut latest: BTreeMap<(u64, String), &CheckRun> = BTreeMap::new();
        for run in runs {
            let key = (run.app_id, run.name.clone());
            let newer = latest
                .get(&key)
                .is_none_or(|cur| (run.completed_at, run.id) > (cur.completed_at, cur.id));
            if newer {
                latest.insert(key, run);
            }
        }
        runs = latest.into_values().collect();
    }
    runs.sort_by_key(|r| std::cmp::Reverse(r.id));
    let total = runs.len();
    let renderer = Renderer {
        base: &inner.base_url,
        model: &model,
    };
    let items: Vec<Value> = runs
        .into_iter()
        .map(|run| renderer.check_run(run))
        .collect();
    let url = format!(
        "{}/repos/{full}/commits/{rev}/check-runs",
        inner.link_base()
    );
    let (page, link) = paginate(items, &query, &url);
    Ok(with_link(
        StatusCode::OK,
        json!({ "total_count": total, "check_runs": page }),
        link,
    ))
}

async fn list_suites_for_ref(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, rev)): Path<(String, String, String)>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult {
    let model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "checks", "read")?;
    let full = r.full_name();
    let sha = resolve_ref(&r.git_dir, &rev)?;
    let app_filter = query.get("app_id").and_then(|v| v.parse::<u64>().ok());
    let suites: Vec<_> = model
        .check_suites
        .values()
        .filter(|s| s.repo.eq_ignore_ascii_case(&full) && s.head_sha == sha)
        .filter(|s| app_filter.is_none_or(|a| s.app_id == a))
        .filter(|s| {
            query.get("check_name").is_none_or(|n| {
                model
                    .check_runs
                    .values()
                    .any(|run| run.check_suite_id == s.id && &run.name == n)
            })
        })
        .collect();
    let total = suites.len();
    let renderer = Renderer {
        base: &inner.base_url,
        model: &model,
    };
    let items: Vec<Value> = suites
        .into_iter()
        .map(|s| renderer.check_suite(s))
        .collect();
    let url = format!(
        "{}/repos/{full}/commits/{rev}/check-suites",
        inner.link_base()
    );
    let (page, link) = paginate(items, &query, &url);
    Ok(with_link(
        StatusCode::OK,
        json!({ "total_count": total, "check_suites": page }),
        link,
    ))
}

async fn get_suite(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, id)): Path<(String, String, u64)>,
) -> ApiResult {
    let model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "checks", "read")?;
    let suite = model
        .check_suites
        .get(&id)
        .filter(|s| s.repo.eq_ignore_ascii_case(&r.full_name()))
        .ok_or_else(ApiError::not_found)?;
    ok(Renderer {
        base: &inner.base_url,
        model: &model,
    }
    .check_suite(suite))
}
