//! Pull request endpoints: pulls, their files, reviews (REST uppercase states), dismissals and review requests.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, put};
use axum::{Extension, Router};
use chrono::Utc;
use serde_json::{json, Value};

use super::auth::Caller;
use super::http::{ok, paginate, parse_body, str_field, with_link, ApiError, ApiResult};
use super::model::Review;
use super::render::{template, Renderer};
use super::routes_repos::access;
use super::Inner;

pub(super) fn routes() -> Router<Arc<Inner>> {
    Router::new()
        .route(
            "/repos/{owner}/{repo}/pulls",
            get(list_pulls).post(create_pull),
        )
        .route(
            "/repos/{owner}/{repo}/pulls/{number}",
            get(get_pull).patch(update_pull),
        )
        .route(
            "/repos/{owner}/{repo}/pulls/{number}/merge",
            put(merge_pull),
        )
        .route(
            "/repos/{owner}/{repo}/pulls/{number}/files",
            get(list_files),
        )
        .route(
            "/repos/{owner}/{repo}/pulls/{number}/reviews",
            get(list_reviews).post(create_review),
        )
        .route(
            "/repos/{owner}/{repo}/pulls/{number}/reviews/{review_id}/dismissals",
            put(dismiss_review),
        )
        .route(
            "/repos/{owner}/{repo}/pulls/{number}/requested_reviewers",
            get(list_requested).post(request_reviewers),
        )
}

/// `GET …/requested_reviewers`: `{users, teams}` still asked to review.
async fn list_requested(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
) -> ApiResult {
    let model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "pull_requests", "read")?;
    let pull = r
        .issues
        .get(&number)
        .and_then(|i| i.pull.as_ref())
        .ok_or_else(ApiError::not_found)?;
    let renderer = Renderer {
        base: &inner.base_url,
        model: &model,
    };
    ok(json!({
        "users": pull.requested_reviewers.iter().map(|l| renderer.user(l)).collect::<Vec<_>>(),
        "teams": renderer.teams(&r.owner, &pull.requested_teams),
    }))
}

/// `POST …/requested_reviewers`: as GitHub, all or nothing: 422 when a login is the
/// pull request's author, or a login or team is not a collaborator of the repository
/// (a team must be one of the repository owner's); 201 with the pull request otherwise.
async fn request_reviewers(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
    body: Bytes,
) -> ApiResult {
    let body = parse_body(&body)?;
    let list = |name: &str| -> Vec<String> {
        body.get(name)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (users, teams) = (list("reviewers"), list("team_reviewers"));
    let mut model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "pull_requests", "write")?;
    let full = r.full_name();
    let issue = r.issues.get(&number).ok_or_else(ApiError::not_found)?;
    issue.pull.as_ref().ok_or_else(ApiError::not_found)?;
    if users.iter().any(|u| u.eq_ignore_ascii_case(&issue.author)) {
        return Err(ApiError::unprocessable(
            "Review cannot be requested from pull request author.",
        ));
    }
    let collaborator = |login: &str| {
        login.eq_ignore_ascii_case(&r.owner)
            || r.roles
                .iter()
                .any(|(l, role)| l.eq_ignore_ascii_case(login) && role != "none")
    };
    let team_known = |slug: &str| {
        model
            .teams
            .contains_key(&format!("{}/{slug}", r.owner).to_ascii_lowercase())
    };
    if !users.iter().all(|u| collaborator(u)) || !teams.iter().all(|t| team_known(t)) {
        return Err(ApiError::unprocessable(format!(
            "Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the {full} repository."
        )));
    }
    let repo_mut = model
        .repo_mut(&owner, &repo)
        .ok_or_else(ApiError::not_found)?;
    let issue = repo_mut
        .issues
        .get_mut(&number)
        .ok_or_else(ApiError::not_found)?;
    if let Some(pull) = issue.pull.as_mut() {
        for u in users {
            if !pull
                .requested_reviewers
                .iter()
                .any(|x| x.eq_ignore_ascii_case(&u))
            {
                pull.requested_reviewers.push(u);
            }
        }
        for t in teams {
            if !pull
                .requested_teams
                .iter()
                .any(|x| x.eq_ignore_ascii_case(&t))
            {
                pull.requested_teams.push(t);
            }
        }
    }
    let r = model.repo(&owner, &repo).ok_or_else(ApiError::not_found)?;
    let issue = r.issues.get(&number).ok_or_else(ApiError::not_found)?;
    let rendered = Renderer {
        base: &inner.base_url,
        model: &model,
    }
    .pull(r, issue, false);
    Ok((StatusCode::CREATED, axum::Json(rendered)).into_response())
}

