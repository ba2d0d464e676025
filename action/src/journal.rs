//! The agent's MCP writes, carried out of its read-only job as `navin mcp --journal` lines and turned back into ledger operations.
//!
//! The agent job holds no token that can write the ledger branch, so its `navin mcp`
//! writes land only in the job's checkout. The journal keeps each write that landed
//! there; `progress` mode replays them on the real ledger. What is replayed is what the
//! agent may say about its own work: progress and fingerprints (so stalls and loops
//! count), failures, questions and new missing info. Starting and closing a step are
//! GitHub's to decide from the pull request and its checks; spend comes from the
//! runner's report, not from the agent's own figures.

use navin_ledger::model::{Actor, AttemptOutcome, Evidence};
use navin_ledger::ops::{Operation, ProgressArgs, UpdateArgs};
use serde::Deserialize;
use serde_json::Value;

/// One journal line, as `navin mcp --journal` writes it.
#[derive(Debug, Deserialize)]
pub struct Entry {
    pub tool: String,
    #[serde(default)]
    pub args: Value,
    /// The write's op key in the agent's session: the replay's op id is built from it,
    /// so a re-run of the job applies each entry once.
    pub key: String,
    #[serde(default)]
    pub actor: Option<String>,
}

/// What one entry becomes.
#[derive(Debug)]
pub enum Replay {
    /// Apply `op` as `actor` under `op_id`.
    Apply {
        op: Box<Operation>,
        actor: Actor,
        op_id: String,
    },
    /// Not carried over, and why (for the job log).
    Skip(String),
}

/// The entries of `text`; a line that does not parse is skipped with its number.
pub fn parse(text: &str) -> (Vec<Entry>, Vec<String>) {
    let mut entries = Vec::new();
    let mut bad = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Entry>(line) {
            Ok(e) => entries.push(e),
            Err(e) => bad.push(format!("journal line {}: {e}", n + 1)),
        }
    }
    (entries, bad)
}

fn text(args: &Value, key: &str) -> Option<String> {
    args.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

fn texts(args: &Value, key: &str) -> Vec<String> {
    args.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The operation `entry` replays as. Whoever the journal names, the replay acts as an
/// agent: `subagent:<step>` unless it names another agent.
pub fn replay(entry: &Entry, step: &str) -> Replay {
    let actor = entry
        .actor
        .as_deref()
        .and_then(|a| a.parse::<Actor>().ok())
        .filter(Actor::is_agent)
        .unwrap_or_else(|| Actor::Subagent(step.to_owned()));
    let args = &entry.args;
    let op_id = format!("journal:{}", entry.key);
    let op = match entry.tool.as_str() {
        "ledger_progress" => {
            let Some(step) = text(args, "step") else {
                return Replay::Skip("ledger_progress without a step".into());
            };
            Operation::Progress(ProgressArgs {
                step,
                real_progress: args
                    .get("real_progress")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                fingerprint: text(args, "fingerprint"),
                tokens: 0,
                cost_usd: 0.0,
                evidence: text(args, "evidence").map(Evidence::prose),
            })
        }
        "board_fail" => {
            let Some(step) = text(args, "step") else {
                return Replay::Skip("board_fail without a step".into());
            };
            Operation::Fail {
                step,
                evidence: text(args, "evidence").map(|e| {
                    let mut e = Evidence::prose(e);
                    e.ok = false;
                    e
                }),
                reason: text(args, "reason").unwrap_or_else(|| "the agent gave up".into()),
                outcome: AttemptOutcome::Failed,
            }
        }
        "ask_user" => {
            let Some(question) = text(args, "question") else {
                return Replay::Skip("ask_user without a question".into());
            };
            Operation::Ask {
                question,
                step: text(args, "step"),
            }
        }
        "ledger_update" => {
            let update = UpdateArgs {
                add_missing_info: texts(args, "add_missing_info"),
                add_constraints: texts(args, "add_constraints"),
                reason: text(args, "reason").unwrap_or_else(|| "from the agent's job".into()),
                ..UpdateArgs::default()
            };
            if update.add_missing_info.is_empty() && update.add_constraints.is_empty() {
                return Replay::Skip(
                    "ledger_update with nothing an agent may add (facts, answers and closing are a person's or Navin's)".into(),
                );
            }
            Operation::Update(update)
        }
        other => {
            return Replay::Skip(format!(
                "{other} is not carried over: starting and closing a step follow its pull request and checks"
            ))
        }
    };
    Replay::Apply {
        op: Box::new(op),
        actor,
        op_id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_fail_and_questions_replay_as_the_agent_with_keyed_op_ids() {
        let text = concat!(
            r#"{"tool":"ledger_progress","args":{"step":"S2","real_progress":false,"fingerprint":"fp1","tokens":900000},"key":"mcp:abc:1","actor":"subagent:S2"}"#,
            "\n",
            r#"{"tool":"board_done","args":{"step":"S2"},"key":"mcp:abc:2","actor":"subagent:S2"}"#,
            "\nnot json\n",
            r#"{"tool":"ask_user","args":{"question":"Keep v1?"},"key":"mcp:key:q","actor":"human:mallory"}"#,
            "\n",
        );
        let (entries, bad) = parse(text);
        assert_eq!(entries.len(), 3);
        assert_eq!(bad.len(), 1);
        match replay(&entries[0], "S2") {
            Replay::Apply { op, actor, op_id } => {
                assert_eq!(op_id, "journal:mcp:abc:1");
                assert_eq!(actor, Actor::Subagent("S2".into()));
                let Operation::Progress(p) = *op else {
                    panic!("{op:?}")
                };
                assert_eq!(p.fingerprint.as_deref(), Some("fp1"));
                assert_eq!(p.tokens, 0, "spend comes from the runner's report");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(replay(&entries[1], "S2"), Replay::Skip(_)));
        match replay(&entries[2], "S2") {
            Replay::Apply { op, actor, .. } => {
                assert!(matches!(*op, Operation::Ask { .. }));
                assert_eq!(
                    actor,
                    Actor::Subagent("S2".into()),
                    "a journal cannot claim a person"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
