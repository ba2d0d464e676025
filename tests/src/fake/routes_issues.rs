//! Issue endpoints: issues, comments (paginated), reactions on comments, labels.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::{Extension, Router};
use chrono::Utc;
use serde_json::{json, Value};

use super::auth::{authorize_repo, Caller};
use super::http::{created, ok, paginate, parse_body, str_field, with_link, ApiError, ApiResult};
use super::model::{BotComment, Comment, Issue, Model, Reaction, Repo};
use super::render::Renderer;
use super::routes_repos::access;
use super::Inner;

pub(super) fn routes() -> Router<Arc<Inner>> {
    Router::new()
        .route(
            "/repos/{owner}/{repo}/issues",
            get(list_issues).post(create_issue),
        )
        .route("/repos/{owner}/{repo}/issues/{number}", get(get_issue))
        .route(
            "/repos/{owner}/{repo}/issues/{number}/comments",
            get(list_comments).post(create_comment),
        )
        .route(
            "/repos/{owner}/{repo}/issues/{number}/labels",
            post(add_labels),
        )
        .route(
            "/repos/{owner}/{repo}/issues/{number}/assignees",
            post(add_assignees).delete(remove_assignees),
        )
        .route(
            "/repos/{owner}/{repo}/issues/comments/{comment_id}",
            // GitHub accepts POST for PATCH endpoints; octocrab's update_comment sends POST.
            get(get_comment)
                .patch(update_comment)
                .post(update_comment)
                .delete(delete_comment),
        )
        .route(
            "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",
            get(list_reactions).post(create_reaction),
        )
}

/// Comments on PRs may be written with either the issues or the pull_requests grant.
fn access_issue_or_pull<'m>(
    model: &'m Model,
    caller: &Caller,
    owner: &str,
    repo: &str,
    level: &str,
) -> Result<&'m Repo, ApiError> {
    match access(model, caller, owner, repo, "issues", level) {
        Ok(r) => Ok(r),
        Err(e) if e.status == StatusCode::FORBIDDEN => {
            let r = model.repo(owner, repo).ok_or_else(ApiError::not_found)?;
            authorize_repo(model, caller.token()?, r, "pull_requests", level).map_err(|_| e)?;
            Ok(r)
        }
        Err(e) => Err(e),
    }
}

fn is_bot(caller: &Caller) -> bool {
    !matches!(caller, Caller::Token(t) if t.kind.is_person())
}

async fn get_issue(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
) -> ApiResult {
    let model = inner.model();
    let r = access_issue_or_pull(&model, &caller, &owner, &repo, "read")?;
    let issue = r.issues.get(&number).ok_or_else(ApiError::not_found)?;
    ok(Renderer {
        base: &inner.base_url,
        model: &model,
    }
    .issue(r, issue))
}

/// `GET /repos/{o}/{r}/issues`: issues and pull requests (as GitHub lists both), newest
/// first, filtered by `state` (default open) and `labels` (comma-separated, all must match).
async fn list_issues(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult {
    let model = inner.model();
    let r = access_issue_or_pull(&model, &caller, &owner, &repo, "read")?;
    let state = query.get("state").map_or("open", String::as_str);
    let wanted: Vec<&str> = query
        .get("labels")
        .map(|l| {
            l.split(',')
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let renderer = Renderer {
        base: &inner.base_url,
        model: &model,
    };
    let mut issues: Vec<&Issue> = r
        .issues
        .values()
        .filter(|i| state == "all" || i.state == state)
        .filter(|i| {
            wanted
                .iter()
                .all(|w| i.labels.iter().any(|l| l.eq_ignore_ascii_case(w)))
        })
        .collect();
    issues.sort_by(|a, b| {
        b.created_at
            .cmp(&a.created_at)
            .then(b.number.cmp(&a.number))
    });
    let items: Vec<Value> = issues.into_iter().map(|i| renderer.issue(r, i)).collect();
    let url = format!("{}/repos/{}/issues", inner.link_base(), r.full_name());
    let (page, link) = paginate(items, &query, &url);
    Ok(with_link(StatusCode::OK, json!(page), link))
}

async fn create_issue(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo)): Path<(String, String)>,
    body: Bytes,
) -> ApiResult {
    let body = parse_body(&body)?;
    let title = match body.get("title") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => return Err(ApiError::validation("Issue", "title", "missing_field")),
    };
    let mut model = inner.model();
    access(&model, &caller, &owner, &repo, "issues", "write")?;
    let author = caller.login(&model);
    model.user(&author);
    let id = model.next_id();
    let labels: Vec<String> = body
        .get("labels")
        .and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let now = Utc::now();
    let r = model
        .repo_mut(&owner, &repo)
        .ok_or_else(ApiError::not_found)?;
    let number = r.next_number;
    r.next_number += 1;
    r.issues.insert(
        number,
        Issue {
            id,
            number,
            title,
            body: str_field(&body, "body").map(str::to_string),
            author,
            state: "open".into(),
            labels,
            created_at: now,
            updated_at: now,
            closed_at: None,
            pull: None,
            assignees: Vec::new(),
            agent_assignment: None,
            copilot_sessions: 0,
        },
    );
    let r = model.repo(&owner, &repo).ok_or_else(ApiError::not_found)?;
    let issue = r.issues.get(&number).ok_or_else(ApiError::not_found)?;
    created(
        Renderer {
            base: &inner.base_url,
            model: &model,
        }
        .issue(r, issue),
    )
}

