//! Repository endpoints: metadata, contents, git refs/trees/blobs/commits, permissions, Actions.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, patch, post};
use axum::{Extension, Router};
use base64::Engine;
use chrono::Utc;
use serde_json::{json, Value};

use super::auth::{authorize_repo, role_access, user_role, Caller};
use super::git::{self, PathEntry, UpdateOutcome};
use super::http::{encode, ok, parse_body, str_field, ts, ApiError, ApiResult};
use super::model::{Dispatch, Model, Repo};
use super::render::{template, Renderer};
use super::Inner;

pub(super) fn routes() -> Router<Arc<Inner>> {
    Router::new()
        .route("/repos/{owner}/{repo}", get(get_repo))
        .route("/repos/{owner}/{repo}/contents/{*path}", get(get_contents))
        .route("/repos/{owner}/{repo}/git/ref/{*ref}", get(get_ref))
        .route(
            "/repos/{owner}/{repo}/git/refs/{*ref}",
            patch(update_ref).post(update_ref),
        )
        .route("/repos/{owner}/{repo}/git/trees/{sha}", get(get_tree))
        .route("/repos/{owner}/{repo}/git/blobs/{sha}", get(get_blob))
        .route(
            "/repos/{owner}/{repo}/git/commits/{sha}",
            get(get_git_commit),
        )
        .route("/repos/{owner}/{repo}/commits/{ref}", get(get_commit))
        .route(
            "/repos/{owner}/{repo}/collaborators/{username}/permission",
            get(get_permission),
        )
        .route(
            "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches",
            post(dispatch),
        )
        .route("/repos/{owner}/{repo}/actions/runs/{run_id}", get(get_run))
}

/// Finds the repository and checks the caller's grant for it (404 / 403 like GitHub).
pub(super) fn access<'m>(
    model: &'m Model,
    caller: &Caller,
    owner: &str,
    repo: &str,
    permission: &str,
    level: &str,
) -> Result<&'m Repo, ApiError> {
    let r = model.repo(owner, repo).ok_or_else(ApiError::not_found)?;
    authorize_repo(model, caller.token()?, r, permission, level)?;
    Ok(r)
}

async fn get_repo(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo)): Path<(String, String)>,
) -> ApiResult {
    let model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "metadata", "read")?;
    let mut out = Renderer {
        base: &inner.base_url,
        model: &model,
    }
    .repo(r);
    let token = caller.token()?;
    let write = authorize_repo(&model, token, r, "contents", "write").is_ok();
    out["permissions"] =
        json!({ "admin": false, "maintain": false, "push": write, "triage": write, "pull": true });
    ok(out)
}

/// GitHub wraps base64 at 60 columns with `\n`.
fn wrapped_base64(bytes: &[u8]) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(bytes);
    let lines: Vec<&str> = encoded
        .as_bytes()
        .chunks(60)
        .map(|c| std::str::from_utf8(c).unwrap_or_default())
        .collect();
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

