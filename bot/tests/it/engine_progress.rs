//! The progress ledger from real events, end to end: each CI round on a step's pull
//! request is an action; the same failure on every new head is a loop (detected, then a
//! local replan, then a pause), rounds that turn nothing green are a stall, and the
//! panel names the failure's fingerprint.

use navin_e2e::fake::CheckRunSpec;
use navin_ledger::model::{MissionStatus, PauseReason, TaskStatus};

use crate::world::World;

const PANEL: &str = "<!-- navin:panel";

/// The failure a test reporter writes for the same broken test, on run `n`: the counts,
/// the duration, the line and the temp dir differ from run to run.
fn cargo_failure(n: u32) -> String {
    format!(
        "---- parser::tests::rejects_tabs stdout ----\n\
         thread 'parser::tests::rejects_tabs' panicked at src/parser.rs:{}:9:\n\
         assertion `left == right` failed\n\
         test result: FAILED. {} passed; 1 failed; finished in 0.{}s\n\
         (at /tmp/.tmp{n}abc/target)",
        80 + n,
        10 + n,
        n
    )
}

async fn mission() -> World {
    start(World::new().await).await
}

/// The one-step mission (S1, a test step) started in `w`.
async fn start(mut w: World) -> World {
    let issue = w.issue("Parser", "Reject tabs.");
    w.comment(
        issue,
        "alice",
        "/mission reject tabs\n/step add S1 \"Reject tabs\" --validation test",
    )
    .await;
    assert!(w.reply().await.starts_with(PANEL));
    w
}

