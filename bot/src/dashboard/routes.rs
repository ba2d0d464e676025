//! The dashboard's routes and read-only pages: the missions, repository, plan and JSON views built from the ledger branches.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use navin_engine::view::RepoView;
use navin_github::ApiRequest;
use serde::Deserialize;

use super::access::{AccessList, RepoAccess, Role};
use super::oauth::{self, read_cookie};
use super::pages;
use super::pages::actions::Acts;
use super::pages::missions::MissionRow;
use super::pages::plan::{Conversation, PlanListRow};
use super::session::random_token;
use super::session::SESSION_COOKIE;
use super::signed_in::{links, readable, view_of, CsrfFormFields, SignedIn};
use super::{actions, assets, deliveries, editor, Dashboard, DashboardError};

/// Repositories read for one missions or plans page; GitHub's list beyond is cut (and
/// the page says so).
pub const MAX_REPOS_PER_PAGE: usize = 200;
/// Ledger clones read at once for one page.
const VIEW_CONCURRENCY: usize = 8;

pub fn routes(dashboard: Arc<Dashboard>) -> Router {
    Router::new()
        .route("/", get(home))
        .route("/login", get(oauth::login))
        .route("/auth/callback", get(oauth::callback))
        .route("/logout", post(logout))
        .route("/missions", get(missions))
        .route("/plans", get(plans))
        .route("/r/{owner}/{repo}", get(repository))
        .route("/r/{owner}/{repo}/act", post(actions::act))
        .route("/r/{owner}/{repo}/plans/{id}", get(plan).post(editor::save))
        .route("/r/{owner}/{repo}/plans/{id}/edit", get(editor::edit))
        .route(
            "/r/{owner}/{repo}/plans/{id}/validate",
            post(editor::validate),
        )
        .route("/api/r/{owner}/{repo}", get(api_repository))
        .route("/api/r/{owner}/{repo}/plans/{id}", get(api_plan))
        .route("/deliveries", get(deliveries::list))
        .route(
            "/deliveries/{delivery_id}/redeliver",
            post(deliveries::redeliver),
        )
        .route("/assets/{name}", get(assets::serve))
        .route(
            "/favicon.ico",
            get(|| async { axum::http::StatusCode::NO_CONTENT }),
        )
        .with_state(dashboard)
}

/// The prelude of every page about one repository: what the person can read, the
/// repository (404 unless among it) and its ledger branch at one tip.
async fn readable_view(
    dashboard: &Dashboard,
    who: &SignedIn,
    owner: &str,
    name: &str,
) -> Result<(AccessList, RepoAccess, RepoView), DashboardError> {
    let access = who.access(dashboard).await?;
    let repo = readable(&access, owner, name)?;
    let view = view_of(dashboard, &repo).await?;
    Ok((access, repo, view))
}

async fn home(State(dashboard): State<Arc<Dashboard>>, headers: axum::http::HeaderMap) -> Response {
    let signed_in = read_cookie(&headers, SESSION_COOKIE)
        .and_then(|c| dashboard.sessions.verify(c))
        .and_then(|id| dashboard.sessions.get(&id));
    match signed_in {
        Some(_) => Redirect::to(&dashboard.path("/missions")).into_response(),
        None => Html(
            pages::layout::sign_in_page(&dashboard.path(""), &dashboard.path("/login"))
                .into_string(),
        )
        .into_response(),
    }
}

async fn logout(
    State(dashboard): State<Arc<Dashboard>>,
    who: SignedIn,
    axum::Form(form): axum::Form<CsrfFormFields>,
) -> Result<Response, DashboardError> {
    who.check_csrf(form.csrf.as_deref())?;
    dashboard.sessions.remove(&who.session_id);
    dashboard.access.forget(who.user.user_id);
    oauth::revoke(&dashboard, &who.user.token).await;
    let mut response = Redirect::to(&dashboard.path("/")).into_response();
    response.headers_mut().append(
        header::SET_COOKIE,
        oauth::cookie(SESSION_COOKIE, "", &dashboard.path(""), 0),
    );
    Ok(response)
}

