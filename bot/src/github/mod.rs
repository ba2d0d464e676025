//! GitHub REST adapter: App JWT and installation-token auth over octocrab's HTTP stack,
//! with Navin's retry, rate-limit, spacing and ETag discipline.
//!
//! The engine gets an [`InstallationClient`] from [`GitHubApp::installation`] and calls
//! [`InstallationClient::get_json`], [`InstallationClient::get_after_webhook`],
//! [`InstallationClient::write`] (with a [`WriteProbe`]) or
//! [`InstallationClient::write_idempotent`]. Payload types can be octocrab's models.
//!
//! Built with [`Credentials::Token`] (the Action's `GITHUB_TOKEN`), every installation
//! client uses that token as it is and App-only calls fail with [`GitHubError::NotAnApp`].

mod client;
pub mod deliveries;
mod installation;
pub mod jwt;
pub mod retry;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;

pub use client::{next_link, ApiRequest, ApiResponse, Credentials, GitHubApp, GitHubConfig};
pub use installation::{
    token_needs_refresh, InstallationClient, MarkerInComments, ProbeFuture, TokenScope,
    WriteOutcome, WriteProbe, TOKEN_REFRESH_MARGIN,
};
pub use jwt::{app_claims, AppClaims, AppKey, JwtError};
pub use retry::{decide, Attempts, Decision, Observed, RequestKind, RetryPolicy};

type Labels = Vec<(&'static str, String)>;

/// GitHub-side metrics, registered by the server's metrics registry.
#[derive(Debug, Default)]
pub struct GitHubMetrics {
    /// Responses by status code (`0` for transport errors).
    pub requests: Family<Labels, Counter>,
    /// Last `x-ratelimit-remaining` by installation (`0` for app-JWT requests).
    pub rate_limit_remaining: Family<Labels, Gauge>,
}

impl GitHubMetrics {
    fn record(&self, lane: u64, status: Option<u16>, remaining: Option<u64>) {
        let code = status.map_or_else(|| "0".to_owned(), |s| s.to_string());
        self.requests.get_or_create(&vec![("status", code)]).inc();
        if let Some(remaining) = remaining {
            self.rate_limit_remaining
                .get_or_create(&vec![("installation", lane.to_string())])
                .set(i64::try_from(remaining).unwrap_or(i64::MAX));
        }
    }
}

/// Why a GitHub call failed. The engine branches on [`GitHubError::status`] (409/422 for
/// ledger races, 404) and on [`GitHubError::is_transient`] (retry the delivery later).
/// No variant carries a token, a JWT or a request header.
#[derive(Debug, thiserror::Error)]
pub enum GitHubError {
    #[error("GitHub answered {status} to {method} {path}: {message}")]
    Status {
        status: u16,
        method: String,
        path: String,
        message: String,
    },
    #[error(
        "GitHub rate limit still in force for {method} {path} (next wait would be {wait_secs} s)"
    )]
    RateLimited {
        method: String,
        path: String,
        wait_secs: u64,
    },
    #[error("GitHub kept failing (5xx or connection errors) for {method} {path}")]
    Unavailable { method: String, path: String },
    #[error("GitHub refused our credentials for {method} {path} (401 after a fresh token)")]
    Unauthorized { method: String, path: String },
    #[error("cannot reach GitHub for {method} {path}: {message}")]
    Transport {
        method: String,
        path: String,
        message: String,
    },
    #[error("unexpected response body from {path}: {message}")]
    Decode { path: String, message: String },
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    #[error("app key: {0}")]
    Key(#[from] JwtError),
    /// An App-only call (`/app/...`, a JWT, minting) on a client built from a plain token.
    #[error("{what} needs GitHub App credentials (app id and private key), but this client has only a token")]
    NotAnApp { what: String },
    #[error("cannot build the GitHub HTTP client: {0}")]
    Client(String),
}

impl GitHubError {
    /// The HTTP status of a final error response, if that is what this is.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Worth retrying the whole delivery later.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Self::RateLimited { .. } | Self::Unavailable { .. } | Self::Transport { .. }
        )
    }
}
