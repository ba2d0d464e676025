//! Branch endpoints: a branch with its protection flag, and the ruleset rules that apply to it.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Extension, Router};
use serde_json::{json, Value};

use super::auth::Caller;
use super::git;
use super::http::{ok, ApiError, ApiResult};
use super::render::template;
use super::routes_repos::access;
use super::Inner;

pub(super) fn routes() -> Router<Arc<Inner>> {
    Router::new()
        .route("/repos/{owner}/{repo}/branches/{branch}", get(get_branch))
        .route(
            "/repos/{owner}/{repo}/rules/branches/{branch}",
            get(get_branch_rules),
        )
}

/// `GET /repos/{o}/{r}/branches/{branch}`: 404 for a branch that does not exist.
async fn get_branch(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, branch)): Path<(String, String, String)>,
) -> ApiResult {
    let (dir, full, protected) = {
        let model = inner.model();
        let r = access(&model, &caller, &owner, &repo, "contents", "read")?;
        (
            r.git_dir.clone(),
            r.full_name(),
            r.protected.contains(&branch),
        )
    };
    let sha = git::ref_target(&dir, &format!("heads/{branch}"))
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, "Branch not found"))?;
    let base = &inner.base_url;
    let mut v = template("repos/get-branch");
    v["name"] = json!(branch);
    v["commit"]["sha"] = json!(sha);
    v["commit"]["url"] = json!(format!("{base}/repos/{full}/commits/{sha}"));
    v["protected"] = json!(protected);
    v["protection"] = json!({
        "enabled": protected,
        "required_status_checks": {"enforcement_level": "off", "contexts": [], "checks": []},
    });
    v["protection_url"] = json!(format!("{base}/repos/{full}/branches/{branch}/protection"));
    v["_links"] = json!({
        "self": format!("{base}/repos/{full}/branches/{branch}"),
        "html": format!("{base}/{full}/tree/{branch}"),
    });
    ok(v)
}

/// `GET /repos/{o}/{r}/rules/branches/{branch}`: the active rules, `[]` when none.
async fn get_branch_rules(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, branch)): Path<(String, String, String)>,
) -> ApiResult {
    let model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "metadata", "read")?;
    let rules: Vec<Value> = r
        .branch_rules
        .get(&branch)
        .into_iter()
        .flatten()
        .map(|rule_type| {
            json!({
                "type": rule_type,
                "ruleset_source_type": "Repository",
                "ruleset_source": r.full_name(),
                "ruleset_id": 42,
            })
        })
        .collect();
    ok(json!(rules))
}
