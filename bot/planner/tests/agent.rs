//! The tool-using planner against a scripted OpenAI-compatible endpoint that calls tools: what the model is shown, what it is refused, the budgets, and that nothing is written.

mod support;

use std::time::Duration;

use navin_planner::external::{
    generate_at, plan_commit, AgentBudgets, ExternalError, ExternalKind,
};
use navin_planner::CommitTree;
use serde_json::{json, Value};
use support::*;

/// A reply asking for `calls` (name, arguments), as chat-completions sends them.
fn tools(calls: &[(&str, Value)]) -> Reply {
    let calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| {
            json!({"id": format!("call_{i}_{name}"), "type": "function",
                   "function": {"name": name, "arguments": args.to_string()}})
        })
        .collect();
    Reply {
        status: 200,
        body: json!({
            "id": "chatcmpl-t",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": calls}, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 900, "completion_tokens": 100, "total_tokens": 1000}
        })
        .to_string(),
        delay: Duration::ZERO,
    }
}

/// The `tool` messages of request `i`, in order: what the model was shown.
fn tool_answers(req: &Recorded) -> Vec<(String, String)> {
    req.body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| {
                    (
                        m["tool_call_id"].as_str().unwrap_or_default().to_owned(),
                        m["content"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn answer<'a>(answers: &'a [(String, String)], id: &str) -> &'a str {
    answers
        .iter()
        .find(|(i, _)| i == id)
        .map(|(_, c)| c.as_str())
        .unwrap_or_else(|| panic!("no answer to {id} in {answers:?}"))
}

/// A committed repository with one huge file, for the clipping test.
fn big_repo() -> tempfile::TempDir {
    let dir = repo();
    let big: String = (0..6000)
        .map(|i| format!("// line {i} of the generated table\n"))
        .collect();
    std::fs::write(dir.path().join("src/table.rs"), big).expect("write");
    commit_all(dir.path());
    dir
}

#[tokio::test]
async fn the_model_reads_the_commit_through_tools_is_refused_outside_it_and_fixes_its_plan() {
    let repo = big_repo();
    // Uncommitted text the tools must never show.
    std::fs::write(repo.path().join("src/lib.rs"), "pub mod uncommitted;\n").expect("write");
    let before = snapshot(repo.path());
    let llm = FakeLlm::start(vec![
        tools(&[
            ("repo_map", json!({})),
            ("find_symbol", json!({"name": "send_webhook"})),
            ("grep", json!({"pattern": "fn send_\\w+", "glob": "src/**"})),
            ("list_dir", json!({"path": "src"})),
            ("glob", json!({"pattern": "tests/*.rs"})),
        ]),
        tools(&[
            (
                "read_file",
                json!({"path": "src/webhook.rs", "start_line": 2, "end_line": 3}),
            ),
            ("read_file", json!({"path": "../../../etc/passwd"})),
            ("read_file", json!({"path": ".git/config"})),
            ("read_file", json!({"path": "/etc/hostname"})),
            ("read_file", json!({"path": "src/table.rs"})),
            ("read_file", json!({"path": "src/lib.rs"})),
            ("write_file", json!({"path": "src/lib.rs", "content": "x"})),
            (
                "read_file",
                json!({"path": "src/webhook.rs", "start_line": 5, "end_line": 2}),
            ),
        ]),
        chat(&two_risk_text()),
        chat(&format!("```markdown\n{}```", valid_text())),
    ]);
    let tree = CommitTree::open(repo.path(), "HEAD").expect("tree");
    let budgets = AgentBudgets {
        max_result_bytes: 4096,
        ..AgentBudgets::default()
    };

    let plan = generate_at(ExternalKind::Http, &llm.config(), &budgets, &tree, REQUEST)
        .await
        .expect("plan");

    assert_eq!(plan.attempts, 2);
    assert_eq!(plan.document.plan(), &valid_plan());
    assert_eq!(before, snapshot(repo.path()), "checkout and .git unchanged");
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 4);
    // Every request offers the six read-only tools, and nothing that writes.
    let names: Vec<&str> = reqs[0].body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "read_file",
            "list_dir",
            "grep",
            "glob",
            "find_symbol",
            "repo_map"
        ]
    );
    // The first message carries the request, the map and the ranked candidates.
    let (_, first) = reqs[0].message(1);
    assert!(
        first.contains(REQUEST) && first.contains("src/webhook.rs"),
        "{first}"
    );

    let shown = tool_answers(&reqs[1]);
    assert!(answer(&shown, "call_0_repo_map").contains("Languages: Rust"));
    assert!(answer(&shown, "call_1_find_symbol").contains("src/webhook.rs:2 fn send_webhook"));
    assert!(answer(&shown, "call_2_grep").contains("src/webhook.rs:2: pub fn send_webhook"));
    let dir = answer(&shown, "call_3_list_dir");
    assert!(
        dir.contains("webhook.rs") && dir.contains("table.rs"),
        "{dir}"
    );
    assert!(answer(&shown, "call_4_glob").contains("tests/webhook_test.rs"));

    let shown = tool_answers(&reqs[2]);
    let read = answer(&shown, "call_0_read_file");
    assert!(
        read.contains("    2  pub fn send_webhook") && !read.contains("Sends one"),
        "{read}"
    );
    assert!(answer(&shown, "call_1_read_file").contains("outside the repository"));
    assert!(answer(&shown, "call_2_read_file").contains("git metadata"));
    assert!(answer(&shown, "call_3_read_file").contains("outside the repository"));
    let huge = answer(&shown, "call_4_read_file");
    assert!(
        huge.len() <= 4096 + 200 && huge.contains("[clipped:"),
        "{}",
        huge.len()
    );
    // The committed text, not the working tree's.
    assert!(answer(&shown, "call_5_read_file").contains("pub mod webhook;"));
    assert!(answer(&shown, "call_6_write_file").contains("there is no tool \"write_file\""));
    assert!(answer(&shown, "call_7_read_file").contains("end_line 2 is before start_line 5"));
    // The rejected plan went back with the parser's message.
    let (role, feedback) = reqs[3].message(
        reqs[3].body["messages"]
            .as_array()
            .map_or(0, |m| m.len() - 1),
    );
    assert_eq!(role, "user");
    assert!(
        feedback.starts_with("Your plan failed validation"),
        "{feedback}"
    );

    let run = plan.run.expect("transcript");
    assert_eq!(run.source, "llm:test-model");
    assert_eq!(run.commit, tree.commit_id());
    assert_eq!((run.turns, run.tokens, run.attempts), (4, 2000, 2));
    assert_eq!(run.tool_calls.len(), 13);
    let refused: Vec<&str> = run
        .tool_calls
        .iter()
        .filter(|c| c.error.is_some())
        .map(|c| c.arguments.as_str())
        .collect();
    assert_eq!(refused.len(), 5, "{refused:?}");
    assert!(run.tool_calls.iter().all(|c| c.bytes > 0));
}

