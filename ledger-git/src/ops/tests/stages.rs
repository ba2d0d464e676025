//! Stage release, automatic checkpoints and pending defaults.

use super::*;

fn staged(policy: StagePolicy) -> Ledger {
    let stage = |id: &str, deps: &[&str], n: u32| NewTask {
        stage: Some(n),
        ..task(id, deps, Validation::None)
    };
    applied(
        None,
        Operation::Init(InitArgs {
            goal: "ship it in stages".into(),
            steps: vec![
                stage("S1", &[], 1),
                stage("S2", &["S1"], 2),
                stage("S3", &["S2"], 3),
            ],
            stages: policy,
            ..InitArgs::default()
        }),
        &human(),
    )
    .ledger
}

fn done(l: &Ledger, step: &str, ctx: &Ctx) -> Ledger {
    run(
        l,
        Operation::Done {
            step: step.into(),
            evidence: None,
        },
        ctx,
    )
}

fn cont() -> Operation {
    Operation::Continue {
        note: "looked at staging".into(),
    }
}

#[test]
fn a_finished_stage_waits_for_continue_before_the_next_is_ready() {
    let l = staged(StagePolicy::Pause);
    assert_eq!(ready_ids(&l), ["S1"]);
    let l = done(&l, "S1", &agent());
    assert!(ready_ids(&l).is_empty(), "stage 2 is held");
    assert_eq!(board_unblocked(&l), ["S2"]);
    let view = l.stages().expect("staged");
    assert!(view.waiting_for_continue);
    assert_eq!((view.current, view.total), (1, 3));
    assert_eq!(view.release, ["S2"]);
    // Waiting for a person is not "blocked".
    assert_eq!(l.mission.status, MissionStatus::Running);
    let a = applied(Some(&l), cont(), &human());
    assert_eq!(ready_ids(&a.ledger), ["S2"]);
    assert!(a.effects.contains(&Effect::NowReady {
        steps: vec!["S2".into()]
    }));
    assert!(a.reason.starts_with("stage 2 released: S2"), "{}", a.reason);
    assert_eq!(
        a.ledger.mission.history.last().map(|h| h.actor.clone()),
        Some(Actor::Human("alice".into()))
    );
}

fn board_unblocked(l: &Ledger) -> Vec<String> {
    l.board.unblocked().iter().map(|t| t.id.clone()).collect()
}

#[test]
fn continue_before_the_stage_is_done_is_refused_and_changes_nothing() {
    let l = staged(StagePolicy::Pause);
    assert_eq!(
        refused(Some(&l), cont(), &human()),
        RuleError::StageNotDone {
            stage: 1,
            open: vec!["S1".into()]
        }
    );
    let l = done(&l, "S1", &agent());
    assert!(matches!(
        refused(Some(&l), cont(), &agent()),
        RuleError::HumanOnly { .. }
    ));
    let l = run(&l, cont(), &human());
    let l = done(&l, "S2", &agent());
    let l = run(&l, cont(), &human());
    let l = done(&l, "S3", &agent());
    assert!(matches!(
        refused(Some(&l), cont(), &human()),
        RuleError::NoStageToRelease { .. } | RuleError::Finished { .. }
    ));
}

#[test]
fn a_held_stage_cannot_be_started_claimed_or_proven_by_anyone_but_a_person() {
    let l = done(&staged(StagePolicy::Pause), "S1", &agent());
    assert_eq!(
        refused(Some(&l), Operation::Start { step: "S2".into() }, &agent()),
        RuleError::StageHeld {
            step: "S2".into(),
            stage: 2,
            released: 1
        }
    );
    let claimed = run(
        &l,
        Operation::Claim {
            step: "S2".into(),
            pr: 7,
            by: NextActor::Subagent("copilot".into()),
        },
        &navin(),
    );
    assert_eq!(
        status(&claimed, "S2"),
        TaskStatus::Planned,
        "an early PR waits"
    );
    assert!(matches!(
        refused(
            Some(&l),
            Operation::Done {
                step: "S2".into(),
                evidence: None
            },
            &navin()
        ),
        RuleError::StageHeld { .. }
    ));
    // A writer's explicit done is their call.
    assert_eq!(status(&done(&l, "S2", &human()), "S2"), TaskStatus::Done);
}

#[test]
fn run_all_releases_each_stage_as_soon_as_the_previous_is_done() {
    let l = staged(StagePolicy::RunAll);
    let l = done(&l, "S1", &agent());
    assert_eq!(ready_ids(&l), ["S2"]);
    assert!(!l.stages().expect("staged").waiting_for_continue);
    assert!(matches!(
        refused(Some(&l), cont(), &human()),
        RuleError::NoStageToRelease { .. }
    ));
}

