//! Attempts: each start applies once, whatever ends the work ends the attempt, and spend and failures land on the attempt they belong to.

use super::*;
use crate::model::{AttemptOutcome, CiRound, MissionStatus, PauseReason};

fn later(ctx: &Ctx, minutes: i64) -> Ctx {
    let mut c = ctx.clone();
    c.now = ctx.now + chrono::Duration::minutes(minutes);
    c
}

fn dispatched(l: &Ledger, step: &str, agent: &str) -> Ledger {
    run(
        l,
        Operation::Dispatched {
            step: step.into(),
            issue: 7,
            agent: agent.into(),
        },
        &navin(),
    )
}

fn attempt(step: &str, number: u32) -> Operation {
    Operation::Attempt {
        step: step.into(),
        number,
        agent: "workflow".into(),
        start_over: false,
    }
}

fn fail(step: &str, outcome: AttemptOutcome) -> Operation {
    Operation::Fail {
        step: step.into(),
        evidence: None,
        reason: "checks red".into(),
        outcome,
    }
}

fn attempts(l: &Ledger, step: &str) -> Vec<crate::model::Attempt> {
    l.board.task(step).expect("step").attempts.clone()
}

#[test]
fn a_dispatch_opens_the_first_attempt_and_a_pull_request_joins_it() {
    let l = dispatched(&chain(), "S1", "workflow");
    let a = attempts(&l, "S1");
    assert_eq!(a.len(), 1);
    assert_eq!((a[0].number, a[0].agent.as_str()), (1, "workflow"));
    assert!(a[0].is_open());
    let l = run(
        &l,
        Operation::Claim {
            step: "S1".into(),
            pr: 40,
            by: NextActor::Subagent("claude".into()),
        },
        &later(&navin(), 5),
    );
    let a = attempts(&l, "S1");
    assert_eq!(a.len(), 1, "the agent's PR is the same attempt: {a:?}");
    assert_eq!(a[0].pr, Some(40));
}

#[test]
fn a_pull_request_without_a_dispatch_is_an_attempt_of_its_own_author() {
    let l = run(
        &chain(),
        Operation::Claim {
            step: "S1".into(),
            pr: 3,
            by: NextActor::Human,
        },
        &navin(),
    );
    let a = attempts(&l, "S1");
    assert_eq!(
        (a.len(), a[0].agent.as_str(), a[0].pr),
        (1, "human", Some(3))
    );
}

#[test]
fn a_failure_ends_the_attempt_and_the_next_start_applies_once() {
    let l = dispatched(&chain(), "S1", "workflow");
    let l = run(&l, fail("S1", AttemptOutcome::CiRed), &later(&navin(), 10));
    let a = attempts(&l, "S1");
    assert_eq!(a[0].outcome, Some(AttemptOutcome::CiRed));
    assert_eq!(a[0].ended_at, Some(t0() + chrono::Duration::minutes(10)));
    assert_eq!(status(&l, "S1"), TaskStatus::Failed);

    let l = run(&l, attempt("S1", 2), &later(&navin(), 30));
    assert_eq!(
        status(&l, "S1"),
        TaskStatus::Planned,
        "the attempt is the retry"
    );
    let a = attempts(&l, "S1");
    assert_eq!(a.len(), 2);
    assert!(a[1].is_open());

    // The same start again (a redelivery with another op id, a racing worker) and a
    // start that skips a number are refused: nothing is applied twice.
    for n in [2, 3, 1] {
        let err = refused(Some(&l), attempt("S1", n), &navin());
        assert!(
            matches!(err, RuleError::AttemptTaken { number, .. } if number == n),
            "{err:?}"
        );
    }
}

