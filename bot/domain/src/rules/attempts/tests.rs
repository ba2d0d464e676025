//! When the next attempt is due: each trigger, each wait, and nothing while paused.

use chrono::{Duration, TimeZone, Utc};
use navin_ledger::model::{Actor, AttemptOutcome, NextActor, PauseReason};
use navin_ledger::{apply, Ctx, InitArgs, Ledger, NewTask, Operation, Outcome, Validation};

use super::*;
use crate::config::AfterRed;

fn t(minutes: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 1, 9, 0, 0)
        .single()
        .expect("valid time")
        + Duration::minutes(minutes)
}

fn run(l: Option<&Ledger>, op: Operation, at: i64) -> Ledger {
    let ctx = Ctx::new(t(at), Actor::App("navin".into()));
    match apply(l, &op, &ctx) {
        Ok(Outcome::Applied(a)) => a.ledger,
        other => panic!("{} not applied: {other:?}", op.name()),
    }
}

/// S1 handed to `agent` at minute 0; S2 depends on S1 and is not handed out.
fn handed(agent: &str) -> Ledger {
    let step = |id: &str, deps: &[&str]| NewTask {
        id: id.into(),
        title: id.into(),
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        validation: Validation::None,
        ..NewTask::default()
    };
    let l = run(
        None,
        Operation::Init(InitArgs {
            goal: "g".into(),
            steps: vec![step("S1", &[]), step("S2", &["S1"])],
            ..InitArgs::default()
        }),
        0,
    );
    run(
        Some(&l),
        Operation::Dispatched {
            step: "S1".into(),
            issue: 5,
            agent: agent.into(),
        },
        0,
    )
}

fn claimed(l: &Ledger, pr: u64, at: i64) -> Ledger {
    run(
        Some(l),
        Operation::Claim {
            step: "S1".into(),
            pr,
            by: NextActor::Subagent("claude".into()),
        },
        at,
    )
}

fn failed(l: &Ledger, outcome: AttemptOutcome, at: i64) -> Ledger {
    run(
        Some(l),
        Operation::Fail {
            step: "S1".into(),
            evidence: None,
            reason: "red".into(),
            outcome,
        },
        at,
    )
}

fn agents() -> Agents {
    Agents::default() // idle_after 20m, timeout 60m
}

fn start(number: u32, why: StartWhy, continue_pr: Option<u64>) -> Vec<Due> {
    vec![Due::Start {
        step: "S1".into(),
        number,
        why,
        continue_pr,
        start_over: false,
        supersedes: None,
    }]
}

/// Attempt `number` starts over on a new branch, and Navin closes `closes`.
fn start_over(number: u32, why: StartWhy, closes: u64, recorded: bool) -> Vec<Due> {
    vec![Due::Start {
        step: "S1".into(),
        number,
        why,
        continue_pr: None,
        start_over: recorded,
        supersedes: Some(closes),
    }]
}

fn after_red(after_red: AfterRed) -> Agents {
    Agents {
        after_red,
        ..Agents::default()
    }
}

#[test]
fn red_ci_waits_idle_after_for_a_push_then_the_agent_workflow_starts_over_and_its_red_pull_request_is_closed(
) {
    let l = failed(
        &claimed(&handed("workflow"), 12, 5),
        AttemptOutcome::CiRed,
        10,
    );
    assert_eq!(
        due(&l, &agents(), t(29)),
        vec![],
        "19 minutes idle: still waiting"
    );
    assert_eq!(
        due(&l, &agents(), t(30)),
        start_over(2, StartWhy::CiRed, 12, true)
    );
    assert_eq!(
        due(&l, &after_red(AfterRed::Continue), t(30)),
        start(2, StartWhy::CiRed, Some(12)),
        "after_red: continue keeps the red pull request"
    );
}

#[test]
fn copilot_continues_its_red_pull_request_unless_told_to_start_over_and_people_always_continue() {
    let copilot = failed(
        &claimed(&handed("copilot"), 12, 5),
        AttemptOutcome::CiRed,
        10,
    );
    assert_eq!(
        due(&copilot, &agents(), t(30)),
        start(2, StartWhy::CiRed, Some(12))
    );
    assert_eq!(
        due(&copilot, &after_red(AfterRed::StartOver), t(30)),
        start_over(2, StartWhy::CiRed, 12, true)
    );
    let person = failed(
        &claimed(&handed("people"), 12, 5),
        AttemptOutcome::CiRed,
        10,
    );
    assert_eq!(
        due(&person, &after_red(AfterRed::StartOver), t(30)),
        start(2, StartWhy::CiRed, Some(12)),
        "a person's pull request is theirs"
    );
}

