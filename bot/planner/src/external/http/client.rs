//! The chat-completions client over reqwest (the `llm` feature): one POST per turn, a bounded body, errors without the key.

use std::time::Duration;

use serde::Deserialize;

use super::super::config::{ApiKey, ExternalConfig};
use super::super::error::{excerpt, ExternalError};
use super::turn::{ChatReply, ToolCall};

const BODY_EXCERPT_CHARS: usize = 300;
/// Fails fast on a dead host while leaving the full timeout to a slow model.
const MAX_CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Debug, Deserialize)]
struct ChatResponse {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Debug, Deserialize)]
struct Usage {
    #[serde(default)]
    total_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    message: ChoiceMessage,
}

#[derive(Debug, Default, Deserialize)]
struct ChoiceMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolCall>,
}

/// An OpenAI-compatible chat-completions endpoint: one POST per turn,
/// a bounded body, and errors that never carry the key.
#[derive(Debug)]
pub(crate) struct ChatClient {
    client: reqwest::Client,
    url: url::Url,
    model: String,
    key: Option<ApiKey>,
    timeout: Duration,
    max_output_bytes: usize,
}

impl ChatClient {
    pub(crate) fn new(cfg: &ExternalConfig) -> Result<Self, ExternalError> {
        let url = cfg.chat_url()?;
        let model = cfg.model_name()?.to_owned();
        // rustls needs a process-wide crypto provider; ring is the one octocrab uses.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(cfg.timeout)
            .connect_timeout(cfg.timeout.min(MAX_CONNECT_TIMEOUT))
            .user_agent(concat!("navin/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ExternalError::Runtime(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self {
            client,
            url,
            model,
            key: cfg.api_key.clone(),
            timeout: cfg.timeout,
            max_output_bytes: cfg.max_output_bytes,
        })
    }

    pub(crate) fn model(&self) -> &str {
        &self.model
    }

    /// `http:<model>`, the name plans from this endpoint are recorded under.
    pub(crate) fn origin(&self) -> String {
        format!("http:{}", self.model)
    }

    /// Sends `body` (the `model` field is added) and returns the parsed reply.
    pub(crate) async fn post(
        &self,
        mut body: serde_json::Value,
    ) -> Result<ChatReply, ExternalError> {
        body["model"] = serde_json::Value::String(self.model.clone());
        let mut request = self.client.post(self.url.clone()).json(&body);
        if let Some(key) = &self.key {
            request = request.bearer_auth(key.expose());
        }
        let mut response = request.send().await.map_err(|e| self.transport(&e))?;
        let status = response.status();
        let mut raw = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| self.transport(&e))? {
            if raw.len() + chunk.len() > self.max_output_bytes {
                return Err(ExternalError::OutputTooLarge {
                    origin: self.origin(),
                    limit: self.max_output_bytes,
                });
            }
            raw.extend_from_slice(&chunk);
        }
        let text = String::from_utf8_lossy(&raw);
        if !status.is_success() {
            return Err(ExternalError::Http {
                url: self.url.to_string(),
                status: status.as_u16(),
                body_excerpt: self.excerpt(&text),
            });
        }
        let parsed: ChatResponse =
            serde_json::from_str(&text).map_err(|e| ExternalError::NotJson {
                url: self.url.to_string(),
                reason: e.to_string(),
                body_excerpt: self.excerpt(&text),
            })?;
        let tokens = parsed.usage.and_then(|u| u.total_tokens).unwrap_or(0);
        let message = parsed
            .choices
            .into_iter()
            .next()
            .map(|c| c.message)
            .unwrap_or_default();
        Ok(ChatReply {
            content: message.content.unwrap_or_default(),
            tool_calls: message.tool_calls,
            tokens,
        })
    }

    fn excerpt(&self, text: &str) -> String {
        excerpt(
            text,
            BODY_EXCERPT_CHARS,
            self.key.as_ref().map(ApiKey::expose),
        )
    }

    fn transport(&self, error: &reqwest::Error) -> ExternalError {
        if error.is_timeout() {
            return ExternalError::Timeout {
                what: format!("the request to {}", self.url),
                after: self.timeout,
            };
        }
        ExternalError::Connect {
            url: self.url.to_string(),
            reason: self.excerpt(&error_chain(error)),
        }
    }
}

/// The error and its causes on one line: reqwest's own message alone
/// ("error sending request") hides the useful part ("connection refused").
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut parts = vec![error.to_string()];
    let mut cause = error.source();
    while let Some(e) = cause {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        cause = e.source();
    }
    parts.join(": ")
}