#[test]
fn past_max_retries_the_failure_replans_and_the_replan_starts_a_fresh_count() {
    let mut l = chain();
    let max = l.board.task("S1").expect("S1").max_retries;
    for n in 1..=max {
        if n > 1 {
            l = run(&l, attempt("S1", n), &navin());
        } else {
            l = dispatched(&l, "S1", "workflow");
        }
        l = run(&l, fail("S1", AttemptOutcome::CiRed), &navin());
    }
    assert_eq!(
        status(&l, "S1"),
        TaskStatus::Planned,
        "retries exhausted: replanned"
    );
    assert_eq!(l.mission.progress.replan_count, 1);
    assert_eq!(
        attempts(&l, "S1").len() as u32,
        max,
        "every attempt is kept"
    );
    let l = run(&l, attempt("S1", max + 1), &navin());
    assert_eq!(l.board.task("S1").expect("S1").retry_count, 0);
}

#[test]
fn a_replan_ends_the_open_attempts_of_the_steps_it_resets() {
    let l = dispatched(&chain(), "S1", "copilot");
    let l = run(
        &l,
        Operation::Replan {
            step: "S1".into(),
            reason: "wrong approach".into(),
        },
        &human(),
    );
    let a = attempts(&l, "S1");
    assert_eq!(a[0].outcome, Some(AttemptOutcome::Replanned));
    assert_eq!(a[0].note.as_deref(), Some("wrong approach"));
}

#[test]
fn a_replan_after_an_attempt_ended_marks_it_so_the_next_one_starts_over() {
    let l = dispatched(&chain(), "S1", "workflow");
    let l = run(
        &l,
        Operation::Fail {
            step: "S1".into(),
            evidence: None,
            reason: "ci/test failed".into(),
            outcome: AttemptOutcome::CiRed,
        },
        &navin(),
    );
    assert_eq!(attempts(&l, "S1")[0].outcome, Some(AttemptOutcome::CiRed));
    assert!(
        !attempts(&l, "S1")[0].start_over,
        "red CI alone is continued"
    );
    let l = run(
        &l,
        Operation::Replan {
            step: "S1".into(),
            reason: "wrong approach".into(),
        },
        &human(),
    );
    let a = attempts(&l, "S1");
    assert_eq!(
        a[0].outcome,
        Some(AttemptOutcome::CiRed),
        "what happened stays"
    );
    assert!(a[0].start_over, "{a:?}");
}

#[test]
fn a_pause_cuts_off_the_open_attempt_and_a_paused_mission_starts_nothing() {
    let l = dispatched(&chain(), "S1", "workflow");
    let l = run(
        &l,
        Operation::Pause {
            reason: PauseReason::Manual,
            note: "lunch".into(),
        },
        &human(),
    );
    assert_eq!(attempts(&l, "S1")[0].outcome, Some(AttemptOutcome::Paused));
    let err = refused(Some(&l), attempt("S1", 2), &navin());
    assert!(matches!(err, RuleError::Paused { .. }), "{err:?}");
    let l = run(
        &l,
        Operation::Resume {
            note: "back".into(),
        },
        &human(),
    );
    assert_eq!(l.mission.status, MissionStatus::Running);
    let l = run(&l, attempt("S1", 2), &navin());
    assert!(attempts(&l, "S1")[1].is_open());
}

#[test]
fn spend_and_a_red_rounds_failure_go_on_the_attempt() {
    let l = dispatched(&chain(), "S1", "workflow");
    let l = run(
        &l,
        Operation::Claim {
            step: "S1".into(),
            pr: 9,
            by: NextActor::Subagent("claude".into()),
        },
        &navin(),
    );
    let l = run(
        &l,
        Operation::Usage {
            step: "S1".into(),
            tokens: 1200,
            cost_usd: 0.25,
        },
        &navin(),
    );
    let l = run(
        &l,
        Operation::CiRound(
            CiRound {
                head_sha: "a".repeat(40),
                green: vec![],
                red: vec!["test".into()],
                fingerprint: Some("fp:1".into()),
                excerpt: "test: failure\nassertion failed: left == right".into(),
                changed: Vec::new(),
            },
            "S1".into(),
        ),
        &navin(),
    );
    let a = &attempts(&l, "S1")[0];
    assert_eq!((a.tokens, a.cost_usd), (1200, 0.25));
    let failure = a.failure.as_ref().expect("failure recorded");
    assert_eq!(failure.checks, vec!["test".to_owned()]);
    assert!(failure.excerpt.contains("assertion failed"), "{failure:?}");
    assert_eq!(
        l.board
            .task("S1")
            .expect("S1")
            .ci_round
            .as_ref()
            .map(|r| r.excerpt.as_str()),
        Some(""),
        "the excerpt lives on the attempt only"
    );
    // Usage reported after the attempt ended still belongs to it.
    let l = run(&l, fail("S1", AttemptOutcome::CiRed), &navin());
    let l = run(
        &l,
        Operation::Usage {
            step: "S1".into(),
            tokens: 300,
            cost_usd: 0.0,
        },
        &navin(),
    );
    assert_eq!(attempts(&l, "S1")[0].tokens, 1500);
}