async fn list_pulls(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult {
    let model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "pull_requests", "read")?;
    let state = query.get("state").map(String::as_str).unwrap_or("open");
    let renderer = Renderer {
        base: &inner.base_url,
        model: &model,
    };
    let mut issues: Vec<_> = r
        .issues
        .values()
        .filter(|i| i.pull.is_some())
        .filter(|i| state == "all" || i.state == state)
        .filter(|i| {
            let pull = i.pull.as_ref();
            query
                .get("base")
                .is_none_or(|b| pull.is_some_and(|p| &p.base_ref == b))
                && query.get("head").is_none_or(|h| {
                    pull.is_some_and(|p| h.rsplit(':').next() == Some(p.head_ref.as_str()))
                })
        })
        .collect();
    issues.sort_by(|a, b| {
        b.created_at
            .cmp(&a.created_at)
            .then(b.number.cmp(&a.number))
    });
    let items: Vec<Value> = issues
        .into_iter()
        .map(|i| renderer.pull(r, i, true))
        .collect();
    let url = format!("{}/repos/{}/pulls", inner.link_base(), r.full_name());
    let (page, link) = paginate(items, &query, &url);
    Ok(with_link(StatusCode::OK, json!(page), link))
}

async fn get_pull(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
) -> ApiResult {
    let model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "pull_requests", "read")?;
    let issue = r
        .issues
        .get(&number)
        .filter(|i| i.pull.is_some())
        .ok_or_else(ApiError::not_found)?;
    ok(Renderer {
        base: &inner.base_url,
        model: &model,
    }
    .pull(r, issue, false))
}

/// `PATCH …/pulls/{number}`: title, body and `state` (`open` or `closed`), as "Update a
/// pull request". A merged pull request cannot be reopened (422). The `pull_request`
/// webhook is the test's to send.
async fn update_pull(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
    body: Bytes,
) -> ApiResult {
    let body = parse_body(&body)?;
    let mut model = inner.model();
    access(&model, &caller, &owner, &repo, "pull_requests", "write")?;
    let r = model
        .repo_mut(&owner, &repo)
        .ok_or_else(ApiError::not_found)?;
    let issue = r
        .issues
        .get_mut(&number)
        .filter(|i| i.pull.is_some())
        .ok_or_else(ApiError::not_found)?;
    let now = Utc::now();
    match str_field(&body, "state") {
        None => {}
        Some("closed") if issue.state == "open" => {
            issue.state = "closed".into();
            issue.closed_at = Some(now);
        }
        Some("open") if issue.state == "closed" => {
            if issue.pull.as_ref().is_some_and(|p| p.merged_at.is_some()) {
                return Err(ApiError::validation("PullRequest", "state", "invalid"));
            }
            issue.state = "open".into();
            issue.closed_at = None;
        }
        Some("open" | "closed") => {}
        Some(_) => return Err(ApiError::validation("PullRequest", "state", "invalid")),
    }
    if let Some(title) = str_field(&body, "title") {
        issue.title = title.to_owned();
    }
    if let Some(text) = str_field(&body, "body") {
        issue.body = Some(text.to_owned());
    }
    issue.updated_at = now;
    let r = model.repo(&owner, &repo).ok_or_else(ApiError::not_found)?;
    let issue = r.issues.get(&number).ok_or_else(ApiError::not_found)?;
    ok(Renderer {
        base: &inner.base_url,
        model: &model,
    }
    .pull(r, issue, false))
}

/// `PUT …/pulls/{number}/merge`: the merge button. A real merge of the head into the
/// base branch (`merge_method` `merge` makes a merge commit; `squash` and `rebase` one
/// commit on the base), only while the pull request is open and merges cleanly (405
/// otherwise) and its head is still `sha` when given (409), as on GitHub. Needs
/// `contents: write`. The `pull_request` webhook is the test's to send.
async fn merge_pull(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
    body: Bytes,
) -> ApiResult {
    let body = parse_body(&body)?;
    let method = str_field(&body, "merge_method").unwrap_or("merge");
    if !matches!(method, "merge" | "squash" | "rebase") {
        return Err(ApiError::validation(
            "PullRequest",
            "merge_method",
            "invalid",
        ));
    }
    let mut model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "contents", "write")?;
    let dir = r.git_dir.clone();
    let issue = r
        .issues
        .get(&number)
        .filter(|i| i.pull.is_some())
        .ok_or_else(ApiError::not_found)?;
    let pull = issue.pull.clone().ok_or_else(ApiError::not_found)?;
    let not_mergeable = || {
        ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "Pull Request is not mergeable",
        )
    };
    if issue.state != "open" || pull.merged_at.is_some() {
        return Err(not_mergeable());
    }
    if str_field(&body, "sha").is_some_and(|sha| sha != pull.head_sha) {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "Head branch was modified. Review and try the merge again.",
        ));
    }
    let message = format!("{} (#{number})", issue.title);
    let merged = super::git::merge_into(
        &dir,
        &pull.base_ref,
        &pull.head_sha,
        &message,
        method != "merge",
    )
    .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
    .ok_or_else(not_mergeable)?;
    let now = Utc::now();
    let issue = model
        .repo_mut(&owner, &repo)
        .and_then(|r| r.issues.get_mut(&number))
        .ok_or_else(ApiError::not_found)?;
    issue.state = "closed".into();
    issue.closed_at = Some(now);
    issue.updated_at = now;
    if let Some(pull) = issue.pull.as_mut() {
        pull.merged_at = Some(now);
    }
    ok(json!({ "sha": merged, "merged": true, "message": "Pull Request successfully merged" }))
}

