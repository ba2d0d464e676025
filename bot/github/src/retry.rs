//! When to retry a GitHub API response, and how long to wait first: a pure decision.
//!
//! Rules (GitHub's REST best practices, Prow's client):
//! - 403 or 429 that is a rate limit: honour `retry-after`; else, with
//!   `x-ratelimit-remaining: 0`, wait until `x-ratelimit-reset`; else wait 60 s, doubling,
//!   bounded; then give up with an error.
//! - 401 with an installation token: re-mint the token once.
//! - 404 on a read just after a webhook about that object: retry twice (eventual consistency).
//! - 5xx or a transport error: reads retry with backoff; writes first re-read to find out
//!   whether the write landed (see `WriteProbe`).
//! - Any other 4xx is final.

use std::time::Duration;

/// Limits for [`decide`].
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Rate-limited responses tolerated per request before giving up.
    pub max_rate_limit_retries: u32,
    /// First wait when a rate limit gives no hint; doubles per retry.
    pub rate_limit_base: Duration,
    /// Cap on that doubling wait.
    pub rate_limit_max: Duration,
    /// Any single wait longer than this gives up instead (the delivery retries later,
    /// rather than a worker sleeping for most of an hour).
    pub max_wait: Duration,
    pub max_server_error_retries: u32,
    pub server_error_base: Duration,
    pub max_not_found_retries: u32,
    pub not_found_base: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_rate_limit_retries: 4,
            rate_limit_base: Duration::from_secs(60),
            rate_limit_max: Duration::from_secs(15 * 60),
            max_wait: Duration::from_secs(61 * 60),
            max_server_error_retries: 3,
            server_error_base: Duration::from_secs(2),
            max_not_found_retries: 2,
            not_found_base: Duration::from_secs(1),
        }
    }
}

/// What kind of request is being decided about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    /// A GET. `retry_not_found` is set for reads of an object a webhook just announced.
    Read { retry_not_found: bool },
    /// Anything that changes state on GitHub.
    Write,
}

/// Retries already spent on this request, by cause.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Attempts {
    pub rate_limited: u32,
    pub server_errors: u32,
    pub not_found: u32,
    pub reauthorized: bool,
}