#[test]
fn once_the_start_over_is_recorded_the_next_attempt_neither_continues_nor_closes_anything_again() {
    let l = failed(
        &claimed(&handed("workflow"), 12, 5),
        AttemptOutcome::CiRed,
        10,
    );
    let l = run(
        Some(&l),
        Operation::Attempt {
            step: "S1".into(),
            number: 2,
            agent: "workflow".into(),
            start_over: true,
        },
        30,
    );
    let task = l.board.task("S1").expect("S1");
    assert_eq!(continues(task), None, "the brief says start over");
    assert!(task.attempts[0].start_over);
    assert_eq!(due(&l, &agents(), t(31)), vec![]);
}

#[test]
fn a_push_after_red_ci_is_the_agent_continuing_and_nothing_is_started() {
    let l = failed(
        &claimed(&handed("copilot"), 12, 5),
        AttemptOutcome::CiRed,
        10,
    );
    let l = run(Some(&l), Operation::Retry { step: "S1".into() }, 12);
    let l = claimed(&l, 12, 12);
    assert!(l.board.task("S1").expect("S1").open_attempt().is_some());
    assert_eq!(due(&l, &agents(), t(500)), vec![]);
}

#[test]
fn a_closed_pull_request_starts_over_at_once() {
    let l = failed(
        &claimed(&handed("copilot"), 12, 5),
        AttemptOutcome::Closed,
        6,
    );
    assert_eq!(due(&l, &agents(), t(6)), start(2, StartWhy::Closed, None));
}

#[test]
fn an_agent_with_no_pull_request_times_out_and_people_do_not() {
    let l = handed("workflow");
    assert_eq!(due(&l, &agents(), t(59)), vec![]);
    assert_eq!(
        due(&l, &agents(), t(60)),
        vec![Due::TimedOut {
            step: "S1".into(),
            number: 1
        }]
    );
    let l = failed(&l, AttemptOutcome::TimedOut, 60);
    assert_eq!(
        due(&l, &agents(), t(60)),
        start(2, StartWhy::TimedOut, None)
    );
    assert_eq!(due(&handed("people"), &agents(), t(10_000)), vec![]);
    assert_eq!(
        due(&claimed(&handed("workflow"), 3, 1), &agents(), t(10_000)),
        vec![]
    );
}

#[test]
fn retry_and_replan_put_the_step_back_and_the_next_attempt_starts_at_once() {
    let l = failed(
        &claimed(&handed("workflow"), 12, 5),
        AttemptOutcome::CiRed,
        10,
    );
    let retried = run(Some(&l), Operation::Retry { step: "S1".into() }, 11);
    assert_eq!(
        due(&retried, &agents(), t(11)),
        start(2, StartWhy::Requeued, Some(12)),
        "a retried red pull request is continued"
    );
    let replanned = run(
        Some(&claimed(&handed("workflow"), 12, 5)),
        Operation::Replan {
            step: "S1".into(),
            reason: "other approach".into(),
        },
        7,
    );
    assert_eq!(
        due(&replanned, &agents(), t(7)),
        start_over(2, StartWhy::Requeued, 12, false),
        "the agent's replanned pull request is closed as the new attempt starts"
    );
}

#[test]
fn a_paused_mission_starts_nothing_and_resume_restarts_the_cut_off_attempt() {
    let l = claimed(&handed("workflow"), 12, 5);
    let paused = run(
        Some(&l),
        Operation::Pause {
            reason: PauseReason::Manual,
            note: "wait".into(),
        },
        6,
    );
    assert_eq!(due(&paused, &agents(), t(1000)), vec![]);
    let resumed = run(Some(&paused), Operation::Resume { note: "go".into() }, 7);
    assert_eq!(
        due(&resumed, &agents(), t(7)),
        start(2, StartWhy::Resumed, Some(12))
    );
}

#[test]
fn a_started_attempt_is_not_due_again() {
    let l = failed(
        &claimed(&handed("workflow"), 12, 5),
        AttemptOutcome::Closed,
        6,
    );
    let l = run(
        Some(&l),
        Operation::Attempt {
            step: "S1".into(),
            number: 2,
            agent: "workflow".into(),
            start_over: false,
        },
        6,
    );
    assert_eq!(due(&l, &agents(), t(30)), vec![]);
}

#[test]
fn a_step_nobody_was_handed_is_left_to_people() {
    let l = handed("workflow");
    let l = run(
        Some(&l),
        Operation::Done {
            step: "S1".into(),
            evidence: None,
        },
        1,
    );
    // S2 is ready but was never dispatched.
    assert_eq!(due(&l, &agents(), t(1000)), vec![]);
}