async fn list_comments(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult {
    let model = inner.model();
    let r = access_issue_or_pull(&model, &caller, &owner, &repo, "read")?;
    if !r.issues.contains_key(&number) {
        return Err(ApiError::not_found());
    }
    let full = r.full_name();
    let renderer = Renderer {
        base: &inner.base_url,
        model: &model,
    };
    let since = query
        .get("since")
        .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok());
    let items: Vec<Value> = model
        .comments
        .values()
        .filter(|c| c.repo.eq_ignore_ascii_case(&full) && c.issue_number == number)
        .filter(|c| since.is_none_or(|s| c.updated_at >= s))
        .map(|c| renderer.comment(c))
        .collect();
    let url = format!(
        "{}/repos/{}/issues/{}/comments",
        inner.link_base(),
        full,
        number
    );
    let (page, link) = paginate(items, &query, &url);
    Ok(with_link(StatusCode::OK, json!(page), link))
}

async fn create_comment(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
    body: Bytes,
) -> ApiResult {
    let body = parse_body(&body)?;
    let text = str_field(&body, "body")
        .ok_or_else(|| ApiError::validation("IssueComment", "body", "missing_field"))?;
    if text.chars().count() > 65536 {
        return Err(ApiError::validation("IssueComment", "body", "custom"));
    }
    let mut model = inner.model();
    let r = access_issue_or_pull(&model, &caller, &owner, &repo, "write")?;
    if !r.issues.contains_key(&number) {
        return Err(ApiError::not_found());
    }
    let full = r.full_name();
    // The Copilot coding agent takes up an `@copilot` mention only from a person with
    // write access; an App's or a bot's mention is ignored.
    let copilot_answers = text.to_ascii_lowercase().contains("@copilot")
        && !is_bot(&caller)
        && access(&model, &caller, &owner, &repo, "contents", "write").is_ok();
    let author = caller.login(&model);
    model.user(&author);
    if copilot_answers {
        if let Some(issue) = model
            .repo_mut(&owner, &repo)
            .and_then(|r| r.issues.get_mut(&number))
        {
            issue.copilot_sessions += 1;
        }
    }
    let id = model.next_id();
    let now = Utc::now();
    let comment = Comment {
        id,
        repo: full.clone(),
        issue_number: number,
        body: text.to_string(),
        author: author.clone(),
        created_at: now,
        updated_at: now,
        via_api: true,
        reactions: vec![],
    };
    model.comments.insert(id, comment);
    if is_bot(&caller) {
        model.bot_comments.push(BotComment {
            id,
            repo: full,
            issue_number: number,
            author,
            body: text.to_string(),
        });
    }
    let c = model.comments.get(&id).ok_or_else(ApiError::not_found)?;
    created(
        Renderer {
            base: &inner.base_url,
            model: &model,
        }
        .comment(c),
    )
}

fn find_comment<'m>(model: &'m Model, full: &str, id: u64) -> Result<&'m Comment, ApiError> {
    model
        .comments
        .get(&id)
        .filter(|c| c.repo.eq_ignore_ascii_case(full))
        .ok_or_else(ApiError::not_found)
}

async fn get_comment(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, id)): Path<(String, String, u64)>,
) -> ApiResult {
    let model = inner.model();
    let r = access_issue_or_pull(&model, &caller, &owner, &repo, "read")?;
    let c = find_comment(&model, &r.full_name(), id)?;
    ok(Renderer {
        base: &inner.base_url,
        model: &model,
    }
    .comment(c))
}