/// Views of up to [`MAX_REPOS_PER_PAGE`] repositories, a few at a time. A repository
/// that cannot be read shows its problem in its row instead of failing the page.
async fn views(
    dashboard: &Arc<Dashboard>,
    repos: &[RepoAccess],
) -> Vec<(RepoAccess, Result<RepoView, String>)> {
    let semaphore = Arc::new(tokio::sync::Semaphore::new(VIEW_CONCURRENCY));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, repo) in repos.iter().take(MAX_REPOS_PER_PAGE).cloned().enumerate() {
        let dashboard = Arc::clone(dashboard);
        let semaphore = Arc::clone(&semaphore);
        tasks.spawn(async move {
            let _permit = semaphore.acquire_owned().await;
            let view = view_of(&dashboard, &repo).await.map_err(|e| {
                tracing::warn!(repository = %repo.full_name, error = %e, "dashboard cannot read a ledger");
                "Navin could not read this repository's ledger just now; try again in a minute.".to_owned()
            });
            (i, repo, view)
        });
    }
    let mut out = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        if let Ok(item) = joined {
            out.push(item);
        }
    }
    out.sort_by_key(|(i, _, _)| *i);
    out.into_iter()
        .map(|(_, repo, view)| (repo, view))
        .collect()
}

async fn missions(
    State(dashboard): State<Arc<Dashboard>>,
    who: SignedIn,
) -> Result<Response, DashboardError> {
    let access = who.access(&dashboard).await?;
    let rows: Vec<MissionRow> = views(&dashboard, &access.repos)
        .await
        .into_iter()
        .map(|(repo, view)| match view {
            Ok(view) => MissionRow {
                full_name: repo.full_name,
                plans: view.plans.len(),
                pending_plans: view
                    .plans
                    .iter()
                    .filter(|p| {
                        p.record
                            .as_ref()
                            .is_ok_and(|r| pages::repo::is_pending(r.status))
                    })
                    .count(),
                ledger: view.ledger,
            },
            Err(problem) => MissionRow {
                full_name: repo.full_name,
                ledger: Err(problem),
                plans: 0,
                pending_plans: 0,
            },
        })
        .collect();
    let truncated = access.truncated || access.repos.len() > MAX_REPOS_PER_PAGE;
    let chrome = who.chrome(&dashboard, &access);
    Ok(Html(pages::missions::render(&chrome, &rows, truncated).into_string()).into_response())
}

async fn plans(
    State(dashboard): State<Arc<Dashboard>>,
    who: SignedIn,
) -> Result<Response, DashboardError> {
    let access = who.access(&dashboard).await?;
    let views = views(&dashboard, &access.repos).await;
    let mut rows: Vec<PlanListRow<'_>> = views
        .iter()
        .filter_map(|(repo, view)| view.as_ref().ok().map(|v| (repo, v)))
        .flat_map(|(repo, view)| {
            view.plans.iter().map(move |entry| PlanListRow {
                repo: &repo.full_name,
                entry,
            })
        })
        .collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.entry.record.as_ref().map(|r| r.updated_at).ok()));
    let chrome = who.chrome(&dashboard, &access);
    Ok(Html(pages::plan::render_list(&chrome, &rows).into_string()).into_response())
}

async fn repository(
    State(dashboard): State<Arc<Dashboard>>,
    who: SignedIn,
    Path((owner, name)): Path<(String, String)>,
) -> Result<Response, DashboardError> {
    let (access, repo, view) = readable_view(&dashboard, &who, &owner, &name).await?;
    let chrome = who.chrome(&dashboard, &access);
    let token = random_token();
    let sign = |binding: &str| dashboard.sessions.sign(binding);
    // Forms for writers; the action itself checks the role on GitHub again.
    let acts = (repo.role >= Role::Write).then_some(Acts {
        repo: &repo.full_name,
        token: &token,
        sign: &sign,
    });
    let page = pages::repo::render(&chrome, &view, &links(&dashboard, &repo), acts, None);
    Ok(Html(page.into_string()).into_response())
}

