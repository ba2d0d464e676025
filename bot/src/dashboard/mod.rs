//! The web dashboard `navin serve` adds when configured: GitHub sign-in, missions, plans, the plan editor and (for admins) deliveries.
//!
//! Pages are rendered on the server from the ledger branches and the queue; nothing is
//! copied into a store of the dashboard's own. Every request is checked against what
//! GitHub says the signed-in person may read, and every write against the role the
//! slash commands would require.

pub mod access;
mod actions;
mod assets;
pub mod dag;
mod deliveries;
mod editor;
mod error;
pub mod markdown;
mod oauth;
pub mod pages;
mod routes;
pub mod session;
mod signed_in;

use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use axum::Router;
use secrecy::SecretString;

use crate::queue::DeliveryQueue;
use navin_engine::Engine;
use navin_github::GitHubApp;

pub use error::DashboardError;

/// How the dashboard reaches GitHub and where it is served.
#[derive(Debug, Clone)]
pub struct DashboardConfig {
    /// The public address people open (`--dashboard-url`); the sign-in callback is
    /// `<url>/auth/callback`, which must be the App's registered callback URL.
    pub public_url: String,
    /// GitHub's web address, for the sign-in pages (`https://github.com`, or a GHES host).
    pub web_url: String,
    /// The App's client id (`Iv1.…`) and secret, for the user authorization flow.
    pub client_id: String,
    pub client_secret: SecretString,
    /// Requests the dashboard serves at once; the webhook route has its own budget.
    pub max_concurrency: usize,
    /// How old a repository's ledger clone may be before a page fetches it again.
    pub ledger_max_age: Duration,
}

impl DashboardConfig {
    /// The path the dashboard is mounted under (`""` at the root), from the public URL.
    pub fn base_path(&self) -> String {
        let after_scheme = self
            .public_url
            .split_once("://")
            .map_or(self.public_url.as_str(), |(_, rest)| rest);
        match after_scheme.split_once('/') {
            Some((_, path)) => {
                let trimmed = path.trim_end_matches('/');
                if trimmed.is_empty() {
                    String::new()
                } else {
                    format!("/{trimmed}")
                }
            }
            None => String::new(),
        }
    }

    pub fn callback_url(&self) -> String {
        format!("{}/auth/callback", self.public_url.trim_end_matches('/'))
    }
}

/// What the dashboard's handlers share.
#[derive(Debug)]
pub struct Dashboard {
    pub config: DashboardConfig,
    pub github: GitHubApp,
    pub engine: Arc<Engine>,
    pub queue: DeliveryQueue,
    pub sessions: session::Sessions,
    pub access: access::AccessCache,
    /// Plain HTTP for the sign-in token exchange (a web endpoint, not the REST API).
    pub http: reqwest::Client,
    pub base: String,
    /// The REST API's base, for the one call made outside the App client (sign-out's
    /// token revocation, which authenticates as the App's OAuth client).
    pub github_api_url: String,
}

impl Dashboard {
    pub fn new(
        config: DashboardConfig,
        github_api_url: String,
        github: GitHubApp,
        engine: Arc<Engine>,
        queue: DeliveryQueue,
    ) -> Result<Self, DashboardError> {
        let sessions = session::Sessions::new(
            secrecy::ExposeSecret::expose_secret(&config.client_secret).as_bytes(),
        );
        // reqwest is built without a TLS provider of its own; the process shares ring's.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(20))
            .user_agent("navin-dashboard")
            .build()
            .map_err(|e| DashboardError::Internal(format!("HTTP client: {e}")))?;
        Ok(Self {
            base: config.base_path(),
            config,
            github,
            engine,
            queue,
            sessions,
            access: access::AccessCache::default(),
            http,
            github_api_url,
        })
    }

    /// A path inside the dashboard (`/missions` → `<base>/missions`).
    pub fn path(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

/// The dashboard's routes, with their own concurrency budget and security headers,
/// ready to be merged beside the webhook route.
pub fn router(dashboard: Arc<Dashboard>) -> Router {
    let limit = dashboard.config.max_concurrency.max(1);
    let base = dashboard.base.clone();
    let routes = routes::routes(dashboard)
        .layer(axum::middleware::from_fn(security_headers))
        .layer(tower::limit::ConcurrencyLimitLayer::new(limit));
    if base.is_empty() {
        routes
    } else {
        Router::new().nest(&base, routes)
    }
}

/// The Content-Security-Policy every dashboard response carries: scripts and styles
/// only from the dashboard's own asset files (no inline script or style anywhere),
/// nothing framed, forms only to the dashboard.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(url: &str) -> DashboardConfig {
        DashboardConfig {
            public_url: url.to_owned(),
            web_url: "https://github.com".to_owned(),
            client_id: "Iv1.x".to_owned(),
            client_secret: SecretString::from("s".to_owned()),
            max_concurrency: 1,
            ledger_max_age: Duration::from_secs(1),
        }
    }

    #[test]
    fn a_dashboard_url_with_a_path_mounts_the_dashboard_under_it() {
        assert_eq!(config("https://navin.example.com").base_path(), "");
        assert_eq!(config("https://navin.example.com/").base_path(), "");
        assert_eq!(config("https://example.com/navin/").base_path(), "/navin");
        assert_eq!(config("https://example.com/a/b").base_path(), "/a/b");
        assert_eq!(
            config("https://example.com/navin").callback_url(),
            "https://example.com/navin/auth/callback"
        );
    }
}