async fn update_comment(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, id)): Path<(String, String, u64)>,
    body: Bytes,
) -> ApiResult {
    let body = parse_body(&body)?;
    let text = str_field(&body, "body")
        .ok_or_else(|| ApiError::validation("IssueComment", "body", "missing_field"))?
        .to_string();
    let mut model = inner.model();
    let r = access_issue_or_pull(&model, &caller, &owner, &repo, "write")?;
    let full = r.full_name();
    let author = find_comment(&model, &full, id)?.author.clone();
    let login = caller.login(&model);
    // Integrations may edit only their own comments unless they hold write on the repo.
    if author != login && !is_bot(&caller) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "Must have admin rights to Repository.",
        ));
    }
    let comment = model
        .comments
        .get_mut(&id)
        .ok_or_else(ApiError::not_found)?;
    comment.body = text.clone();
    comment.updated_at = Utc::now();
    let issue_number = comment.issue_number;
    if is_bot(&caller) {
        model.bot_comment_edits.push(BotComment {
            id,
            repo: full,
            issue_number,
            author,
            body: text,
        });
    }
    let c = model.comments.get(&id).ok_or_else(ApiError::not_found)?;
    ok(Renderer {
        base: &inner.base_url,
        model: &model,
    }
    .comment(c))
}

async fn delete_comment(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, id)): Path<(String, String, u64)>,
) -> ApiResult {
    let mut model = inner.model();
    let r = access_issue_or_pull(&model, &caller, &owner, &repo, "write")?;
    let full = r.full_name();
    find_comment(&model, &full, id)?;
    model.comments.remove(&id);
    Ok(StatusCode::NO_CONTENT.into_response())
}

const REACTIONS: [&str; 8] = [
    "+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes",
];

async fn list_reactions(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, id)): Path<(String, String, u64)>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult {
    let model = inner.model();
    let r = access_issue_or_pull(&model, &caller, &owner, &repo, "read")?;
    let full = r.full_name();
    let c = find_comment(&model, &full, id)?;
    let renderer = Renderer {
        base: &inner.base_url,
        model: &model,
    };
    let content = query.get("content");
    let items: Vec<Value> = c
        .reactions
        .iter()
        .filter(|r| content.is_none_or(|want| &r.content == want))
        .map(|r| renderer.reaction(r))
        .collect();
    let url = format!(
        "{}/repos/{}/issues/comments/{}/reactions",
        inner.link_base(),
        full,
        id
    );
    let (page, link) = paginate(items, &query, &url);
    Ok(with_link(StatusCode::OK, json!(page), link))
}

/// 201 for a new reaction, 200 with the existing one when this user already reacted so.
async fn create_reaction(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, id)): Path<(String, String, u64)>,
    body: Bytes,
) -> ApiResult {
    let body = parse_body(&body)?;
    let content = str_field(&body, "content").unwrap_or_default().to_string();
    if !REACTIONS.contains(&content.as_str()) {
        return Err(ApiError::validation("Reaction", "content", "invalid"));
    }
    let mut model = inner.model();
    let r = access_issue_or_pull(&model, &caller, &owner, &repo, "write")?;
    let full = r.full_name();
    find_comment(&model, &full, id)?;
    let user = caller.login(&model);
    let reaction_id = model.next_id();
    let comment = model
        .comments
        .get_mut(&id)
        .ok_or_else(ApiError::not_found)?;
    let (status, reaction) = match comment
        .reactions
        .iter()
        .find(|r| r.user == user && r.content == content)
    {
        Some(existing) => (StatusCode::OK, existing.clone()),
        None => {
            let reaction = Reaction {
                id: reaction_id,
                content,
                user,
                created_at: Utc::now(),
            };
            comment.reactions.push(reaction.clone());
            (StatusCode::CREATED, reaction)
        }
    };
    let out = Renderer {
        base: &inner.base_url,
        model: &model,
    }
    .reaction(&reaction);
    Ok((status, axum::Json(out)).into_response())
}

async fn add_labels(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
    body: Bytes,
) -> ApiResult {
    let body = parse_body(&body)?;
    let names: Vec<String> = match &body {
        Value::Array(items) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        other => other
            .get("labels")
            .and_then(Value::as_array)
            .map(|l| {
                l.iter()
                    .filter_map(|v| {
                        v.as_str()
                            .or_else(|| v.get("name")?.as_str())
                            .map(str::to_string)
                    })
                    .collect()
            })
            .unwrap_or_default(),
    };
    let mut model = inner.model();
    access_issue_or_pull(&model, &caller, &owner, &repo, "write")?;
    let r = model
        .repo_mut(&owner, &repo)
        .ok_or_else(ApiError::not_found)?;
    let full = r.full_name();
    let issue = r.issues.get_mut(&number).ok_or_else(ApiError::not_found)?;
    for name in names {
        if !issue.labels.contains(&name) {
            issue.labels.push(name);
        }
    }
    let labels = issue.labels.clone();
    let renderer = Renderer {
        base: &inner.base_url,
        model: &model,
    };
    ok(json!(labels
        .iter()
        .map(|l| renderer.label(&full, l))
        .collect::<Vec<_>>()))
}

