//! Organization team endpoints: a user's team membership (`members: read`), as code-owner checks read it.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::routing::get;
use axum::{Extension, Router};
use serde_json::json;

use super::auth::Caller;
use super::http::{ok, ApiError, ApiResult};
use super::model::TokenKind;
use super::render::template;
use super::Inner;

pub(super) fn routes() -> Router<Arc<Inner>> {
    Router::new().route(
        "/orgs/{org}/teams/{team_slug}/memberships/{username}",
        get(get_membership),
    )
}

/// `GET /orgs/{org}/teams/{team_slug}/memberships/{username}`: 200 `state: active` for a
/// member, 404 for anyone else or an unknown team. An installation token needs the
/// organization permission `members` (403 without it) and reaches only its own
/// account's teams (404 for another organization's).
async fn get_membership(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path((org, slug, username)): Path<(String, String, String)>,
) -> ApiResult {
    let model = inner.model();
    let token = caller.token()?;
    if let TokenKind::Installation { installation_id } = token.kind {
        let account = model
            .installations
            .get(&installation_id)
            .map(|i| i.account.clone())
            .unwrap_or_default();
        if !account.eq_ignore_ascii_case(&org) {
            return Err(ApiError::not_found());
        }
        if !token.permissions.contains_key("members") {
            return Err(ApiError::forbidden_integration());
        }
    }
    let team = model
        .teams
        .get(&format!("{org}/{slug}").to_ascii_lowercase())
        .ok_or_else(ApiError::not_found)?;
    if !team.members.contains(&username.to_ascii_lowercase()) {
        return Err(ApiError::not_found());
    }
    let mut out = template("teams/get-membership-for-user-in-org");
    out["url"] = json!(format!(
        "{}/teams/{}/memberships/{username}",
        inner.base_url, team.id
    ));
    out["role"] = json!("member");
    out["state"] = json!("active");
    ok(out)
}
