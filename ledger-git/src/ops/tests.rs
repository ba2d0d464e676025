//! Rule tests for the pure operations, one per seed rule.

use chrono::{DateTime, TimeZone, Utc};

use super::*;
use crate::model::*;

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0)
        .single()
        .expect("valid time")
}

fn human() -> Ctx {
    Ctx::new(t0(), Actor::Human("alice".into()))
}

fn agent() -> Ctx {
    Ctx::new(t0(), Actor::Main)
}

fn task(id: &str, deps: &[&str], validation: Validation) -> NewTask {
    NewTask {
        id: id.into(),
        title: format!("do {id}"),
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        validation,
        ..NewTask::default()
    }
}

fn applied(ledger: Option<&Ledger>, op: Operation, ctx: &Ctx) -> Applied {
    match apply(ledger, &op, ctx) {
        Ok(Outcome::Applied(a)) => *a,
        other => panic!("{} was not applied: {other:?}", op.name()),
    }
}

fn run(ledger: &Ledger, op: Operation, ctx: &Ctx) -> Ledger {
    applied(Some(ledger), op, ctx).ledger
}

fn refused(ledger: Option<&Ledger>, op: Operation, ctx: &Ctx) -> RuleError {
    match apply(ledger, &op, ctx) {
        Err(e) => e,
        Ok(o) => panic!("{} should have been refused, got {o:?}", op.name()),
    }
}

/// S1 -> S2 -> S3 chain plus an independent S4, all validation none.
fn mission_with(tasks: Vec<NewTask>) -> Ledger {
    applied(
        None,
        Operation::Init(InitArgs {
            goal: "ship it".into(),
            steps: tasks,
            ..InitArgs::default()
        }),
        &human(),
    )
    .ledger
}

fn chain() -> Ledger {
    mission_with(vec![
        task("S1", &[], Validation::None),
        task("S2", &["S1"], Validation::None),
        task("S3", &["S2"], Validation::None),
        task("S4", &[], Validation::None),
    ])
}

fn status(l: &Ledger, id: &str) -> TaskStatus {
    l.board.task(id).expect("task exists").status
}

fn green(kind: EvidenceKind) -> Evidence {
    Evidence::run(kind, true, "all green")
}

fn ready_ids(l: &Ledger) -> Vec<String> {
    l.board.ready().iter().map(|t| t.id.clone()).collect()
}

#[test]
fn init_creates_running_mission_at_version_one_with_history() {
    let l = chain();
    assert_eq!(l.mission.status, MissionStatus::Running);
    assert_eq!(l.mission.version, 1);
    assert_eq!(l.mission.history.len(), 1);
    assert_eq!(l.mission.history[0].actor, Actor::Human("alice".into()));
    assert_eq!(l.steps().len(), 4);
    assert_eq!(l.mission.progress.budget, Budget::default());
}

#[test]
fn init_refuses_to_overwrite_a_live_mission_without_replace() {
    let l = chain();
    let err = refused(
        Some(&l),
        Operation::Init(InitArgs {
            goal: "other".into(),
            ..InitArgs::default()
        }),
        &human(),
    );
    assert!(matches!(err, RuleError::MissionLive { .. }), "{err}");
}

#[test]
fn init_with_replace_starts_a_new_mission_and_keeps_counting_versions() {
    let l = run(&chain(), Operation::Start { step: "S1".into() }, &agent());
    let replaced = run(
        &l,
        Operation::Init(InitArgs {
            goal: "other".into(),
            replace: true,
            ..InitArgs::default()
        }),
        &human(),
    );
    assert_eq!(replaced.mission.goal, "other");
    assert_eq!(replaced.mission.version, 3);
    assert!(replaced.board.tasks.is_empty());
    assert!(replaced.mission.history[0]
        .reason
        .contains("replaced live mission"));
}

