//! The engine's scenarios, at its boundary: a typed event in, the report and what GitHub shows out, each in a few lines as a person would tell it.

mod world;

use insta::assert_snapshot;
use world::World;

#[tokio::test]
async fn a_reader_asking_for_a_plan_is_told_who_may() {
    let mut w = World::new().await;
    let issue = w.issue("Greet by name");
    w.comment("bob", issue, "/plan greet people by name").await;
    assert_snapshot!(w.reply());
}

#[tokio::test]
async fn status_without_a_mission_says_how_to_start_one() {
    let mut w = World::new().await;
    let issue = w.issue("Greet by name");
    w.comment("alice", issue, "/status").await;
    assert_snapshot!(w.reply());
}

#[tokio::test]
async fn a_mistyped_command_changes_nothing_and_names_the_nearest_one() {
    let mut w = World::new().await;
    let issue = w.issue("Greet by name");
    w.comment("alice", issue, "/plna greet people").await;
    assert_snapshot!(w.replies().join("\n---\n"));
}

#[tokio::test]
async fn a_writers_plan_is_posted_for_approval() {
    let mut w = World::new().await;
    let issue = w.issue("Greet by name");
    w.comment("alice", issue, "/plan add a name parameter to greet")
        .await;
    assert_snapshot!(w.reply());
}

#[tokio::test]
async fn the_author_cannot_approve_their_own_plan_and_another_writer_can() {
    let mut w = World::new().await;
    let issue = w.issue("Greet by name");
    w.comment("alice", issue, "/plan add a name parameter to greet")
        .await;
    w.replies();
    w.comment("alice", issue, "/approve").await;
    assert_snapshot!("own_approval", w.reply());
    w.comment("maya", issue, "/approve").await;
    assert!(
        w.replies().is_empty(),
        "the plan comment is edited in place"
    );
    assert_snapshot!("approved_plan", w.comment_head(issue, "navin:plan", 2));
}

#[tokio::test]
async fn a_redelivered_plan_command_posts_one_plan() {
    let mut w = World::new().await;
    let issue = w.issue("Greet by name");
    w.comment("alice", issue, "/plan add a name parameter to greet")
        .await;
    let first = w.sent(1);
    w.redeliver(&first, 1).await;
    assert_eq!(w.replies().len(), 1);
}

#[tokio::test]
async fn an_approved_plan_becomes_a_mission_whose_panel_lists_its_step() {
    let mut w = World::new().await;
    let issue = w.issue("Greet by name");
    w.comment("alice", issue, "/plan add a name parameter to greet")
        .await;
    w.comment("maya", issue, "/approve").await;
    w.comment("alice", issue, "/mission").await;
    w.replies();
    assert_snapshot!(w.comment_head(issue, "navin:panel", 24));
}

#[tokio::test]
async fn a_comment_of_three_commands_edits_the_panel_once() {
    let mut w = World::new().await;
    let issue = w.issue("Greetings");
    w.comment("alice", issue, "/mission configurable greetings")
        .await;
    w.replies();
    let before = w.panel_edits();
    let three = "/update fact a\n/update fact b\n/update fact c";
    w.comment("alice", issue, three).await;
    assert_eq!(w.panel_edits(), before + 1, "{:#?}", w.replies());
    assert_snapshot!(w.comment_head(issue, "navin:panel", 7));
}

#[tokio::test]
async fn an_invalid_config_refuses_every_command_with_its_reason_and_writes_nothing() {
    let mut w = World::new().await;
    w.config("approval:\n  required_approvals: 0\n");
    let issue = w.issue("Greetings");
    w.comment("alice", issue, "/mission configurable greetings")
        .await;
    assert_snapshot!(w.reply());
    assert_eq!(w.ledger_tip(), None);
}

#[tokio::test]
async fn a_closed_issue_refuses_changes_and_still_answers_status() {
    let mut w = World::new().await;
    let issue = w.issue("Greetings");
    w.close(issue);
    w.comment("alice", issue, "/mission configurable greetings\n/status")
        .await;
    assert_snapshot!(w.reply());
    assert_eq!(w.ledger_tip(), None);
}

#[tokio::test]
async fn a_goal_longer_than_the_limit_is_refused_naming_the_part_and_its_size() {
    let mut w = World::new().await;
    w.config("limits:\n  max_text_bytes: 16\n");
    let issue = w.issue("Greetings");
    w.comment(
        "alice",
        issue,
        "/mission greetings that anyone can configure",
    )
    .await;
    assert_snapshot!(w.reply());
    assert_eq!(w.ledger_tip(), None);
}

#[tokio::test]
async fn commands_past_the_per_comment_cap_are_listed_and_not_run() {
    let mut w = World::new().await;
    w.config("limits:\n  max_commands_per_comment: 2\n");
    let issue = w.issue("Greetings");
    let four = "/mission greetings\n/update fact a\n/update fact b\n/update fact c";
    w.comment("alice", issue, four).await;
    let replies = w.replies();
    assert_eq!(
        replies.len(),
        2,
        "the new panel, then the answer: {replies:#?}"
    );
    assert_snapshot!(replies[1]);
}

#[tokio::test]
async fn done_without_green_ci_is_refused_with_what_proves_a_step() {
    let mut w = World::new().await;
    let issue = w.issue("Lexer");
    let setup = "/mission ship the lexer\n/step add S1 \"Lexer\" --validation test";
    w.comment("alice", issue, setup).await;
    w.replies();
    w.comment("alice", issue, "/done S1 I ran the tests").await;
    assert_snapshot!(w.reply());
}