#[test]
fn done_ends_the_attempt_as_done() {
    let l = dispatched(&chain(), "S1", "people");
    let l = run(
        &l,
        Operation::Done {
            step: "S1".into(),
            evidence: None,
        },
        &human(),
    );
    assert_eq!(attempts(&l, "S1")[0].outcome, Some(AttemptOutcome::Done));
}

#[test]
fn a_ledger_without_attempts_reads_and_writes_the_same() {
    let l = chain();
    let json = serde_json::to_string(&l.board).expect("encode");
    assert!(!json.contains("attempts"), "{json}");
}

#[test]
fn an_agent_run_without_a_spend_report_is_marked_and_debits_nothing() {
    // The workflow agent's runner said nothing about its spend.
    let l = dispatched(&chain(), "S1", "workflow");
    let l = run(
        &l,
        Operation::UsageUnreported { step: "S1".into() },
        &navin(),
    );
    let a = attempts(&l, "S1");
    assert!(a[0].spend_unreported);
    assert_eq!(l.mission.progress.tokens_used, 0);
    // Copilot reports nowhere Navin reads: its attempt ends marked.
    let l = dispatched(&chain(), "S1", "copilot");
    let l = run(&l, fail("S1", AttemptOutcome::CiRed), &navin());
    assert!(attempts(&l, "S1")[0].spend_unreported);
    // A reported run is not marked.
    let l = dispatched(&chain(), "S1", "copilot");
    let l = run(
        &l,
        Operation::Usage {
            step: "S1".into(),
            tokens: 10,
            cost_usd: 0.0,
        },
        &navin(),
    );
    let l = run(&l, fail("S1", AttemptOutcome::CiRed), &navin());
    assert!(!attempts(&l, "S1")[0].spend_unreported);
}

#[test]
fn an_attempt_that_starts_over_unlinks_the_last_head_and_one_that_continues_keeps_it() {
    let head = "a".repeat(40);
    let linked = |agent: &str| {
        let l = dispatched(&chain(), "S1", agent);
        let l = run(
            &l,
            Operation::Link {
                step: "S1".into(),
                pr: Some(40),
                head_sha: Some(head.clone()),
                branch: Some("navin/S1-lexer".into()),
            },
            &navin(),
        );
        run(&l, fail("S1", AttemptOutcome::CiRed), &navin())
    };
    let start = |l: &Ledger, start_over: bool| {
        let op = Operation::Attempt {
            step: "S1".into(),
            number: 2,
            agent: "workflow".into(),
            start_over,
        };
        run(l, op, &later(&navin(), 30))
    };
    let task = |l: &Ledger| l.board.task("S1").cloned().expect("S1");

    let fresh = start(&linked("workflow"), true);
    assert_eq!(
        task(&fresh).links.head_sha,
        None,
        "a late run there proves nothing"
    );
    assert!(task(&fresh).attempts[0].start_over);

    let continued = start(&linked("workflow"), false);
    assert_eq!(
        task(&continued).links.head_sha.as_deref(),
        Some(head.as_str())
    );
}
