//! The signed-in person's endpoints: `/user`, and the App installations and repositories they can reach.
//!
//! GitHub lists only what the person has explicit permission on (a role seeded with
//! `set_role`, not `none`); reading a public repository as anyone may does not count.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Extension, Router};
use serde_json::{json, Value};

use super::auth::{explicit_role, role_access, Caller};
use super::http::{ok, paginate, with_link, ApiError, ApiResult};
use super::model::{Installation, Model, Repo};
use super::render::Renderer;
use super::{FakeGitHub, Inner};

pub(super) fn routes() -> Router<Arc<Inner>> {
    Router::new()
        .route("/user", get(get_user))
        .route("/user/installations", get(list_installations))
        .route(
            "/user/installations/{installation_id}/repositories",
            get(list_repositories),
        )
}

/// The installation's repositories the person has explicit permission on, with the role.
fn reachable<'m>(model: &'m Model, inst: &Installation, login: &str) -> Vec<(&'m Repo, &'m str)> {
    inst.repos
        .iter()
        .filter_map(|full| model.repos.get(full))
        .filter_map(|repo| explicit_role(repo, login).map(|role| (repo, role)))
        .collect()
}

/// `GET /user`: any token acting as a person (a user access token or a personal one).
async fn get_user(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
) -> ApiResult {
    let login = caller.person()?.login.clone();
    let model = inner.model();
    ok(Renderer {
        base: &inner.base_url,
        model: &model,
    }
    .authenticated_user(&login))
}

/// `GET /user/installations`: the App's installations on which the person can reach at
/// least one repository; user access tokens only.
async fn list_installations(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult {
    let login = caller.user_access()?.login.clone();
    let model = inner.model();
    let r = Renderer {
        base: &inner.base_url,
        model: &model,
    };
    let items: Vec<Value> = model
        .installations
        .values()
        .filter(|inst| !reachable(&model, inst, &login).is_empty())
        .map(|inst| r.installation(inst))
        .collect();
    let total = items.len();
    let (page, link) = paginate(
        items,
        &query,
        &format!("{}/user/installations", inner.link_base()),
    );
    Ok(with_link(
        StatusCode::OK,
        json!({ "total_count": total, "installations": page }),
        link,
    ))
}

/// `GET /user/installations/{id}/repositories`: the installation's repositories the person
/// can reach, each with `permissions` from their role; 404 for an installation they
/// cannot see at all.
async fn list_repositories(
    State(inner): State<Arc<Inner>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<u64>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult {
    let login = caller.user_access()?.login.clone();
    let model = inner.model();
    let inst = model
        .installations
        .get(&id)
        .ok_or_else(ApiError::not_found)?;
    let repos = reachable(&model, inst, &login);
    if repos.is_empty() {
        return Err(ApiError::not_found());
    }
    let r = Renderer {
        base: &inner.base_url,
        model: &model,
    };
    let items: Vec<Value> = repos
        .iter()
        .map(|(repo, role)| {
            let mut out = r.repo(repo);
            out["permissions"] = role_access(role).1;
            out
        })
        .collect();
    let total = items.len();
    let (page, link) = paginate(
        items,
        &query,
        &format!("{}/user/installations/{id}/repositories", inner.link_base()),
    );
    Ok(with_link(
        StatusCode::OK,
        json!({
            "total_count": total,
            "repository_selection": "selected",
            "repositories": page,
        }),
        link,
    ))
}

impl FakeGitHub {
    /// Takes away `login`'s access to a repository (role `none`): the collaborator
    /// permission endpoint then says `none`, and `/user/installations*` no longer list it.
    /// A public repository stays readable, as it is to anyone.
    pub fn deny_access(&self, owner: &str, repo: &str, login: &str) {
        self.set_role(owner, repo, login, "none");
    }
}
