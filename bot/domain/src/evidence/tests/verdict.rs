//! `evaluate`: head matching, trusted apps, newest run per name, conclusions, min CI time.

use std::collections::HashMap;
use std::time::Duration;

use navin_ledger::model::{Evidence, EvidenceKind, Validation};
use navin_ledger::ops::Operation;

use super::fixture::*;
use crate::evidence::*;

fn policy(required: &[&str]) -> EvidencePolicy {
    let mut required_checks = HashMap::new();
    required_checks.insert(
        Validation::Test,
        required.iter().map(|s| s.to_string()).collect(),
    );
    EvidencePolicy {
        required_checks,
        ..EvidencePolicy::default()
    }
}

fn verdict(obs: &[CheckObservation], policy: &EvidencePolicy) -> Verdict {
    evaluate(&step(Validation::Test, Some(HEAD)), obs, policy, t(120))
}

fn missing_of(v: &Verdict) -> Vec<String> {
    match v {
        Verdict::Pending { missing, .. } => missing.clone(),
        other => panic!("expected pending, got {other:?}"),
    }
}

#[test]
fn all_required_green_gives_evidence_with_ids() {
    let obs = [
        done_run(101, "test", "success", 0, 6),
        done_run(102, "lint", "success", 1, 2),
    ];
    let Verdict::Green { evidence } = verdict(&obs, &policy(&["test", "lint"])) else {
        panic!("expected green");
    };
    assert_eq!(evidence.len(), 2);
    let test = evidence
        .iter()
        .find(|e| e.name.as_deref() == Some("test"))
        .expect("test evidence");
    assert_eq!(test.kind, EvidenceKind::CheckRun);
    assert!(test.ok);
    assert_eq!(test.check_run_id, Some(101));
    assert_eq!(test.workflow_run_id, None);
    assert_eq!(test.app_id, Some(GITHUB_ACTIONS_APP_ID));
    assert_eq!(test.head_sha.as_deref(), Some(HEAD));
    assert_eq!(test.conclusion.as_deref(), Some("success"));
    assert_eq!(test.url.as_deref(), Some("https://github.com/o/r/runs/101"));
    assert_eq!(test.completed_at, Some(t(6)));
    assert!(
        test.summary.contains("test success on 8f14e45"),
        "{}",
        test.summary
    );
    assert!(test.summary.contains("6m 0s"), "{}", test.summary);
    assert!(EvidenceKind::CheckRun.proves(Validation::Test));
}

#[test]
fn green_evidence_is_accepted_by_the_ledger_done_gate() {
    let ledger = ledger_with_step(Validation::Test, None, Some(HEAD));
    let ledger = apply_ok(Some(&ledger), Operation::Start { step: "S1".into() });
    let task = ledger.board.task("S1").expect("S1").clone();
    let Verdict::Green { evidence } = evaluate(
        &task,
        &[done_run(7, "test", "success", 0, 5)],
        &policy(&["test"]),
        t(10),
    ) else {
        panic!("expected green");
    };
    let done = apply_ok(
        Some(&ledger),
        Operation::Done {
            step: "S1".into(),
            evidence: evidence.into_iter().next(),
        },
    );
    let task = done.board.task("S1").expect("S1");
    assert_eq!(task.status, navin_ledger::model::TaskStatus::Done);
    assert_eq!(task.evidence[0].check_run_id, Some(7));
}

#[test]
fn ignores_untrusted_app_with_same_name() {
    let mut spoof = done_run(900, "test", "success", 30, 10);
    spoof.app_id = Some(4242);
    assert_eq!(
        missing_of(&verdict(std::slice::from_ref(&spoof), &policy(&["test"]))),
        vec!["test".to_owned()]
    );

    // A newer failing run from another app does not hide the trusted success either.
    let mut newer_spoof = done_run(901, "test", "failure", 50, 10);
    newer_spoof.app_id = Some(4242);
    let obs = [done_run(100, "test", "success", 0, 10), newer_spoof];
    assert!(verdict(&obs, &policy(&["test"])).is_green());
}