async fn get_contents(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, path)): Path<(String, String, String)>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult {
    let (dir, full, rev) = {
        let model = inner.model();
        let r = access(&model, &caller, &owner, &repo, "contents", "read")?;
        (
            r.git_dir.clone(),
            r.full_name(),
            query
                .get("ref")
                .cloned()
                .unwrap_or_else(|| r.default_branch.clone()),
        )
    };
    let commit = git::resolve_commit(&dir, &rev).map_err(|_| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            format!("No commit found for the ref {rev}"),
        )
    })?;
    let entry = git::read_path(&dir, &commit, &path)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    let base = &inner.base_url;
    let links = |p: &str, sha: &str, kind: &str| {
        let url = format!("{base}/repos/{full}/contents/{p}?ref={}", encode(&rev));
        let git_url = format!(
            "{base}/repos/{full}/git/{}/{sha}",
            if kind == "dir" { "trees" } else { "blobs" }
        );
        let html_url = format!(
            "{base}/{full}/{}/{rev}/{p}",
            if kind == "dir" { "tree" } else { "blob" }
        );
        (url, git_url, html_url)
    };
    match entry {
        None => Err(ApiError::not_found()),
        Some(PathEntry::File { sha, content }) => {
            let (url, git_url, html_url) = links(&path, &sha, "file");
            let mut out = template("repos/get-content");
            out["type"] = json!("file");
            out["encoding"] = json!("base64");
            out["size"] = json!(content.len());
            out["name"] = json!(path.rsplit('/').next().unwrap_or(&path));
            out["path"] = json!(path);
            out["content"] = json!(wrapped_base64(&content));
            out["sha"] = json!(sha);
            out["url"] = json!(url);
            out["git_url"] = json!(git_url);
            out["html_url"] = json!(html_url);
            out["download_url"] = json!(format!("{base}/raw/{full}/{rev}/{path}"));
            out["_links"] = json!({ "self": url, "git": git_url, "html": html_url });
            if let Some(obj) = out.as_object_mut() {
                obj.remove("target");
                obj.remove("submodule_git_url");
            }
            ok(out)
        }
        Some(PathEntry::Dir(entries)) => {
            let items: Vec<Value> = entries
                .into_iter()
                .map(|e| {
                    let p = if path.is_empty() { e.name.clone() } else { format!("{}/{}", path.trim_end_matches('/'), e.name) };
                    let (url, git_url, html_url) = links(&p, &e.sha, e.kind);
                    json!({
                        "type": e.kind, "size": e.size, "name": e.name, "path": p, "sha": e.sha,
                        "url": url, "git_url": git_url, "html_url": html_url,
                        "download_url": if e.kind == "file" { json!(format!("{base}/raw/{full}/{rev}/{p}")) } else { Value::Null },
                        "_links": { "self": url, "git": git_url, "html": html_url },
                    })
                })
                .collect();
            ok(json!(items))
        }
    }
}

fn ref_json(base: &str, full: &str, short_ref: &str, sha: &str) -> Value {
    let mut out = template("git/get-ref");
    out["ref"] = json!(format!("refs/{short_ref}"));
    out["node_id"] =
        json!(base64::engine::general_purpose::STANDARD.encode(format!("03:Ref{full}{short_ref}")));
    out["url"] = json!(format!("{base}/repos/{full}/git/refs/{short_ref}"));
    out["object"] = json!({ "type": "commit", "sha": sha, "url": format!("{base}/repos/{full}/git/commits/{sha}") });
    out
}

async fn get_ref(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, short_ref)): Path<(String, String, String)>,
) -> ApiResult {
    let (dir, full) = {
        let model = inner.model();
        let r = access(&model, &caller, &owner, &repo, "contents", "read")?;
        (r.git_dir.clone(), r.full_name())
    };
    let sha = git::ref_target(&dir, &short_ref)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .ok_or_else(ApiError::not_found)?;
    ok(ref_json(&inner.base_url, &full, &short_ref, &sha))
}

/// `PATCH git/refs/{ref}`: 422 "Update is not a fast forward" unless `force`.
async fn update_ref(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, short_ref)): Path<(String, String, String)>,
    body: Bytes,
) -> ApiResult {
    let body = parse_body(&body)?;
    let sha = str_field(&body, "sha")
        .ok_or_else(|| ApiError::validation("Reference", "sha", "missing_field"))?
        .to_string();
    let force = body.get("force").and_then(Value::as_bool).unwrap_or(false);
    let (dir, full) = {
        let model = inner.model();
        let r = access(&model, &caller, &owner, &repo, "contents", "write")?;
        (r.git_dir.clone(), r.full_name())
    };
    match git::update_ref(&dir, &short_ref, &sha, force)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
    {
        UpdateOutcome::Updated => ok(ref_json(&inner.base_url, &full, &short_ref, &sha)),
        UpdateOutcome::NotFastForward => {
            Err(ApiError::unprocessable("Update is not a fast forward"))
        }
        UpdateOutcome::NoSuchRef => Err(ApiError::unprocessable("Reference does not exist")),
        UpdateOutcome::UnknownObject => Err(ApiError::unprocessable("Object does not exist")),
    }
}

