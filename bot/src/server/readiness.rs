//! What `/readyz` knows about GitHub: how the App's last use of its own credentials (a
//! token mint or an App call) ended, so a server whose every GitHub call fails says so.
//!
//! Fed through `navin_github::RequestObserver::app_auth`, so the GitHub client needs no
//! web framework. Until the first attempt there is nothing to doubt, and the server is
//! ready; after a failure it is not, until the next success.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use navin_github::{AppAuth, GitHubError};

/// The last outcome of the App's credentials, shared by the GitHub client and `/readyz`.
#[derive(Debug, Default)]
pub struct GitHubHealth {
    last: Mutex<Option<Outcome>>,
}

#[derive(Debug, Clone)]
struct Outcome {
    what: AppAuth,
    at: Instant,
    /// Why it failed (clipped, one line); `None` when GitHub accepted the credentials.
    error: Option<String>,
}

impl GitHubHealth {
    /// Records one use of the App's credentials. An answer GitHub gave about the request
    /// itself (a 404 for a removed installation, a 422 for a permission it does not
    /// grant) shows GitHub reachable and the JWT accepted, so it counts as success.
    pub fn record(&self, what: AppAuth, outcome: Result<(), &GitHubError>) {
        let error = match outcome {
            Err(e) if !about_the_request(e) => Some(crate::logging::clip(&e.to_string())),
            _ => None,
        };
        let mut last = self
            .last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *last = Some(Outcome {
            what,
            at: Instant::now(),
            error,
        });
    }

    /// `None` when ready; else the reason, e.g. `github: last token mint failed 2m ago:
    /// cannot reach GitHub …`.
    pub fn unready_reason(&self) -> Option<String> {
        let last = self
            .last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()?;
        let error = last.error?;
        Some(format!(
            "github: last {} failed {} ago: {error}",
            last.what,
            ago(last.at.elapsed())
        ))
    }
}

/// GitHub answered with a verdict on this request, not on our access to it.
fn about_the_request(e: &GitHubError) -> bool {
    matches!(e.status(), Some(status) if status != 401 && status != 403)
}

/// `42s`, `2m`, `3h`: as much precision as a person reading a probe needs.
fn ago(elapsed: Duration) -> String {
    let secs = elapsed.as_secs();
    match secs {
        0..=119 => format!("{secs}s"),
        120..=7199 => format!("{}m", secs / 60),
        _ => format!("{}h", secs / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transport() -> GitHubError {
        GitHubError::Transport {
            method: "POST".into(),
            path: "/app/installations/1/access_tokens".into(),
            message: "connection refused".into(),
        }
    }

    #[test]
    fn ready_before_any_attempt_and_after_a_success() {
        let health = GitHubHealth::default();
        assert_eq!(health.unready_reason(), None);
        health.record(AppAuth::TokenMint, Err(&transport()));
        health.record(AppAuth::AppCall, Ok(()));
        assert_eq!(health.unready_reason(), None);
    }

    #[test]
    fn a_failed_mint_makes_it_unready_naming_the_failure() {
        let health = GitHubHealth::default();
        health.record(AppAuth::TokenMint, Err(&transport()));
        let reason = health.unready_reason().unwrap_or_default();
        assert!(
            reason.starts_with("github: last token mint failed 0s ago: cannot reach GitHub"),
            "{reason}"
        );
        assert!(reason.ends_with("connection refused"), "{reason}");
    }

    #[test]
    fn a_refusal_of_the_request_itself_is_not_a_health_problem() {
        let health = GitHubHealth::default();
        let status = |status| GitHubError::Status {
            status,
            method: "POST".into(),
            path: "/app/installations/1/access_tokens".into(),
            message: "m".into(),
            permission: None,
        };
        health.record(AppAuth::TokenMint, Err(&status(422)));
        assert_eq!(health.unready_reason(), None);
        health.record(AppAuth::TokenMint, Err(&status(401)));
        assert!(health.unready_reason().is_some());
    }

    #[test]
    fn ages_read_in_seconds_minutes_or_hours() {
        assert_eq!(ago(Duration::from_secs(42)), "42s");
        assert_eq!(ago(Duration::from_secs(150)), "2m");
        assert_eq!(ago(Duration::from_secs(3 * 3600 + 5)), "3h");
    }
}