async fn red(w: &mut World, head: &str, n: u32) {
    let spec = CheckRunSpec::new("ci/test", head)
        .conclusion("failure")
        .output("1 failed", &cargo_failure(n));
    w.ci_run(spec).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_failure_on_every_new_head_is_a_loop_then_a_replan_then_a_pause() {
    let mut w = mission().await;
    let (pr, head) = w.open_pr("S1", "navin/S1-tabs").await;
    red(&mut w, &head, 1).await;
    let ledger = w.ledger().expect("ledger");
    let first = ledger
        .board
        .task("S1")
        .and_then(|t| t.ci_round.clone())
        .expect("a round");
    let fp = first.fingerprint.clone().expect("a fingerprint");
    assert_eq!(first.red, ["ci/test"]);
    assert_eq!(ledger.mission.progress.stall_count, 1);
    assert!(!ledger.mission.progress.loop_detected);
    assert_eq!(
        w.step("S1").status,
        TaskStatus::Failed,
        "a failed attempt too"
    );

    // A fix is pushed; the same test fails the same way.
    let head = w
        .push(pr, &[("src/s1.rs", "pub fn f() -> u8 { 2 }\n")])
        .await;
    assert_eq!(
        w.step("S1").status,
        TaskStatus::InProgress,
        "the push is the next attempt"
    );
    red(&mut w, &head, 2).await;
    let ledger = w.ledger().expect("ledger");
    assert_eq!(
        ledger
            .board
            .task("S1")
            .and_then(|t| t.ci_round.clone())
            .and_then(|r| r.fingerprint),
        Some(fp.clone()),
        "the same failure has the same fingerprint"
    );
    assert!(ledger.mission.progress.loop_detected);
    let panel = w.edited(PANEL);
    assert!(panel.contains("loop detected"), "{panel}");
    assert!(
        panel.contains(&fp[..11]),
        "the panel names the fingerprint: {panel}"
    );

    // Again: a local replan resets the step.
    let head = w
        .push(pr, &[("src/s1.rs", "pub fn f() -> u8 { 3 }\n")])
        .await;
    red(&mut w, &head, 3).await;
    let ledger = w.ledger().expect("ledger");
    assert_eq!(
        ledger.mission.progress.replan_count, 1,
        "{:?}",
        ledger.mission.progress
    );
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::Planned, "{s1:?}");
    assert_eq!(
        s1.retry_count, 0,
        "the replan's fresh start is not spent on this failure"
    );

    // Still the same after the replan: the mission pauses for a human.
    let head = w
        .push(pr, &[("src/s1.rs", "pub fn f() -> u8 { 4 }\n")])
        .await;
    assert_eq!(w.step("S1").status, TaskStatus::InProgress);
    red(&mut w, &head, 4).await;
    let ledger = w.ledger().expect("ledger");
    assert_eq!(ledger.mission.status, MissionStatus::Paused);
    assert_eq!(ledger.mission.pause_reason, Some(PauseReason::Loop));
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rounds_that_turn_nothing_green_are_a_stall_and_one_that_does_is_progress() {
    let mut w = mission().await;
    let (pr, head) = w.open_pr("S1", "navin/S1-tabs").await;
    w.ci_run(
        CheckRunSpec::new("ci/test", &head)
            .conclusion("failure")
            .output("x", "one"),
    )
    .await;
    assert_eq!(w.ledger().expect("ledger").mission.progress.stall_count, 1);
    // Another check on the same head is the same round: counted once.
    w.ci_run(
        CheckRunSpec::new("ci/lint", &head)
            .conclusion("failure")
            .output("y", "lint"),
    )
    .await;
    assert_eq!(w.ledger().expect("ledger").mission.progress.stall_count, 1);
    let head = w
        .push(pr, &[("src/s1.rs", "pub fn f() -> u8 { 5 }\n")])
        .await;
    w.ci_run(
        CheckRunSpec::new("ci/test", &head)
            .conclusion("failure")
            .output("x", "two"),
    )
    .await;
    let p = w.ledger().expect("ledger").mission.progress;
    assert_eq!(p.stall_count, 2, "{p:?}");
    assert!(!p.real_progress);
    let panel = w.edited(PANEL);
    assert!(panel.contains("stall 2/3"), "{panel}");
    let head = w
        .push(pr, &[("src/s1.rs", "pub fn f() -> u8 { 6 }\n")])
        .await;
    w.ci(&head, "ci/test", "success").await;
    let p = w.ledger().expect("ledger").mission.progress;
    assert!(p.real_progress, "ci/test turned green: {p:?}");
    assert_eq!(p.stall_count, 0);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_told_only_by_annotations_is_read_for_the_fingerprint() {
    let w = World::new().await;
    // Retries and stalls to spare: the third failure is still an attempt, not a replan.
    w.commit(&[(
        ".github/navin.yml",
        "budgets:\n  max_retries: 5\n  max_stalls: 5\n",
    )]);
    let mut w = start(w).await;
    let (pr, head) = w.open_pr("S1", "navin/S1-tabs").await;
    let annotated = |head: &str, line: u64, test: &str| {
        CheckRunSpec::new("ci/test", head)
            .conclusion("failure")
            .output("1 test failed", "")
            .annotation(
                "src/parser.rs",
                line,
                &format!("{test} panicked: assertion failed"),
            )
    };
    let fingerprint = |w: &World| {
        let s1 = w.step("S1");
        s1.ci_round
            .clone()
            .and_then(|r| r.fingerprint)
            .unwrap_or_else(|| {
                panic!(
                    "no fingerprint: {s1:#?}\n{:#?}",
                    w.ledger().map(|l| l.mission.history)
                )
            })
    };
    let run = w.ci_run(annotated(&head, 88, "rejects_tabs")).await;
    assert!(
        w.called("GET", &format!("/check-runs/{run}/annotations")),
        "the red check's annotations are read"
    );
    let first = fingerprint(&w);

    // The same test fails again on a new head, a few lines lower: the same failure.
    let head = w
        .push(pr, &[("src/s1.rs", "pub fn f() -> u8 { 2 }\n")])
        .await;
    w.ci_run(annotated(&head, 93, "rejects_tabs")).await;
    assert_eq!(fingerprint(&w), first);
    assert!(w.ledger().expect("ledger").mission.progress.loop_detected);

    // Another test failing under the same summary is another failure.
    let head = w
        .push(pr, &[("src/s1.rs", "pub fn f() -> u8 { 3 }\n")])
        .await;
    w.ci_run(annotated(&head, 12, "keeps_newlines")).await;
    assert_ne!(fingerprint(&w), first);
    w.finish().await;
}
