//! Retries, local replans, stalls, loops and budgets.

use super::*;

#[test]
fn failure_counts_retries_and_retry_requeues_the_step() {
    let l = run(&chain(), Operation::Start { step: "S1".into() }, &agent());
    let a = applied(
        Some(&l),
        Operation::Fail {
            step: "S1".into(),
            evidence: None,
            reason: "flaky".into(),
            outcome: AttemptOutcome::Failed,
        },
        &agent(),
    );
    assert_eq!(status(&a.ledger, "S1"), TaskStatus::Failed);
    assert_eq!(a.ledger.board.task("S1").expect("S1").retry_count, 1);
    assert_eq!(a.ledger.mission.progress.last_result_ok, Some(false));
    let l = run(&a.ledger, Operation::Retry { step: "S1".into() }, &agent());
    assert_eq!(status(&l, "S1"), TaskStatus::Planned);
    assert_eq!(ready_ids(&l), vec!["S1", "S4"]);
}

#[test]
fn blocked_when_nothing_can_move_and_running_again_after_retry() {
    let l = mission_with(vec![task("S1", &[], Validation::None)]);
    let l = run(
        &l,
        Operation::Fail {
            step: "S1".into(),
            evidence: None,
            reason: String::new(),
            outcome: AttemptOutcome::Failed,
        },
        &agent(),
    );
    assert_eq!(l.mission.status, MissionStatus::Blocked);
    let l = run(&l, Operation::Retry { step: "S1".into() }, &agent());
    assert_eq!(l.mission.status, MissionStatus::Running);
}

#[test]
fn max_retries_triggers_local_replan_of_step_and_dependents_only() {
    let l = finish_s1_s2(&chain());
    let l = run(
        &l,
        Operation::Done {
            step: "S4".into(),
            evidence: None,
        },
        &agent(),
    );
    let mut l = run(&l, Operation::Start { step: "S3".into() }, &agent());
    for attempt in 1..=3 {
        if attempt > 1 {
            l = run(&l, Operation::Retry { step: "S3".into() }, &agent());
        }
        l = run(
            &l,
            Operation::Fail {
                step: "S3".into(),
                evidence: None,
                reason: "red".into(),
                outcome: AttemptOutcome::Failed,
            },
            &agent(),
        );
    }
    assert_eq!(
        status(&l, "S3"),
        TaskStatus::Planned,
        "replanned back to planned"
    );
    assert_eq!(l.board.task("S3").expect("S3").retry_count, 0);
    assert_eq!(l.mission.progress.replan_count, 1);
    assert!(l.mission.progress.replan_needed);
    for upstream in ["S1", "S2", "S4"] {
        assert_eq!(
            status(&l, upstream),
            TaskStatus::Done,
            "{upstream} untouched"
        );
    }
}

#[test]
fn replan_needs_a_reason() {
    let err = refused(
        Some(&chain()),
        Operation::Replan {
            step: "S1".into(),
            reason: "  ".into(),
        },
        &human(),
    );
    assert_eq!(
        err,
        RuleError::ReasonRequired {
            operation: "replan"
        }
    );
}

#[test]
fn past_max_replans_the_mission_pauses_for_budget() {
    let mut l = chain();
    for i in 0..5 {
        l = run(
            &l,
            Operation::Replan {
                step: "S1".into(),
                reason: format!("try {i}"),
            },
            &human(),
        );
    }
    assert_eq!(l.mission.progress.replan_count, 5);
    let a = applied(
        Some(&l),
        Operation::Replan {
            step: "S1".into(),
            reason: "again".into(),
        },
        &human(),
    );
    assert_eq!(a.ledger.mission.status, MissionStatus::Paused);
    assert_eq!(a.ledger.mission.pause_reason, Some(PauseReason::Budget));
    assert_eq!(a.ledger.mission.paused_at, Some(t0()));
    assert_eq!(a.ledger.mission.progress.next_actor, NextActor::Human);
}

#[test]
fn stalls_replan_at_max_stalls_then_pause() {
    let mut l = run(&chain(), Operation::Start { step: "S1".into() }, &agent());
    for _ in 0..2 {
        l = run(&l, progress("S1", false, None), &agent());
    }
    assert_eq!(l.mission.progress.stall_count, 2);
    l = run(&l, progress("S1", false, None), &agent());
    assert_eq!(l.mission.progress.replan_count, 1, "third stall replans");
    assert_eq!(status(&l, "S1"), TaskStatus::Planned);
    l = run(&l, Operation::Start { step: "S1".into() }, &agent());
    for _ in 0..3 {
        l = run(&l, progress("S1", false, None), &agent());
    }
    assert_eq!(l.mission.status, MissionStatus::Paused);
    assert_eq!(l.mission.pause_reason, Some(PauseReason::Stall));
}

#[test]
fn real_progress_resets_the_stall_count() {
    let mut l = run(&chain(), Operation::Start { step: "S1".into() }, &agent());
    l = run(&l, progress("S1", false, None), &agent());
    l = run(&l, progress("S1", false, None), &agent());
    l = run(&l, progress("S1", true, None), &agent());
    assert_eq!(l.mission.progress.stall_count, 0);
    l = run(&l, progress("S1", false, None), &agent());
    assert_eq!(l.mission.status, MissionStatus::Running);
}

#[test]
fn repeated_fingerprints_detect_loop_then_replan_then_pause() {
    let mut l = run(&chain(), Operation::Start { step: "S1".into() }, &agent());
    l = run(&l, progress("S1", true, Some("edit:a.rs")), &agent());
    let a = applied(Some(&l), progress("S1", true, Some("edit:a.rs")), &agent());
    assert!(a.ledger.mission.progress.loop_detected);
    assert!(a.effects.contains(&Effect::LoopDetected {
        fingerprint: "edit:a.rs".into()
    }));
    l = run(&a.ledger, progress("S1", true, Some("edit:a.rs")), &agent());
    assert_eq!(
        l.mission.progress.replan_count, 1,
        "second repeat forces a local replan"
    );
    l = run(&l, Operation::Start { step: "S1".into() }, &agent());
    l = run(&l, progress("S1", true, Some("edit:a.rs")), &agent());
    assert_eq!(l.mission.status, MissionStatus::Paused);
    assert_eq!(l.mission.pause_reason, Some(PauseReason::Loop));
}

#[test]
fn token_budget_overrun_pauses_for_budget() {
    let l = mission_with(vec![task("S1", &[], Validation::None)]);
    let l = run(
        &l,
        Operation::Update(UpdateArgs {
            budget: Some(Budget {
                max_tokens: Some(1000),
                ..Budget::default()
            }),
            reason: "cap tokens".into(),
            ..UpdateArgs::default()
        }),
        &human(),
    );
    let l = run(&l, Operation::Start { step: "S1".into() }, &agent());
    let op = |tokens| {
        Operation::Progress(ProgressArgs {
            step: "S1".into(),
            real_progress: true,
            tokens,
            ..ProgressArgs::default()
        })
    };
    let l = run(&l, op(600), &agent());
    assert_eq!(l.mission.status, MissionStatus::Running);
    let l = run(&l, op(600), &agent());
    assert_eq!(l.mission.pause_reason, Some(PauseReason::Budget));
    assert_eq!(l.mission.progress.tokens_used, 1200);
}