async fn list_files(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult {
    let model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "pull_requests", "read")?;
    let full = r.full_name();
    let pull = r
        .issues
        .get(&number)
        .and_then(|i| i.pull.as_ref())
        .ok_or_else(ApiError::not_found)?;
    let base = &inner.base_url;
    let items: Vec<Value> = pull
        .files
        .iter()
        .map(|f| {
            let mut v = template("pulls/list-files");
            v["sha"] = json!(pull.head_sha);
            v["filename"] = json!(f.filename);
            v["status"] = json!(f.status);
            v["additions"] = json!(f.additions);
            v["deletions"] = json!(f.deletions);
            v["changes"] = json!(f.additions + f.deletions);
            v["blob_url"] = json!(format!(
                "{base}/{full}/blob/{}/{}",
                pull.head_sha, f.filename
            ));
            v["raw_url"] = json!(format!(
                "{base}/{full}/raw/{}/{}",
                pull.head_sha, f.filename
            ));
            v["contents_url"] = json!(format!(
                "{base}/repos/{full}/contents/{}?ref={}",
                f.filename, pull.head_sha
            ));
            match &f.patch {
                Some(p) => v["patch"] = json!(p),
                None => {
                    if let Some(obj) = v.as_object_mut() {
                        obj.remove("patch");
                    }
                }
            }
            v
        })
        .collect();
    let url = format!("{}/repos/{full}/pulls/{number}/files", inner.link_base());
    let (page, link) = paginate(items, &query, &url);
    Ok(with_link(StatusCode::OK, json!(page), link))
}

async fn list_reviews(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult {
    let model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "pull_requests", "read")?;
    let full = r.full_name();
    r.issues
        .get(&number)
        .and_then(|i| i.pull.as_ref())
        .ok_or_else(ApiError::not_found)?;
    let renderer = Renderer {
        base: &inner.base_url,
        model: &model,
    };
    let items: Vec<Value> = model
        .reviews
        .values()
        .filter(|rv| rv.repo.eq_ignore_ascii_case(&full) && rv.pull_number == number)
        .map(|rv| renderer.review(rv))
        .collect();
    let url = format!("{}/repos/{full}/pulls/{number}/reviews", inner.link_base());
    let (page, link) = paginate(items, &query, &url);
    Ok(with_link(StatusCode::OK, json!(page), link))
}

/// `event` APPROVE / REQUEST_CHANGES / COMMENT; without it the review stays PENDING.
async fn create_review(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, number)): Path<(String, String, u64)>,
    body: Bytes,
) -> ApiResult {
    let body = parse_body(&body)?;
    let mut model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "pull_requests", "write")?;
    let full = r.full_name();
    let issue = r.issues.get(&number).ok_or_else(ApiError::not_found)?;
    let pull = issue.pull.as_ref().ok_or_else(ApiError::not_found)?;
    let head = pull.head_sha.clone();
    let pr_author = issue.author.clone();
    let state = match str_field(&body, "event") {
        Some("APPROVE") => "APPROVED",
        Some("REQUEST_CHANGES") => "CHANGES_REQUESTED",
        Some("COMMENT") => "COMMENTED",
        None => "PENDING",
        Some(_) => {
            return Err(ApiError::validation(
                "PullRequestReview",
                "event",
                "invalid",
            ))
        }
    };
    let text = str_field(&body, "body").unwrap_or_default().to_string();
    if matches!(state, "CHANGES_REQUESTED" | "COMMENTED") && text.is_empty() {
        return Err(ApiError::unprocessable(
            "Unprocessable Entity: body is required for this event",
        ));
    }
    let user = caller.login(&model);
    if state == "APPROVED" && user == pr_author {
        return Err(ApiError::unprocessable(
            "Can not approve your own pull request",
        ));
    }
    let id = model.next_id();
    let review = Review {
        id,
        repo: full,
        pull_number: number,
        user,
        body: text,
        state: state.into(),
        commit_id: str_field(&body, "commit_id")
            .map(str::to_string)
            .unwrap_or(head),
        submitted_at: Utc::now(),
    };
    model.reviews.insert(id, review.clone());
    // GitHub drops a reviewer's pending request once they review.
    if let Some(pull) = model
        .repo_mut(&owner, &repo)
        .and_then(|r| r.issues.get_mut(&number))
        .and_then(|i| i.pull.as_mut())
    {
        pull.requested_reviewers
            .retain(|l| !l.eq_ignore_ascii_case(&review.user));
    }
    ok(Renderer {
        base: &inner.base_url,
        model: &model,
    }
    .review(&review))
}

