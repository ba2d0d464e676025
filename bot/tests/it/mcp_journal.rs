//! `navin mcp --journal`: every write that landed, once, as the line the Action's `progress` mode replays (tool, arguments, op key, actor).

use serde_json::{json, Value};

use crate::agents::started;
use crate::mcp_support::McpClient;

#[test]
fn the_journal_keeps_each_landed_write_once_with_its_key_and_actor_and_no_reads_or_refusals() {
    let dir = started(None);
    let d = dir.path();
    let journal = d.join(".git/navin-journal/journal.jsonl");
    let journal_arg = journal.to_str().expect("a UTF-8 path");
    let repo = d.to_str().expect("a UTF-8 path");
    let mut mcp = McpClient::start(
        d,
        &["--mode", "agent", "--repo", repo, "--journal", journal_arg],
        &[("NAVIN_ACTOR", "subagent:S1")],
        "journal",
    );
    let progress = json!({ "step": "S1", "real_progress": false, "fingerprint": "same-error", "op_id": "turn-7" });
    let first = mcp.call_tool("ledger_progress", progress.clone());
    let again = mcp.call_tool("ledger_progress", progress);
    let read = mcp.call_tool("board_next", json!({}));
    let refused = mcp.call_tool(
        "ledger_update",
        json!({ "add_facts": ["I decided"], "reason": "mine" }),
    );
    let asked = mcp.call_tool("ask_user", json!({ "question": "Drop Python 3.8?" }));
    mcp.kill();
    assert_ne!(first["isError"], true, "{first}");
    assert_eq!(
        again["structuredContent"]["already_applied"], true,
        "{again}"
    );
    assert_ne!(read["isError"], true, "{read}");
    assert_eq!(refused["isError"], true, "{refused}");
    assert_ne!(asked["isError"], true, "{asked}");

    let text = std::fs::read_to_string(&journal).expect("the journal");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let tools: Vec<&str> = lines.iter().filter_map(|l| l["tool"].as_str()).collect();
    assert_eq!(tools, vec!["ledger_progress", "ask_user"], "{text}");
    let own = lines[0]["key"].as_str().expect("a key");
    assert!(
        own.starts_with("mcp:key:") && own.ends_with(":turn-7"),
        "{own}"
    );
    assert_eq!(lines[0]["actor"], "subagent:S1");
    assert_eq!(lines[0]["args"]["fingerprint"], "same-error");
    let key = lines[1]["key"].as_str().expect("a key");
    assert!(
        key.starts_with("mcp:") && key.len() > 8,
        "a session-unique key: {key}"
    );
    assert_eq!(lines[1]["args"]["question"], "Drop Python 3.8?");
}
