//! App endpoints: the authenticated app, installations, installation tokens, webhook deliveries.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{delete, get, post};
use axum::{Extension, Router};
use chrono::Utc;
use serde_json::{json, Value};

use super::auth::{narrow_permissions, new_token, rate_counter, Caller};
use super::http::{ok, paginate, parse_body, ts, with_link, ApiError, ApiResult};
use super::model::{Token, TokenFormat, TokenKind};
use super::render::{template, Renderer};
use super::Inner;

pub(super) fn routes() -> Router<Arc<Inner>> {
    Router::new()
        .route("/app", get(get_app))
        .route("/app/installations", get(list_installations))
        .route(
            "/app/installations/{installation_id}",
            get(get_installation),
        )
        .route(
            "/app/installations/{installation_id}/access_tokens",
            post(create_token),
        )
        .route("/app/hook/deliveries", get(list_deliveries))
        .route(
            "/app/hook/deliveries/{delivery_id}/attempts",
            post(redeliver),
        )
        .route("/installation/token", delete(revoke_token))
        .route("/installation/repositories", get(list_installation_repos))
        .route("/rate_limit", get(rate_limit))
        .route("/repos/{owner}/{repo}/installation", get(repo_installation))
}

async fn get_app(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
) -> ApiResult {
    let app_id = caller.require_app()?;
    let model = inner.model();
    let mut app = Renderer {
        base: &inner.base_url,
        model: &model,
    }
    .app(app_id);
    app["installations_count"] = json!(model.installations.len());
    ok(app)
}