async fn get_tree(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, sha)): Path<(String, String, String)>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult {
    let (dir, full) = {
        let model = inner.model();
        let r = access(&model, &caller, &owner, &repo, "contents", "read")?;
        (r.git_dir.clone(), r.full_name())
    };
    let recursive = query
        .get("recursive")
        .is_some_and(|v| !v.is_empty() && v != "0" && v != "false");
    let (tree_sha, items) = git::list_tree(&dir, &sha, recursive)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .ok_or_else(ApiError::not_found)?;
    let base = &inner.base_url;
    let tree: Vec<Value> = items
        .into_iter()
        .map(|i| {
            let kind = if i.kind == "tree" { "trees" } else { "blobs" };
            let mut v = json!({ "path": i.path, "mode": i.mode, "type": i.kind, "sha": i.sha,
                "url": format!("{base}/repos/{full}/git/{kind}/{}", i.sha) });
            if let Some(size) = i.size {
                v["size"] = json!(size);
            }
            v
        })
        .collect();
    ok(
        json!({ "sha": tree_sha, "url": format!("{base}/repos/{full}/git/trees/{tree_sha}"), "tree": tree, "truncated": false }),
    )
}

async fn get_blob(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, sha)): Path<(String, String, String)>,
) -> ApiResult {
    let (dir, full) = {
        let model = inner.model();
        let r = access(&model, &caller, &owner, &repo, "contents", "read")?;
        (r.git_dir.clone(), r.full_name())
    };
    let content = git::read_blob(&dir, &sha)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .ok_or_else(ApiError::not_found)?;
    let mut out = template("git/get-blob");
    out["content"] = json!(wrapped_base64(&content));
    out["encoding"] = json!("base64");
    out["url"] = json!(format!("{}/repos/{full}/git/blobs/{sha}", inner.base_url));
    out["sha"] = json!(sha);
    out["size"] = json!(content.len());
    out["node_id"] =
        json!(base64::engine::general_purpose::STANDARD.encode(format!("04:Blob{sha}")));
    ok(out)
}

fn person(info: &git::CommitInfo) -> Value {
    let date = chrono::DateTime::<Utc>::from_timestamp(info.time, 0)
        .map(ts)
        .unwrap_or_default();
    json!({ "name": info.author_name, "email": info.author_email, "date": date })
}

fn git_commit_json(base: &str, full: &str, info: &git::CommitInfo) -> Value {
    let mut out = template("git/get-commit");
    out["sha"] = json!(info.sha);
    out["node_id"] =
        json!(base64::engine::general_purpose::STANDARD.encode(format!("06:Commit{}", info.sha)));
    out["url"] = json!(format!("{base}/repos/{full}/git/commits/{}", info.sha));
    out["html_url"] = json!(format!("{base}/{full}/commit/{}", info.sha));
    out["author"] = person(info);
    out["committer"] = person(info);
    out["message"] = json!(info.message);
    out["tree"] =
        json!({ "sha": info.tree, "url": format!("{base}/repos/{full}/git/trees/{}", info.tree) });
    out["parents"] = json!(info
        .parents
        .iter()
        .map(|p| json!({ "sha": p, "url": format!("{base}/repos/{full}/git/commits/{p}"), "html_url": format!("{base}/{full}/commit/{p}") }))
        .collect::<Vec<_>>());
    out["verification"] = json!({ "verified": false, "reason": "unsigned", "signature": null, "payload": null, "verified_at": null });
    out
}

async fn get_git_commit(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, sha)): Path<(String, String, String)>,
) -> ApiResult {
    let (dir, full) = {
        let model = inner.model();
        let r = access(&model, &caller, &owner, &repo, "contents", "read")?;
        (r.git_dir.clone(), r.full_name())
    };
    let info = git::read_commit(&dir, &sha)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .ok_or_else(ApiError::not_found)?;
    ok(git_commit_json(&inner.base_url, &full, &info))
}

