//! A scripted OpenAI-compatible chat-completions endpoint on 127.0.0.1: it answers each request with the next scripted reply (a tool call or a plan) and records what it was sent.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};

/// One request as the endpoint saw it.
#[derive(Debug, Clone)]
pub struct LlmRequest {
    pub authorization: Option<String>,
    pub body: Value,
}

#[derive(Default)]
struct Script {
    replies: VecDeque<Value>,
    seen: Vec<LlmRequest>,
}

/// The running endpoint; it stops with the test's runtime.
#[derive(Clone)]
pub struct FakeLlm {
    base_url: String,
    script: Arc<Mutex<Script>>,
}

impl std::fmt::Debug for FakeLlm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeLlm")
            .field("base_url", &self.base_url)
            .finish()
    }
}

/// A reply asking for tool calls `(name, arguments)`.
pub fn tool_calls(calls: &[(&str, Value)]) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| {
            json!({"id": format!("call_{i}"), "type": "function",
                   "function": {"name": name, "arguments": args.to_string()}})
        })
        .collect();
    json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
                     "message": {"role": "assistant", "content": null, "tool_calls": calls}}],
        "usage": {"prompt_tokens": 500, "completion_tokens": 50, "total_tokens": 550}
    })
}

/// A reply with text (the plan).
pub fn content(text: &str) -> Value {
    json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 800, "completion_tokens": 400, "total_tokens": 1200}
    })
}

async fn chat(
    State(script): State<Arc<Mutex<Script>>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> (StatusCode, Json<Value>) {
    let mut s = script.lock().unwrap_or_else(|p| p.into_inner());
    s.seen.push(LlmRequest {
        authorization: headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
        body,
    });
    match s.replies.pop_front() {
        Some(reply) => (StatusCode::OK, Json(reply)),
        None => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"error": {"message": "the script has no more replies"}})),
        ),
    }
}

impl FakeLlm {
    /// Serves `replies` in order at `POST {base_url}/chat/completions`.
    pub async fn start(replies: Vec<Value>) -> std::io::Result<Self> {
        let script = Arc::new(Mutex::new(Script {
            replies: replies.into(),
            seen: Vec::new(),
        }));
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .route("/inference/chat/completions", post(chat))
            .with_state(Arc::clone(&script));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self {
            base_url: format!("http://{addr}/v1"),
            script,
        })
    }

    /// `http://127.0.0.1:<port>/v1`, what `NAVIN_LLM_BASE_URL` is set to.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// `http://127.0.0.1:<port>/inference`, shaped like GitHub Models' base URL.
    pub fn models_base_url(&self) -> String {
        self.base_url.replace("/v1", "/inference")
    }

    /// Adds a reply at the end of the script.
    pub fn push(&self, reply: Value) {
        self.lock().replies.push_back(reply);
    }

    pub fn requests(&self) -> Vec<LlmRequest> {
        self.lock().seen.clone()
    }

    fn lock(&self) -> MutexGuard<'_, Script> {
        self.script.lock().unwrap_or_else(|p| p.into_inner())
    }
}
