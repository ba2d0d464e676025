//! Mission lifecycle: init, steps, pause, update, rewrite, close, rollback.

use super::*;

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
