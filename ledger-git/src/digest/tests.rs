//! One snapshot per mission state: what an agent reads at the top of a turn.

use chrono::{TimeZone, Utc};

use super::*;
use crate::model::{Actor, PauseReason, Validation};
use crate::ops::{apply, Ctx, InitArgs, NewTask, Operation, Outcome, ProgressArgs, UpdateArgs};

fn ctx(actor: Actor) -> Ctx {
    let now = Utc
        .with_ymd_and_hms(2026, 12, 1, 9, 0, 0)
        .single()
        .expect("valid time");
    Ctx::new(now, actor)
}

fn step(id: &str, deps: &[&str]) -> NewTask {
    NewTask {
        id: id.into(),
        title: format!("do {id}"),
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        validation: Validation::Test,
        ..NewTask::default()
    }
}

fn then(l: Option<&Ledger>, op: Operation, actor: Actor) -> Ledger {
    match apply(l, &op, &ctx(actor)) {
        Ok(Outcome::Applied(a)) => a.ledger,
        other => panic!("{} not applied: {other:?}", op.name()),
    }
}

fn running() -> Ledger {
    let init = Operation::Init(InitArgs {
        goal: "Add a --since option to history".into(),
        steps: vec![step("S1", &[]), step("S2", &["S1"]), step("S3", &[])],
        ..InitArgs::default()
    });
    let l = then(None, init, Actor::Human("alice".into()));
    then(
        Some(&l),
        Operation::Start { step: "S1".into() },
        Actor::Main,
    )
}

#[test]
fn digest_of_a_running_mission() {
    let d = digest(&running());
    insta::assert_snapshot!(d.text, @r"
    Mission v2 [running]: Add a --since option to history
    Steps: 0/3 done; current: S1; ready: S3
    Stall 0/3; loop no; replans 0/5; tokens 0; cost $0.00
    Last change: started S1
    Protocol:
    1. Read ledger_get and board_next; never guess the queue.
    2. Choose one ready step (all independent ready steps in /cruise and /mission).
    3. Act on that step only.
    4. Verify as its validation says (test, lint, verify, manual, none).
    5. Report with ledger_progress (real_progress, fingerprint, tokens, cost).
    6. Decide: next, retry (within max_retries), ledger_replan, or ledger_pause.
    7. Never mark done without a recorded green run when validation is test, lint or verify.
    ");
    assert_eq!(d.ready, ["S3"]);
    assert_eq!(d.current_step.as_deref(), Some("S1"));
}

#[test]
fn digest_of_a_paused_mission_says_so_first_and_says_to_wait() {
    let l = then(
        Some(&running()),
        Operation::Pause {
            reason: PauseReason::Human,
            note: "reviewing the approach".into(),
        },
        Actor::Human("alice".into()),
    );
    let d = digest(&l);
    assert!(d.paused);
    let first = d.text.lines().next().expect("a line");
    insta::assert_snapshot!(first, @"PAUSED (human): wait for a human to resume the mission; do not start, finish or change steps.");
    assert!(d
        .text
        .contains("Last change: paused (human): reviewing the approach"));
}

#[test]
fn digest_shows_stall_loop_budget_and_missing_info() {
    let mut l = running();
    let mut budget = l.mission.progress.budget.clone();
    budget.max_tokens = Some(50_000);
    budget.max_cost_usd = Some(5.0);
    l = then(
        Some(&l),
        Operation::Update(UpdateArgs {
            budget: Some(budget),
            add_missing_info: vec!["Which date format do users type?".into()],
            reason: "caps and a question".into(),
            ..UpdateArgs::default()
        }),
        Actor::Human("alice".into()),
    );
    for _ in 0..2 {
        l = then(
            Some(&l),
            Operation::Progress(ProgressArgs {
                step: "S1".into(),
                real_progress: false,
                fingerprint: Some("edit:src/history.rs".into()),
                tokens: 1200,
                cost_usd: 0.25,
                ..ProgressArgs::default()
            }),
            Actor::Main,
        );
    }
    let d = digest(&l);
    insta::assert_snapshot!(d.text.lines().take(5).collect::<Vec<_>>().join("\n"), @r"
    Mission v5 [running]: Add a --since option to history
    Steps: 0/3 done; current: S1; ready: S3
    Stall 2/3; loop DETECTED; replans 0/5; tokens 2400/50000; cost $0.50/$5.00
    Missing info (ask, do not invent): Which date format do users type?
    Last change: progress on S1: no progress
    ");
}

#[test]
fn digest_of_a_finished_mission_says_there_is_nothing_left() {
    let mut l = running();
    for s in ["S1", "S2", "S3"] {
        let mut e = crate::model::Evidence::run(crate::model::EvidenceKind::CheckRun, true, "ci");
        e.check_run_id = Some(1);
        e.app_id = Some(2);
        e.head_sha = Some("a".repeat(40));
        e.conclusion = Some("success".into());
        l = then(
            Some(&l),
            Operation::Done {
                step: s.into(),
                evidence: Some(e),
            },
            Actor::App("navin".into()),
        );
    }
    l = then(
        Some(&l),
        Operation::Close {
            status: MissionStatus::Done,
            reason: "shipped".into(),
        },
        Actor::Human("alice".into()),
    );
    let d = digest(&l);
    insta::assert_snapshot!(d.text.lines().take(3).collect::<Vec<_>>().join("\n"), @r"
    The mission is done: there is nothing left to work on.
    Mission v6 [done]: Add a --since option to history
    Steps: 3/3 done; current: none; ready: none
    ");
}

#[test]
fn digest_stays_within_its_bound_for_huge_goals_and_boards() {
    let init = Operation::Init(InitArgs {
        goal: "g".repeat(10_000),
        steps: (0..1000).map(|i| step(&format!("S{i}"), &[])).collect(),
        ..InitArgs::default()
    });
    let mut l = then(None, init, Actor::Human("alice".into()));
    l = then(
        Some(&l),
        Operation::Update(UpdateArgs {
            add_missing_info: (0..50)
                .map(|i| format!("{i} {}", "q".repeat(500)))
                .collect(),
            add_facts: (0..50)
                .map(|i| format!("{i} {}", "f".repeat(500)))
                .collect(),
            reason: "r".repeat(5000),
            ..UpdateArgs::default()
        }),
        Actor::Human("alice".into()),
    );
    let d = digest(&l);
    assert!(d.text.chars().count() <= MAX_CHARS, "{}", d.text.len());
    assert!(d.text.contains("and 992 more"), "{}", d.text);
    assert!(
        d.text.contains("7. Never mark done"),
        "the protocol survives the cut"
    );
    assert_eq!(digest(&l), d, "deterministic");
}

#[test]
fn a_persons_answers_reach_the_digest_newest_first() {
    let init = Operation::Init(InitArgs {
        goal: "Parse dates".into(),
        steps: vec![step("S1", &[])],
        ..InitArgs::default()
    });
    let mut l = then(None, init, Actor::Human("alice".into()));
    for fact in ["Dates are ISO 8601", "Keep the v1 grammar"] {
        l = then(
            Some(&l),
            Operation::Update(UpdateArgs {
                add_facts: vec![fact.into()],
                reason: "answered".into(),
                ..UpdateArgs::default()
            }),
            Actor::Human("alice".into()),
        );
    }
    let d = digest(&l);
    assert_eq!(d.facts, ["Keep the v1 grammar", "Dates are ISO 8601"]);
    assert!(
        d.text
            .contains("Facts from people (use them): Keep the v1 grammar, Dates are ISO 8601"),
        "{}",
        d.text
    );
}