/// The login GitHub shows for the Copilot coding agent, and the one requests name.
const COPILOT_LOGIN: &str = "Copilot";
const COPILOT_ASSIGNEE: &str = "copilot-swe-agent[bot]";

/// The `assignees` of an add or remove request: logins (or `{login}` objects).
fn assignee_logins(body: &Value) -> Vec<String> {
    body.get("assignees")
        .and_then(Value::as_array)
        .map(|l| {
            l.iter()
                .filter_map(|v| v.as_str().or_else(|| v.get("login")?.as_str()))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// As GitHub documents it: assignees a caller may not assign are silently ignored.
/// Only people with push access assign; the Copilot coding agent is assigned only with
/// a user token (installation tokens and `GITHUB_TOKEN` are ignored), and records
/// the request's `agent_assignment`. Answers 201 with the issue.
async fn add_assignees(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
    body: Bytes,
) -> ApiResult {
    let body = parse_body(&body)?;
    let logins = assignee_logins(&body);
    let mut model = inner.model();
    access_issue_or_pull(&model, &caller, &owner, &repo, "write")?;
    let user_token = matches!(&caller, Caller::Token(t) if t.kind.is_person());
    let pusher = {
        let r = model.repo(&owner, &repo).ok_or_else(ApiError::not_found)?;
        let login = caller.login(&model);
        matches!(
            r.roles.get(&login).map(String::as_str),
            Some("write" | "maintain" | "admin")
        ) || !user_token
    };
    let mut added = Vec::new();
    for login in logins {
        let copilot = login.eq_ignore_ascii_case(COPILOT_ASSIGNEE);
        if !pusher || (copilot && !user_token) {
            continue;
        }
        let name = if copilot {
            COPILOT_LOGIN.to_owned()
        } else {
            login
        };
        if name == COPILOT_LOGIN {
            let _ = model.user(COPILOT_LOGIN);
        }
        added.push(name);
    }
    let r = model
        .repo_mut(&owner, &repo)
        .ok_or_else(ApiError::not_found)?;
    let issue = r.issues.get_mut(&number).ok_or_else(ApiError::not_found)?;
    for name in added {
        if name == COPILOT_LOGIN {
            issue.agent_assignment = body.get("agent_assignment").cloned();
            if !issue.assignees.contains(&name) {
                issue.copilot_sessions += 1;
            }
        }
        if !issue.assignees.contains(&name) {
            issue.assignees.push(name);
        }
    }
    let r = model.repo(&owner, &repo).ok_or_else(ApiError::not_found)?;
    let issue = r.issues.get(&number).ok_or_else(ApiError::not_found)?;
    created(
        Renderer {
            base: &inner.base_url,
            model: &model,
        }
        .issue(r, issue),
    )
}

/// [Remove assignees from an issue](https://docs.github.com/rest/issues/assignees#remove-assignees-from-an-issue):
/// people with push access remove any listed login (the Copilot coding agent by its
/// `copilot-swe-agent[bot]` name too); others are ignored. Answers 200 with the issue.
async fn remove_assignees(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
    body: Bytes,
) -> ApiResult {
    let body = parse_body(&body)?;
    let logins = assignee_logins(&body);
    let mut model = inner.model();
    access_issue_or_pull(&model, &caller, &owner, &repo, "write")?;
    let r = model
        .repo_mut(&owner, &repo)
        .ok_or_else(ApiError::not_found)?;
    let issue = r.issues.get_mut(&number).ok_or_else(ApiError::not_found)?;
    for login in logins {
        let name = if login.eq_ignore_ascii_case(COPILOT_ASSIGNEE) {
            COPILOT_LOGIN.to_owned()
        } else {
            login
        };
        issue.assignees.retain(|a| !a.eq_ignore_ascii_case(&name));
    }
    let r = model.repo(&owner, &repo).ok_or_else(ApiError::not_found)?;
    let issue = r.issues.get(&number).ok_or_else(ApiError::not_found)?;
    ok(Renderer {
        base: &inner.base_url,
        model: &model,
    }
    .issue(r, issue))
}
