//! The tool-using planner: a chat-completions conversation in which the model reads the planned commit through read-only tools and then writes the plan.
//!
//! Budgets bound every run (turns, tool bytes, tokens, wall time). When
//! turns, bytes or tokens run out the model gets one last turn without
//! tools to write the plan; wall time ends the run outright. The plan goes
//! through the one parser, and a rejection goes back once with the
//! parser's message, as with every other source.

use std::time::Duration;

use navin_ledger::plan::record::{PlannerRun, ToolCallRecord};
use navin_ledger::plan::PlanDocument;
use serde_json::{json, Value};

use super::error::ExternalError;
use super::extract::extract_plan;
use super::http::ChatClient;
use super::prompt::{budget_message, build, feedback_message};
use super::summary::RepoSummary;
use super::tools::{definitions_json, Toolbox};
use super::{ExternalConfig, ExternalPlan, REJECTED_EXCERPT_CHARS};
use crate::detect::commit_tree::CommitTree;

/// How much one tool-using run may spend. Defaults suit a hosted model
/// with a 128k context; GitHub Models' free tier wants smaller ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentBudgets {
    /// Chat requests, the final plan turn included.
    pub max_turns: u32,
    /// Bytes of tool answers handed to the model over the whole run.
    pub max_tool_bytes: usize,
    /// Bytes of one tool answer (longer ones are clipped, with a note).
    pub max_result_bytes: usize,
    /// Tokens the endpoint reports, summed over the turns.
    pub max_tokens: u64,
    /// The whole conversation.
    pub max_wall: Duration,
}

impl Default for AgentBudgets {
    fn default() -> Self {
        Self {
            max_turns: 16,
            max_tool_bytes: 192 * 1024,
            max_result_bytes: 16 * 1024,
            max_tokens: 400_000,
            max_wall: Duration::from_secs(300),
        }
    }
}

/// Arguments are kept in the transcript up to this many characters.
const MAX_ARGUMENT_CHARS: usize = 300;

struct Run<'a> {
    chat: ChatClient,
    tools: Toolbox<'a>,
    budgets: &'a AgentBudgets,
    messages: Vec<Value>,
    record: PlannerRun,
    tool_bytes: usize,
    attempts: u32,
}

/// Runs the conversation for `request` against `tree`, starting from the
/// built-in planner's `summary`.
pub(crate) async fn plan_with_tools(
    cfg: &ExternalConfig,
    budgets: &AgentBudgets,
    tree: &CommitTree,
    request: &str,
    summary: &RepoSummary,
) -> Result<ExternalPlan, ExternalError> {
    let chat = ChatClient::new(cfg)?;
    let prompt = build(request, summary, cfg.max_prompt_bytes);
    let record = PlannerRun::new(format!("llm:{}", chat.model()), tree.commit_id());
    let mut run = Run {
        chat,
        tools: Toolbox::new(
            tree,
            summary.to_text(budgets.max_result_bytes),
            budgets.max_result_bytes,
        ),
        budgets,
        messages: vec![
            json!({"role": "system", "content": prompt.system}),
            json!({"role": "user", "content": prompt.user}),
        ],
        record,
        tool_bytes: 0,
        attempts: 0,
    };
    match tokio::time::timeout(budgets.max_wall, run.converse()).await {
        Ok(result) => result,
        Err(_) => Err(ExternalError::Timeout {
            what: format!(
                "planning with {} ({} turns, {} tool calls so far)",
                run.chat.origin(),
                run.record.turns,
                run.record.tool_calls.len()
            ),
            after: budgets.max_wall,
        }),
    }
}

impl Run<'_> {
    /// Which budget is spent, if any (wall time is watched outside).
    fn spent(&self) -> Option<&'static str> {
        if self.record.turns + 1 >= self.budgets.max_turns {
            Some("turn")
        } else if self.tool_bytes >= self.budgets.max_tool_bytes {
            Some("tool output")
        } else if self.record.tokens >= self.budgets.max_tokens {
            Some("token")
        } else {
            None
        }
    }

    async fn converse(&mut self) -> Result<ExternalPlan, ExternalError> {
        let mut last_turn = false;
        loop {
            if !last_turn {
                if let Some(what) = self.spent() {
                    last_turn = true;
                    self.messages
                        .push(json!({"role": "user", "content": budget_message(what)}));
                }
            }
            let mut body = json!({"messages": self.messages, "temperature": 0});
            if !last_turn {
                body["tools"] = definitions_json();
                body["tool_choice"] = json!("auto");
            }
            let reply = self.chat.post(body).await?;
            self.record.turns += 1;
            self.record.tokens += reply.tokens;
            if !reply.tool_calls.is_empty() {
                if last_turn {
                    return Err(self.no_plan());
                }
                self.answer_tools(reply.content, reply.tool_calls);
                continue;
            }
            if reply.content.trim().is_empty() {
                return Err(ExternalError::EmptyReply {
                    origin: self.chat.origin(),
                });
            }
            self.attempts += 1;
            let text = extract_plan(&reply.content);
            match PlanDocument::parse(text) {
                Ok(document) => {
                    self.record.attempts = self.attempts;
                    return Ok(ExternalPlan {
                        document,
                        source: self.chat.origin(),
                        attempts: self.attempts,
                        run: Some(self.record.clone()),
                    });
                }
                Err(error) if self.attempts >= 2 => {
                    return Err(ExternalError::InvalidPlan {
                        origin: self.chat.origin(),
                        attempts: self.attempts,
                        error: Box::new(error),
                        output_excerpt: text.chars().take(REJECTED_EXCERPT_CHARS).collect(),
                    });
                }
                Err(error) => {
                    self.messages
                        .push(json!({"role": "assistant", "content": reply.content}));
                    self.messages
                        .push(json!({"role": "user", "content": feedback_message(&error)}));
                    // The fix is one more turn even when the budget is spent.
                    if last_turn {
                        self.messages
                            .push(json!({"role": "user", "content": budget_message("turn")}));
                    }
                }
            }
        }
    }

    /// Runs every call of one reply and queues the answers, in order, as
    /// the `tool` messages the next request must carry.
    fn answer_tools(&mut self, content: String, calls: Vec<super::http::ToolCall>) {
        let content = if content.is_empty() {
            Value::Null
        } else {
            Value::String(content)
        };
        self.messages
            .push(json!({"role": "assistant", "content": content, "tool_calls": calls}));
        for call in calls {
            let answer = if self.tool_bytes >= self.budgets.max_tool_bytes {
                let reason = "the tool output budget is spent; write the plan now".to_owned();
                super::tools::ToolAnswer {
                    text: format!("error: {reason}"),
                    error: Some(reason),
                }
            } else {
                self.tools
                    .call(&call.function.name, &call.function.arguments)
            };
            self.tool_bytes += answer.text.len();
            self.record.tool_calls.push(ToolCallRecord {
                turn: self.record.turns,
                tool: call.function.name.chars().take(64).collect(),
                arguments: call
                    .function
                    .arguments
                    .chars()
                    .take(MAX_ARGUMENT_CHARS)
                    .collect(),
                bytes: answer.text.len(),
                error: answer.error,
            });
            self.messages
                .push(json!({"role": "tool", "tool_call_id": call.id, "content": answer.text}));
        }
    }

    fn no_plan(&self) -> ExternalError {
        ExternalError::BudgetSpent {
            origin: self.chat.origin(),
            turns: self.record.turns,
            tool_calls: self.record.tool_calls.len(),
        }
    }
}
