//! "People do not approve their own plans" holds through a `/reject` that regenerates
//! the plan: the rejecter does not become its requester, so the original requester still
//! cannot approve it alone, and the rejecter (or anyone else with write access) may.

use crate::world::World;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_another_writers_reject_the_original_requester_still_cannot_approve_alone() {
    let mut w = World::new().await;
    w.grant("maya", "write");
    let issue = w.issue("Idea", "No task list here.");
    w.comment(issue, "alice", "/plan add a farewell function")
        .await;
    w.reply().await;
    w.comment(issue, "maya", "/reject only touch greet.rs")
        .await;
    let id = format!("issue-{issue}");
    let record = w.plan_record(&id).expect("record");
    assert_eq!(
        record.requested_by, "alice",
        "the rejecter is not the requester"
    );
    w.edited("<!-- navin:plan");

    w.comment(issue, "alice", "/approve").await;
    let refusal = w.reply().await;
    assert!(
        refusal.contains("do not approve their own plans"),
        "{refusal}"
    );
    assert!(!w.plan_record(&id).expect("record").is_approved());

    w.comment(issue, "maya", "/approve").await;
    assert!(w.plan_record(&id).expect("record").is_approved());
    w.finish().await;
}
