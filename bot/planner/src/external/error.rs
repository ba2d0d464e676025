//! Why an external plan source gave no plan, each case worded to say what to do next.

use std::time::Duration;

use navin_ledger::plan::PlanError;

use super::env::{ENV_BASE_URL, ENV_COMMAND, ENV_MODEL, ENV_TIMEOUT};
use crate::PlannerError;

/// The errors a caller may branch on (retry later, fix config, fall back to
/// the built-in planner). No variant ever holds the API key: bodies echoed
/// by a server are scrubbed before they are stored here.
#[derive(Debug, thiserror::Error)]
pub enum ExternalError {
    #[error("{var} is not set; {}", missing_hint(var))]
    MissingConfig { var: &'static str },

    #[error("{var} is invalid: {reason}")]
    InvalidConfig { var: &'static str, reason: String },

    #[error("the plan request is empty; say what the plan should achieve")]
    EmptyRequest,

    #[error("could not map the repository for the plan source: {0}")]
    Repository(#[from] PlannerError),

    #[error(
        "could not reach {url}: {reason}; check {ENV_BASE_URL} and that the server is running"
    )]
    Connect { url: String, reason: String },

    #[error("{url} answered HTTP {status}: {body_excerpt}; {}", http_hint(*status))]
    Http {
        url: String,
        status: u16,
        body_excerpt: String,
    },

    #[error("{what} did not finish within {after:?}; raise {ENV_TIMEOUT} (seconds) or use the built-in planner")]
    Timeout { what: String, after: Duration },

    #[error("{url} did not answer with chat-completions JSON ({reason}): {body_excerpt}; check that {ENV_BASE_URL} points at an OpenAI-compatible API (usually ending in /v1)")]
    NotJson {
        url: String,
        reason: String,
        body_excerpt: String,
    },

    #[error("{origin} replied with no plan text (an empty reply); try again, or check the model or command")]
    EmptyReply { origin: String },

    #[error(
        "{origin} sent more than {limit} bytes; a plan is a few KB, so check the model or command"
    )]
    OutputTooLarge { origin: String, limit: usize },

    #[error("the plan command `{program}` could not be started: {reason}; check {ENV_COMMAND}")]
    CommandStart { program: String, reason: String },

    #[error("the plan command `{program}` failed ({status}); its stderr: {stderr_excerpt}")]
    CommandFailed {
        program: String,
        status: String,
        stderr_excerpt: String,
    },

    #[error("the plan command `{program}` printed text that is not UTF-8")]
    NotUtf8 { program: String },

    /// `output_excerpt` is the start of the last rejected plan, for `--verbose`
    /// style output; it is kept out of the message to keep that short.
    #[error("the plan from {origin} failed validation after {attempts} attempt(s): {error}; fix the plan source (model, prompt or command) or use the built-in planner")]
    InvalidPlan {
        origin: String,
        attempts: u32,
        error: Box<PlanError>,
        output_excerpt: String,
    },

    #[error("{} is not inside a git repository with a commit; the LLM and command planners plan a commit (commit first, or use the built-in planner)", path.display())]
    NotARepository { path: std::path::PathBuf },

    #[error("{origin} spent its budget ({turns} turns, {tool_calls} tool calls) without writing a plan; raise planner.max_turns or planner.max_tool_bytes in .github/navin.yml, or use the built-in planner")]
    BudgetSpent {
        origin: String,
        turns: u32,
        tool_calls: usize,
    },

    /// The `http` source (an LLM endpoint) needs the `llm` cargo feature, which a
    /// `--no-default-features` build of navin leaves out to build faster.
    #[error("this navin was built without the LLM plan source (cargo feature `llm`); reinstall with `cargo install --locked --path bot` (default features), or plan with NAVIN_PLAN_COMMAND or the built-in planner")]
    NotBuilt,

    #[error("could not run the plan source: {0}")]
    Runtime(String),
}

fn missing_hint(var: &str) -> &'static str {
    match var {
        ENV_BASE_URL => "set it to the API's base URL, e.g. https://api.openai.com/v1 or http://localhost:11434/v1",
        ENV_MODEL => "set it to a model name the endpoint serves",
        ENV_COMMAND => "set it to the command that prints a plan, e.g. \"python3 tools/plan.py --fast\"",
        _ => "set it, or use the built-in planner",
    }
}

fn http_hint(status: u16) -> &'static str {
    match status {
        401 | 403 => "check NAVIN_LLM_API_KEY",
        404 => "check NAVIN_LLM_BASE_URL (it usually ends in /v1) and NAVIN_LLM_MODEL",
        408 | 429 => "the endpoint is busy or rate-limited; try again later",
        400..=499 => "the endpoint rejected the request; check NAVIN_LLM_MODEL and the endpoint's documentation",
        _ => "the endpoint failed; try again later or use the built-in planner",
    }
}

/// Up to `max_chars` of `text` on one line, with `secret` (when given)
/// replaced, so error messages stay readable and never carry the key.
pub(crate) fn excerpt(text: &str, max_chars: usize, secret: Option<&str>) -> String {
    let mut clean = text.trim().to_owned();
    if let Some(secret) = secret.filter(|s| !s.is_empty()) {
        clean = clean.replace(secret, "<redacted>");
    }
    let one_line: String = clean.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.is_empty() {
        return "(empty)".to_owned();
    }
    let mut out: String = one_line.chars().take(max_chars).collect();
    if out.len() < one_line.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_scrubs_the_secret_and_shortens() {
        let text = "error: key sk-123 is\n invalid ".repeat(20);
        let out = excerpt(&text, 40, Some("sk-123"));
        assert!(!out.contains("sk-123"));
        assert!(out.starts_with("error: key <redacted> is invalid"));
        assert!(out.ends_with('…'));
        assert_eq!(excerpt("  \n", 40, None), "(empty)");
    }
}
