//! What one chat turn gets back: the reply text, the tool calls asked for, the tokens spent.

use serde::{Deserialize, Serialize};

/// One tool call as chat-completions sends it: `arguments` is a JSON *string*.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub(crate) struct ToolCall {
    pub id: String,
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    pub function: FunctionCall,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
pub(crate) struct FunctionCall {
    pub name: String,
    #[serde(default)]
    pub arguments: String,
}

fn function_type() -> String {
    "function".to_owned()
}

/// The first choice of a reply: its text, the tools it asks for, and the
/// tokens the endpoint says the turn cost (0 when it does not say).
#[derive(Debug, Clone, Default)]
pub(crate) struct ChatReply {
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
    pub tokens: u64,
}
