//! `evidence.merge`: Navin merges a step's pull request once its required checks are green on the judged head, so a mission runs to done with `done_on: merged` and no person merging; a merge GitHub refuses leaves the step waiting.

use navin_e2e::fake::PullSpec;
use navin_ledger::model::TaskStatus;

use crate::world::World;

const CONFIG: &str = "evidence:\n  merge: squash\n  required_checks:\n    test: [ci/test]\n";

fn step_pr(content: &str) -> PullSpec {
    PullSpec::new("navin/s1-lexer")
        .author("alice")
        .title("Lexer")
        .body("The lexer.\n\nNavin-Step: S1\n")
        .file("src/lexer.rs", content)
}

/// A running mission with one test step `S1`, Navin's reply read.
async fn one_step(w: &mut World) {
    w.commit(&[(".github/navin.yml", CONFIG)]);
    let issue = w.issue("Lexer", "Ship the lexer.");
    let setup = "/mission ship the lexer\n/step add S1 \"Lexer\" --validation test";
    w.comment(issue, "alice", setup).await;
    w.reply().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_green_step_pull_request_is_merged_by_navin_at_its_head_and_the_step_is_done() {
    let mut w = World::new().await;
    one_step(&mut w).await;
    let (pr, head) = w.open_pull(step_pr("pub fn lex() {}\n")).await;
    w.ci(&head, "ci/test", "success").await;

    let pull = w.fake().pull("octo-org", "hello", pr);
    assert!(pull.merged_at.is_some(), "Navin merged the pull request");
    assert_eq!(w.fake().count("PUT", "/repos/*/*/pulls/*/merge"), 1);
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::Done, "{s1:?}");
    assert_eq!(s1.links.merged_pr, Some(pr));
    let main = w
        .fake()
        .file_at("octo-org", "hello", "main", "src/lexer.rs");
    assert_eq!(main.as_deref(), Some("pub fn lex() {}\n"));

    // GitHub then tells the App its pull request was merged: nothing more happens.
    let tip = w.fake().branch_sha("octo-org", "hello", "navin/ledger");
    w.merge(pr).await;
    assert_eq!(
        w.fake().branch_sha("octo-org", "hello", "navin/ledger"),
        tip
    );
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_request_that_no_longer_merges_cleanly_is_left_open_and_its_step_waits() {
    let mut w = World::new().await;
    one_step(&mut w).await;
    let (pr, head) = w.open_pull(step_pr("pub fn lex() {}\n")).await;
    // Someone lands a conflicting change on the default branch first.
    w.commit(&[("src/lexer.rs", "pub fn lex() -> u8 { 0 }\n")]);
    w.ci(&head, "ci/test", "success").await;

    let pull = w.fake().pull("octo-org", "hello", pr);
    assert!(pull.merged_at.is_none());
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::InProgress, "{s1:?}");
    assert_eq!(s1.links.merged_pr, None);
    assert!(
        s1.evidence.iter().any(|e| e.ok),
        "the green run is kept: {:?}",
        s1.evidence
    );
    w.finish().await;
}
