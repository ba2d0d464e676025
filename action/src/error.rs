//! Why a run of `navin-action` failed, worded for the person reading the job log.

use thiserror::Error;

/// A failure that ends the run with exit 1 and one `::error::` line.
#[derive(Debug, Error)]
pub enum ActionError {
    #[error("no GitHub token: set the job's `permissions:` and pass `github-token` to the action (INPUT_GITHUB_TOKEN and GITHUB_TOKEN are both empty)")]
    MissingToken,
    #[error("{0} is not set: navin-action must run inside a GitHub Actions job")]
    MissingEnv(&'static str),
    #[error(
        "unknown mode {0:?}: use event, ready-matrix, summary, evidence, brief, progress, verify or contain"
    )]
    UnknownMode(String),
    /// The token lacks a scope; `scope` is what to add to `permissions:`.
    #[error(
        "permission denied: `{scope}` is needed to {what}; add it to the job's `permissions:`"
    )]
    Permission { scope: String, what: String },
    #[error("the token was rejected (HTTP 401) while trying to {0}: it is expired or not a GitHub token")]
    BadCredentials(String),
    #[error("GitHub API {method} {path} failed: {message}")]
    Api {
        method: &'static str,
        path: String,
        message: String,
    },
    #[error("the event payload {path} is unreadable: {message}")]
    Payload { path: String, message: String },
    #[error("{path}: {message}")]
    Config { path: String, message: String },
    /// An action input has a value it cannot take; names the input.
    #[error("input `{input}`: {message}")]
    Input {
        input: &'static str,
        message: String,
    },
    /// `brief` mode was asked for a step it cannot show.
    #[error("{0}")]
    Step(String),
    /// The repository's `.github/navin.yml` (as the engine read it from the default
    /// branch) is invalid; the message names the file, line and key.
    #[error("{0} (fix it on the default branch; nothing was changed)")]
    InvalidRepoConfig(String),
    #[error("ledger branch {branch}: {message}")]
    Ledger { branch: String, message: String },
    /// The engine gave up on the event; `transient` failures may pass on a re-run.
    #[error("Navin could not handle this event: {message}{}", if *transient { " (a temporary failure: re-run the job)" } else { "" })]
    Engine { message: String, transient: bool },
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

impl ActionError {
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        ActionError::Io {
            what: what.into(),
            source,
        }
    }
}