#[test]
fn run_without_an_app_is_not_trusted() {
    let mut anonymous = done_run(5, "test", "success", 0, 10);
    anonymous.app_id = None;
    assert_eq!(
        missing_of(&verdict(&[anonymous], &policy(&["test"]))),
        vec!["test".to_owned()]
    );
}

#[test]
fn trusted_app_list_comes_from_policy() {
    let mut other = done_run(5, "test", "success", 0, 10);
    other.app_id = Some(4242);
    let policy = EvidencePolicy {
        trusted_app_ids: vec![4242],
        ..policy(&["test"])
    };
    assert!(verdict(&[other], &policy).is_green());
}

#[test]
fn ignores_run_on_old_head() {
    let mut old = done_run(100, "test", "success", 0, 10);
    old.head_sha = OLD_HEAD.into();
    assert_eq!(
        missing_of(&verdict(&[old], &policy(&["test"]))),
        vec!["test".to_owned()]
    );

    // A failure on the old head does not fail the step on the new head.
    let mut old_red = done_run(99, "test", "failure", 0, 10);
    old_red.head_sha = OLD_HEAD.into();
    let obs = [old_red, done_run(100, "test", "success", 20, 10)];
    assert!(verdict(&obs, &policy(&["test"])).is_green());
}

#[test]
fn fork_pr_matched_by_sha() {
    // Fork PRs' runs carry no pull_requests; the SHA alone links them, in any case.
    let mut fork = done_run(100, "test", "success", 0, 10);
    fork.head_sha = HEAD.to_uppercase();
    assert!(verdict(&[fork], &policy(&["test"])).is_green());
}

#[test]
fn skipped_is_not_green() {
    let v = verdict(&[done_run(1, "test", "skipped", 0, 0)], &policy(&["test"]));
    let Verdict::Pending { not_green, .. } = v else {
        panic!("skipped must not prove or fail the step, got {v:?}");
    };
    assert_eq!(not_green[0].name, "test");
    assert_eq!(not_green[0].conclusion, "skipped");
}

#[test]
fn non_failing_conclusions_leave_the_step_pending() {
    for c in [
        "neutral",
        "cancelled",
        "action_required",
        "stale",
        "skipped",
        "brand_new_value",
    ] {
        let v = verdict(&[done_run(1, "test", c, 0, 10)], &policy(&["test"]));
        assert!(
            matches!(&v, Verdict::Pending { not_green, .. } if not_green.len() == 1),
            "{c}: {v:?}"
        );
    }
}

#[test]
fn failing_conclusions_are_red() {
    for c in ["failure", "timed_out", "startup_failure"] {
        let v = verdict(&[done_run(1, "test", c, 0, 10)], &policy(&["test"]));
        let Verdict::Red { failed, evidence } = v else {
            panic!("{c} must be red, got {v:?}");
        };
        assert_eq!(failed[0].conclusion, c);
        assert_eq!(failed[0].run_id, 1);
        assert!(!evidence[0].ok);
        assert_eq!(evidence[0].conclusion.as_deref(), Some(c));
    }
}

#[test]
fn completed_without_conclusion_is_not_green() {
    let mut run = done_run(1, "test", "success", 0, 10);
    run.conclusion = None;
    let v = verdict(&[run], &policy(&["test"]));
    assert!(
        matches!(v, Verdict::Pending { ref not_green, .. } if not_green.len() == 1),
        "{v:?}"
    );
}

#[test]
fn newer_queued_run_blocks_older_success() {
    let obs = [
        done_run(100, "test", "success", 0, 10),
        open_run(101, "test", CheckStatus::Queued, None),
    ];
    let v = verdict(&obs, &policy(&["test"]));
    let Verdict::Pending { running, .. } = v else {
        panic!("a re-run in the queue must block, got {v:?}");
    };
    assert_eq!(running[0].name, "test");
    assert_eq!(running[0].status, CheckStatus::Queued);
}

#[test]
fn newer_in_progress_run_blocks_and_reports_its_age() {
    let obs = [
        done_run(100, "test", "success", 0, 10),
        open_run(101, "test", CheckStatus::InProgress, Some(100)),
    ];
    let Verdict::Pending { running, .. } = verdict(&obs, &policy(&["test"])) else {
        panic!("expected pending");
    };
    assert_eq!(running[0].for_how_long, Some(Duration::from_secs(20 * 60)));
}

