//! Observations read from real webhook payloads and from tolerant JSON.

use navin_ledger::model::Validation;

use super::fixture::t;
use crate::evidence::*;

const CHECK_RUN_COMPLETED: &str =
    include_str!("../../../../../tests/fixtures/webhooks/check_run.completed.json");
const WORKFLOW_RUN_COMPLETED: &str =
    include_str!("../../../../../tests/fixtures/webhooks/workflow_run.completed.json");

fn field<T: serde::de::DeserializeOwned>(payload: &str, key: &str) -> T {
    let v: serde_json::Value = serde_json::from_str(payload).expect("fixture is JSON");
    serde_json::from_value(v[key].clone()).expect("object parses")
}

#[test]
fn check_run_webhook_becomes_an_observation() {
    let run: CheckRunPayload = field(CHECK_RUN_COMPLETED, "check_run");
    let o = CheckObservation::from_check_run(&run);
    assert_eq!(o.id, 128620228);
    assert_eq!(o.kind, RunKind::CheckRun);
    assert_eq!(o.name, "Octocoders-linter");
    assert_eq!(o.app_id, Some(29310));
    assert_eq!(o.status, CheckStatus::Completed);
    assert_eq!(o.conclusion(), Some(Conclusion::Success));
    assert_eq!(o.head_sha, "ec26c3e57ca3a959ca5aad62de7213c562f8c821");
    assert!(o.completed_at.is_some());
}

#[test]
fn fixture_check_run_from_another_app_is_untrusted_by_default() {
    let run: CheckRunPayload = field(CHECK_RUN_COMPLETED, "check_run");
    let o = CheckObservation::from_check_run(&run);
    let ledger = super::fixture::ledger_with_step(Validation::Test, None, Some(&o.head_sha));
    let task = ledger.board.task("S1").expect("S1");
    let v = evaluate(
        task,
        std::slice::from_ref(&o),
        &EvidencePolicy::default(),
        t(0),
    );
    assert_eq!(
        v,
        Verdict::Pending {
            missing: vec![],
            running: vec![],
            not_green: vec![]
        }
    );
    let trusting = EvidencePolicy {
        trusted_app_ids: vec![29310],
        ..EvidencePolicy::default()
    };
    assert!(evaluate(task, &[o], &trusting, t(0)).is_green());
}

#[test]
fn workflow_run_webhook_becomes_a_github_actions_observation() {
    let run: WorkflowRunPayload = field(WORKFLOW_RUN_COMPLETED, "workflow_run");
    let o = CheckObservation::from_workflow_run(&run);
    assert_eq!(o.id, 289782451);
    assert_eq!(o.kind, RunKind::WorkflowRun);
    assert_eq!(o.app_id, Some(GITHUB_ACTIONS_APP_ID));
    assert_eq!(o.status, CheckStatus::Completed);
    assert_eq!(o.started_at, parse_time("2020-10-05T16:33:49Z"));
    assert_eq!(o.completed_at, parse_time("2020-10-05T16:33:49Z"));
    assert!(
        !o.name.is_empty(),
        "an empty workflow name falls back to something nameable"
    );
}

#[test]
fn tolerates_old_dates_nulls_and_missing_fields() {
    let json = r#"{"id": 4, "name": "test", "head_sha": "abc", "status": "completed",
        "conclusion": "success", "started_at": "2018-04-25 20:42:10",
        "completed_at": null, "app": null, "extra": {"x": 1}}"#;
    let run: CheckRunPayload = serde_json::from_str(json).expect("parses");
    let o = CheckObservation::from_check_run(&run);
    assert_eq!(o.started_at, parse_time("2018-04-25T20:42:10Z"));
    assert_eq!(o.completed_at, None);
    assert_eq!(o.app_id, None);

    let minimal: CheckRunPayload = serde_json::from_str(r#"{"id": 5}"#).expect("parses");
    let o = CheckObservation::from_check_run(&minimal);
    assert_eq!(o.status, CheckStatus::Queued);
    assert_eq!(o.conclusion(), None);
}

#[test]
fn unusual_statuses_read_as_not_started() {
    for s in ["waiting", "requested", "pending", "something_new"] {
        assert_eq!(CheckStatus::parse(s), CheckStatus::Queued, "{s}");
    }
}

#[test]
fn check_run_list_page_parses() {
    let json = r#"{"total_count": 2, "check_runs": [{"id": 1, "name": "a", "app": {"id": 15368}}, {"id": 2, "name": "b"}]}"#;
    let page: CheckRunList = serde_json::from_str(json).expect("parses");
    assert_eq!(page.total_count, 2);
    assert_eq!(
        page.check_runs[0].app.as_ref().and_then(|a| a.id),
        Some(15368)
    );
}