/// The parts of a response the decision depends on. `status: None` is a transport error
/// (connection refused or reset, timeout).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Observed {
    pub status: Option<u16>,
    /// `retry-after`, in seconds.
    pub retry_after_secs: Option<u64>,
    pub remaining: Option<u64>,
    /// `x-ratelimit-reset`, Unix seconds.
    pub reset: Option<i64>,
    /// The body says "rate limit" (GitHub's secondary-limit 403 has no other marker).
    pub body_mentions_rate_limit: bool,
    /// The request carried an installation token (a 401 may mean it was revoked early).
    pub installation_auth: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryDecision {
    /// Hand the response to the caller as it is (success, 304, or a final 4xx).
    Accept,
    /// Wait, then send the same request again.
    RetryAfter(Duration, RetryCause),
    /// A write may or may not have landed: wait, re-read, and retry only if it did not.
    ProbeThenRetry(Duration),
    /// Drop the cached installation token, mint a new one, retry at once.
    Reauthorize,
    GiveUp(GiveUpReason),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryCause {
    RateLimited,
    ServerError,
    NotFound,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GiveUpReason {
    /// Still rate limited after the allowed retries, or the next wait is too long.
    RateLimited {
        wait: Duration,
    },
    ServerError,
    Unauthorized,
}

/// Parses `retry-after` as GitHub sends it (whole seconds). An HTTP-date form is treated
/// as absent, which falls back to the reset header or the 60 s backoff.
pub fn parse_retry_after(value: &str) -> Option<u64> {
    value.trim().parse().ok()
}

/// Decides what to do with one response. `now` is Unix seconds.
pub fn decide(
    policy: &RetryPolicy,
    kind: RequestKind,
    spent: Attempts,
    seen: Observed,
    now: i64,
) -> RetryDecision {
    let Some(status) = seen.status else {
        return server_error(policy, kind, spent);
    };
    match status {
        429 => rate_limited(policy, spent, seen, now),
        403 if is_rate_limit_403(seen) => rate_limited(policy, spent, seen, now),
        401 if seen.installation_auth && !spent.reauthorized => RetryDecision::Reauthorize,
        401 => RetryDecision::GiveUp(GiveUpReason::Unauthorized),
        404 => match kind {
            RequestKind::Read {
                retry_not_found: true,
            } if spent.not_found < policy.max_not_found_retries => RetryDecision::RetryAfter(
                doubled(policy.not_found_base, spent.not_found),
                RetryCause::NotFound,
            ),
            _ => RetryDecision::Accept,
        },
        500..=599 => server_error(policy, kind, spent),
        _ => RetryDecision::Accept,
    }
}

fn is_rate_limit_403(seen: Observed) -> bool {
    seen.retry_after_secs.is_some() || seen.remaining == Some(0) || seen.body_mentions_rate_limit
}

fn rate_limited(policy: &RetryPolicy, spent: Attempts, seen: Observed, now: i64) -> RetryDecision {
    let wait = if let Some(secs) = seen.retry_after_secs {
        Duration::from_secs(secs.max(1))
    } else if let (Some(0), Some(reset)) = (seen.remaining, seen.reset) {
        // One extra second: the reset instant itself may still be limited.
        let secs = reset
            .saturating_sub(now)
            .max(0)
            .unsigned_abs()
            .saturating_add(1);
        Duration::from_secs(secs)
    } else {
        doubled(policy.rate_limit_base, spent.rate_limited).min(policy.rate_limit_max)
    };
    if spent.rate_limited >= policy.max_rate_limit_retries || wait > policy.max_wait {
        return RetryDecision::GiveUp(GiveUpReason::RateLimited { wait });
    }
    RetryDecision::RetryAfter(wait, RetryCause::RateLimited)
}

fn server_error(policy: &RetryPolicy, kind: RequestKind, spent: Attempts) -> RetryDecision {
    if spent.server_errors >= policy.max_server_error_retries {
        return RetryDecision::GiveUp(GiveUpReason::ServerError);
    }
    let wait = doubled(policy.server_error_base, spent.server_errors);
    match kind {
        RequestKind::Read { .. } => RetryDecision::RetryAfter(wait, RetryCause::ServerError),
        RequestKind::Write => RetryDecision::ProbeThenRetry(wait),
    }
}

fn doubled(base: Duration, times: u32) -> Duration {
    base.checked_mul(1u32.checked_shl(times).unwrap_or(u32::MAX))
        .unwrap_or(Duration::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_700_000_000;
    const READ: RequestKind = RequestKind::Read {
        retry_not_found: false,
    };
    const READ_AFTER_WEBHOOK: RequestKind = RequestKind::Read {
        retry_not_found: true,
    };

    fn status(code: u16) -> Observed {
        Observed {
            status: Some(code),
            ..Observed::default()
        }
    }

    fn decide_default(kind: RequestKind, spent: Attempts, seen: Observed) -> RetryDecision {
        decide(&RetryPolicy::default(), kind, spent, seen, NOW)
    }

    #[test]
    fn retry_after_is_honoured_on_403_and_429() {
        for code in [403, 429] {
            let seen = Observed {
                retry_after_secs: Some(37),
                ..status(code)
            };
            assert_eq!(
                decide_default(READ, Attempts::default(), seen),
                RetryDecision::RetryAfter(Duration::from_secs(37), RetryCause::RateLimited),
                "status {code}"
            );
        }
    }

    #[test]
    fn exhausted_primary_limit_waits_until_reset() {
        let seen = Observed {
            remaining: Some(0),
            reset: Some(NOW + 300),
            ..status(403)
        };
        assert_eq!(
            decide_default(RequestKind::Write, Attempts::default(), seen),
            RetryDecision::RetryAfter(Duration::from_secs(301), RetryCause::RateLimited)
        );
    }

    #[test]
    fn secondary_limit_without_hints_backs_off_from_a_minute() {
        let seen = Observed {
            body_mentions_rate_limit: true,
            ..status(403)
        };
        let waits: Vec<RetryDecision> = (0..4)
            .map(|n| {
                decide_default(
                    READ,
                    Attempts {
                        rate_limited: n,
                        ..Attempts::default()
                    },
                    seen,
                )
            })
            .collect();
        assert_eq!(
            waits,
            [60, 120, 240, 480].map(|s| RetryDecision::RetryAfter(
                Duration::from_secs(s),
                RetryCause::RateLimited
            ))
        );
        assert!(matches!(
            decide_default(
                READ,
                Attempts {
                    rate_limited: 4,
                    ..Attempts::default()
                },
                seen
            ),
            RetryDecision::GiveUp(GiveUpReason::RateLimited { .. })
        ));
        let plain_429 = decide_default(
            READ,
            Attempts {
                rate_limited: 1,
                ..Attempts::default()
            },
            status(429),
        );
        assert_eq!(
            plain_429,
            RetryDecision::RetryAfter(Duration::from_secs(120), RetryCause::RateLimited)
        );
    }

    #[test]
    fn plain_forbidden_is_not_retried() {
        assert_eq!(
            decide_default(RequestKind::Write, Attempts::default(), status(403)),
            RetryDecision::Accept
        );
    }

    #[test]
    fn a_reset_hours_away_gives_up_instead_of_sleeping() {
        let seen = Observed {
            remaining: Some(0),
            reset: Some(NOW + 5 * 3600),
            ..status(429)
        };
        assert!(matches!(
            decide_default(READ, Attempts::default(), seen),
            RetryDecision::GiveUp(GiveUpReason::RateLimited { .. })
        ));
    }

    #[test]
    fn not_found_after_webhook_is_retried_twice_then_accepted() {
        let d0 = decide_default(READ_AFTER_WEBHOOK, Attempts::default(), status(404));
        let d1 = decide_default(
            READ_AFTER_WEBHOOK,
            Attempts {
                not_found: 1,
                ..Attempts::default()
            },
            status(404),
        );
        let d2 = decide_default(
            READ_AFTER_WEBHOOK,
            Attempts {
                not_found: 2,
                ..Attempts::default()
            },
            status(404),
        );
        assert_eq!(
            d0,
            RetryDecision::RetryAfter(Duration::from_secs(1), RetryCause::NotFound)
        );
        assert_eq!(
            d1,
            RetryDecision::RetryAfter(Duration::from_secs(2), RetryCause::NotFound)
        );
        assert_eq!(d2, RetryDecision::Accept);
        assert_eq!(
            decide_default(READ, Attempts::default(), status(404)),
            RetryDecision::Accept
        );
        assert_eq!(
            decide_default(RequestKind::Write, Attempts::default(), status(404)),
            RetryDecision::Accept
        );
    }

    #[test]
    fn server_error_on_write_probes_before_retrying_and_read_just_retries() {
        assert_eq!(
            decide_default(RequestKind::Write, Attempts::default(), status(502)),
            RetryDecision::ProbeThenRetry(Duration::from_secs(2))
        );
        assert_eq!(
            decide_default(READ, Attempts::default(), status(500)),
            RetryDecision::RetryAfter(Duration::from_secs(2), RetryCause::ServerError)
        );
        assert_eq!(
            decide_default(RequestKind::Write, Attempts::default(), Observed::default()),
            RetryDecision::ProbeThenRetry(Duration::from_secs(2)),
            "a transport error on a write is as ambiguous as a 5xx"
        );
        assert_eq!(
            decide_default(
                READ,
                Attempts {
                    server_errors: 3,
                    ..Attempts::default()
                },
                status(503)
            ),
            RetryDecision::GiveUp(GiveUpReason::ServerError)
        );
    }

    #[test]
    fn other_client_errors_are_final() {
        for code in [400, 409, 410, 422] {
            assert_eq!(
                decide_default(RequestKind::Write, Attempts::default(), status(code)),
                RetryDecision::Accept
            );
        }
    }

    #[test]
    fn unauthorized_installation_token_is_reminted_once() {
        let seen = Observed {
            installation_auth: true,
            ..status(401)
        };
        assert_eq!(
            decide_default(READ, Attempts::default(), seen),
            RetryDecision::Reauthorize
        );
        assert_eq!(
            decide_default(
                READ,
                Attempts {
                    reauthorized: true,
                    ..Attempts::default()
                },
                seen
            ),
            RetryDecision::GiveUp(GiveUpReason::Unauthorized)
        );
        assert_eq!(
            decide_default(READ, Attempts::default(), status(401)),
            RetryDecision::GiveUp(GiveUpReason::Unauthorized),
            "a rejected app JWT is not fixed by minting a token"
        );
    }

    #[test]
    fn retry_after_parses_seconds_only() {
        assert_eq!(parse_retry_after(" 120 "), Some(120));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }
}
