//! What an agent's run cost, read from what its runner leaves behind: claude-code-action's execution file, Codex's JSON events, or `navin-usage:` lines.
//!
//! The agent job copies whichever its agent produced into its artifact; `progress` mode
//! reads it here. The format is told by the content, not the file name, so one input
//! serves every agent. Nothing found is `None`: the run is debited 0 and the panel
//! warns that the caps could not see it.

use serde_json::Value;

/// Tokens and dollars one agent run reported.
#[derive(Debug, Clone, PartialEq)]
pub struct Spend {
    pub tokens: u64,
    pub cost_usd: f64,
    pub source: Source,
}

/// Which report the figures came from (for the job log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// claude-code-action's `execution_file`: its `result` messages carry
    /// `total_cost_usd` and `usage`.
    ClaudeExecution,
    /// `codex exec --json` events: each `turn.completed` carries `usage`; Codex
    /// reports no cost.
    CodexEvents,
    /// `navin-usage: tokens=N cost-usd=X` lines (or `tokens=`/`cost-usd=` output lines)
    /// from a command agent.
    UsageLines,
}

impl Source {
    pub fn describe(self) -> &'static str {
        match self {
            Source::ClaudeExecution => "claude-code-action's execution file",
            Source::CodexEvents => "Codex's JSON events",
            Source::UsageLines => "the agent's usage lines",
        }
    }
}

/// The spend `text` reports, whichever of the three forms it is in.
pub fn read(text: &str) -> Option<Spend> {
    claude(text).or_else(|| codex(text)).or_else(|| lines(text))
}

fn count(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// Cache reads are left out of the token count: they are billed at a fraction, which
/// `total_cost_usd` already reflects, and would otherwise dwarf a `max_tokens` cap.
fn claude(text: &str) -> Option<Spend> {
    let doc: Value = serde_json::from_str(text.trim()).ok()?;
    let messages: Vec<&Value> = match &doc {
        Value::Array(items) => items.iter().collect(),
        Value::Object(_) => vec![&doc],
        _ => return None,
    };
    let results: Vec<&Value> = messages
        .into_iter()
        .filter(|m| m.get("type").and_then(Value::as_str) == Some("result"))
        .collect();
    if results.is_empty() {
        return None;
    }
    let mut spend = Spend {
        tokens: 0,
        cost_usd: 0.0,
        source: Source::ClaudeExecution,
    };
    for r in results {
        if let Some(cost) = r
            .get("total_cost_usd")
            .and_then(Value::as_f64)
            .filter(|c| c.is_finite() && *c >= 0.0)
        {
            spend.cost_usd += cost;
        }
        if let Some(u) = r.get("usage") {
            spend.tokens = spend
                .tokens
                .saturating_add(count(u, "input_tokens"))
                .saturating_add(count(u, "output_tokens"))
                .saturating_add(count(u, "cache_creation_input_tokens"));
        }
    }
    Some(spend)
}

/// `input_tokens` already includes the cached part Codex reports separately.
fn codex(text: &str) -> Option<Spend> {
    let mut found = false;
    let mut tokens = 0u64;
    for line in text.lines() {
        let Ok(event) = serde_json::from_str::<Value>(line.trim()) else {
            continue;
        };
        if event.get("type").and_then(Value::as_str) != Some("turn.completed") {
            continue;
        }
        if let Some(u) = event.get("usage") {
            found = true;
            tokens = tokens
                .saturating_add(count(u, "input_tokens"))
                .saturating_add(count(u, "output_tokens"));
        }
    }
    found.then_some(Spend {
        tokens,
        cost_usd: 0.0,
        source: Source::CodexEvents,
    })
}

/// Every `tokens=N` and `cost-usd=X` pair, summed: a command may report per turn.
fn lines(text: &str) -> Option<Spend> {
    let mut found = false;
    let mut spend = Spend {
        tokens: 0,
        cost_usd: 0.0,
        source: Source::UsageLines,
    };
    for line in text.lines() {
        let line = line.trim();
        let rest = line.strip_prefix("navin-usage:").unwrap_or(line);
        for word in rest.split_whitespace() {
            if let Some(n) = word.strip_prefix("tokens=") {
                if let Ok(n) = n.parse::<u64>() {
                    spend.tokens = spend.tokens.saturating_add(n);
                    found = true;
                }
            } else if let Some(c) = word.strip_prefix("cost-usd=") {
                if let Some(c) = c
                    .trim_start_matches('$')
                    .parse::<f64>()
                    .ok()
                    .filter(|c| c.is_finite() && *c >= 0.0)
                {
                    spend.cost_usd += c;
                    found = true;
                }
            }
        }
    }
    found.then_some(spend)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_execution_file_gives_cost_and_tokens_without_cache_reads() {
        // The shape claude-code-action writes to `execution_file`: the stream's
        // messages, ending in a `result`.
        let file = r#"[
          {"type": "system", "subtype": "init", "session_id": "s1", "tools": ["Read"]},
          {"type": "assistant", "message": {"content": [{"type": "text", "text": "done"}]}},
          {"type": "result", "subtype": "success", "is_error": false, "num_turns": 7,
           "total_cost_usd": 0.4213,
           "usage": {"input_tokens": 1200, "cache_creation_input_tokens": 3000,
                     "cache_read_input_tokens": 250000, "output_tokens": 800}}
        ]"#;
        let spend = read(file).expect("a report");
        assert_eq!(spend.source, Source::ClaudeExecution);
        assert_eq!(spend.tokens, 5000);
        assert!((spend.cost_usd - 0.4213).abs() < 1e-9);
    }

    #[test]
    fn codex_events_sum_every_completed_turn() {
        let events = concat!(
            "{\"type\":\"thread.started\",\"thread_id\":\"t1\"}\n",
            "{\"type\":\"turn.started\"}\n",
            "{\"type\":\"item.completed\",\"item\":{\"id\":\"i0\",\"type\":\"agent_message\",\"text\":\"ok\"}}\n",
            "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":24763,\"cached_input_tokens\":24448,\"output_tokens\":122}}\n",
            "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1000,\"cached_input_tokens\":0,\"output_tokens\":15}}\n",
        );
        let spend = read(events).expect("a report");
        assert_eq!(spend.source, Source::CodexEvents);
        assert_eq!(spend.tokens, 24763 + 122 + 1000 + 15);
        assert_eq!(spend.cost_usd, 0.0);
    }

    #[test]
    fn usage_lines_in_a_commands_output_are_summed() {
        let out = "building...\nnavin-usage: tokens=1500 cost-usd=0.25\nmore output\nnavin-usage: tokens=500 cost-usd=$0.05\n";
        let spend = read(out).expect("a report");
        assert_eq!(spend.source, Source::UsageLines);
        assert_eq!(spend.tokens, 2000);
        assert!((spend.cost_usd - 0.30).abs() < 1e-9);
        let outputs = "tokens=42\ncost-usd=0.01\n";
        assert_eq!(read(outputs).map(|s| s.tokens), Some(42));
    }

    #[test]
    fn output_without_any_report_is_none_and_bad_figures_are_ignored() {
        assert_eq!(read(""), None);
        assert_eq!(read("all tests passed\n"), None);
        assert_eq!(read("[{\"type\": \"assistant\"}]"), None);
        assert_eq!(read("tokens=lots cost-usd=-3 cost-usd=NaN"), None);
    }
}