#[derive(Debug, Deserialize)]
pub struct PlanQuery {
    #[serde(default)]
    saved: Option<String>,
    #[serde(default)]
    merged: Option<String>,
}

async fn plan(
    State(dashboard): State<Arc<Dashboard>>,
    who: SignedIn,
    Path((owner, name, id)): Path<(String, String, String)>,
    Query(query): Query<PlanQuery>,
) -> Result<Response, DashboardError> {
    let (access, repo, view) = readable_view(&dashboard, &who, &owner, &name).await?;
    let entry = view.plan(&id).ok_or(DashboardError::NotFound)?;
    let links = links(&dashboard, &repo);
    let conversation = match &entry.record {
        Ok(record) => Some(Conversation {
            url: pages::plan::conversation_url(record, &links),
            comments: comment_count(&dashboard, &who, &repo, record.issue).await,
        }),
        Err(_) => None,
    };
    let flash = query.saved.as_deref().map(|hash| match query.merged.as_deref().filter(|m| !m.is_empty()) {
        Some(merged) => format!("Saved (hash {hash}). Others had changed the plan meanwhile; merged section by section: {merged}."),
        None => format!("Saved (hash {hash})."),
    });
    let chrome = who.chrome(&dashboard, &access);
    let can_edit = repo.role >= Role::Write;
    Ok(Html(
        pages::plan::render(
            &chrome,
            &repo.full_name,
            entry,
            conversation.as_ref(),
            can_edit,
            flash.as_deref(),
        )
        .into_string(),
    )
    .into_response())
}

/// The conversation's comment count, as the signed-in person sees it.
async fn comment_count(
    dashboard: &Dashboard,
    who: &SignedIn,
    repo: &RepoAccess,
    number: u64,
) -> Option<u64> {
    let path = navin_github::ops::issue(&repo.full_name, number);
    let issue: serde_json::Value = dashboard
        .github
        .user_request(&who.user.token, ApiRequest::get(path.clone()))
        .await
        .and_then(|r| r.json(&path))
        .map_err(|e| tracing::debug!(error = %e, "cannot count a plan's comments"))
        .ok()?;
    issue["comments"].as_u64()
}

async fn api_repository(
    State(dashboard): State<Arc<Dashboard>>,
    who: SignedIn,
    Path((owner, name)): Path<(String, String)>,
) -> Result<Response, DashboardError> {
    let (_, _, view) = readable_view(&dashboard, &who, &owner, &name).await?;
    let (mission, problem) = match &view.ledger {
        Ok(Some(ledger)) => (
            Some(serde_json::json!({"mission": ledger.mission, "tasks": ledger.board.tasks})),
            None,
        ),
        Ok(None) => (None, None),
        Err(p) => (None, Some(p.clone())),
    };
    let plans: Vec<serde_json::Value> = view
        .plans
        .iter()
        .map(|p| match &p.record {
            Ok(r) => serde_json::json!({"id": p.id, "status": r.status.word(), "hash": r.hash, "approvals": r.approver_count()}),
            Err(e) => serde_json::json!({"id": p.id, "problem": e}),
        })
        .collect();
    Ok(Json(serde_json::json!({
        "repository": view.repository, "ledger_branch": view.ledger_branch, "commit": view.commit,
        "mission": mission, "problem": problem, "plans": plans,
    }))
    .into_response())
}

async fn api_plan(
    State(dashboard): State<Arc<Dashboard>>,
    who: SignedIn,
    Path((owner, name, id)): Path<(String, String, String)>,
) -> Result<Response, DashboardError> {
    let (_, _, view) = readable_view(&dashboard, &who, &owner, &name).await?;
    let entry = view.plan(&id).ok_or(DashboardError::NotFound)?;
    let record = entry.record.as_ref().ok();
    Ok(
        Json(serde_json::json!({"id": entry.id, "record": record, "text": entry.text}))
            .into_response(),
    )
}
