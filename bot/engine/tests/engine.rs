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
