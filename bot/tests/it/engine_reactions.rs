//! Reactions are the last and least of an answer: one GitHub refuses after the commands
//! applied and the reply was posted is logged, never a failed delivery.

use navin_e2e::fake::Fault;

use crate::world::World;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reaction_github_refuses_fails_no_delivery_after_the_commands_applied() {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "");
    w.fake().inject(
        Fault::on(
            "POST",
            "/repos/{owner}/{repo}/issues/comments/{id}/reactions",
        )
        .status(422),
    );
    // `comment` fails the test when the queue marks the delivery failed.
    let comment = w
        .comment(issue, "alice", "/mission configurable greetings")
        .await;
    let ledger = w.ledger().expect("the mission was written");
    assert_eq!(ledger.mission.goal, "configurable greetings");
    let panel = w.reply().await;
    assert!(panel.contains("configurable greetings"), "{panel}");
    assert!(w.reactions(comment).is_empty(), "GitHub took no reaction");
    w.finish().await;
}
