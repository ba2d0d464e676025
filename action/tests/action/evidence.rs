//! `mode: evidence` on `workflow_run` completed: the step's ledger entry after green, red, foreign and repeated runs.

use navin_ledger::model::{EvidenceKind, TaskStatus};

use crate::harness::Job;

#[test]
fn green_run_on_the_linked_head_marks_the_step_done() {
    let job = Job::new();
    // Green closes the step at once here: these runs are not on a pull request.
    job.write_config("evidence:\n  done_on: green\n");
    let head = job.commit_head("v1");
    let seeded = job.seed(Some(&head));
    let run_id = job.workflow_run(&head, "success");
    let event = job.workflow_run_event(run_id, &head, "success");
    let r = job.run("evidence", "workflow_run", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");

    let ledger = job.ledger().expect("ledger");
    let s1 = ledger.board.task("S1").expect("S1");
    assert_eq!(s1.status, TaskStatus::Done);
    let e = s1.evidence.last().expect("evidence");
    assert!(e.ok);
    assert_eq!(e.kind, EvidenceKind::WorkflowRun);
    assert_eq!(e.workflow_run_id, Some(run_id));
    assert_eq!(e.app_id, Some(15368));
    assert_eq!(e.head_sha.as_deref(), Some(head.as_str()));
    assert_eq!(
        r.outputs["mission-version"],
        ledger.mission.version.to_string()
    );
    assert!(ledger.mission.version > seeded.mission.version);
    // The run was re-read from the API, not taken from the payload.
    assert_eq!(
        job.fake
            .requests_to(
                "GET",
                &format!("/repos/octo-org/hello/actions/runs/{run_id}")
            )
            .len(),
        1
    );
}

#[test]
fn payload_claiming_success_does_not_override_the_api() {
    let job = Job::new();
    let head = job.commit_head("v1");
    job.seed(Some(&head));
    let run_id = job.workflow_run(&head, "failure");
    let event = job.workflow_run_event(run_id, &head, "success");
    let r = job.run("evidence", "workflow_run", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let s1 = job
        .ledger()
        .expect("ledger")
        .board
        .task("S1")
        .cloned()
        .expect("S1");
    assert_ne!(s1.status, TaskStatus::Done);
    assert_eq!(s1.retry_count, 1);
}

#[test]
fn run_on_another_head_is_ignored() {
    let job = Job::new();
    let linked = job.commit_head("v1");
    let other = job.commit_head("v2");
    job.seed(Some(&linked));
    let before = job.ledger_tip();
    let run_id = job.workflow_run(&other, "success");
    let event = job.workflow_run_event(run_id, &other, "success");
    let r = job.run("evidence", "workflow_run", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(
        r.stdout.contains("handled workflow_run.completed"),
        "{}",
        r.stdout
    );
    assert_eq!(job.ledger_tip(), before);
    let s1 = job
        .ledger()
        .expect("ledger")
        .board
        .task("S1")
        .cloned()
        .expect("S1");
    assert_eq!(s1.status, TaskStatus::Planned);
    assert!(s1.evidence.is_empty());
}

#[test]
fn red_run_is_recorded_as_a_failed_attempt() {
    let job = Job::new();
    let head = job.commit_head("v1");
    job.seed(Some(&head));
    let run_id = job.workflow_run(&head, "failure");
    let event = job.workflow_run_event(run_id, &head, "failure");
    let r = job.run("evidence", "workflow_run", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let s1 = job
        .ledger()
        .expect("ledger")
        .board
        .task("S1")
        .cloned()
        .expect("S1");
    assert_eq!(s1.retry_count, 1);
    let e = s1.evidence.last().expect("evidence");
    assert!(!e.ok);
    assert_eq!(e.workflow_run_id, Some(run_id));
    assert_eq!(e.conclusion.as_deref(), Some("failure"));
}

#[test]
fn second_run_of_the_same_job_changes_nothing() {
    let job = Job::new();
    let head = job.commit_head("v1");
    job.seed(Some(&head));
    let run_id = job.workflow_run(&head, "failure");
    let event = job.workflow_run_event(run_id, &head, "failure");
    let first = job.run("evidence", "workflow_run", Some(&event), Some(&job.token));
    assert_eq!(first.code, Some(0), "{first:?}");
    let tip = job.ledger_tip();
    let second = job.run("evidence", "workflow_run", Some(&event), Some(&job.token));
    assert_eq!(second.code, Some(0), "{second:?}");
    assert_eq!(job.ledger_tip(), tip);
    assert_eq!(
        second.outputs["mission-version"],
        first.outputs["mission-version"]
    );
    let s1 = job
        .ledger()
        .expect("ledger")
        .board
        .task("S1")
        .cloned()
        .expect("S1");
    assert_eq!(s1.retry_count, 1);
    assert_eq!(s1.evidence.len(), 1);
}

#[test]
fn read_only_token_fails_naming_contents_write() {
    let job = Job::new();
    let head = job.commit_head("v1");
    job.seed(Some(&head));
    let before = job.ledger_tip();
    let run_id = job.workflow_run(&head, "success");
    let event = job.workflow_run_event(run_id, &head, "success");
    let read_only = job.fake.actions_token(
        "octo-org",
        "hello",
        &[
            ("contents", "read"),
            ("actions", "read"),
            ("checks", "read"),
            ("pull_requests", "read"),
        ],
    );
    let r = job.run("evidence", "workflow_run", Some(&event), Some(&read_only));
    assert_eq!(r.code, Some(1), "{r:?}");
    let errors = r.lines_starting("::error");
    assert_eq!(errors.len(), 1, "{}", r.stdout);
    assert!(errors[0].contains("contents: write"), "{}", errors[0]);
    assert_eq!(job.ledger_tip(), before);
}

#[test]
fn missing_actions_read_is_named() {
    let job = Job::new();
    let head = job.commit_head("v1");
    job.seed(Some(&head));
    let run_id = job.workflow_run(&head, "success");
    let event = job.workflow_run_event(run_id, &head, "success");
    let token = job
        .fake
        .actions_token("octo-org", "hello", &[("contents", "write")]);
    let r = job.run("evidence", "workflow_run", Some(&event), Some(&token));
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(r.stdout.contains("actions: read"), "{}", r.stdout);
}

#[test]
fn evidence_without_a_mission_changes_nothing() {
    let job = Job::new();
    let head = job.commit_head("v1");
    let run_id = job.workflow_run(&head, "success");
    let event = job.workflow_run_event(run_id, &head, "success");
    let r = job.run("evidence", "workflow_run", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.outputs["mission-status"], "");
    assert_eq!(job.ledger_tip(), None);
}

#[test]
fn green_run_with_another_required_check_missing_is_recorded_without_done() {
    let job = Job::new();
    job.write_config("evidence:\n  required_checks:\n    test: [ci, e2e]\n");
    let head = job.commit_head("v1");
    job.seed(Some(&head));
    let run_id = job.workflow_run(&head, "success");
    let event = job.workflow_run_event(run_id, &head, "success");
    let r = job.run("evidence", "workflow_run", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let s1 = job
        .ledger()
        .expect("ledger")
        .board
        .task("S1")
        .cloned()
        .expect("S1");
    assert_eq!(s1.status, TaskStatus::Planned);
    let e = s1.evidence.last().expect("evidence recorded");
    assert!(e.ok);
    assert_eq!(e.workflow_run_id, Some(run_id));
}

#[test]
fn invalid_config_fails_naming_the_key() {
    let job = Job::new();
    job.write_config("evidence:\n  trusted_apps: []\n");
    let head = job.commit_head("v1");
    job.seed(Some(&head));
    let before = job.ledger_tip();
    let run_id = job.workflow_run(&head, "success");
    let event = job.workflow_run_event(run_id, &head, "success");
    let r = job.run("evidence", "workflow_run", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(1), "{r:?}");
    let errors = r.lines_starting("::error");
    assert_eq!(errors.len(), 1, "{}", r.stdout);
    assert!(errors[0].contains("trusted_apps"), "{}", errors[0]);
    assert_eq!(job.ledger_tip(), before);
}

#[test]
fn rerun_after_done_changes_nothing() {
    let job = Job::new();
    // Green closes the step at once here: these runs are not on a pull request.
    job.write_config("evidence:\n  done_on: green\n");
    let head = job.commit_head("v1");
    job.seed(Some(&head));
    let run_id = job.workflow_run(&head, "success");
    let event = job.workflow_run_event(run_id, &head, "success");
    let first = job.run("evidence", "workflow_run", Some(&event), Some(&job.token));
    assert_eq!(first.code, Some(0), "{first:?}");
    let tip = job.ledger_tip();
    let second = job.run("evidence", "workflow_run", Some(&event), Some(&job.token));
    assert_eq!(second.code, Some(0), "{second:?}");
    assert_eq!(job.ledger_tip(), tip);
    assert_eq!(
        second.outputs["mission-version"],
        first.outputs["mission-version"]
    );
    let s1 = job
        .ledger()
        .expect("ledger")
        .board
        .task("S1")
        .cloned()
        .expect("S1");
    assert_eq!(s1.status, TaskStatus::Done);
    assert_eq!(s1.evidence.len(), 1);
}

#[test]
fn two_jobs_racing_on_the_same_run_count_one_attempt() {
    let job = Job::new();
    let head = job.commit_head("v1");
    job.seed(Some(&head));
    let run_id = job.workflow_run(&head, "failure");
    let event = job.workflow_run_event(run_id, &head, "failure");
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| job.run("evidence", "workflow_run", Some(&event), Some(&job.token)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect()
    });
    for r in &results {
        assert_eq!(r.code, Some(0), "{r:?}");
    }
    let s1 = job
        .ledger()
        .expect("ledger")
        .board
        .task("S1")
        .cloned()
        .expect("S1");
    assert_eq!(s1.retry_count, 1);
    assert_eq!(s1.evidence.len(), 1);
}

#[test]
fn a_step_done_by_evidence_refreshes_the_mission_panel_on_its_issue() {
    let job = Job::new();
    // Green closes the step at once here: these runs are not on a pull request.
    job.write_config("evidence:\n  done_on: green\n");
    let issue = job
        .fake
        .create_issue("octo-org", "hello", "Widget API", "", "alice");
    let head = job.commit_head("v1");
    job.seed_from(Some(&head), Some(issue));
    let run_id = job.workflow_run(&head, "success");
    let event = job.workflow_run_event(run_id, &head, "success");
    let r = job.run("evidence", "workflow_run", Some(&event), Some(&job.token));
    assert_eq!(r.code, Some(0), "{r:?}");
    let ledger = job.ledger().expect("ledger");
    assert_eq!(
        ledger.board.task("S1").map(|t| t.status),
        Some(TaskStatus::Done)
    );
    let panels: Vec<_> = job
        .fake
        .bot_comments()
        .into_iter()
        .filter(|c| c.issue_number == issue && c.body.starts_with("<!-- navin:panel"))
        .collect();
    assert_eq!(panels.len(), 1, "{panels:#?}");
    assert!(
        panels[0].body.contains("Ship the widget API"),
        "{}",
        panels[0].body
    );
    assert!(
        panels[0]
            .body
            .contains(&format!("v{}", ledger.mission.version)),
        "{}",
        panels[0].body
    );
}
