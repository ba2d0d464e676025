//! A step's pull request is its change on GitHub: green CI closes it only through the
//! same `close_step` a checkout's `done` goes through, so files outside the step's
//! scope are named under `evidence.scope: warn` and hold the step under `refuse`.

use navin_e2e::fake::PullSpec;
use navin_ledger::model::TaskStatus;

use crate::engine_stages::{approved_plan, STAGES};
use crate::world::{step_pr, World};

const PANEL: &str = "<!-- navin:panel";

/// A mission from the staged plan (S1's scope is `src/greet.rs`) under `config`.
async fn staged(config: &str) -> (World, u64) {
    let mut w = World::new().await;
    if !config.is_empty() {
        w.commit(&[(".github/navin.yml", config)]);
    }
    let issue = w.issue("Greetings", "Make the greeting configurable.");
    approved_plan(&mut w, issue, STAGES, None).await;
    w.comment(issue, "alice", "/mission").await;
    assert!(w.reply().await.starts_with(PANEL));
    assert_eq!(w.step("S1").scope, ["src/greet.rs"], "{:?}", w.step("S1"));
    (w, issue)
}

fn history(w: &World) -> Vec<String> {
    let ledger = w.ledger().expect("a mission");
    ledger
        .mission
        .history
        .iter()
        .flat_map(|h| h.changes.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_request_outside_its_steps_scope_closes_it_and_the_history_names_the_files() {
    let (mut w, _) = staged("evidence:\n  done_on: green\n").await;
    // `step_pr` changes `src/s1.rs`, outside S1's scope.
    let (_, head) = w.open_pull(step_pr("S1", "navin/S1-work")).await;
    w.ci(&head, "ci/test", "success").await;
    w.ci(&head, "navin/verify", "success").await;
    assert_eq!(w.step("S1").status, TaskStatus::Done);
    let history = history(&w);
    assert!(
        history
            .iter()
            .any(|c| c == "S1 changed files outside its scope: src/s1.rs"),
        "{history:?}"
    );
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_scope_refuse_green_ci_on_a_pull_request_outside_the_scope_closes_nothing() {
    let (mut w, issue) = staged("evidence:\n  done_on: green\n  scope: refuse\n").await;
    let (pr, head) = w.open_pull(step_pr("S1", "navin/S1-work")).await;
    let run = w.ci(&head, "ci/test", "success").await;
    w.ci(&head, "navin/verify", "success").await;
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::InProgress, "{s1:?}");
    assert!(
        s1.evidence
            .iter()
            .any(|e| e.check_run_id == Some(run) && e.ok),
        "the green run is kept: {s1:?}"
    );
    w.comment(issue, "alice", "/done S1").await;
    let why = w.reply().await;
    assert!(
        why.contains("outside the step's scope (src/s1.rs)") && why.contains("src/greet.rs"),
        "{why}"
    );
    assert_eq!(w.step("S1").status, TaskStatus::InProgress);

    // The out-of-scope work closed, the step's own change green: done.
    w.close_unmerged(pr).await;
    let inside = PullSpec::new("navin/S1-again")
        .author("alice")
        .title("Work on S1")
        .body("Navin-Step: S1\n")
        .file(
            "src/greet.rs",
            "pub fn greet() -> &'static str { \"hi\" }\n",
        );
    let (_, head) = w.open_pull(inside).await;
    w.ci(&head, "ci/test", "success").await;
    w.ci(&head, "navin/verify", "success").await;
    assert_eq!(w.step("S1").status, TaskStatus::Done);
    w.finish().await;
}
