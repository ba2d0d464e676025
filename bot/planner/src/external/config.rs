//! Settings for the external plan sources, read from the environment or filled in by the caller.

use std::fmt;
use std::time::Duration;

use super::env::{ENV_API_KEY, ENV_BASE_URL, ENV_COMMAND, ENV_MODEL, ENV_TIMEOUT};
use super::error::ExternalError;

/// Long enough for a slow model writing a few KB of plan.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// A plan is a few KB; a megabyte means something is wrong.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 1024 * 1024;
/// Keeps the request small enough for any model's context and any proxy's body limit.
pub const DEFAULT_MAX_PROMPT_BYTES: usize = 24 * 1024;

/// An API key that never shows up in `Debug` or `Display` output, so a
/// config printed in an error report or a log line cannot leak it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// Only the HTTP source needs the secret itself (for the header and for
    /// scrubbing it out of echoed response bodies), so a build without it has no way to
    /// read the key at all.
    #[cfg(feature = "llm")]
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Everything both external sources need. Unset fields are only an error
/// for the source that needs them, so one config serves either kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalConfig {
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key: Option<ApiKey>,
    /// Program and its arguments; the request is appended as the last argument.
    pub command: Option<Vec<String>>,
    /// Per HTTP request and per command run.
    pub timeout: Duration,
    /// Cap on a reply body or on the command's stdout.
    pub max_output_bytes: usize,
    /// Cap on the prompt (system + user message) sent to the model.
    pub max_prompt_bytes: usize,
}

impl Default for ExternalConfig {
    fn default() -> Self {
        Self {
            base_url: None,
            model: None,
            api_key: None,
            command: None,
            timeout: DEFAULT_TIMEOUT,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            max_prompt_bytes: DEFAULT_MAX_PROMPT_BYTES,
        }
    }
}

impl ExternalConfig {
    /// Reads `NAVIN_LLM_BASE_URL`, `NAVIN_LLM_MODEL`, `NAVIN_LLM_API_KEY`,
    /// `NAVIN_PLAN_COMMAND` and `NAVIN_PLAN_TIMEOUT_SECS`. Missing variables
    /// are reported by [`super::generate`] for the source that needs them;
    /// only malformed values fail here.
    pub fn from_env() -> Result<Self, ExternalError> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// [`Self::from_env`] over any lookup, so tests need not touch the
    /// process environment. Empty or blank values count as unset.
    pub fn from_vars(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ExternalError> {
        let get = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let command = match get(ENV_COMMAND) {
            None => None,
            Some(line) => Some(split_command(&line)?),
        };
        let timeout = match get(ENV_TIMEOUT) {
            None => DEFAULT_TIMEOUT,
            Some(raw) => parse_timeout(&raw)?,
        };
        Ok(Self {
            base_url: get(ENV_BASE_URL).map(|v| v.trim().to_owned()),
            model: get(ENV_MODEL).map(|v| v.trim().to_owned()),
            api_key: get(ENV_API_KEY).map(|v| ApiKey::new(v.trim())),
            command,
            timeout,
            ..Self::default()
        })
    }

    /// The chat-completions URL, or the error naming the variable to set.
    pub(crate) fn chat_url(&self) -> Result<url::Url, ExternalError> {
        let base = self.base_url.as_deref().map(str::trim).unwrap_or_default();
        if base.is_empty() {
            return Err(ExternalError::MissingConfig { var: ENV_BASE_URL });
        }
        let invalid = |reason: String| ExternalError::InvalidConfig {
            var: ENV_BASE_URL,
            reason,
        };
        let url = url::Url::parse(&format!("{}/chat/completions", base.trim_end_matches('/')))
            .map_err(|e| invalid(format!("\"{base}\" is not a URL ({e})")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid(format!(
                "\"{base}\" must start with http:// or https://"
            )));
        }
        Ok(url)
    }

    pub(crate) fn model_name(&self) -> Result<&str, ExternalError> {
        match self.model.as_deref().map(str::trim) {
            Some(model) if !model.is_empty() => Ok(model),
            _ => Err(ExternalError::MissingConfig { var: ENV_MODEL }),
        }
    }

    pub(crate) fn command_line(&self) -> Result<&[String], ExternalError> {
        match self.command.as_deref() {
            Some(argv) if argv.first().is_some_and(|p| !p.trim().is_empty()) => Ok(argv),
            _ => Err(ExternalError::MissingConfig { var: ENV_COMMAND }),
        }
    }
}

/// Splits a command line the way a POSIX shell would quote it, without
/// running a shell: no expansion, no pipes, no redirections.
pub fn split_command(line: &str) -> Result<Vec<String>, ExternalError> {
    let argv = shell_words::split(line).map_err(|e| ExternalError::InvalidConfig {
        var: ENV_COMMAND,
        reason: format!("cannot split \"{line}\" into words ({e}); check the quotes"),
    })?;
    if argv.is_empty() {
        return Err(ExternalError::MissingConfig { var: ENV_COMMAND });
    }
    Ok(argv)
}

fn parse_timeout(raw: &str) -> Result<Duration, ExternalError> {
    match raw.trim().parse::<u64>() {
        Ok(secs) if secs > 0 => Ok(Duration::from_secs(secs)),
        _ => Err(ExternalError::InvalidConfig {
            var: ENV_TIMEOUT,
            reason: format!("expected a whole number of seconds above 0, found \"{raw}\""),
        }),
    }
}
