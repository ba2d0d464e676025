//! Startup failures and events the Action does not handle.

use serde_json::json;

use crate::harness::Job;

#[test]
fn missing_token_fails_with_a_clear_error() {
    let job = Job::new();
    let r = job.run("ready-matrix", "schedule", None, None);
    assert_eq!(r.code, Some(1), "{r:?}");
    let errors = r.lines_starting("::error");
    assert_eq!(errors.len(), 1, "{}", r.stdout);
    assert!(errors[0].contains("github-token"), "{}", errors[0]);
    assert!(errors[0].contains("permissions"), "{}", errors[0]);
}

#[test]
fn unknown_event_in_event_mode_is_one_notice_and_success() {
    let job = Job::new();
    let before = job.ledger_tip();
    let r = job.run("event", "star", None, Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let notices = r.lines_starting("::notice");
    assert_eq!(notices.len(), 1, "{}", r.stdout);
    assert!(
        notices[0].contains("\\\"star\\\"") || notices[0].contains("\"star\""),
        "{}",
        notices[0]
    );
    assert_eq!(job.ledger_tip(), before);
}

#[test]
fn evidence_mode_on_another_event_is_one_notice_and_success() {
    let job = Job::new();
    job.seed(None);
    let before = job.ledger_tip();
    let r = job.run("evidence", "push", None, Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.lines_starting("::notice").len(), 1, "{}", r.stdout);
    assert_eq!(job.ledger_tip(), before);
}

#[test]
fn fork_pull_request_changes_nothing_and_explains_the_read_only_token() {
    let job = Job::new();
    let payload = json!({
        "action": "opened",
        "pull_request": {"number": 3, "head": {"ref": "main", "repo": {"full_name": "mallory/hello"}}}
    });
    let path = job.write_event("pull_request", &payload);
    let token = job
        .fake
        .actions_token("octo-org", "hello", &[("contents", "read")]);
    let r = job.run("event", "pull_request", Some(&path), Some(&token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let notices = r.lines_starting("::notice");
    assert_eq!(notices.len(), 1);
    assert!(
        notices[0].contains("mallory/hello") && notices[0].contains("read-only"),
        "{}",
        notices[0]
    );
    assert_eq!(job.ledger_tip(), None);
}

#[test]
fn unknown_mode_fails_naming_the_valid_ones() {
    let job = Job::new();
    let r = job.run("deploy", "schedule", None, Some(&job.token));
    assert_eq!(r.code, Some(1));
    assert!(r.stdout.contains("ready-matrix"), "{}", r.stdout);
}
