//! What `/readyz` knows about GitHub: how the App's last use of its own credentials (a
//! token mint or an App call) ended, so a server whose every GitHub call fails says so.
//!
//! Fed through `navin_github::RequestObserver::app_auth`, so the GitHub client needs no
//! web framework. Until the first attempt there is nothing to doubt, and the server is
//! ready; after a failure it is not, until the next success: a delivery's retry, the
//! reconciler, or the `GET /app` that `/readyz` itself starts every [`REPROBE_AFTER`].

use std::sync::Mutex;
use std::time::{Duration, Instant};

use navin_github::{AppAuth, GitHubError};

/// How old a failure must be, and how long since the last re-probe, before `/readyz`
/// asks GitHub again (`GET /app`): without traffic nothing else would, and a server taken
/// out of rotation gets no deliveries.
pub const REPROBE_AFTER: Duration = Duration::from_secs(10);

/// The last outcome of the App's credentials, shared by the GitHub client and `/readyz`.
#[derive(Debug, Default)]
pub struct GitHubHealth {
    last: Mutex<Option<Outcome>>,
    last_probe: Mutex<Option<Instant>>,
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

impl GitHubHealth {
    /// True (and the probe counted as started) when the last outcome is a failure at
    /// least [`REPROBE_AFTER`] old and no probe started within that time.
    pub fn reprobe_due(&self, now: Instant) -> bool {
        let failed_at = match &*self
            .last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
        {
            Some(Outcome {
                at, error: Some(_), ..
            }) => *at,
            _ => return false,
        };
        let mut last_probe = self
            .last_probe
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let quiet = |since: Instant| now.saturating_duration_since(since) >= REPROBE_AFTER;
        if quiet(failed_at) && last_probe.is_none_or(quiet) {
            *last_probe = Some(now);
            return true;
        }
        false
    }
}

/// Starts a background `GET /app` when one is due; its outcome reaches `health` through
/// the client's observer, so the next `/readyz` sees it. Never waits on GitHub.
pub fn reprobe(health: &GitHubHealth, github: Option<&navin_github::GitHubApp>) {
    let Some(github) = github else { return };
    if !health.reprobe_due(Instant::now()) {
        return;
    }
    let github = github.clone();
    tokio::spawn(async move {
        if let Err(e) = github
            .app_request(navin_github::ApiRequest::get("/app"))
            .await
        {
            tracing::debug!(error = %e, "GitHub re-probe for /readyz failed");
        }
    });
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
    fn a_failure_is_probed_again_once_it_is_old_and_not_more_often() {
        let health = GitHubHealth::default();
        let start = Instant::now();
        assert!(!health.reprobe_due(start + REPROBE_AFTER), "nothing failed");
        health.record(AppAuth::AppCall, Err(&transport()));
        let failed = Instant::now();
        assert!(!health.reprobe_due(failed), "too fresh");
        assert!(health.reprobe_due(failed + REPROBE_AFTER));
        assert!(
            !health.reprobe_due(failed + REPROBE_AFTER),
            "one probe at a time"
        );
        assert!(health.reprobe_due(failed + REPROBE_AFTER * 2));
        health.record(AppAuth::AppCall, Ok(()));
        assert!(
            !health.reprobe_due(failed + REPROBE_AFTER * 4),
            "healthy again"
        );
    }

    #[test]
    fn ages_read_in_seconds_minutes_or_hours() {
        assert_eq!(ago(Duration::from_secs(42)), "42s");
        assert_eq!(ago(Duration::from_secs(150)), "2m");
        assert_eq!(ago(Duration::from_secs(3 * 3600 + 5)), "3h");
    }
}