#[test]
fn init_after_a_closed_mission_needs_no_replace() {
    let l = run(
        &chain(),
        Operation::Close {
            status: MissionStatus::Failed,
            reason: "abandoned".into(),
        },
        &human(),
    );
    let next = run(
        &l,
        Operation::Init(InitArgs {
            goal: "next".into(),
            ..InitArgs::default()
        }),
        &human(),
    );
    assert_eq!(next.mission.status, MissionStatus::Running);
}

#[test]
fn every_change_bumps_version_and_appends_history_with_actor() {
    let l = chain();
    let l2 = run(&l, Operation::Start { step: "S1".into() }, &agent());
    assert_eq!(l2.mission.version, 2);
    let last = l2.mission.history.last().expect("history");
    assert_eq!(
        (last.version, last.operation.as_str(), &last.actor),
        (2, "start", &Actor::Main)
    );
    let l3 = run(
        &l2,
        Operation::Update(UpdateArgs {
            add_facts: vec!["the API is v3".into()],
            reason: "learned".into(),
            ..UpdateArgs::default()
        }),
        &human(),
    );
    assert_eq!(l3.mission.version, 3);
    assert_eq!(
        l3.mission
            .history
            .last()
            .expect("history")
            .actor
            .to_string(),
        "human:alice"
    );
    assert_eq!(l3.mission.facts, vec!["the API is v3".to_string()]);
}

#[test]
fn add_step_rejects_unknown_dependency() {
    let err = refused(
        Some(&chain()),
        Operation::AddSteps(vec![task("S5", &["S9"], Validation::None)]),
        &human(),
    );
    assert_eq!(
        err,
        RuleError::UnknownDependency {
            step: "S5".into(),
            dependency: "S9".into()
        }
    );
}

#[test]
fn add_step_rejects_duplicate_id() {
    let err = refused(
        Some(&chain()),
        Operation::AddSteps(vec![task("S2", &[], Validation::None)]),
        &human(),
    );
    assert_eq!(err, RuleError::DuplicateStep { id: "S2".into() });
}

#[test]
fn add_steps_rejects_a_cycle_and_names_it() {
    let err = refused(
        Some(&chain()),
        Operation::AddSteps(vec![
            task("A", &["B"], Validation::None),
            task("B", &["A"], Validation::None),
        ]),
        &human(),
    );
    match err {
        RuleError::Cycle { path } => {
            assert_eq!(path.first(), path.last());
            assert!(
                path.contains(&"A".to_string()) && path.contains(&"B".to_string()),
                "{path:?}"
            );
        }
        other => panic!("expected a cycle, got {other}"),
    }
}

#[test]
fn add_step_rejects_self_dependency_and_bad_ids() {
    let err = refused(
        Some(&chain()),
        Operation::AddSteps(vec![task("S5", &["S5"], Validation::None)]),
        &human(),
    );
    assert_eq!(err, RuleError::SelfDependency { step: "S5".into() });
    let err = refused(
        Some(&chain()),
        Operation::AddSteps(vec![task("has space", &[], Validation::None)]),
        &human(),
    );
    assert!(matches!(err, RuleError::InvalidStepId { .. }));
}

#[test]
fn ready_queue_holds_planned_steps_whose_dependencies_are_done() {
    let l = chain();
    assert_eq!(ready_ids(&l), vec!["S1", "S4"]);
    let l = run(&l, Operation::Start { step: "S1".into() }, &agent());
    assert_eq!(ready_ids(&l), vec!["S4"]);
    let a = applied(
        Some(&l),
        Operation::Done {
            step: "S1".into(),
            evidence: None,
        },
        &agent(),
    );
    assert_eq!(ready_ids(&a.ledger), vec!["S2", "S4"]);
    assert!(a.effects.contains(&Effect::NowReady {
        steps: vec!["S2".into()]
    }));
}

#[test]
fn start_refuses_a_step_whose_dependencies_are_not_done() {
    let err = refused(
        Some(&chain()),
        Operation::Start { step: "S3".into() },
        &agent(),
    );
    assert_eq!(
        err,
        RuleError::DependenciesNotDone {
            step: "S3".into(),
            operation: "start",
            pending: vec!["S2".into()]
        }
    );
}

