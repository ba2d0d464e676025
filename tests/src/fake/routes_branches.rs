//! Branch endpoints: a branch with its protection flag, its classic protection and the ruleset rules that apply to it, and a ruleset with its bypass list.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Extension, Router};
use serde_json::{json, Value};

use super::auth::{authorize_repo, Caller};
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
        .route(
            "/repos/{owner}/{repo}/branches/{branch}/protection",
            get(get_branch_protection),
        )
        .route(
            "/repos/{owner}/{repo}/rulesets/{ruleset_id}",
            get(get_ruleset),
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
            r.protected.contains_key(&branch),
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
        .rulesets
        .values()
        .filter(|set| set.branches.contains(&branch))
        .flat_map(|set| {
            set.rules.iter().map(|rule_type| {
                json!({
                    "type": rule_type,
                    "ruleset_source_type": "Repository",
                    "ruleset_source": r.full_name(),
                    "ruleset_id": set.id,
                })
            })
        })
        .collect();
    ok(json!(rules))
}

/// `GET /repos/{o}/{r}/branches/{branch}/protection`: needs `administration: read`;
/// 404 `Branch not protected` without classic protection.
async fn get_branch_protection(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, branch)): Path<(String, String, String)>,
) -> ApiResult {
    let model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "administration", "read")?;
    let p = r
        .protected
        .get(&branch)
        .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, "Branch not protected"))?;
    let base = &inner.base_url;
    let url = format!(
        "{base}/repos/{}/branches/{branch}/protection",
        r.full_name()
    );
    let mut v = template("repos/get-branch-protection");
    v["url"] = json!(url);
    v["allow_force_pushes"] = json!({ "enabled": p.allow_force_pushes });
    v["allow_deletions"] = json!({ "enabled": p.allow_deletions });
    v["enforce_admins"] =
        json!({ "url": format!("{url}/enforce_admins"), "enabled": p.enforce_admins });
    v["lock_branch"] = json!({ "enabled": false });
    // The example's status checks and review rules break their own schema, and the
    // fake models neither.
    if let Some(obj) = v.as_object_mut() {
        obj.remove("required_status_checks");
        obj.remove("required_pull_request_reviews");
    }
    match &p.push_restrictions {
        None => {
            if let Some(obj) = v.as_object_mut() {
                obj.remove("restrictions");
            }
        }
        Some(who) => {
            let user = v["restrictions"]["users"][0].clone();
            let team = v["restrictions"]["teams"][0].clone();
            let app = v["restrictions"]["apps"][0].clone();
            let named = |template: &Value, key: &str, name: &str, n: usize| {
                let mut item = template.clone();
                item[key] = json!(name);
                item["id"] = json!(n + 1);
                if key == "slug" {
                    item["name"] = json!(name);
                }
                item
            };
            let r = &mut v["restrictions"];
            r["url"] = json!(format!("{url}/restrictions"));
            r["users"] = who
                .users
                .iter()
                .enumerate()
                .map(|(n, u)| named(&user, "login", u, n))
                .collect();
            r["teams"] = who
                .teams
                .iter()
                .enumerate()
                .map(|(n, t)| named(&team, "slug", t, n))
                .collect();
            r["apps"] = who
                .apps
                .iter()
                .enumerate()
                .map(|(n, a)| named(&app, "slug", a, n))
                .collect();
        }
    }
    ok(v)
}

/// `GET /repos/{o}/{r}/rulesets/{id}`. Like GitHub, `bypass_actors` is only shown to a
/// caller who may edit the ruleset (`administration: write`).
async fn get_ruleset(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, id)): Path<(String, String, u64)>,
) -> ApiResult {
    let model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "metadata", "read")?;
    let set = r.rulesets.get(&id).ok_or_else(ApiError::not_found)?;
    let editor = caller
        .token()
        .is_ok_and(|t| authorize_repo(&model, t, r, "administration", "write").is_ok());
    let base = &inner.base_url;
    let full = r.full_name();
    let mut v = template("repos/get-repo-ruleset");
    v["id"] = json!(set.id);
    v["name"] = json!(set.name);
    v["source"] = json!(full);
    v["conditions"] = json!({"ref_name": {
        "include": set.branches.iter().map(|b| format!("refs/heads/{b}")).collect::<Vec<_>>(),
        "exclude": [],
    }});
    v["rules"] = set.rules.iter().map(|t| json!({ "type": t })).collect();
    v["_links"] = json!({
        "self": {"href": format!("{base}/repos/{full}/rulesets/{}", set.id)},
        "html": {"href": format!("{base}/{full}/rules/{}", set.id)},
    });
    match v.as_object_mut() {
        Some(obj) if editor => {
            obj.insert(
                "bypass_actors".into(),
                set.bypass_actors
                    .iter()
                    .map(|a| json!({"actor_id": a.actor_id, "actor_type": a.actor_type, "bypass_mode": a.bypass_mode}))
                    .collect(),
            );
        }
        Some(obj) => {
            obj.remove("bypass_actors");
        }
        None => {}
    }
    ok(v)
}
