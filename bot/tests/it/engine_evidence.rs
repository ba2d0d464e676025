//! Step links and CI evidence end to end, in the World DSL: pull requests, check runs,
//! check suites and workflow runs against a running mission, read back from the typed
//! ledger, the panel comment and the fake's request log.

use navin_e2e::fake::{CheckRunSpec, PullSpec, GITHUB_ACTIONS_APP_ID};
use navin_ledger::model::{EvidenceKind, MissionStatus, TaskStatus};

use crate::world::{step_pr, World};

/// An app that is not GitHub Actions (and not in the repository's `trusted_apps`).
const OTHER_APP: u64 = 4242;

const PANEL: &str = "<!-- navin:panel";

/// A running mission with two test steps, `S2` after `S1`, and the request log cleared.
/// The repository closes a step as soon as its checks are green (`done_on: green`):
/// these tests are about which runs count; merging is tested in engine_merge.
/// The issue the mission runs on.
fn mission_issue(w: &World) -> u64 {
    w.ledger()
        .and_then(|l| l.mission.origin.and_then(|o| o.issue))
        .expect("the mission's issue")
}

async fn mission() -> World {
    let mut w = World::new().await;
    w.commit(&[(
        ".github/navin.yml",
        "evidence:\n  done_on: green\n  required_checks:\n    test: [ci/test]\n",
    )]);
    let issue = w.issue("Greetings", "Make greetings configurable.");
    let mission = "/mission configurable greetings\n\
                   /step add S1 \"Configurable greeting\" --validation test\n\
                   /step add S2 \"Farewell\" --after S1 --validation test";
    w.comment(issue, "alice", mission).await;
    let panel = w.reply().await;
    assert!(panel.starts_with(PANEL), "{panel}");
    w.clear_requests();
    w
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pr_naming_its_step_links_it_and_a_green_required_check_on_its_head_marks_it_done() {
    let mut w = mission().await;
    let (pr, head) = w.open_pr("S1", "feature-s1").await;
    w.requests("pull_request opened (links S1)");
    let s1 = w.step("S1");
    assert_eq!(s1.links.prs, vec![pr], "{s1:?}");
    assert_eq!(s1.links.head_sha.as_deref(), Some(head.as_str()));
    assert_eq!(s1.links.branch.as_deref(), Some("feature-s1"));
    assert_eq!(s1.status, TaskStatus::InProgress);

    // A check that is not required proves nothing on its own.
    w.ci(&head, "lint", "success").await;
    assert_eq!(w.step("S1").status, TaskStatus::InProgress);
    w.clear_requests();

    let run = w.ci(&head, "ci/test", "success").await;
    // The runs were re-read from the API before the step was closed.
    assert!(w.called("GET", &format!("/commits/{head}/check-runs")));
    let n = w.requests("check_run completed (green, step done)");
    assert!(n <= 5, "{n} REST requests for one check run");
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::Done, "{s1:?}");
    let proof = s1
        .evidence
        .iter()
        .find(|e| e.check_run_id == Some(run))
        .unwrap_or_else(|| panic!("run {run} is not S1's evidence: {s1:?}"));
    assert_eq!(proof.kind, EvidenceKind::CheckRun);
    assert!(proof.ok);
    assert_eq!(proof.name.as_deref(), Some("ci/test"));
    assert_eq!(proof.app_id, Some(GITHUB_ACTIONS_APP_ID));
    assert_eq!(proof.head_sha.as_deref(), Some(head.as_str()));
    assert_eq!(proof.conclusion.as_deref(), Some("success"));
    assert!(proof.url.as_deref().is_some_and(|u| !u.is_empty()));
    assert!(proof.completed_at.is_some());
    assert_eq!(w.step("S2").status, TaskStatus::Planned);
    let panel = w.latest(PANEL);
    assert!(panel.contains("1/2"), "{panel}");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steps_are_done_in_dependency_order() {
    let mut w = mission().await;

    // S2's PR links by its branch name, and goes green first: S2 waits for S1.
    let farewell = PullSpec::new("navin/S2-farewell")
        .author("alice")
        .file("src/farewell.rs", "pub fn bye() {}\n");
    let (_, s2_head) = w.open_pull(farewell).await;
    assert_eq!(w.step("S2").links.head_sha, Some(s2_head.clone()));
    let s2_run = w.ci(&s2_head, "ci/test", "success").await;
    let s2 = w.step("S2");
    assert_eq!(s2.status, TaskStatus::Planned, "{s2:?}");
    assert_eq!(s2.evidence[0].check_run_id, Some(s2_run), "{s2:?}");

    // S1 goes green: S1 is done, then S2, whose head is re-read before it closes.
    let (_, s1_head) = w.open_pr("S1", "feature-s1").await;
    w.clear_requests();
    w.ci(&s1_head, "ci/test", "success").await;
    w.requests("check_run completed (S1 done, then S2)");
    assert_eq!(w.step("S1").status, TaskStatus::Done);
    assert_eq!(w.step("S2").status, TaskStatus::Done);
    let mission = w.ledger().unwrap().mission;
    let at = |prefix: &str| {
        let at = mission
            .history
            .iter()
            .position(|h| h.reason.starts_with(prefix));
        at.unwrap_or_else(|| panic!("no {prefix:?} in {:#?}", mission.history))
    };
    assert!(at("S1 done") < at("S2 done"));
    // Every step done: the mission closed itself.
    assert_eq!(mission.status, MissionStatus::Done);
    let panel = w.latest(PANEL);
    assert!(panel.contains("2/2"), "{panel}");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_run_with_the_right_name_from_an_untrusted_app_is_ignored() {
    let mut w = mission().await;
    let (_, head) = w.open_pr("S1", "feature-s1").await;
    let commits = w.ledger_commits();
    w.clear_requests();

    w.ci_run(CheckRunSpec::new("ci/test", &head).app(OTHER_APP))
        .await;
    let n = w.requests("check_run completed (untrusted app)");
    assert_eq!(n, 0, "an untrusted run costs no request");
    assert_eq!(w.ledger_commits(), commits);
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::InProgress);
    assert!(s1.evidence.is_empty(), "{s1:?}");

    // The same name from GitHub Actions counts, and only it is the evidence.
    let trusted = w.ci(&head, "ci/test", "success").await;
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::Done);
    let ids: Vec<Option<u64>> = s1.evidence.iter().map(|e| e.check_run_id).collect();
    assert_eq!(ids, [Some(trusted)]);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_green_run_on_an_old_head_after_synchronize_is_ignored() {
    let mut w = mission().await;
    let (pr, old) = w.open_pr("S1", "feature-s1").await;
    w.clear_requests();

    let new = w.push(pr, &[("src/s1.rs", "pub fn g() {}\n")]).await;
    w.requests("pull_request synchronize (link moves)");
    assert_ne!(old, new);
    assert_eq!(w.step("S1").links.head_sha, Some(new.clone()));
    let commits = w.ledger_commits();

    w.ci(&old, "ci/test", "success").await;
    let n = w.requests("check_run completed (old head)");
    assert_eq!(n, 0, "a run on no linked head costs no request");
    assert_eq!(w.ledger_commits(), commits);
    assert_eq!(w.step("S1").status, TaskStatus::InProgress);

    w.ci(&new, "ci/test", "success").await;
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::Done);
    assert!(s1
        .evidence
        .iter()
        .all(|e| e.head_sha.as_deref() == Some(new.as_str())));
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skipped_run_is_not_green() {
    let mut w = mission().await;
    let (_, head) = w.open_pr("S1", "feature-s1").await;
    let commits = w.ledger_commits();
    w.clear_requests();

    for conclusion in ["skipped", "neutral", "cancelled"] {
        w.ci(&head, "ci/test", conclusion).await;
        w.requests(&format!("check_run completed ({conclusion})"));
    }
    assert_eq!(w.ledger_commits(), commits, "nothing recorded");
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::InProgress, "{s1:?}");
    assert_eq!(s1.retry_count, 0, "not green is not a failed attempt");

    // A run of the same check that passes is green.
    w.ci(&head, "ci/test", "success").await;
    assert_eq!(w.step("S1").status, TaskStatus::Done);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_required_check_counts_an_attempt_and_the_panel_names_the_failed_check() {
    let mut w = mission().await;
    let (pr, head) = w.open_pr("S1", "feature-s1").await;
    w.clear_requests();

    let run = w.ci(&head, "ci/test", "failure").await;
    w.requests("check_run completed (red, attempt counted)");
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::Failed, "{s1:?}");
    assert_eq!(s1.retry_count, 1);
    assert_eq!(s1.evidence[0].check_run_id, Some(run));
    assert!(!s1.evidence[0].ok);
    assert_eq!(s1.evidence[0].conclusion.as_deref(), Some("failure"));
    let panel = w.latest(PANEL);
    let failed = panel
        .lines()
        .find(|l| l.contains("What failed last"))
        .unwrap_or_else(|| panic!("no failure line in the panel:\n{panel}"));
    assert!(
        failed.contains("ci/test") && failed.contains("failure"),
        "{failed}"
    );
    assert!(failed.contains("S1"), "{failed}");

    // A fix pushed to the PR is the next attempt, and its green run closes the step.
    let fixed = w
        .push(pr, &[("src/s1.rs", "pub fn f() -> u8 { 1 }\n")])
        .await;
    w.requests("pull_request synchronize (retry on the new head)");
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::InProgress, "{s1:?}");
    assert_eq!(s1.retry_count, 1);
    w.ci(&fixed, "ci/test", "success").await;
    assert_eq!(w.step("S1").status, TaskStatus::Done);
    let panel = w.latest(PANEL);
    assert!(!panel.contains("What failed last"), "{panel}");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redelivered_check_run_event_changes_nothing_twice() {
    let mut w = mission().await;
    let (_, head) = w.open_pr("S1", "feature-s1").await;

    // A failure on a fork-style payload (no `pull_requests`): matched on the SHA.
    let id = w.stored_run(CheckRunSpec::new("ci/test", &head).conclusion("failure"));
    let fork_run = w
        .payload("check_run.completed")
        .check_run_id(id)
        .check_name("ci/test")
        .head_sha(&head)
        .app_id(GITHUB_ACTIONS_APP_ID)
        .conclusion("failure")
        .set("/check_run/pull_requests", serde_json::json!([]));
    let first = w.send(&fork_run).await;
    assert_eq!(w.step("S1").retry_count, 1);
    let commits = w.ledger_commits();
    let edits = w.fake().bot_comment_edits().len();
    w.clear_requests();

    // GitHub's redelivery (same GUID), the same completion under a new GUID, and the
    // worker running the delivery again after a crash: no second attempt, no commit.
    assert_eq!(w.redeliver(&first).await, 202);
    w.send(&fork_run).await;
    w.requests("check_run completed (same run again)");
    w.rerun(&first).await;
    w.requests("check_run completed (worker retry, attempt 2)");

    assert_eq!(w.ledger_commits(), commits, "no second ledger commit");
    let s1 = w.step("S1");
    assert_eq!(s1.retry_count, 1, "{s1:?}");
    assert_eq!(s1.evidence.len(), 1, "{s1:?}");
    let now = w.fake().bot_comment_edits().len();
    assert_eq!(now, edits, "the panel is current");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completed_workflow_run_is_re_read_and_its_jobs_prove_the_step() {
    let mut w = mission().await;
    let (_, head) = w.open_pr("S1", "feature-s1").await;

    // The workflow's job reported as a check run the App never heard about.
    w.workflow(".github/workflows/ci.yml", "CI");
    w.stored_run(CheckRunSpec::new("ci/test", &head));
    let run = w.workflow_run(".github/workflows/ci.yml", &head, "success");
    let completed = w
        .payload("workflow_run.completed")
        .check_run_id(run)
        .check_name("CI")
        .head_sha(&head)
        .conclusion("success");
    w.clear_requests();
    w.send(&completed).await;
    assert!(w.called("GET", &format!("/actions/runs/{run}")));
    let n = w.requests("workflow_run completed (green, step done)");
    assert!(n <= 5, "{n} REST requests for one workflow run");
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::Done, "{s1:?}");
    let proves = s1.evidence.iter().any(|e| e.kind == EvidenceKind::CheckRun);
    assert!(proves, "{s1:?}");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completed_check_suite_re_reads_its_runs_and_closes_the_step() {
    let mut w = mission().await;
    let (_, head) = w.open_pr("S1", "feature-s1").await;

    // The suite's runs finished without a check_run delivery reaching the App.
    let run = w.stored_run(CheckRunSpec::new("ci/test", &head));
    let suite = w
        .payload("check_suite.completed")
        .head_sha(&head)
        .app_id(GITHUB_ACTIONS_APP_ID)
        .conclusion("success");
    w.clear_requests();
    w.send(&suite).await;
    let n = w.requests("check_suite completed (green, step done)");
    assert!(n <= 5, "{n} REST requests for one check suite");
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::Done, "{s1:?}");
    assert_eq!(s1.evidence[0].check_run_id, Some(run), "{s1:?}");

    // The same suite from an untrusted app proves nothing and reads nothing.
    let (_, other) = w.open_pr("S2", "feature-s2").await;
    w.stored_run(CheckRunSpec::new("ci/test", &other));
    w.clear_requests();
    w.send(&suite.head_sha(&other).app_id(OTHER_APP)).await;
    assert_eq!(w.requests("check_suite completed (untrusted app)"), 0);
    assert_eq!(w.step("S2").status, TaskStatus::InProgress);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_re_run_that_passes_on_the_same_head_closes_a_failed_step() {
    let mut w = mission().await;
    let (_, head) = w.open_pr("S1", "feature-s1").await;
    w.ci(&head, "ci/test", "failure").await;
    assert_eq!(w.step("S1").status, TaskStatus::Failed);

    // Another failing check on the same head is not a second attempt.
    let commits = w.ledger_commits();
    w.clear_requests();
    w.ci(&head, "lint", "failure").await;
    let n = w.requests("check_run completed (red, step already failed)");
    assert_eq!(n, 0);
    assert_eq!(w.ledger_commits(), commits);

    // "Re-run failed jobs": a newer ci/test run passes on the same head.
    let later = chrono::Utc::now();
    let rerun = CheckRunSpec::new("ci/test", &head)
        .started_at(later - chrono::Duration::minutes(2))
        .completed_at(later);
    w.clear_requests();
    w.ci_run(rerun).await;
    w.requests("check_run completed (re-run green on a failed step)");
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::Done, "{s1:?}");
    let attempts = s1.retry_count;
    assert_eq!(attempts, 1, "the failed run still counts as an attempt");
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_pr_by_someone_without_write_access_cannot_link_a_step() {
    let mut w = mission().await;

    // bob (read access) names S1 from his fork; green CI on his head proves nothing.
    let bobs = step_pr("S1", "feature-s1")
        .author("bob")
        .from_fork("bob/hello");
    let (_, head) = w.open_pull(bobs).await;
    let s1 = w.step("S1");
    assert_eq!(s1.links.head_sha, None, "{s1:?}");
    w.ci(&head, "ci/test", "success").await;
    assert_eq!(w.step("S1").status, TaskStatus::Planned);

    // The same from a writer's fork links the step.
    w.grant("dave", "write");
    let daves = step_pr("S1", "feature-s1")
        .author("dave")
        .from_fork("dave/hello");
    let (pr, head) = w.open_pull(daves).await;
    let s1 = w.step("S1");
    assert_eq!(s1.links.prs, vec![pr], "{s1:?}");
    assert_eq!(s1.links.head_sha, Some(head));
    w.finish().await;
}

/// Item 31 of the reliability checklist at engine level: the runs on a head are paged
/// past 100 (`filter=all`), and a queued re-run of the required check on page 1 blocks
/// its older success on page 2 until it finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_are_read_past_the_first_hundred_and_a_queued_rerun_blocks_its_older_success() {
    let mut w = World::new().await;
    w.commit(&[(
        ".github/navin.yml",
        "evidence:\n  done_on: green\n  required_checks:\n    test: [ci/test]\n",
    )]);
    let issue = w.issue("Paging", "");
    w.comment(
        issue,
        "alice",
        "/mission page the runs\n/step add S1 \"Paged\" --validation test\n/step add S2 \"Paged too\" --validation test",
    )
    .await;
    w.reply().await;
    let old = chrono::Utc::now() - chrono::Duration::hours(1);
    // S2: its only ci/test run, green, is behind 120 newer runs: only page 2 proves it.
    let (_, head2) = w.open_pr("S2", "navin/S2-paged").await;
    w.stored_run(
        CheckRunSpec::new("ci/test", &head2)
            .started_at(old)
            .completed_at(old + chrono::Duration::minutes(5)),
    );
    for i in 0..120 {
        w.stored_run(CheckRunSpec::new(&format!("matrix ({i})"), &head2));
    }
    w.ci(&head2, "docs", "success").await;
    assert_eq!(
        w.step("S2").status,
        TaskStatus::Done,
        "the green on page 2 counts"
    );

    let (_, head) = w.open_pr("S1", "navin/S1-paged").await;
    // The required check's success is the oldest run: listed last, on page 2.
    w.stored_run(
        CheckRunSpec::new("ci/test", &head)
            .started_at(old)
            .completed_at(old + chrono::Duration::minutes(5)),
    );
    for i in 0..120 {
        w.stored_run(CheckRunSpec::new(&format!("matrix ({i})"), &head));
    }
    // "Re-run failed jobs": a newer run of the same check, still queued, on page 1.
    w.stored_run(CheckRunSpec::new("ci/test", &head).pending("queued"));
    // Any completion on the head makes the engine read every page.
    w.ci(&head, "docs", "success").await;
    let pages: Vec<String> = w
        .fake()
        .requests_to(
            "GET",
            &format!("/repos/octo-org/hello/commits/{head}/check-runs"),
        )
        .into_iter()
        .filter_map(|r| r.query)
        .collect();
    assert!(
        pages
            .iter()
            .any(|q| q.contains("filter=all") && q.contains("page=2")),
        "page 2 is read: {pages:?}"
    );
    assert_eq!(
        w.step("S1").status,
        TaskStatus::InProgress,
        "the queued re-run is the newest ci/test, so the old success does not count yet"
    );
    w.ci(&head, "ci/test", "success").await;
    assert_eq!(w.step("S1").status, TaskStatus::Done);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ci_on_a_draft_spends_no_attempt_and_closes_nothing_until_it_is_marked_ready() {
    let mut w = mission().await;
    let (pr, head) = w.open_pull(step_pr("S1", "feature-s1").draft()).await;
    // A draft is still the step's work in flight.
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::InProgress, "{s1:?}");
    assert_eq!(s1.links.prs, vec![pr]);

    // Half-done work goes red: no attempt, no CI round.
    w.ci(&head, "ci/test", "failure").await;
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::InProgress, "{s1:?}");
    assert_eq!(s1.retry_count, 0);
    assert!(s1.ci_round.is_none(), "{:?}", s1.ci_round);

    // Green on a draft is kept as evidence but closes nothing (done_on: green here).
    let fixed = w
        .push(pr, &[("src/s1.rs", "pub fn f() -> u8 { 1 }\n")])
        .await;
    let run = w.ci(&fixed, "ci/test", "success").await;
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::InProgress, "{s1:?}");
    assert!(
        s1.evidence
            .iter()
            .any(|e| e.check_run_id == Some(run) && e.ok),
        "the green run is kept: {s1:?}"
    );

    // Asking to close it says why it waits.
    let issue = mission_issue(&w);
    w.comment(issue, "alice", "/done S1").await;
    let why = w.reply().await;
    assert!(
        why.contains("draft") && why.contains("ready for review"),
        "{why}"
    );
    assert_eq!(w.step("S1").status, TaskStatus::InProgress);

    // "Ready for review" judges the head again: the green run it held closes S1.
    w.ready_for_review(pr).await;
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::Done, "{s1:?}");
    assert_eq!(s1.retry_count, 0);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_drafts_counted_a_red_run_on_a_draft_fails_an_attempt() {
    let mut w = World::new().await;
    w.commit(&[(
        ".github/navin.yml",
        "evidence:\n  done_on: green\n  drafts: count\n  required_checks:\n    test: [ci/test]\n",
    )]);
    let issue = w.issue("Drafts", "");
    w.comment(
        issue,
        "alice",
        "/mission count drafts\n/step add S1 \"Counted\" --validation test",
    )
    .await;
    w.reply().await;
    let (_, head) = w.open_pull(step_pr("S1", "feature-s1").draft()).await;
    w.ci(&head, "ci/test", "failure").await;
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::Failed, "{s1:?}");
    assert_eq!(s1.retry_count, 1);
    w.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn green_ci_on_a_pull_request_that_changes_no_file_closes_nothing_until_the_work_is_pushed() {
    let mut w = mission().await;
    // An empty commit, pushed for green CI on the tree the step was handed.
    let empty = PullSpec::new("feature-s1")
        .author("alice")
        .title("Work on S1")
        .body("Navin-Step: S1\n");
    let (pr, head) = w.open_pull(empty).await;
    let run = w.ci(&head, "ci/test", "success").await;
    let s1 = w.step("S1");
    assert_eq!(s1.status, TaskStatus::InProgress, "{s1:?}");
    assert!(
        s1.evidence
            .iter()
            .any(|e| e.check_run_id == Some(run) && e.ok),
        "the green run is kept: {s1:?}"
    );
    let issue = mission_issue(&w);
    w.comment(issue, "alice", "/done S1").await;
    let why = w.reply().await;
    assert!(why.contains(&format!("#{pr} changes no file")), "{why}");
    assert_eq!(w.step("S1").status, TaskStatus::InProgress);

    // The work pushed and green: done.
    let worked = w
        .push(pr, &[("src/s1.rs", "pub fn f() -> u8 { 1 }\n")])
        .await;
    w.ci(&worked, "ci/test", "success").await;
    assert_eq!(w.step("S1").status, TaskStatus::Done);
    w.finish().await;
}