#[test]
fn newer_success_supersedes_older_failure() {
    let obs = [
        done_run(100, "test", "failure", 0, 10),
        done_run(101, "test", "success", 20, 10),
    ];
    assert!(verdict(&obs, &policy(&["test"])).is_green());
}

#[test]
fn newer_failure_supersedes_older_success() {
    let obs = [
        done_run(101, "test", "failure", 20, 10),
        done_run(100, "test", "success", 0, 10),
    ];
    assert!(matches!(
        verdict(&obs, &policy(&["test"])),
        Verdict::Red { .. }
    ));
}

#[test]
fn same_start_time_is_broken_by_run_id() {
    let obs = [
        done_run(201, "test", "failure", 0, 10),
        done_run(200, "test", "success", 0, 10),
    ];
    assert!(matches!(
        verdict(&obs, &policy(&["test"])),
        Verdict::Red { .. }
    ));
}

#[test]
fn two_states_of_one_run_count_as_its_latest() {
    // The engine saw run 100 queued, then completed: the completed state wins.
    let obs = [
        open_run(100, "test", CheckStatus::Queued, None),
        done_run(100, "test", "success", 0, 10),
    ];
    assert!(verdict(&obs, &policy(&["test"])).is_green());
}

#[test]
fn min_ci_time_rejects_fast_green() {
    let policy = EvidencePolicy {
        min_ci_time: Some(Duration::from_secs(5 * 60)),
        ..policy(&["test"])
    };
    let v = verdict(&[done_run(1, "test", "success", 0, 1)], &policy);
    let Verdict::Red { failed, evidence } = v else {
        panic!("a one-minute green under a five-minute floor must be red, got {v:?}");
    };
    let note = failed[0].note.as_deref().expect("note");
    assert!(note.contains("suspiciously fast"), "{note}");
    assert!(note.contains("1m 0s") && note.contains("5m 0s"), "{note}");
    assert!(!evidence[0].ok);

    assert!(verdict(&[done_run(2, "test", "success", 0, 6)], &policy).is_green());
}

#[test]
fn min_ci_time_without_timestamps_is_not_green() {
    let policy = EvidencePolicy {
        min_ci_time: Some(Duration::from_secs(60)),
        ..policy(&["test"])
    };
    let mut run = done_run(1, "test", "success", 0, 10);
    run.started_at = None;
    let v = verdict(&[run], &policy);
    assert!(
        matches!(v, Verdict::Pending { ref not_green, .. } if not_green[0].note.is_some()),
        "{v:?}"
    );
}

#[test]
fn missing_required_check_keeps_the_step_pending() {
    let obs = [done_run(1, "test", "success", 0, 10)];
    assert_eq!(
        missing_of(&verdict(&obs, &policy(&["test", "lint"]))),
        vec!["lint".to_owned()]
    );
}

#[test]
fn red_wins_over_running_and_missing() {
    let obs = [
        done_run(1, "lint", "failure", 0, 3),
        open_run(2, "test", CheckStatus::InProgress, Some(1)),
    ];
    let v = verdict(&obs, &policy(&["test", "lint", "e2e"]));
    assert!(
        matches!(v, Verdict::Red { ref failed, .. } if failed.len() == 1 && failed[0].name == "lint"),
        "{v:?}"
    );
}

#[test]
fn empty_required_list_needs_every_trusted_check_on_the_head() {
    let all = EvidencePolicy::default();
    let obs = [
        done_run(1, "build", "success", 0, 3),
        done_run(2, "test", "success", 0, 9),
    ];
    let Verdict::Green { evidence } = verdict(&obs, &all) else {
        panic!("expected green");
    };
    assert_eq!(evidence.len(), 2);

    let obs = [
        done_run(1, "build", "success", 0, 3),
        open_run(3, "docs", CheckStatus::Queued, None),
    ];
    assert!(matches!(verdict(&obs, &all), Verdict::Pending { .. }));
}

