//! The chat client of a build without the `llm` feature: it cannot be made, and asking for one names the feature.

use super::super::config::ExternalConfig;
use super::super::error::ExternalError;
use super::turn::ChatReply;

/// No value of this type exists: with no HTTP client built in there is nothing to send
/// a turn with, so the agent loop that holds one is never entered.
#[derive(Debug)]
pub(crate) enum ChatClient {}

impl ChatClient {
    /// Names a missing endpoint or model first, as the real client does, then the
    /// missing feature.
    pub(crate) fn new(cfg: &ExternalConfig) -> Result<Self, ExternalError> {
        cfg.chat_url()?;
        cfg.model_name()?;
        Err(ExternalError::NotBuilt)
    }

    pub(crate) fn model(&self) -> &str {
        match *self {}
    }

    pub(crate) fn origin(&self) -> String {
        match *self {}
    }

    pub(crate) async fn post(&self, _body: serde_json::Value) -> Result<ChatReply, ExternalError> {
        match *self {}
    }
}