#[test]
fn done_is_refused_without_evidence_for_test_lint_and_verify_steps() {
    for v in [Validation::Test, Validation::Lint, Validation::Verify] {
        let l = mission_with(vec![task("S1", &[], v)]);
        let err = refused(
            Some(&l),
            Operation::Done {
                step: "S1".into(),
                evidence: None,
            },
            &human(),
        );
        assert!(
            matches!(err, RuleError::EvidenceRequired { validation, .. } if validation == v),
            "{err}"
        );
        assert!(
            err.to_string()
                .contains(&format!("S1 has validation '{v}'")),
            "{err}"
        );
    }
}

#[test]
fn done_on_a_test_step_refuses_prose_even_from_a_human() {
    let l = mission_with(vec![task("S1", &[], Validation::Test)]);
    let err = refused(
        Some(&l),
        Operation::Done {
            step: "S1".into(),
            evidence: Some(Evidence::prose("I ran it")),
        },
        &human(),
    );
    assert!(matches!(err, RuleError::ProseNotAccepted { .. }), "{err}");
}

#[test]
fn done_on_a_test_step_accepts_green_check_run_or_test_run_but_not_lint_run() {
    for kind in [
        EvidenceKind::CheckRun,
        EvidenceKind::WorkflowRun,
        EvidenceKind::TestRun,
    ] {
        let l = mission_with(vec![task("S1", &[], Validation::Test)]);
        let l = run(
            &l,
            Operation::Done {
                step: "S1".into(),
                evidence: Some(green(kind)),
            },
            &agent(),
        );
        assert_eq!(status(&l, "S1"), TaskStatus::Done, "{kind}");
        let recorded = &l.board.task("S1").expect("S1").evidence[0];
        assert_eq!(recorded.recorded_by, Some(Actor::Main));
    }
    let l = mission_with(vec![task("S1", &[], Validation::Test)]);
    let err = refused(
        Some(&l),
        Operation::Done {
            step: "S1".into(),
            evidence: Some(green(EvidenceKind::LintRun)),
        },
        &agent(),
    );
    assert!(matches!(err, RuleError::EvidenceRequired { .. }), "{err}");
}

#[test]
fn done_refuses_red_evidence() {
    let l = mission_with(vec![task("S1", &[], Validation::Test)]);
    let red = Evidence::run(EvidenceKind::CheckRun, false, "2 tests failed");
    let err = refused(
        Some(&l),
        Operation::Done {
            step: "S1".into(),
            evidence: Some(red),
        },
        &agent(),
    );
    assert!(matches!(err, RuleError::EvidenceNotGreen { .. }), "{err}");
}

#[test]
fn done_counts_green_evidence_recorded_earlier() {
    let l = mission_with(vec![task("S1", &[], Validation::Lint)]);
    let l = run(
        &l,
        Operation::RecordEvidence {
            step: "S1".into(),
            evidence: green(EvidenceKind::CheckRun),
        },
        &agent(),
    );
    let l = run(
        &l,
        Operation::Done {
            step: "S1".into(),
            evidence: None,
        },
        &agent(),
    );
    assert_eq!(status(&l, "S1"), TaskStatus::Done);
}

#[test]
fn manual_step_closes_with_prose_from_a_human_but_not_from_an_agent() {
    let mut s = task("S1", &[], Validation::Manual);
    s.acceptance = Some("the docs read well".into());
    let l = mission_with(vec![s]);
    let err = refused(
        Some(&l),
        Operation::Done {
            step: "S1".into(),
            evidence: Some(Evidence::prose("looks good")),
        },
        &agent(),
    );
    assert!(matches!(err, RuleError::ProseNotAccepted { .. }), "{err}");
    let done = run(
        &l,
        Operation::Done {
            step: "S1".into(),
            evidence: Some(Evidence::prose("looks good")),
        },
        &human(),
    );
    assert_eq!(status(&done, "S1"), TaskStatus::Done);
}