#[test]
fn empty_required_list_with_no_checks_is_pending() {
    let v = verdict(&[], &EvidencePolicy::default());
    assert_eq!(
        v,
        Verdict::Pending {
            missing: vec![],
            running: vec![],
            not_green: vec![]
        }
    );
}

#[test]
fn manual_step_without_acceptance_needs_no_run() {
    let v = evaluate(
        &step(Validation::Manual, Some(HEAD)),
        &[],
        &EvidencePolicy::default(),
        t(0),
    );
    assert_eq!(
        v,
        Verdict::NotApplicable {
            reason: NotApplicable::NoRunNeeded {
                validation: Validation::Manual
            }
        }
    );
}

#[test]
fn step_with_acceptance_is_evaluated_even_without_a_run_validation() {
    let ledger = ledger_with_step(Validation::None, Some("loader reads YAML"), Some(HEAD));
    let task = ledger.board.task("S1").expect("S1");
    let v = evaluate(
        task,
        &[done_run(1, "test", "success", 0, 4)],
        &EvidencePolicy::default(),
        t(10),
    );
    assert!(v.is_green(), "{v:?}");
}

#[test]
fn step_without_linked_head_is_not_applicable() {
    let v = evaluate(
        &step(Validation::Test, None),
        &[done_run(1, "test", "success", 0, 4)],
        &policy(&["test"]),
        t(10),
    );
    assert_eq!(
        v,
        Verdict::NotApplicable {
            reason: NotApplicable::NoLinkedHead
        }
    );
}

#[test]
fn workflow_run_evidence_carries_the_workflow_run_id() {
    let mut run = done_run(555, "CI", "success", 0, 7);
    run.kind = RunKind::WorkflowRun;
    let Verdict::Green { evidence } = verdict(&[run], &policy(&["CI"])) else {
        panic!("expected green");
    };
    assert_eq!(evidence[0].kind, EvidenceKind::WorkflowRun);
    assert_eq!(evidence[0].workflow_run_id, Some(555));
    assert_eq!(evidence[0].check_run_id, None);
}

#[test]
fn unrecorded_evidence_skips_runs_the_step_already_holds() {
    let ledger = ledger_with_step(Validation::Test, None, Some(HEAD));
    let ledger = apply_ok(Some(&ledger), Operation::Start { step: "S1".into() });
    let mut recorded = Evidence::run(EvidenceKind::CheckRun, false, "lint failed");
    recorded.check_run_id = Some(1);
    let ledger = apply_ok(
        Some(&ledger),
        Operation::RecordEvidence {
            step: "S1".into(),
            evidence: recorded,
        },
    );
    let task = ledger.board.task("S1").expect("S1");
    let obs = [
        done_run(1, "lint", "failure", 0, 3),
        done_run(2, "test", "failure", 0, 3),
    ];
    let v = evaluate(task, &obs, &policy(&["lint", "test"]), t(10));
    let fresh = v.unrecorded_evidence(task);
    assert_eq!(fresh.len(), 1);
    assert_eq!(fresh[0].check_run_id, Some(2));
}

#[test]
fn conclusion_classes_follow_the_documented_split() {
    use ConclusionClass::*;
    let cases = [
        ("success", Green),
        ("failure", Red),
        ("timed_out", Red),
        ("startup_failure", Red),
        ("cancelled", NotGreen),
        ("action_required", NotGreen),
        ("neutral", NotGreen),
        ("skipped", NotGreen),
        ("stale", NotGreen),
        ("SUCCESS", NotGreen),
    ];
    for (text, class) in cases {
        assert_eq!(Conclusion::parse(text).class(), class, "{text}");
    }
}

#[test]
fn navins_own_checks_are_not_implicitly_required() {
    // In the Action, `navin/plan` runs under GitHub Actions' app id.
    let obs = [
        done_run(1, "test", "success", 0, 5),
        open_run(2, "navin/plan", CheckStatus::InProgress, Some(1)),
    ];
    assert!(verdict(&obs, &EvidencePolicy::default()).is_green());
    // Named explicitly, it counts like any other check.
    assert!(matches!(
        verdict(&obs, &policy(&["test", "navin/plan"])),
        Verdict::Pending { .. }
    ));
}
