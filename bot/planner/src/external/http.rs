//! The OpenAI-compatible chat-completions source: one conversation, one request per attempt.

use std::time::Duration;

use navin_ledger::plan::PlanError;
use serde::{Deserialize, Serialize};

use super::config::{ApiKey, ExternalConfig};
use super::error::{excerpt, ExternalError};
use super::prompt::{feedback_message, Prompt};

const BODY_EXCERPT_CHARS: usize = 300;
/// Fails fast on a dead host while leaving the full timeout to a slow model.
const MAX_CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Debug, Clone, Serialize)]
struct Message {
    role: &'static str,
    content: String,
}

#[derive(Debug, Deserialize)]
struct ChatResponse {
    choices: Vec<Choice>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    message: ChoiceMessage,
}

#[derive(Debug, Deserialize)]
struct ChoiceMessage {
    #[serde(default)]
    content: Option<String>,
}

/// A conversation with the model. Each [`Self::ask`] sends the whole
/// history, so the feedback turn sees the plan it is correcting.
#[derive(Debug)]
pub(crate) struct HttpSource {
    client: reqwest::Client,
    url: reqwest::Url,
    model: String,
    key: Option<ApiKey>,
    timeout: Duration,
    max_output_bytes: usize,
    messages: Vec<Message>,
}

impl HttpSource {
    pub(crate) fn new(cfg: &ExternalConfig, prompt: Prompt) -> Result<Self, ExternalError> {
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
            messages: vec![
                Message {
                    role: "system",
                    content: prompt.system,
                },
                Message {
                    role: "user",
                    content: prompt.user,
                },
            ],
        })
    }

    /// `http:<model>`, the name plans from this source are recorded under.
    pub(crate) fn origin(&self) -> String {
        format!("http:{}", self.model)
    }

    /// Queues the validation error as the next user turn.
    pub(crate) fn add_feedback(&mut self, error: &PlanError) {
        self.messages.push(Message {
            role: "user",
            content: feedback_message(error),
        });
    }

    /// Sends the conversation and returns the reply text, which is also
    /// appended to the history.
    pub(crate) async fn ask(&mut self) -> Result<String, ExternalError> {
        let body = serde_json::json!({
            "model": self.model,
            "messages": self.messages,
            "temperature": 0,
        });
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
        let content = parsed
            .choices
            .into_iter()
            .next()
            .and_then(|c| c.message.content)
            .unwrap_or_default();
        if content.trim().is_empty() {
            return Err(ExternalError::EmptyReply {
                origin: self.origin(),
            });
        }
        self.messages.push(Message {
            role: "assistant",
            content: content.clone(),
        });
        Ok(content)
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
