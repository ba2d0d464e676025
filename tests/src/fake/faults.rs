//! Programmable faults: errors, rate limits and latency for requests matching a method and path pattern.

use std::time::Duration;

use serde_json::{json, Value};

/// Matches request paths: `*` or `{name}` is one segment, `**` the rest of the path.
///
/// OpenAPI templates work as patterns: `/repos/{owner}/{repo}/issues/{issue_number}/comments`.
pub fn path_matches(pattern: &str, path: &str) -> bool {
    let pat: Vec<&str> = pattern.trim_matches('/').split('/').collect();
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let mut i = 0;
    for (pi, p) in pat.iter().enumerate() {
        if *p == "**" {
            return pi == pat.len() - 1 || segs.len() > i;
        }
        let Some(seg) = segs.get(i) else { return false };
        let wildcard = *p == "*" || (p.starts_with('{') && p.ends_with('}'));
        if !wildcard && !p.eq_ignore_ascii_case(seg) {
            return false;
        }
        i += 1;
    }
    i == segs.len()
}

/// What a matching request gets instead of (or before) the normal answer.
#[derive(Debug, Clone)]
pub enum FaultAction {
    /// Answer with this status, headers and JSON body.
    Respond {
        status: u16,
        headers: Vec<(String, String)>,
        body: Value,
    },
    /// Wait, then handle the request normally.
    Delay(Duration),
    /// Handle the request normally (a push lands, a comment is created), then answer
    /// with this status as if it had failed: the "it worked but said it didn't" case.
    LandThenFail(u16),
}

/// One injected fault: a method (or any), a path pattern, a count limit and an action.
#[derive(Debug, Clone)]
pub struct Fault {
    pub method: Option<String>,
    pub pattern: String,
    /// How many more requests it applies to; `None` = every matching request.
    pub remaining: Option<u32>,
    pub action: FaultAction,
    /// How many requests it has hit so far.
    pub hits: u32,
}

impl Fault {
    /// A fault for `method` (`"*"` for any) on paths matching `pattern`. Defaults to a 500, forever.
    pub fn on(method: &str, pattern: &str) -> Fault {
        Fault {
            method: if method == "*" {
                None
            } else {
                Some(method.to_ascii_uppercase())
            },
            pattern: pattern.to_string(),
            remaining: None,
            action: FaultAction::Respond {
                status: 500,
                headers: vec![],
                body: error_body(500, "Server Error"),
            },
            hits: 0,
        }
    }

    /// Applies to the next `n` matching requests only, then the request is served normally.
    pub fn times(mut self, n: u32) -> Fault {
        self.remaining = Some(n);
        self
    }

    pub fn once(self) -> Fault {
        self.times(1)
    }

    /// Any status with GitHub's JSON error body.
    pub fn status(mut self, status: u16) -> Fault {
        let message = match status {
            404 => "Not Found",
            409 => "Conflict",
            422 => "Validation Failed",
            502 => "Bad Gateway",
            503 => "Service Unavailable",
            _ => "Server Error",
        };
        self.action = FaultAction::Respond {
            status,
            headers: vec![],
            body: error_body(status, message),
        };
        self
    }

    /// The request is carried out, then answered with `status` (see
    /// [`FaultAction::LandThenFail`]).
    pub fn land_then_fail(mut self, status: u16) -> Fault {
        self.action = FaultAction::LandThenFail(status);
        self
    }

    pub fn server_error(self) -> Fault {
        self.status(500)
    }

    /// 404 — with `.times(n)` this models GitHub's eventual consistency right after a webhook.
    pub fn not_found(self) -> Fault {
        self.status(404)
    }

    /// Primary rate limit exhausted: 403, `x-ratelimit-remaining: 0`, `x-ratelimit-reset: reset_epoch`.
    pub fn rate_limited(mut self, reset_epoch: i64) -> Fault {
        self.action = FaultAction::Respond {
            status: 403,
            headers: vec![
                ("x-ratelimit-limit".into(), "5000".into()),
                ("x-ratelimit-remaining".into(), "0".into()),
                ("x-ratelimit-used".into(), "5000".into()),
                ("x-ratelimit-reset".into(), reset_epoch.to_string()),
                ("x-ratelimit-resource".into(), "core".into()),
            ],
            body: error_body(403, "API rate limit exceeded for installation."),
        };
        self
    }

    /// Secondary rate limit: `status` (403 or 429) with `retry-after: secs`.
    pub fn secondary_rate_limited(mut self, status: u16, retry_after_secs: u64) -> Fault {
        self.action = FaultAction::Respond {
            status,
            headers: vec![("retry-after".into(), retry_after_secs.to_string())],
            body: error_body(
                status,
                "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
            ),
        };
        self
    }

    /// Custom response.
    pub fn respond(mut self, status: u16, headers: &[(&str, &str)], body: Value) -> Fault {
        self.action = FaultAction::Respond {
            status,
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            body,
        };
        self
    }

    /// Delays matching requests, then serves them normally.
    pub fn delay(mut self, latency: Duration) -> Fault {
        self.action = FaultAction::Delay(latency);
        self
    }

    pub(crate) fn matches(&self, method: &str, path: &str) -> bool {
        self.remaining != Some(0)
            && self
                .method
                .as_deref()
                .is_none_or(|m| m.eq_ignore_ascii_case(method))
            && path_matches(&self.pattern, path)
    }
}

fn error_body(status: u16, message: &str) -> Value {
    json!({
        "message": message,
        "documentation_url": "https://docs.github.com/rest",
        "status": status.to_string(),
    })
}

/// Handle to an injected fault, to read its hit count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultId(pub(crate) usize);