#[test]
fn acceptance_criteria_require_evidence_even_without_validation() {
    let mut s = task("S1", &[], Validation::None);
    s.acceptance = Some("p99 under 10 ms".into());
    let l = mission_with(vec![s]);
    let err = refused(
        Some(&l),
        Operation::Done {
            step: "S1".into(),
            evidence: None,
        },
        &human(),
    );
    assert_eq!(
        err,
        RuleError::AcceptanceEvidenceRequired { step: "S1".into() }
    );
    let err = refused(
        Some(&l),
        Operation::Done {
            step: "S1".into(),
            evidence: Some(Evidence::prose("fast")),
        },
        &human(),
    );
    assert!(matches!(err, RuleError::ProseNotAccepted { .. }));
    let ok = run(
        &l,
        Operation::Done {
            step: "S1".into(),
            evidence: Some(green(EvidenceKind::VerifyRun)),
        },
        &agent(),
    );
    assert_eq!(status(&ok, "S1"), TaskStatus::Done);
}

#[test]
fn step_without_validation_or_acceptance_is_done_without_evidence() {
    let l = run(
        &chain(),
        Operation::Done {
            step: "S4".into(),
            evidence: None,
        },
        &agent(),
    );
    assert_eq!(status(&l, "S4"), TaskStatus::Done);
}

#[test]
fn failure_counts_retries_and_retry_requeues_the_step() {
    let l = run(&chain(), Operation::Start { step: "S1".into() }, &agent());
    let a = applied(
        Some(&l),
        Operation::Fail {
            step: "S1".into(),
            evidence: None,
            reason: "flaky".into(),
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
        },
        &agent(),
    );
    assert_eq!(l.mission.status, MissionStatus::Blocked);
    let l = run(&l, Operation::Retry { step: "S1".into() }, &agent());
    assert_eq!(l.mission.status, MissionStatus::Running);
}

