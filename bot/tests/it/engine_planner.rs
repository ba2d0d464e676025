//! `/plan` with `planner.source: llm` through the real server: the model reads the planned commit by tools, the plan record keeps its tool calls, the key stays secret, and `fallback: builtin` speaks up when the model fails.

use navin_e2e::llm::{content, tool_calls, FakeLlm};
use navin_ledger::plan::{render, FileChange, Operation, Plan, READ_ONLY_PERSONA};
use navin_planner::external::{ApiKey, ExternalConfig};
use serde_json::json;

use crate::world::World;

const GREET: (&str, &str) = (
    "src/greet.rs",
    "/// Builds the greeting.\npub fn greet(name: &str) -> String {\n    format!(\"hi {name}\")\n}\n",
);

fn plan() -> String {
    render(&Plan {
        title: "Make the greeting configurable".to_owned(),
        persona: READ_ONLY_PERSONA.to_owned(),
        goal: "Let callers pick the greeting word.".to_owned(),
        architecture: "One crate; `greet` in `src/greet.rs` builds greetings.".to_owned(),
        capabilities: "Greets.".to_owned(),
        data_flow: "caller -> greet -> String".to_owned(),
        target_state: "`greet` takes the word from its caller.".to_owned(),
        impact_isolation: "Only `src/greet.rs`.".to_owned(),
        changes: vec![FileChange {
            path: "src/greet.rs".to_owned(),
            operation: Operation::Edit,
            change: "`greet`: take the greeting word as a parameter.".to_owned(),
            rationale: "The word is hard-coded today.".to_owned(),
            optional: false,
        }],
        new_dependencies: vec![],
        risks: vec![
            "Callers must pass the word.".to_owned(),
            "The default word changes behaviour if mistyped.".to_owned(),
            "Docs mention the old signature.".to_owned(),
        ],
        next_steps: vec!["Run `cargo test`.".to_owned()],
        questions: vec![],
        handoff: None,
        stages: vec![],
    })
}

fn key() -> String {
    format!(
        "sk-navin-e2e-{}-{}",
        std::process::id(),
        rand::random::<u64>()
    )
}

async fn world(llm: &FakeLlm, key: &str) -> World {
    let w = World::with_planner(ExternalConfig {
        base_url: Some(llm.base_url().to_owned()),
        model: Some("operator-model".to_owned()),
        api_key: Some(ApiKey::new(key)),
        ..ExternalConfig::default()
    })
    .await;
    w.commit(&[GREET]);
    w
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_with_the_llm_planner_reads_the_commit_by_tools_and_records_the_calls() {
    let llm = FakeLlm::start(vec![
        tool_calls(&[
            ("find_symbol", json!({"name": "greet"})),
            ("read_file", json!({"path": "src/greet.rs"})),
            ("read_file", json!({"path": "../secrets"})),
        ]),
        content(&format!("```markdown\n{}```", plan())),
    ])
    .await
    .expect("llm");
    let key = key();
    let mut w = world(&llm, &key).await;
    w.commit(&[
        (
            ".github/navin.yml",
            "planner:\n  source: llm\n  model: repo-model\n  max_turns: 6\n",
        ),
        (".github/CODEOWNERS", "* @octo-org/everyone\n/src/ @carol\n"),
    ]);
    let issue = w.issue("Greeting", "Make it configurable");
    w.clear_requests();

    w.comment(issue, "alice", "/plan make the greeting configurable")
        .await;
    let comment = w.reply().await;
    let calls: Vec<String> = w
        .fake()
        .api_requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    w.requests("/plan with the LLM planner");

    assert!(
        comment.contains("Make the greeting configurable"),
        "{comment}"
    );
    // Besides the App's token (minted once an hour, here on the first event), /plan
    // reads the config and alice's role, looks for its comment, posts it and reacts.
    let repo_calls: Vec<&String> = calls.iter().filter(|c| c.contains("/repos/")).collect();
    assert!(repo_calls.len() <= 5, "{calls:#?}");
    assert!(
        !calls
            .iter()
            .any(|c| c.contains("/git/") || c.contains("/contents/src")),
        "{calls:#?}"
    );
    let record = w.plan_record(&format!("issue-{issue}")).expect("record");
    assert_eq!(
        record.source, "http:repo-model",
        "the repository's model wins"
    );
    let run = record.run.expect("run");
    let tools: Vec<&str> = run.tool_calls.iter().map(|c| c.tool.as_str()).collect();
    assert_eq!(tools, ["find_symbol", "read_file", "read_file"]);
    assert!(run.tool_calls[2]
        .error
        .as_deref()
        .is_some_and(|e| e.contains("outside the repository")));
    assert_eq!((run.turns, run.attempts), (2, 1));
    // CODEOWNERS at the planned commit names who owns the proposed file.
    assert_eq!(run.owners.len(), 1);
    assert_eq!(run.owners[0].path, "src/greet.rs");
    assert_eq!(run.owners[0].owners, ["@carol"]);
    assert!(
        comment.contains("**Code owners:** `@carol` (`src/greet.rs`)"),
        "{comment}"
    );

    let seen = llm.requests();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].body["model"], "repo-model");
    assert!(seen
        .iter()
        .all(|r| r.authorization.as_deref() == Some(format!("Bearer {key}").as_str())));
    let answers = seen[1].body["messages"].to_string();
    assert!(answers.contains("src/greet.rs:2 fn greet"), "{answers}");
    assert!(answers.contains("pub fn greet(name: &str)"), "{answers}");
    // The key reaches the endpoint only: not GitHub, not a comment.
    let sent: String = w
        .fake()
        .requests()
        .iter()
        .map(|r| format!("{r:?}"))
        .collect();
    assert!(!sent.contains(&key));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_fallback_builtin_a_failing_model_still_gets_a_plan_and_the_comment_says_why() {
    // No scripted replies: the endpoint answers 503.
    let llm = FakeLlm::start(vec![]).await.expect("llm");
    let key = key();
    let mut w = world(&llm, &key).await;
    w.commit(&[(
        ".github/navin.yml",
        "planner:\n  source: llm\n  fallback: builtin\n",
    )]);
    let issue = w.issue("Greeting", "Make it configurable");

    w.comment(issue, "alice", "/plan make the greeting configurable")
        .await;
    let comment = w.reply().await;

    assert!(comment.contains("built-in plan"), "{comment}");
    assert!(comment.contains("HTTP 503"), "{comment}");
    assert!(!comment.contains(&key));
    let record = w.plan_record(&format!("issue-{issue}")).expect("record");
    assert_eq!(record.source, "built-in planner");
    assert!(record.run.and_then(|r| r.fallback).is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_fallback_a_failing_model_is_answered_with_what_to_do_and_nothing_is_stored() {
    let llm = FakeLlm::start(vec![]).await.expect("llm");
    let key = key();
    let mut w = world(&llm, &key).await;
    w.commit(&[(".github/navin.yml", "planner:\n  source: llm\n")]);
    let issue = w.issue("Greeting", "Make it configurable");

    w.comment(issue, "alice", "/plan make the greeting configurable")
        .await;
    let reply = w.reply().await;

    assert!(reply.contains("no plan could be made"), "{reply}");
    assert!(reply.contains("HTTP 503"), "{reply}");
    assert!(reply.contains("planner:"), "says where to look: {reply}");
    assert!(!reply.contains(&key));
    assert!(w.plan_record(&format!("issue-{issue}")).is_none());
}
