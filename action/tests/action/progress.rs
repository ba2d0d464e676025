//! `mode: progress`: an agent job's usage debited against the mission's budget; past a
//! cap the mission pauses and nothing more is handed out.

use chrono::Utc;
use navin_ledger::model::{Budget, MissionStatus, PauseReason, Validation};
use navin_ledger::ops::{Ctx, InitArgs, NewTask, Operation};
use navin_ledger::Actor;

use crate::harness::Job;

/// A running mission with one test step, S1, capped at 1,000 tokens (as
/// `budgets.max_tokens` caps a mission when it starts).
fn capped_mission(job: &Job) {
    let (store, _dir) = job.store();
    let ctx = Ctx::new(Utc::now(), Actor::Human("octocat".into()));
    let init = Operation::Init(InitArgs {
        goal: "Ship the widget API".into(),
        steps: vec![NewTask {
            id: "S1".into(),
            title: "Widget API".into(),
            validation: Validation::Test,
            ..NewTask::default()
        }],
        budget: Some(Budget {
            max_tokens: Some(1000),
            ..Budget::default()
        }),
        ..InitArgs::default()
    });
    store.transact(&init, &ctx).expect("a capped mission");
}

fn report(job: &Job, run_id: &str, tokens: &str, cost: &str) -> crate::harness::RunResult {
    job.run_with(
        "progress",
        "workflow_dispatch",
        None,
        Some(&job.token),
        &[
            ("INPUT_STEP", "S1"),
            ("INPUT_TOKENS", tokens),
            ("INPUT_COST_USD", cost),
            ("GITHUB_RUN_ID", run_id),
        ],
    )
}

#[test]
fn usage_is_debited_once_per_run_and_a_token_cap_pauses_the_mission() {
    let job = Job::new();
    capped_mission(&job);

    let r = report(&job, "501", "600", "0.40");
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.outputs["tokens-used"], "600");
    assert_eq!(r.outputs["cost-used-usd"], "0.40");
    assert_eq!(r.outputs["mission-status"], "running");

    // The same run's report again (a retried push): nothing more is debited.
    let r = report(&job, "501", "600", "0.40");
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.outputs["tokens-used"], "600");

    let r = report(&job, "502", "600", "$0.35");
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.outputs["mission-status"], "paused");
    let ledger = job.ledger().expect("ledger");
    assert_eq!(ledger.mission.status, MissionStatus::Paused);
    assert_eq!(ledger.mission.pause_reason, Some(PauseReason::Budget));
    assert_eq!(ledger.mission.progress.tokens_used, 1200);
    assert!(
        r.outputs["digest"].contains("PAUSED"),
        "{}",
        r.outputs["digest"]
    );
    // A paused mission hands nothing out.
    let r = job.run("ready-matrix", "workflow_dispatch", None, Some(&job.token));
    assert_eq!(r.outputs["ready-steps"], "[]", "{r:?}");
}

#[test]
fn bad_usage_inputs_are_refused_naming_the_input_and_change_nothing() {
    let job = Job::new();
    let seeded = job.seed(None);
    for (tokens, cost, named) in [
        ("lots", "0", "`tokens`"),
        ("10", "-1", "`cost-usd`"),
        ("10", "NaN", "`cost-usd`"),
    ] {
        let r = report(&job, "601", tokens, cost);
        assert_eq!(r.code, Some(1), "{r:?}");
        assert!(r.stdout.contains(named), "{}", r.stdout);
    }
    let r = job.run_with(
        "progress",
        "workflow_dispatch",
        None,
        Some(&job.token),
        &[("INPUT_STEP", "S9"), ("INPUT_TOKENS", "1")],
    );
    assert_eq!(r.code, Some(1));
    assert!(r.stdout.contains("no step \"S9\""), "{}", r.stdout);
    assert_eq!(
        job.ledger().expect("ledger").mission.version,
        seeded.mission.version
    );
}