fn finish_s1_s2(l: &Ledger) -> Ledger {
    let l = run(
        l,
        Operation::Done {
            step: "S1".into(),
            evidence: None,
        },
        &agent(),
    );
    run(
        &l,
        Operation::Done {
            step: "S2".into(),
            evidence: None,
        },
        &agent(),
    )
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
fn local_replan_resets_transitive_dependents_and_keeps_upstream_evidence() {
    let l = mission_with(vec![
        task("A", &[], Validation::Test),
        task("B", &["A"], Validation::None),
        task("C", &["B"], Validation::None),
        task("D", &["C"], Validation::None),
        task("E", &[], Validation::None),
    ]);
    let l = run(
        &l,
        Operation::Done {
            step: "A".into(),
            evidence: Some(green(EvidenceKind::CheckRun)),
        },
        &agent(),
    );
    let l = run(
        &l,
        Operation::Done {
            step: "B".into(),
            evidence: None,
        },
        &agent(),
    );
    let l = run(
        &l,
        Operation::Done {
            step: "C".into(),
            evidence: None,
        },
        &agent(),
    );
    let a = applied(
        Some(&l),
        Operation::Replan {
            step: "B".into(),
            reason: "wrong approach".into(),
        },
        &human(),
    );
    let l = a.ledger;
    assert_eq!(
        [
            status(&l, "A"),
            status(&l, "B"),
            status(&l, "C"),
            status(&l, "D")
        ],
        [
            TaskStatus::Done,
            TaskStatus::Planned,
            TaskStatus::Planned,
            TaskStatus::Planned
        ]
    );
    assert_eq!(
        l.board.task("A").expect("A").evidence.len(),
        1,
        "upstream evidence kept"
    );
    assert!(a
        .effects
        .iter()
        .any(|e| matches!(e, Effect::Replanned { steps, .. } if steps == &["B", "C", "D"])));
    assert!(l
        .mission
        .history
        .last()
        .expect("h")
        .reason
        .contains("wrong approach"));
    assert_eq!(ready_ids(&l), vec!["B", "E"]);
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

fn progress(step: &str, real: bool, fp: Option<&str>) -> Operation {
    Operation::Progress(ProgressArgs {
        step: step.into(),
        real_progress: real,
        fingerprint: fp.map(String::from),
        ..ProgressArgs::default()
    })
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

#[test]
fn paused_mission_refuses_everything_but_resume_update_and_close() {
    let l = run(
        &chain(),
        Operation::Pause {
            reason: PauseReason::Human,
            note: "lunch".into(),
        },
        &human(),
    );
    assert_eq!(l.mission.status, MissionStatus::Paused);
    for op in [
        Operation::Start { step: "S1".into() },
        Operation::Done {
            step: "S4".into(),
            evidence: None,
        },
        Operation::AddSteps(vec![task("S9", &[], Validation::None)]),
        Operation::Replan {
            step: "S1".into(),
            reason: "x".into(),
        },
    ] {
        let err = refused(Some(&l), op, &agent());
        assert_eq!(
            err,
            RuleError::Paused {
                reason: PauseReason::Human
            }
        );
    }
    let l2 = run(
        &l,
        Operation::Update(UpdateArgs {
            add_missing_info: vec!["which region?".into()],
            reason: "ask".into(),
            ..UpdateArgs::default()
        }),
        &human(),
    );
    assert_eq!(l2.mission.status, MissionStatus::Paused);
    let l3 = run(
        &l2,
        Operation::Resume {
            note: "back".into(),
        },
        &human(),
    );
    assert_eq!(l3.mission.status, MissionStatus::Running);
    assert_eq!(
        (l3.mission.paused_at, l3.mission.pause_reason),
        (None, None)
    );
}

#[test]
fn resolving_missing_info_moves_it_to_facts() {
    let l = run(
        &chain(),
        Operation::Update(UpdateArgs {
            add_missing_info: vec!["region".into()],
            reason: "ask".into(),
            ..UpdateArgs::default()
        }),
        &human(),
    );
    let l = run(
        &l,
        Operation::Update(UpdateArgs {
            resolve_missing_info: vec!["region".into()],
            reason: "answered".into(),
            ..UpdateArgs::default()
        }),
        &human(),
    );
    assert!(l.mission.missing_info.is_empty());
    assert_eq!(l.mission.facts, vec!["region".to_string()]);
}

#[test]
fn update_without_changes_is_refused() {
    let err = refused(
        Some(&chain()),
        Operation::Update(UpdateArgs {
            reason: "nothing".into(),
            ..UpdateArgs::default()
        }),
        &human(),
    );
    assert_eq!(err, RuleError::NothingToUpdate);
}

#[test]
fn whole_plan_rewrite_only_with_a_changed_goal_and_says_so() {
    let l = chain();
    let err = refused(
        Some(&l),
        Operation::Rewrite {
            goal: "ship it".into(),
            reason: "redo".into(),
            steps: vec![],
        },
        &human(),
    );
    assert_eq!(err, RuleError::GoalUnchanged);
    let l = run(
        &l,
        Operation::Rewrite {
            goal: "ship it on ARM too".into(),
            reason: "scope grew".into(),
            steps: vec![task("A1", &[], Validation::None)],
        },
        &human(),
    );
    assert_eq!(l.mission.goal, "ship it on ARM too");
    assert_eq!(l.board.tasks.len(), 1);
    assert!(l
        .mission
        .history
        .last()
        .expect("h")
        .reason
        .starts_with("goal changed"));
}

#[test]
fn close_done_needs_every_step_done_and_close_failed_does_not() {
    let l = chain();
    let err = refused(
        Some(&l),
        Operation::Close {
            status: MissionStatus::Done,
            reason: String::new(),
        },
        &human(),
    );
    assert!(matches!(err, RuleError::StepsNotDone { ref pending } if pending.len() == 4));
    let l = run(
        &l,
        Operation::Close {
            status: MissionStatus::Failed,
            reason: "dropped".into(),
        },
        &human(),
    );
    assert_eq!(l.mission.status, MissionStatus::Failed);
    let err = refused(Some(&l), Operation::Start { step: "S1".into() }, &agent());
    assert!(matches!(err, RuleError::Finished { .. }));
}

#[test]
fn a_repeated_operation_id_is_recognised_and_not_applied_twice() {
    let l = chain();
    let ctx = agent().with_op_id("delivery-1");
    let once = run(&l, Operation::Start { step: "S1".into() }, &ctx);
    let again =
        apply(Some(&once), &Operation::Start { step: "S1".into() }, &ctx).expect("not an error");
    assert_eq!(again, Outcome::AlreadyApplied { version: 2 });
}

#[test]
fn draft_missions_wait_for_activation() {
    let l = applied(
        None,
        Operation::Init(InitArgs {
            goal: "g".into(),
            draft: true,
            steps: vec![task("S1", &[], Validation::None)],
            ..InitArgs::default()
        }),
        &human(),
    )
    .ledger;
    assert_eq!(l.mission.status, MissionStatus::Draft);
    assert_eq!(
        refused(Some(&l), Operation::Start { step: "S1".into() }, &agent()),
        RuleError::Draft
    );
    let l = run(&l, Operation::Activate, &human());
    assert_eq!(l.mission.status, MissionStatus::Running);
}

#[test]
fn linking_a_new_head_drops_runs_for_the_old_head() {
    let l = mission_with(vec![task("S1", &[], Validation::Test)]);
    let mut old = green(EvidenceKind::CheckRun);
    old.head_sha = Some("aaaa".into());
    let l = run(
        &l,
        Operation::Link {
            step: "S1".into(),
            pr: Some(7),
            head_sha: Some("aaaa".into()),
            branch: None,
        },
        &agent(),
    );
    let l = run(
        &l,
        Operation::RecordEvidence {
            step: "S1".into(),
            evidence: old,
        },
        &agent(),
    );
    let l = run(
        &l,
        Operation::Link {
            step: "S1".into(),
            pr: Some(7),
            head_sha: Some("bbbb".into()),
            branch: None,
        },
        &agent(),
    );
    assert!(l.board.task("S1").expect("S1").evidence.is_empty());
    let err = refused(
        Some(&l),
        Operation::Done {
            step: "S1".into(),
            evidence: None,
        },
        &agent(),
    );
    assert!(matches!(err, RuleError::EvidenceRequired { .. }));
}

#[test]
fn history_keeps_a_bounded_window() {
    let mut l = chain();
    for i in 0..(HISTORY_WINDOW + 20) {
        l = run(
            &l,
            Operation::Update(UpdateArgs {
                add_facts: vec![format!("fact {i}")],
                reason: "note".into(),
                ..UpdateArgs::default()
            }),
            &human(),
        );
    }
    assert_eq!(l.mission.history.len(), HISTORY_WINDOW);
    assert_eq!(
        l.mission.history.last().expect("h").version,
        l.mission.version
    );
}

#[test]
fn rollback_restores_old_content_as_a_new_version() {
    let v1 = chain();
    let v2 = run(
        &v1,
        Operation::Done {
            step: "S4".into(),
            evidence: None,
        },
        &agent(),
    );
    let v3 = run(
        &v2,
        Operation::Rollback {
            to_version: 1,
            target: Box::new(v1.clone()),
        },
        &human(),
    );
    assert_eq!(v3.mission.version, 3);
    assert_eq!(status(&v3, "S4"), TaskStatus::Planned);
    assert_eq!(v3.mission.history.len(), 3);
    let err = refused(
        Some(&v2),
        Operation::Rollback {
            to_version: 1,
            target: Box::new(v1),
        },
        &agent(),
    );
    assert!(matches!(err, RuleError::HumanOnly { .. }));
}

#[test]
fn actors_round_trip_and_reject_garbage() {
    for s in [
        "human:alice",
        "main",
        "subagent:coder",
        "app:github-actions",
    ] {
        assert_eq!(s.parse::<Actor>().expect("valid").to_string(), s);
    }
    for bad in ["", "human:", "robot:x", "human:a b"] {
        assert!(bad.parse::<Actor>().is_err(), "{bad:?} should be rejected");
    }
}
