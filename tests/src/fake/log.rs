//! The request log: every request the fake received, for counting calls and conformance checks.

use serde_json::Value;

use super::faults::path_matches;

/// REST API call, git smart-HTTP exchange, or a page of the web site (`/login/oauth/*`).
///
/// Web requests are not in the REST description, so conformance checks skip them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    Rest,
    Git,
    Web,
}

/// One request as the fake saw it.
#[derive(Debug, Clone)]
pub struct LoggedRequest {
    pub seq: usize,
    pub kind: RequestKind,
    pub method: String,
    /// Path as sent (percent-encoding kept).
    pub path: String,
    pub query: Option<String>,
    pub status: u16,
    /// Request body parsed as JSON, when it was JSON.
    pub body: Option<Value>,
    pub raw_body_len: usize,
    /// Response body parsed as JSON (REST only).
    pub response: Option<Value>,
    /// True when an injected fault answered instead of the model.
    pub faulted: bool,
    /// Login of the authenticated caller, if any.
    pub caller: Option<String>,
}

impl LoggedRequest {
    /// `"GET /repos/o/r/issues/1"`, handy in assertion messages.
    pub fn line(&self) -> String {
        match &self.query {
            Some(q) => format!("{} {}?{} -> {}", self.method, self.path, q, self.status),
            None => format!("{} {} -> {}", self.method, self.path, self.status),
        }
    }

    /// Same method (or `*`) and a path matching `pattern` (see `faults::path_matches`).
    pub fn is(&self, method: &str, pattern: &str) -> bool {
        (method == "*" || self.method.eq_ignore_ascii_case(method))
            && path_matches(pattern, &self.path)
    }

    pub fn query_param(&self, name: &str) -> Option<String> {
        let query = self.query.as_deref()?;
        query.split('&').find_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (k == name).then(|| {
                percent_encoding::percent_decode_str(v)
                    .decode_utf8_lossy()
                    .into_owned()
            })
        })
    }
}
