//! Who is signed in and what they may read: the extractor, CSRF check and repository access every handler starts from, below the router and the handler files it routes to.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::Method;
use navin_engine::view::RepoView;
use serde::Deserialize;

use super::access::{AccessList, RepoAccess, Role};
use super::oauth::{read_cookie, urlencode};
use super::pages::repo::GitHubLinks;
use super::pages::Chrome;
use super::session::{same_token, UserSession, SESSION_COOKIE};
use super::{Dashboard, DashboardError};

/// The signed-in person, from the session cookie. Pages redirect to sign-in; form
/// posts and the API answer 401.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub session_id: String,
    pub user: UserSession,
}

impl FromRequestParts<Arc<Dashboard>> for SignedIn {
    type Rejection = DashboardError;

    async fn from_request_parts(
        parts: &mut Parts,
        dashboard: &Arc<Dashboard>,
    ) -> Result<Self, Self::Rejection> {
        let found = read_cookie(&parts.headers, SESSION_COOKIE)
            .and_then(|c| dashboard.sessions.verify(c))
            .and_then(|id| dashboard.sessions.get(&id).map(|user| (id, user)));
        match found {
            Some((session_id, user)) => Ok(SignedIn { session_id, user }),
            None if parts.method == Method::GET && !parts.uri.path().contains("/api/") => {
                // Under a path prefix axum hands nested routes the URI without it; the
                // original one is where the browser was.
                let uri = parts
                    .extensions
                    .get::<axum::extract::OriginalUri>()
                    .map_or(&parts.uri, |o| &o.0);
                let here = uri
                    .path_and_query()
                    .map_or_else(|| dashboard.path("/missions"), |p| p.as_str().to_owned());
                Err(DashboardError::SignIn {
                    return_to: format!(
                        "{}?return_to={}",
                        dashboard.path("/login"),
                        urlencode(&here)
                    ),
                })
            }
            None => Err(DashboardError::SignedOut),
        }
    }
}

impl SignedIn {
    pub fn chrome<'a>(&'a self, dashboard: &'a Dashboard, access: &AccessList) -> Chrome<'a> {
        Chrome {
            base: &dashboard.base,
            login: &self.user.login,
            csrf: &self.user.csrf,
            admin_somewhere: access.repos.iter().any(|r| r.role == Role::Admin),
        }
    }

    /// Refuses a form or script request whose CSRF token is not this session's.
    pub fn check_csrf(&self, given: Option<&str>) -> Result<(), DashboardError> {
        match given {
            Some(token) if same_token(token, &self.user.csrf) => Ok(()),
            _ => Err(DashboardError::BadRequest(
                "This form is out of date or did not come from this dashboard (its security token does not match). Reload the page and try again.".into(),
            )),
        }
    }

    pub async fn access(&self, dashboard: &Dashboard) -> Result<AccessList, DashboardError> {
        Ok(dashboard
            .access
            .get(&dashboard.github, self.user.user_id, &self.user.token)
            .await?)
    }
}

/// The repository if this person can read it; otherwise 404, as if it did not exist.
pub fn readable(
    access: &AccessList,
    owner: &str,
    name: &str,
) -> Result<RepoAccess, DashboardError> {
    access
        .find(owner, name)
        .cloned()
        .ok_or(DashboardError::NotFound)
}

pub async fn view_of(dashboard: &Dashboard, repo: &RepoAccess) -> Result<RepoView, DashboardError> {
    Ok(dashboard
        .engine
        .repository_view(
            repo.installation,
            &repo.repository(),
            dashboard.config.ledger_max_age,
        )
        .await?)
}

#[derive(Debug, Deserialize)]
pub struct CsrfFormFields {
    #[serde(default)]
    pub csrf: Option<String>,
}

/// Where the repository lives on GitHub, for the page's links back to it.
pub fn links(dashboard: &Dashboard, repo: &RepoAccess) -> GitHubLinks {
    GitHubLinks {
        repo_url: repo.html_url.clone().unwrap_or_else(|| {
            format!(
                "{}/{}",
                dashboard.config.web_url.trim_end_matches('/'),
                repo.full_name
            )
        }),
    }
}