async fn list_installations(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult {
    caller.require_app()?;
    let model = inner.model();
    let r = Renderer {
        base: &inner.base_url,
        model: &model,
    };
    let items: Vec<Value> = model
        .installations
        .values()
        .map(|i| r.installation(i))
        .collect();
    let (page, link) = paginate(
        items,
        &query,
        &format!("{}/app/installations", inner.link_base()),
    );
    Ok(with_link(StatusCode::OK, json!(page), link))
}

async fn get_installation(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<u64>,
) -> ApiResult {
    caller.require_app()?;
    let model = inner.model();
    let inst = model
        .installations
        .get(&id)
        .ok_or_else(ApiError::not_found)?;
    ok(Renderer {
        base: &inner.base_url,
        model: &model,
    }
    .installation(inst))
}

/// `GET /installation/repositories`: an installation token's repositories (those it
/// was narrowed to, else every one the installation reaches), paginated.
async fn list_installation_repos(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult {
    let token = caller.token()?;
    let TokenKind::Installation { installation_id } = token.kind else {
        return Err(ApiError::forbidden_integration());
    };
    let model = inner.model();
    let inst = model
        .installations
        .get(&installation_id)
        .ok_or_else(ApiError::not_found)?;
    let r = Renderer {
        base: &inner.base_url,
        model: &model,
    };
    let items: Vec<Value> = inst
        .repos
        .iter()
        .filter(|full| token.repos.as_ref().is_none_or(|only| only.contains(*full)))
        .filter_map(|full| model.repos.get(full))
        .map(|repo| r.repo(repo))
        .collect();
    let total = items.len();
    let (page, link) = paginate(
        items,
        &query,
        &format!("{}/installation/repositories", inner.link_base()),
    );
    Ok(with_link(
        StatusCode::OK,
        json!({ "total_count": total, "repository_selection": "selected", "repositories": page }),
        link,
    ))
}

async fn repo_installation(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((owner, repo)): Path<(String, String)>,
) -> ApiResult {
    caller.require_app()?;
    let model = inner.model();
    let full = model
        .repo(&owner, &repo)
        .map(|r| r.full_name().to_ascii_lowercase())
        .ok_or_else(ApiError::not_found)?;
    let inst = model
        .installations
        .values()
        .find(|i| i.repos.contains(&full))
        .ok_or_else(ApiError::not_found)?;
    ok(Renderer {
        base: &inner.base_url,
        model: &model,
    }
    .installation(inst))
}

/// `POST /app/installations/{id}/access_tokens`: JWT only; optional `repositories`,
/// `repository_ids` and `permissions` narrow the token, never widen it.
async fn create_token(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<u64>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    caller.require_app()?;
    let body = parse_body(&body)?;
    let mut model = inner.model();
    let inst = model
        .installations
        .get(&id)
        .cloned()
        .ok_or_else(ApiError::not_found)?;
    let mut repos = inst.repos.clone();
    if let Some(ids) = body.get("repository_ids").and_then(Value::as_array) {
        if ids.len() > 500 {
            return Err(ApiError::validation(
                "Installation",
                "repository_ids",
                "too_many",
            ));
        }
        let mut chosen = std::collections::BTreeSet::new();
        for rid in ids {
            let repo = rid.as_u64().and_then(|rid| model.repo_by_id(rid));
            match repo.map(|r| r.full_name().to_ascii_lowercase()) {
                Some(full) if inst.repos.contains(&full) => {
                    chosen.insert(full);
                }
                _ => return Err(ApiError::unprocessable("There is at least one repository that does not exist or is not accessible to the parent installation.")),
            }
        }
        repos = chosen;
    }
    if let Some(names) = body.get("repositories").and_then(Value::as_array) {
        let mut chosen = std::collections::BTreeSet::new();
        for name in names {
            let name = name.as_str().unwrap_or_default().to_ascii_lowercase();
            match inst.repos.iter().find(|full| full.split('/').nth(1) == Some(name.as_str())) {
                Some(full) => {
                    chosen.insert(full.clone());
                }
                None => return Err(ApiError::unprocessable("There is at least one repository that does not exist or is not accessible to the parent installation.")),
            }
        }
        repos = chosen;
    }
    let permissions = narrow_permissions(
        &inst.permissions,
        body.get("permissions").and_then(Value::as_object),
    )?;
    let format = match headers
        .get("x-github-stateless-s2s-token")
        .and_then(|v| v.to_str().ok())
    {
        Some("enabled") => TokenFormat::Stateless,
        Some("disabled") => TokenFormat::Classic,
        _ => model.token_format,
    };
    let token = new_token("ghs", format, model.app.id);
    let now = Utc::now();
    let expires_at = now + chrono::Duration::hours(1);
    let record = Token {
        token: token.clone(),
        kind: TokenKind::Installation {
            installation_id: id,
        },
        login: model.app.bot_login(),
        user_id: model.app.bot_user_id,
        repos: Some(repos.clone()),
        permissions: permissions.clone(),
        expires_at,
        app_id: Some(model.app.id),
        rate: rate_counter(model.installation_rate_limit, now),
        revoked: false,
    };
    model.tokens.insert(token.clone(), record);
    let r = Renderer {
        base: &inner.base_url,
        model: &model,
    };
    let mut out = template("apps/create-installation-access-token");
    out["token"] = json!(token);
    out["expires_at"] = json!(ts(expires_at));
    out["permissions"] = json!(permissions);
    out["repository_selection"] = json!("selected");
    out["repositories"] = json!(repos
        .iter()
        .filter_map(|full| model.repos.get(full))
        .map(|repo| r.repo_min(repo))
        .collect::<Vec<_>>());
    if let Some(obj) = out.as_object_mut() {
        obj.remove("has_multiple_single_files");
        obj.remove("single_file_paths");
        obj.remove("single_file");
    }
    Ok((StatusCode::CREATED, axum::Json(out)).into_response())
}

async fn revoke_token(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
) -> ApiResult {
    let token = caller.token()?.token.clone();
    if let Some(t) = inner.model().tokens.get_mut(&token) {
        t.revoked = true;
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Newest first, cursor-paginated with a `Link: <...cursor=...>; rel="next"` header.
async fn list_deliveries(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult {
    caller.require_app()?;
    let model = inner.model();
    let per_page = query
        .get("per_page")
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(30)
        .clamp(1, 100);
    let status_filter = query.get("status").cloned();
    let mut items: Vec<_> = model
        .deliveries
        .iter()
        .filter(|d| match status_filter.as_deref() {
            Some("success") => (200..300).contains(&d.status_code),
            Some("failure") => !(200..300).contains(&d.status_code),
            _ => true,
        })
        .collect();
    items.sort_by_key(|d| std::cmp::Reverse(d.id));
    if let Some(cursor) = query.get("cursor") {
        let after = cursor
            .strip_prefix("v1_")
            .and_then(|c| c.parse::<u64>().ok())
            .ok_or_else(|| ApiError::validation("HookDelivery", "cursor", "invalid"))?;
        items.retain(|d| d.id < after);
    }
    let has_more = items.len() > per_page;
    items.truncate(per_page);
    let r = Renderer {
        base: &inner.base_url,
        model: &model,
    };
    let body: Vec<Value> = items.iter().map(|d| r.delivery(d)).collect();
    let link = match (has_more, items.last()) {
        (true, Some(last)) => axum::http::HeaderValue::from_str(&format!(
            "<{}/app/hook/deliveries?per_page={}&cursor=v1_{}>; rel=\"next\"",
            inner.link_base(),
            per_page,
            last.id
        ))
        .ok(),
        _ => None,
    };
    Ok(with_link(StatusCode::OK, json!(body), link))
}

/// Records the redelivery request and appends a new attempt with the same GUID.
async fn redeliver(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<u64>,
) -> ApiResult {
    caller.require_app()?;
    let mut model = inner.model();
    let original = model
        .deliveries
        .iter()
        .find(|d| d.id == id)
        .cloned()
        .ok_or_else(ApiError::not_found)?;
    model.redelivery_requests.push(id);
    let new_id = model.next_id();
    model.deliveries.push(super::model::HookDelivery {
        id: new_id,
        redelivery: true,
        delivered_at: Utc::now(),
        status: "OK".into(),
        status_code: 200,
        ..original
    });
    Ok((StatusCode::ACCEPTED, axum::Json(json!({}))).into_response())
}

async fn rate_limit(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
) -> ApiResult {
    let model = inner.model();
    let counter = match &caller {
        Caller::App { .. } => model.app_rate.clone(),
        Caller::Token(t) => model
            .tokens
            .get(&t.token)
            .map(|t| t.rate.clone())
            .unwrap_or_else(|| t.rate.clone()),
    };
    let core = json!({
        "limit": counter.limit,
        "used": counter.used,
        "remaining": counter.limit.saturating_sub(counter.used),
        "reset": counter.reset,
    });
    let mut out = template("rate-limit/get");
    out["rate"] = core.clone();
    out["resources"]["core"] = core;
    ok(out)
}
