//! A step's life driven by its pull request, end to end in the World DSL: opened puts it
//! in progress, green checks wait for the merge (`evidence.done_on: merged`, the default),
//! the merge closes it and frees what depends on it, closing unmerged is a failed
//! attempt, and reopening takes the step up again; redeliveries change nothing twice.

use navin_ledger::model::{NextActor, TaskStatus};

use crate::world::{step_pr, World};

const MISSION: &str = "/mission configurable greetings\n\
                       /step add S1 \"Configurable greeting\" --validation test\n\
                       /step add S2 \"Farewell\" --after S1 --validation test";

async fn mission() -> World {
    let mut w = World::new().await;
    let issue = w.issue("Greetings", "Make greetings configurable.");
    w.comment(issue, "alice", MISSION).await;
    assert!(w.reply().await.starts_with("<!-- navin:panel"));
    w
}

fn ready(w: &World) -> Vec<String> {
    let ledger = w.ledger().expect("a mission");
    ledger.ready().iter().map(|t| t.id.clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_request_puts_its_step_in_progress_and_only_its_merge_with_green_checks_closes_it() {
    let mut w = mission().await;
    assert_eq!(ready(&w), ["S1"]);
    let (pr, head) = w.open_pr("S1", "navin/S1-greeting").await;
    let ledger = w.ledger().expect("ledger");
    assert_eq!(w.step("S1").status, TaskStatus::InProgress);
    assert_eq!(
        ledger.mission.progress.current_step_id.as_deref(),
        Some("S1")
    );
    assert_eq!(ledger.mission.progress.next_actor, NextActor::Human);
    assert!(
        ready(&w).is_empty(),
        "a step in flight is not handed out again"
    );

    w.ci(&head, "ci/test", "success").await;
    let s1 = w.step("S1");
    assert_eq!(
        s1.status,
        TaskStatus::InProgress,
        "green, not merged: {s1:?}"
    );
    assert!(
        s1.evidence.iter().any(|e| e.ok),
        "the green run is kept: {s1:?}"
    );
    assert!(ready(&w).is_empty(), "S2 waits for S1's merge");

    let merged = w.merge(pr).await;
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::Done, "{s1:?}");
    assert_eq!(s1.links.merged_pr, Some(pr));
    assert!(
        w.called("GET", &format!("/commits/{head}/check-runs")),
        "the final head's runs are read again at the merge"
    );
    assert_eq!(ready(&w), ["S2"], "downstream work starts from merged code");

    // The same delivery again, and re-run after a crash: nothing changes twice.
    let commits = w.ledger_commits();
    assert_eq!(w.redeliver(&merged).await, 202);
    w.rerun(&merged).await;
    assert_eq!(w.ledger_commits(), commits);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_request_closed_unmerged_is_a_failed_attempt_and_reopening_takes_the_step_up_again()
{
    let mut w = mission().await;
    let (pr, _) = w.open_pr("S1", "navin/S1-greeting").await;
    let closed = w.close_unmerged(pr).await;
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::Failed, "{s1:?}");
    assert_eq!(s1.retry_count, 1);
    let ledger = w.ledger().expect("ledger");
    let last = ledger.mission.history.last().expect("history");
    assert!(
        last.changes
            .iter()
            .any(|c| c.contains("closed without merging"))
            || last.reason.contains("closed without merging"),
        "{last:?}"
    );
    let commits = w.ledger_commits();
    w.rerun(&closed).await;
    assert_eq!(
        w.ledger_commits(),
        commits,
        "a re-run fails the attempt once"
    );
    assert_eq!(w.step("S1").retry_count, 1);

    w.reopen(pr).await;
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::InProgress, "{s1:?}");
    assert_eq!(s1.links.prs, [pr]);
    assert_eq!(
        s1.retry_count, 1,
        "reopening is the next attempt, not another failure"
    );
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_request_by_a_coding_agent_makes_the_agent_the_next_actor() {
    let mut w = mission().await;
    let spec = step_pr("S1", "copilot/fix-greeting").author("copilot-swe-agent[bot]");
    w.open_pull(spec).await;
    let ledger = w.ledger().expect("ledger");
    assert_eq!(w.step("S1").status, TaskStatus::InProgress);
    assert_eq!(
        ledger.mission.progress.next_actor,
        NextActor::Subagent("copilot-swe-agent".to_owned())
    );
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_request_for_a_step_whose_dependencies_are_open_is_linked_but_waits() {
    let mut w = mission().await;
    let commits = w.ledger_commits();
    let (_, head) = w.open_pr("S2", "navin/S2-farewell").await;
    assert_eq!(
        w.ledger_commits(),
        commits + 1,
        "the link, and nothing more"
    );
    let s2 = w.step("S2");
    assert_eq!(s2.links.head_sha.as_deref(), Some(head.as_str()));
    assert_eq!(s2.status, TaskStatus::Planned, "S1 is not done: {s2:?}");
    w.finish().await;
}