async fn dismiss_review(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo, number, review_id)): Path<(String, String, u64, u64)>,
    body: Bytes,
) -> ApiResult {
    let body = parse_body(&body)?;
    if str_field(&body, "message").is_none() {
        return Err(ApiError::validation(
            "PullRequestReview",
            "message",
            "missing_field",
        ));
    }
    let mut model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "pull_requests", "write")?;
    let full = r.full_name();
    let review = model
        .reviews
        .get_mut(&review_id)
        .filter(|rv| rv.repo.eq_ignore_ascii_case(&full) && rv.pull_number == number)
        .ok_or_else(ApiError::not_found)?;
    if !matches!(review.state.as_str(), "APPROVED" | "CHANGES_REQUESTED") {
        return Err(ApiError::unprocessable(
            "Can not dismiss a commented pull request review",
        ));
    }
    review.state = "DISMISSED".into();
    let review = review.clone();
    ok(Renderer {
        base: &inner.base_url,
        model: &model,
    }
    .review(&review))
}

/// Opens a pull request from a branch pushed to the repository (`head` is a branch name
/// here; forks are not modelled over REST). Its files are the real diff of the branch
/// against `base`. 422 when a field is missing or the head branch does not exist, as
/// on GitHub. The `pull_request` webhook is the test's to send.
async fn create_pull(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo)): Path<(String, String)>,
    body: Bytes,
) -> ApiResult {
    let body = parse_body(&body)?;
    let field = |name: &str| str_field(&body, name).map(str::to_owned);
    let title = field("title")
        .ok_or_else(|| ApiError::validation("PullRequest", "title", "missing_field"))?;
    let head = field("head")
        .ok_or_else(|| ApiError::validation("PullRequest", "head", "missing_field"))?;
    let base = field("base")
        .ok_or_else(|| ApiError::validation("PullRequest", "base", "missing_field"))?;
    let mut model = inner.model();
    let r = access(&model, &caller, &owner, &repo, "pull_requests", "write")?;
    let dir = r.git_dir.clone();
    let head_ref = head.rsplit(':').next().unwrap_or(&head).to_owned();
    let resolve = |rev: &str| {
        super::git::ref_target(&dir, &format!("heads/{rev}"))
            .ok()
            .flatten()
            .ok_or_else(|| ApiError::validation("PullRequest", "head", "invalid"))
    };
    let head_sha = resolve(&head_ref)?;
    let base_sha = resolve(&base)?;
    let files = super::git::changed_files(&dir, &base_sha, &head_sha)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    let author = caller.login(&model);
    model.user(&author);
    let issue_id = model.next_id();
    let pull_id = model.next_id();
    let r = model
        .repo_mut(&owner, &repo)
        .ok_or_else(ApiError::not_found)?;
    let number = r.next_number;
    r.next_number += 1;
    let now = Utc::now();
    r.issues.insert(
        number,
        super::model::Issue {
            id: issue_id,
            number,
            title,
            body: field("body"),
            author,
            state: "open".into(),
            labels: vec![],
            created_at: now,
            updated_at: now,
            closed_at: None,
            assignees: Vec::new(),
            agent_assignment: None,
            copilot_sessions: 0,
            pull: Some(super::model::Pull {
                id: pull_id,
                head_ref,
                head_sha,
                base_ref: base,
                base_sha,
                draft: body.get("draft").and_then(Value::as_bool).unwrap_or(false),
                merged_at: None,
                files,
                head_repo: None,
                requested_reviewers: Vec::new(),
                requested_teams: Vec::new(),
            }),
        },
    );
    let r = model.repo(&owner, &repo).ok_or_else(ApiError::not_found)?;
    let issue = r.issues.get(&number).ok_or_else(ApiError::not_found)?;
    let rendered = Renderer {
        base: &inner.base_url,
        model: &model,
    }
    .pull(r, issue, false);
    Ok((StatusCode::CREATED, axum::Json(rendered)).into_response())
}