async fn get_commit(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, rev)): Path<(String, String, String)>,
) -> ApiResult {
    let (dir, full) = {
        let model = inner.model();
        let r = access(&model, &caller, &owner, &repo, "contents", "read")?;
        (r.git_dir.clone(), r.full_name())
    };
    let sha = git::resolve_commit(&dir, &rev)
        .map_err(|_| ApiError::unprocessable(format!("No commit found for SHA: {rev}")))?;
    let info = git::read_commit(&dir, &sha)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .ok_or_else(ApiError::not_found)?;
    let base = &inner.base_url;
    let git_commit = git_commit_json(base, &full, &info);
    let mut out = template("repos/get-commit");
    out["sha"] = json!(info.sha);
    out["node_id"] = git_commit["node_id"].clone();
    out["url"] = json!(format!("{base}/repos/{full}/commits/{}", info.sha));
    out["html_url"] = json!(format!("{base}/{full}/commit/{}", info.sha));
    out["comments_url"] = json!(format!("{base}/repos/{full}/commits/{}/comments", info.sha));
    out["commit"] = json!({
        "url": git_commit["url"], "author": git_commit["author"], "committer": git_commit["committer"],
        "message": info.message, "tree": git_commit["tree"], "comment_count": 0,
        "verification": git_commit["verification"],
    });
    out["author"] = Value::Null;
    out["committer"] = Value::Null;
    out["parents"] = git_commit["parents"].clone();
    if let Some(obj) = out.as_object_mut() {
        obj.remove("stats");
        obj.remove("files");
    }
    ok(out)
}

/// Legacy `permission` derived from the role, plus `role_name` (and `user.role_name`, which the schema requires).
async fn get_permission(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, username)): Path<(String, String, String)>,
) -> ApiResult {
    let model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "metadata", "read")?;
    if !model.users.contains_key(&username) {
        return Err(ApiError::not_found());
    }
    let role = user_role(r, &username);
    let (permission, flags) = role_access(&role);
    let renderer = Renderer {
        base: &inner.base_url,
        model: &model,
    };
    let mut user = renderer.user(&username);
    user["permissions"] = flags;
    user["role_name"] = json!(role);
    let mut out = template("repos/get-collaborator-permission-level");
    out["permission"] = json!(permission);
    out["role_name"] = json!(role);
    out["user"] = user;
    ok(out)
}

async fn dispatch(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, workflow)): Path<(String, String, String)>,
    body: Bytes,
) -> ApiResult {
    let body = parse_body(&body)?;
    let git_ref = str_field(&body, "ref")
        .ok_or_else(|| ApiError::validation("Workflow", "ref", "missing_field"))?
        .to_string();
    let mut model = inner.model();
    let by = caller.login(&model);
    let r = access(&model, &caller, &owner, &repo, "actions", "write")?;
    let known = r
        .workflows
        .values()
        .any(|w| w.file == workflow || w.id.to_string() == workflow);
    if !known {
        return Err(ApiError::not_found());
    }
    if git::resolve_commit(&r.git_dir, &git_ref).is_err() {
        return Err(ApiError::unprocessable(format!(
            "No ref found for: {git_ref}"
        )));
    }
    let full = r.full_name();
    model.dispatches.push(Dispatch {
        repo: full,
        workflow,
        git_ref,
        inputs: body.get("inputs").cloned().unwrap_or(json!({})),
        by,
    });
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn get_run(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, run_id)): Path<(String, String, u64)>,
) -> ApiResult {
    let model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "actions", "read")?;
    let run = model
        .workflow_runs
        .get(&run_id)
        .filter(|w| w.repo.eq_ignore_ascii_case(&r.full_name()))
        .ok_or_else(ApiError::not_found)?;
    ok(Renderer {
        base: &inner.base_url,
        model: &model,
    }
    .workflow_run(run))
}