#[test]
fn a_cruise_mission_or_a_board_without_stages_has_no_gate() {
    let l = chain();
    assert!(l.mission.stage_gate.is_none());
    assert!(l.stages().is_none());
    let cruise = applied(
        None,
        Operation::Init(InitArgs {
            goal: "all at once".into(),
            steps: vec![NewTask {
                stage: Some(1),
                ..task("S1", &[], Validation::None)
            }],
            mode: MissionMode::Cruise,
            ..InitArgs::default()
        }),
        &human(),
    )
    .ledger;
    assert!(cruise.mission.stage_gate.is_none());
}

#[test]
fn checkpoints_are_marked_at_start_before_a_replan_and_before_destructive_work() {
    let l = mission_with(vec![
        task("S1", &[], Validation::None),
        NewTask {
            destructive: Some("deletes src/old.rs".into()),
            ..task("S2", &["S1"], Validation::None)
        },
    ]);
    assert_eq!(l.mission.checkpoints.len(), 1);
    assert_eq!(l.mission.checkpoints[0].version, 1);
    assert_eq!(l.mission.checkpoints[0].reason, "mission start");
    let l = done(&l, "S1", &agent());
    let before = l.mission.version;
    let l = run(&l, Operation::Start { step: "S2".into() }, &agent());
    let mark = l.mission.checkpoints.last().expect("marked");
    assert_eq!(
        mark.version, before,
        "the state just before the step started"
    );
    assert_eq!(mark.reason, "before S2, which deletes src/old.rs");
    let before = l.mission.version;
    let l = run(
        &l,
        Operation::Replan {
            step: "S2".into(),
            reason: "wrong file".into(),
        },
        &human(),
    );
    let mark = l.mission.checkpoints.last().expect("marked");
    assert_eq!(mark.version, before);
    assert!(
        mark.reason.starts_with("before the replan of S2"),
        "{}",
        mark.reason
    );
    // A plain step starting takes no checkpoint.
    let plain = run(&chain(), Operation::Start { step: "S1".into() }, &agent());
    assert_eq!(plain.mission.checkpoints.len(), 1);
}

#[test]
fn a_default_becomes_a_fact_only_once_it_is_due_and_an_answer_cancels_it() {
    let pending = |q: &str, hours: i64| PendingDefault {
        question: q.into(),
        default: "yes".into(),
        due_at: t0() + chrono::Duration::hours(hours),
        after: "48h".into(),
    };
    let l = applied(
        None,
        Operation::Init(InitArgs {
            goal: "ask first".into(),
            missing_info: vec!["Keep the flag?".into(), "Rename it?".into()],
            pending_defaults: vec![pending("Keep the flag?", 48), pending("Rename it?", 48)],
            steps: vec![task("S1", &[], Validation::None)],
            ..InitArgs::default()
        }),
        &human(),
    )
    .ledger;
    assert_eq!(l.mission.pending_defaults.len(), 2);
    assert_eq!(
        refused(Some(&l), Operation::ApplyDefaults, &navin()),
        RuleError::NoDefaultDue
    );
    let answered = run(
        &l,
        Operation::Update(UpdateArgs {
            answers: vec![("Rename it?".into(), "no".into())],
            reason: "answered".into(),
            ..UpdateArgs::default()
        }),
        &human(),
    );
    assert_eq!(answered.mission.pending_defaults.len(), 1);
    let later = Ctx::new(
        t0() + chrono::Duration::hours(49),
        Actor::App("navin".into()),
    );
    let a = applied(Some(&answered), Operation::ApplyDefaults, &later);
    assert_eq!(a.reason, "default applied after 48h");
    assert!(a.ledger.mission.missing_info.is_empty());
    assert!(a
        .ledger
        .mission
        .facts
        .contains(&"Keep the flag? → yes (default)".to_owned()));
    assert!(a
        .ledger
        .mission
        .facts
        .contains(&"Rename it? → no".to_owned()));
    assert!(a.ledger.mission.pending_defaults.is_empty());
}

#[test]
fn a_ready_step_named_by_missing_info_is_blocked_and_others_are_not() {
    let mut l = mission_with(vec![
        NewTask {
            description: Some("Files: src/i18n.rs.".into()),
            ..task("C1", &[], Validation::None)
        },
        task("C2", &[], Validation::None),
        task("C3", &["C2"], Validation::None),
    ]);
    l.mission.missing_info = vec![
        "Which locale should src/i18n.rs default to?".into(),
        "Who signs off on C3?".into(),
        "Is the API frozen?".into(),
    ];
    let blocks = l.info_blocks();
    assert_eq!(
        blocks,
        [InfoBlock {
            step: "C1".into(),
            items: vec!["Which locale should src/i18n.rs default to?".into()]
        }],
        "C3 is not ready yet, and a question naming no step blocks none"
    );
    l.mission.missing_info.clear();
    assert!(l.info_blocks().is_empty());
}