#[tokio::test]
async fn a_spent_turn_budget_takes_the_tools_away_and_asks_for_the_plan() {
    let repo = repo();
    let llm = FakeLlm::start(vec![
        tools(&[("list_dir", json!({}))]),
        tools(&[("glob", json!({"pattern": "**/*.rs"}))]),
        chat(&valid_text()),
    ]);
    let tree = CommitTree::open(repo.path(), "HEAD").expect("tree");
    let budgets = AgentBudgets {
        max_turns: 3,
        ..AgentBudgets::default()
    };

    let plan = generate_at(ExternalKind::Http, &llm.config(), &budgets, &tree, REQUEST)
        .await
        .expect("plan");

    assert_eq!(plan.run.as_ref().map(|r| r.turns), Some(3));
    let reqs = llm.requests();
    assert!(reqs[1].body.get("tools").is_some());
    assert!(
        reqs[2].body.get("tools").is_none(),
        "the last turn has no tools"
    );
    let last = reqs[2].body["messages"].as_array().expect("messages");
    let said = last
        .last()
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    assert!(said.contains("turn budget is spent"), "{said}");
}

#[tokio::test]
async fn a_model_that_keeps_calling_tools_past_its_budget_gets_a_clear_error() {
    let repo = repo();
    let llm = FakeLlm::start(vec![
        tools(&[("list_dir", json!({}))]),
        tools(&[("list_dir", json!({}))]),
    ]);
    let tree = CommitTree::open(repo.path(), "HEAD").expect("tree");
    let budgets = AgentBudgets {
        max_turns: 2,
        ..AgentBudgets::default()
    };

    let err = generate_at(ExternalKind::Http, &llm.config(), &budgets, &tree, REQUEST)
        .await
        .expect_err("no plan");

    assert!(
        matches!(err, ExternalError::BudgetSpent { turns: 2, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("planner.max_turns"), "{err}");
}

#[tokio::test]
async fn the_tool_byte_budget_refuses_further_reads() {
    let repo = big_repo();
    let llm = FakeLlm::start(vec![
        tools(&[
            ("read_file", json!({"path": "src/table.rs"})),
            ("read_file", json!({"path": "src/webhook.rs"})),
        ]),
        chat(&valid_text()),
    ]);
    let tree = CommitTree::open(repo.path(), "HEAD").expect("tree");
    let budgets = AgentBudgets {
        max_tool_bytes: 2000,
        max_result_bytes: 4000,
        ..AgentBudgets::default()
    };

    let plan = generate_at(ExternalKind::Http, &llm.config(), &budgets, &tree, REQUEST)
        .await
        .expect("plan");

    let run = plan.run.expect("run");
    assert!(run.tool_calls[0].error.is_none());
    assert!(run.tool_calls[1]
        .error
        .as_deref()
        .is_some_and(|e| e.contains("budget is spent")));
    let reqs = llm.requests();
    assert!(
        reqs[1].body.get("tools").is_none(),
        "spent bytes end the tool turns"
    );
}

#[tokio::test]
async fn a_silent_model_hits_the_wall_time_budget() {
    let repo = repo();
    let mut slow = tools(&[("list_dir", json!({}))]);
    slow.delay = Duration::from_secs(3);
    let llm = FakeLlm::start(vec![slow]);
    let tree = CommitTree::open(repo.path(), "HEAD").expect("tree");
    let budgets = AgentBudgets {
        max_wall: Duration::from_millis(400),
        ..AgentBudgets::default()
    };

    let started = std::time::Instant::now();
    let err = generate_at(ExternalKind::Http, &llm.config(), &budgets, &tree, REQUEST)
        .await
        .expect_err("timeout");

    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(matches!(err, ExternalError::Timeout { .. }), "{err:?}");
    assert!(
        err.to_string().contains("planning with http:test-model"),
        "{err}"
    );
}

#[tokio::test]
async fn with_fallback_a_failed_model_gives_the_builtin_plan_and_says_why() {
    let repo = repo();
    let llm = FakeLlm::start(vec![raw(503, "{\"error\":\"overloaded\"}")]);
    let tree = CommitTree::open(repo.path(), "HEAD").expect("tree");

    let planned = plan_commit(
        Some(ExternalKind::Http),
        &llm.config(),
        &AgentBudgets::default(),
        true,
        &tree,
        REQUEST,
    )
    .await
    .expect("fallback plan");

    assert_eq!(planned.source, "builtin");
    let why = planned.fallback.expect("reason");
    assert!(why.contains("HTTP 503"), "{why}");
    assert_eq!(planned.run.and_then(|r| r.fallback), Some(why));
    assert!(planned
        .document
        .plan()
        .changes
        .iter()
        .any(|c| c.path == "src/webhook.rs"));

    // Without fallback the same failure is the error.
    let llm = FakeLlm::start(vec![raw(503, "{\"error\":\"overloaded\"}")]);
    let err = plan_commit(
        Some(ExternalKind::Http),
        &llm.config(),
        &AgentBudgets::default(),
        false,
        &tree,
        REQUEST,
    )
    .await
    .expect_err("no fallback");
    assert!(
        matches!(err, ExternalError::Http { status: 503, .. }),
        "{err:?}"
    );
}
