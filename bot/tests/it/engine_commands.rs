//! A mission's commands are checked on the default branch before the App makes it: a
//! command that can never run there refuses `/mission` with the reason, and nothing is
//! written.

use crate::engine_stages::approved_plan;
use crate::world::World;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_command_naming_a_directory_the_repository_lacks_refuses_the_mission() {
    let mut w = World::new().await;
    w.commit(&[(
        ".github/navin.yml",
        "validation:\n  commands:\n    test: go -C web test ./...\n",
    )]);
    let issue = w.issue("Greetings", "Make greetings configurable.");
    w.comment(issue, "alice", "/mission configurable greetings")
        .await;
    let why = w.reply().await;
    assert!(
        why.contains("validation.commands") && why.contains("\"web\""),
        "{why}"
    );
    assert!(
        why.contains("on the default branch, then"),
        "says what to do: {why}"
    );
    assert!(w.ledger().is_none(), "no mission was made");

    // With the directory on the default branch, the same command is fine.
    w.commit(&[("web/go.mod", "module web\n")]);
    w.comment(issue, "alice", "/mission configurable greetings")
        .await;
    assert!(w.reply().await.starts_with("<!-- navin:panel"));
    let ledger = w.ledger().expect("the mission");
    let commands = ledger.mission.commands.expect("the commands recorded");
    assert_eq!(commands.test.as_deref(), Some("go -C web test ./..."));
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_step_whose_verification_rewrites_the_tree_refuses_the_mission_naming_the_step() {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "Make the greeting configurable.");
    let stages = "\n\n## Stages\n\n### Stage 1: The greeting\n\n- File: src/greet.rs\n- Verification: cargo clippy --fix\n\n### Stage 2: The library root\n\n- File: src/lib.rs\n- Verification: cargo test\n";
    approved_plan(&mut w, issue, stages, None).await;
    let commits = w.ledger_commits();
    w.comment(issue, "alice", "/mission").await;
    let why = w.reply().await;
    assert!(
        why.contains("verification for S1") && why.contains("cargo clippy --fix"),
        "{why}"
    );
    assert!(why.contains("/plan edit"), "says what to do: {why}");
    assert!(w.ledger().is_none(), "no mission was made");
    assert_eq!(w.ledger_commits(), commits, "nothing written");
    w.finish().await;
}
