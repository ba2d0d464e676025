//! What a dashboard request can fail with, and the page each failure shows: what to do for the person, the detail for the log.

use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};

use navin_engine::EngineError;
use navin_github::GitHubError;

#[derive(Debug, thiserror::Error)]
pub enum DashboardError {
    /// Not signed in: the page sends the browser to sign in, then back here.
    #[error("sign-in required")]
    SignIn { return_to: String },
    /// Not signed in on a request a redirect cannot serve (a form post, the API).
    #[error("not signed in")]
    SignedOut,
    /// Missing, or not readable by this person: the two look the same, so a page
    /// never tells someone that a repository they cannot read exists.
    #[error("not found")]
    NotFound,
    /// Signed in and allowed to read, but not to do this.
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// A form or request that cannot be taken (a stale or forged CSRF token among them).
    #[error("bad request: {0}")]
    BadRequest(String),
    #[error(transparent)]
    GitHub(#[from] GitHubError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("internal: {0}")]
    Internal(String),
}

impl DashboardError {
    fn status(&self) -> StatusCode {
        match self {
            DashboardError::SignIn { .. } => StatusCode::SEE_OTHER,
            DashboardError::SignedOut => StatusCode::UNAUTHORIZED,
            DashboardError::NotFound => StatusCode::NOT_FOUND,
            DashboardError::Forbidden(_) => StatusCode::FORBIDDEN,
            DashboardError::BadRequest(_) => StatusCode::BAD_REQUEST,
            DashboardError::GitHub(e) if e.status() == Some(401) => StatusCode::UNAUTHORIZED,
            DashboardError::GitHub(_) | DashboardError::Engine(_) => StatusCode::BAD_GATEWAY,
            DashboardError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// What the person reads: never a token, a path on disk or an upstream body.
    fn shown(&self) -> (String, String) {
        match self {
            DashboardError::SignIn { .. } => ("Sign in".into(), String::new()),
            DashboardError::SignedOut => (
                "Sign in again".into(),
                "You are not signed in (or your session ended). Sign in again and retry.".into(),
            ),
            DashboardError::NotFound => (
                "Not found".into(),
                "There is nothing here you can read. If it should be, check that the Navin App is installed on the repository and that you have access to it, then sign in again.".into(),
            ),
            DashboardError::Forbidden(why) => ("Not allowed".into(), why.clone()),
            DashboardError::BadRequest(why) => ("Cannot do that".into(), why.clone()),
            DashboardError::GitHub(e) if e.status() == Some(401) => (
                "Sign in again".into(),
                "GitHub no longer accepts your sign-in (it expired or was revoked). Sign in again.".into(),
            ),
            DashboardError::GitHub(_) | DashboardError::Engine(_) => (
                "GitHub did not answer".into(),
                "Navin could not read this from GitHub just now. Try again in a minute; if it persists, the server log says why.".into(),
            ),
            DashboardError::Internal(_) => (
                "Something went wrong".into(),
                "Navin could not show this page. Try again; if it persists, the server log says why.".into(),
            ),
        }
    }
}

impl IntoResponse for DashboardError {
    fn into_response(self) -> Response {
        if let DashboardError::SignIn { return_to } = &self {
            return Redirect::to(return_to).into_response();
        }
        let status = self.status();
        if status.is_server_error() {
            tracing::warn!(error = %self, "dashboard request failed");
        } else {
            tracing::debug!(error = %self, "dashboard request refused");
        }
        let (title, body) = self.shown();
        let page = super::pages::layout::error_page(&title, &body);
        (status, Html(page.into_string())).into_response()
    }
}
