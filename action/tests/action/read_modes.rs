//! `ready-matrix` and `summary` against a ledger on the fake's git remote.

use serde_json::Value;

use crate::harness::Job;

#[test]
fn ready_matrix_outputs_the_ready_steps_as_a_json_array() {
    let job = Job::new();
    let seeded = job.seed(None);
    let r = job.run("ready-matrix", "workflow_dispatch", None, Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let steps: Value =
        serde_json::from_str(&r.outputs["ready-steps"]).expect("ready-steps is JSON");
    let ids: Vec<&str> = steps
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    assert_eq!(ids, ["S1", "S3"]);
    assert_eq!(steps[0]["title"], "Build S1");
    assert_eq!(steps[0]["validation"], "test");
    assert_eq!(r.outputs["mission-status"], "running");
    assert_eq!(
        r.outputs["mission-version"],
        seeded.mission.version.to_string()
    );
}

#[test]
fn ready_matrix_without_a_ledger_outputs_an_empty_array() {
    let job = Job::new();
    let r = job.run("ready-matrix", "schedule", None, Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.outputs["ready-steps"], "[]");
    assert_eq!(r.outputs["mission-status"], "");
    assert_eq!(r.outputs["mission-version"], "");
    assert_eq!(r.lines_starting("::notice").len(), 1, "{}", r.stdout);
}

#[test]
fn ready_matrix_works_with_a_read_only_token() {
    let job = Job::new();
    job.seed(None);
    let read_only = job
        .fake
        .actions_token("octo-org", "hello", &[("contents", "read")]);
    let r = job.run("ready-matrix", "schedule", None, Some(&read_only));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.outputs["ready-steps"].contains("\"S1\""));
}

#[test]
fn summary_appends_the_mission_panel_to_the_job_summary() {
    let job = Job::new();
    let seeded = job.seed(None);
    let r = job.run("summary", "workflow_dispatch", None, Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.summary.contains("Ship the widget API"), "{}", r.summary);
    for id in ["S1", "S2", "S3"] {
        assert!(r.summary.contains(id), "panel lists {id}: {}", r.summary);
    }
    assert_eq!(r.outputs["mission-status"], "running");
    assert_eq!(
        r.outputs["mission-version"],
        seeded.mission.version.to_string()
    );
}

#[test]
fn summary_without_a_mission_says_so() {
    let job = Job::new();
    let r = job.run("summary", "schedule", None, Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.summary.contains("No mission yet"), "{}", r.summary);
    assert_eq!(r.outputs["mission-status"], "");
}

#[test]
fn token_is_masked_first_and_never_printed_otherwise() {
    let job = Job::new();
    job.seed(None);
    let r = job.run("summary", "schedule", None, Some(&job.token));
    let first = r.stdout.lines().next().unwrap_or_default();
    assert_eq!(first, format!("::add-mask::{}", job.token));
    assert_eq!(r.stdout.matches(job.token.as_str()).count(), 1);
    assert!(!r.stderr.contains(job.token.as_str()));
    assert!(!r.summary.contains(job.token.as_str()));
}
