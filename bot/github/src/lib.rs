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
mod etag;
mod installation;
pub mod jwt;
pub mod manifest;
pub mod ops;
mod permission;
mod response;
pub mod retry;
mod token;

pub use client::{ApiRequest, ApiResponse, Credentials, GitHubApp, GitHubConfig, ProbeFuture};
pub use installation::{InstallationClient, MarkerInComments, WriteOutcome, WriteProbe};
pub use jwt::{app_claims, AppClaims, AppKey, JwtError};
pub use permission::{Access, Permission, Scope};
pub use response::next_link;
pub use retry::{decide, Attempts, Observed, RequestKind, RetryDecision, RetryPolicy};
pub use token::{token_needs_refresh, TokenScope, TOKEN_REFRESH_MARGIN};

/// Told about every GitHub response (or transport failure), so a server can export
/// request and rate-limit metrics without this crate choosing a metrics library.
pub trait RequestObserver: std::fmt::Debug + Send + Sync {
    /// `lane` is the installation id (`0` for app-JWT requests); `status` is `None` for
    /// transport errors; `remaining` is the response's `x-ratelimit-remaining`.
    fn record(&self, lane: u64, status: Option<u16>, remaining: Option<u64>);

    /// How one use of the App's own credentials ended, after retries: a server's
    /// readiness rests on it (every GitHub call starts with one). The error names no
    /// token. Observers that only count requests ignore it.
    fn app_auth(&self, _use: AppAuth, _outcome: Result<(), &GitHubError>) {}
}

/// A use of the App's own credentials (its JWT).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppAuth {
    /// `POST /app/installations/{id}/access_tokens`.
    TokenMint,
    /// Any other App call (`/app/...`, authenticated by the JWT).
    AppCall,
}

impl std::fmt::Display for AppAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::TokenMint => "token mint",
            Self::AppCall => "App API call",
        })
    }
}

/// Observes nothing: for the Action and tests, which export no metrics.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoMetrics;

impl RequestObserver for NoMetrics {
    fn record(&self, _lane: u64, _status: Option<u16>, _remaining: Option<u64>) {}
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
        /// What the call needs; on a 403 that is the permission to grant.
        permission: Option<Permission>,
    },
    #[error(
        "GitHub rate limit still in force for {method} {path} (next wait would be {wait_secs} s)"
    )]
    RateLimited {
        method: String,
        path: String,
        wait_secs: u64,
    },
    #[error("GitHub kept failing (5xx or connection errors) for {method} {path}; the last attempt: {last}")]
    Unavailable {
        method: String,
        path: String,
        /// The last attempt's transport error or HTTP status, so a log or `/readyz`
        /// says "connection refused" rather than only that something failed.
        last: String,
    },
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

    /// The permission GitHub refused this call for lack of (a 403 on a call that needs
    /// one; rate limits are [`GitHubError::RateLimited`], never this).
    pub fn missing_permission(&self) -> Option<Permission> {
        match self {
            Self::Status {
                status: 403,
                permission,
                ..
            } => *permission,
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
