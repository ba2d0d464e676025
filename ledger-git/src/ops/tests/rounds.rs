//! CI rounds as actions on the progress ledger: progress judged against the previous
//! round, one count per head, and the fingerprint's loop escalation.

use super::*;
use crate::model::{CiRound, MissionStatus, PauseReason};

fn started() -> Ledger {
    let l = mission_with(vec![task("S1", &[], Validation::Test)]);
    run(&l, Operation::Start { step: "S1".into() }, &human())
}

fn round(head: &str, green: &[&str], red: &[&str], fp: Option<&str>) -> Operation {
    Operation::CiRound(
        CiRound {
            head_sha: head.into(),
            green: green.iter().map(|s| s.to_string()).collect(),
            red: red.iter().map(|s| s.to_string()).collect(),
            fingerprint: fp.map(str::to_owned),
            excerpt: String::new(),
            changed: Vec::new(),
        },
        "S1".into(),
    )
}

#[test]
fn a_round_is_progress_only_when_a_check_turns_green_that_was_not() {
    let l = run(
        &started(),
        round("a1", &["build"], &["test"], Some("fp:1")),
        &navin(),
    );
    assert!(
        l.mission.progress.real_progress,
        "build is green for the first time"
    );
    assert_eq!(l.mission.progress.stall_count, 0);
    let l = run(
        &l,
        round("b2", &["build"], &["test"], Some("fp:2")),
        &navin(),
    );
    assert!(!l.mission.progress.real_progress);
    assert_eq!(l.mission.progress.stall_count, 1);
    let l = run(&l, round("c3", &["build", "test"], &[], None), &navin());
    assert!(l.mission.progress.real_progress, "test turned green");
    assert_eq!(l.mission.progress.stall_count, 0);
    assert_eq!(l.mission.progress.last_result_ok, Some(true));
}

#[test]
fn a_head_counts_once_however_many_events_report_on_it() {
    let l = run(
        &started(),
        round("a1", &[], &["test"], Some("fp:1")),
        &navin(),
    );
    assert_eq!(l.mission.progress.stall_count, 1);
    let again = applied(
        Some(&l),
        round("a1", &[], &["test"], Some("fp:1")),
        &navin(),
    );
    assert_eq!(
        again.ledger.mission.progress.stall_count, 1,
        "the same round again"
    );
    let more = run(
        &l,
        round("a1", &["lint"], &["test"], Some("fp:1")),
        &navin(),
    );
    assert_eq!(
        more.mission.progress.stall_count, 1,
        "a later check on the same head"
    );
    assert_eq!(
        more.board
            .task("S1")
            .and_then(|t| t.ci_round.as_ref())
            .map(|r| r.green.clone()),
        Some(vec!["lint".to_owned()]),
        "the step shows the newest round"
    );
}

#[test]
fn the_same_failure_on_new_heads_is_a_loop_then_a_replan_then_a_pause() {
    let l = run(
        &started(),
        round("a1", &[], &["test"], Some("fp:same")),
        &navin(),
    );
    assert!(!l.mission.progress.loop_detected);
    let l = run(&l, round("b2", &[], &["test"], Some("fp:same")), &navin());
    assert!(l.mission.progress.loop_detected, "the failure repeated");
    let l = run(&l, round("c3", &[], &["test"], Some("fp:same")), &navin());
    assert_eq!(
        status(&l, "S1"),
        TaskStatus::Planned,
        "a local replan resets the step"
    );
    assert!(l.board.task("S1").is_some_and(|t| t.ci_round.is_none()));
    let l = run(&l, Operation::Start { step: "S1".into() }, &human());
    let l = run(&l, round("d4", &[], &["test"], Some("fp:same")), &navin());
    assert_eq!(l.mission.status, MissionStatus::Paused);
    assert_eq!(l.mission.pause_reason, Some(PauseReason::Loop));
}

#[test]
fn an_agent_cannot_report_a_ci_round() {
    let err = refused(
        Some(&started()),
        round("a1", &["test"], &[], None),
        &agent(),
    );
    assert!(matches!(err, RuleError::AgentEvidence { .. }), "{err}");
}

#[test]
fn usage_debits_the_budget_pauses_past_a_cap_and_counts_no_stall() {
    let mut l = started();
    l.mission.progress.budget.max_tokens = Some(1000);
    let usage = |tokens| Operation::Usage {
        step: "S1".into(),
        tokens,
        cost_usd: 0.25,
    };
    let l = run(&l, usage(600), &navin());
    assert_eq!(l.mission.progress.tokens_used, 600);
    assert_eq!(l.mission.progress.stall_count, 0, "spending is not a stall");
    assert_eq!(l.mission.status, MissionStatus::Running);
    let l = run(&l, usage(600), &navin());
    assert_eq!(l.mission.status, MissionStatus::Paused);
    assert_eq!(l.mission.pause_reason, Some(PauseReason::Budget));
    // Spend reported while paused is still recorded.
    let l = run(&l, usage(10), &navin());
    assert_eq!(l.mission.progress.tokens_used, 1210);
    assert!((l.mission.progress.cost_used_usd - 0.75).abs() < 1e-9);
    let bad = Operation::Usage {
        step: "S1".into(),
        tokens: 1,
        cost_usd: f64::NAN,
    };
    assert!(matches!(
        refused(Some(&l), bad, &navin()),
        RuleError::InvalidCost { .. }
    ));
}

fn drift(head: &str, outside: &[&str]) -> Operation {
    Operation::Drift {
        step: "S1".into(),
        drift: Some(PlanDrift {
            head_sha: head.into(),
            outside_plan: outside.iter().map(|s| s.to_string()).collect(),
            strict: true,
            ..PlanDrift::default()
        }),
    }
}

#[test]
fn files_outside_the_plan_are_navins_record_cleared_by_a_new_head_and_refused_to_agents() {
    let link = |head: &str| Operation::Link {
        step: "S1".into(),
        pr: Some(7),
        head_sha: Some(head.into()),
        branch: None,
    };
    let l = run(&started(), link("a1"), &navin());
    let l = run(&l, drift("a1", &["ops/x.sh"]), &navin());
    let recorded = l
        .board
        .task("S1")
        .and_then(|t| t.plan_drift.clone())
        .expect("recorded");
    assert_eq!(recorded.outside_plan, ["ops/x.sh"]);
    assert!(recorded.strict);
    // An agent may not clear what holds its own step.
    let cleared = Operation::Drift {
        step: "S1".into(),
        drift: None,
    };
    assert!(matches!(
        refused(Some(&l), cleared.clone(), &agent()),
        RuleError::AgentEvidence { .. }
    ));
    // An empty record is no record.
    let empty = run(&l, drift("a1", &[]), &navin());
    assert_eq!(status(&empty, "S1"), TaskStatus::InProgress);
    assert_eq!(
        empty.board.task("S1").and_then(|t| t.plan_drift.clone()),
        None
    );
    // A new head says nothing about the old head's files.
    let moved = run(&l, link("b2"), &navin());
    assert_eq!(
        moved.board.task("S1").and_then(|t| t.plan_drift.clone()),
        None
    );
}
