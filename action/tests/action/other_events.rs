//! `mode: event` on pull-request, review and CI events, from the committed real payloads: what the engine does with each today (the handlers are being filled in elsewhere), and the fork refusal.

use serde_json::json;

use crate::harness::{Job, RunResult};

/// Runs one fixture as `event_name` against a seeded running mission and checks the
/// run ended cleanly, reported the mission and left the ledger as it was.
fn runs_cleanly_and_keeps_the_ledger(job: &Job, fixture: &str, event_name: &str) -> RunResult {
    let seeded = job.ledger().expect("seeded");
    let tip = job.ledger_tip();
    let path = job.fixture_event(fixture, |p| p);
    let r = job.run("event", event_name, Some(&path), Some(&job.token));
    assert_eq!(r.code, Some(0), "{fixture}: {r:?}");
    assert!(
        r.lines_starting("::error").is_empty(),
        "{fixture}: {}",
        r.stdout
    );
    assert_eq!(job.ledger_tip(), tip, "{fixture} changed the ledger");
    assert_eq!(r.outputs["mission-status"], "running", "{fixture}");
    assert_eq!(
        r.outputs["mission-version"],
        seeded.mission.version.to_string(),
        "{fixture}"
    );
    assert_eq!(r.outputs["plan-url"], "", "{fixture}");
    let action = fixture.split('.').nth(1).unwrap_or_default();
    assert!(
        r.summary
            .contains(&format!("Handled `{event_name}.{action}`")),
        "{fixture}: {}",
        r.summary
    );
    r
}

#[test]
fn pull_request_events_are_handled_without_error_and_leave_the_ledger_unchanged() {
    let job = Job::for_events();
    job.seed(None);
    for fixture in [
        "pull_request.opened",
        "pull_request.synchronize",
        "pull_request.closed",
    ] {
        runs_cleanly_and_keeps_the_ledger(&job, fixture, "pull_request");
    }
    assert!(job.fake.bot_comments().is_empty());
}

#[test]
fn pull_request_target_is_handled_as_a_pull_request_even_from_a_fork() {
    let job = Job::for_events();
    job.seed(None);
    let seeded_tip = job.ledger_tip();
    let path = job.fixture_event("pull_request.opened", |p| {
        p.set("/pull_request/head/repo/full_name", json!("mallory/hello"))
    });
    let r = job.run(
        "event",
        "pull_request_target",
        Some(&path),
        Some(&job.token),
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    // Runs in the base repository with a write token: no read-only-fork notice.
    assert!(r.lines_starting("::notice").is_empty(), "{}", r.stdout);
    assert!(r.lines_starting("::error").is_empty(), "{}", r.stdout);
    assert!(
        r.summary.contains("Handled `pull_request_target.opened`"),
        "{}",
        r.summary
    );
    assert_eq!(job.ledger_tip(), seeded_tip);
}

#[test]
fn review_events_are_handled_without_error_and_leave_the_ledger_unchanged() {
    let job = Job::for_events();
    job.seed(None);
    for fixture in [
        "pull_request_review.submitted.approved",
        "pull_request_review.submitted.changes_requested",
        "pull_request_review.dismissed",
    ] {
        runs_cleanly_and_keeps_the_ledger(&job, fixture, "pull_request_review");
    }
}

#[test]
fn ci_completion_events_are_handled_without_error_and_leave_the_ledger_unchanged() {
    let job = Job::for_events();
    job.seed(None);
    for (fixture, event) in [
        ("check_run.completed", "check_run"),
        ("check_suite.completed", "check_suite"),
        ("workflow_run.completed", "workflow_run"),
    ] {
        runs_cleanly_and_keeps_the_ledger(&job, fixture, event);
    }
}

#[test]
fn events_without_a_mission_report_empty_outputs() {
    let job = Job::for_events();
    let path = job.fixture_event("check_run.completed", |p| p);
    let r = job.run("event", "check_run", Some(&path), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.outputs["mission-status"], "");
    assert_eq!(r.outputs["mission-version"], "");
    assert!(r.summary.contains("No mission yet"), "{}", r.summary);
    assert_eq!(job.ledger_tip(), None);
}

#[test]
fn a_review_on_a_fork_pull_request_explains_the_read_only_token_and_changes_nothing() {
    let job = Job::for_events();
    job.seed(None);
    let tip = job.ledger_tip();
    let path = job.fixture_event("pull_request_review.submitted.approved", |p| {
        p.set("/pull_request/head/repo/full_name", json!("mallory/hello"))
    });
    let read_only = job
        .fake
        .actions_token("octo-org", "hello", &[("contents", "read")]);
    let r = job.run(
        "event",
        "pull_request_review",
        Some(&path),
        Some(&read_only),
    );
    assert_eq!(r.code, Some(0), "{r:?}");
    let notices = r.lines_starting("::notice");
    assert_eq!(notices.len(), 1, "{}", r.stdout);
    assert!(
        notices[0].contains("mallory/hello") && notices[0].contains("read-only"),
        "{}",
        notices[0]
    );
    assert_eq!(job.ledger_tip(), tip);
    assert!(job.fake.bot_comments().is_empty());
    assert!(job.fake.api_requests().is_empty());
}

#[test]
fn a_check_run_that_is_not_completed_is_one_notice() {
    let job = Job::for_events();
    let path = job.fixture_event("check_run.completed", |p| p.action("created"));
    let r = job.run("event", "check_run", Some(&path), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let notices = r.lines_starting("::notice");
    assert_eq!(notices.len(), 1, "{}", r.stdout);
    assert!(notices[0].contains("created"), "{}", notices[0]);
}
