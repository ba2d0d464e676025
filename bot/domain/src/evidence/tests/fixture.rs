//! Small ledgers built through the real operations, and check runs to observe on them.

use chrono::{DateTime, Duration, TimeZone, Utc};
use navin_ledger::model::{Actor, Ledger, Task, Validation};
use navin_ledger::ops::{apply, Ctx, InitArgs, NewTask, Operation, Outcome};

use crate::evidence::{CheckObservation, CheckStatus, RunKind, GITHUB_ACTIONS_APP_ID};

pub const HEAD: &str = "8f14e45fceea167a5a36dedd4bea2543a1b2c3d4";
pub const OLD_HEAD: &str = "c9f0f895fb98ab9159f51fd0297e236d00000001";

pub fn t(minutes: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0)
        .single()
        .expect("valid time")
        + Duration::minutes(minutes)
}

pub fn apply_ok(ledger: Option<&Ledger>, op: Operation) -> Ledger {
    let ctx = Ctx::new(t(0), Actor::Human("alice".into()));
    match apply(ledger, &op, &ctx) {
        Ok(Outcome::Applied(a)) => a.ledger,
        other => panic!("{} was not applied: {other:?}", op.name()),
    }
}

/// A one-step mission whose step `S1` has `validation` and, when `head` is
/// given, is linked to PR #12 at that head.
pub fn ledger_with_step(
    validation: Validation,
    acceptance: Option<&str>,
    head: Option<&str>,
) -> Ledger {
    let ledger = apply_ok(
        None,
        Operation::Init(InitArgs {
            goal: "ship the loader".into(),
            steps: vec![NewTask {
                id: "S1".into(),
                title: "write the loader".into(),
                validation,
                acceptance: acceptance.map(str::to_owned),
                ..NewTask::default()
            }],
            ..InitArgs::default()
        }),
    );
    match head {
        Some(sha) => apply_ok(
            Some(&ledger),
            Operation::Link {
                step: "S1".into(),
                pr: Some(12),
                head_sha: Some(sha.into()),
                branch: Some("navin/S1-loader".into()),
            },
        ),
        None => ledger,
    }
}

pub fn step(validation: Validation, head: Option<&str>) -> Task {
    let ledger = ledger_with_step(validation, None, head);
    ledger.board.task("S1").expect("S1 exists").clone()
}

/// A completed GitHub Actions check run that started at minute `start` and took `minutes`.
pub fn done_run(
    id: u64,
    name: &str,
    conclusion: &str,
    start: i64,
    minutes: i64,
) -> CheckObservation {
    CheckObservation {
        id,
        kind: RunKind::CheckRun,
        name: name.into(),
        app_id: Some(GITHUB_ACTIONS_APP_ID),
        head_sha: HEAD.into(),
        status: CheckStatus::Completed,
        conclusion: Some(conclusion.into()),
        started_at: Some(t(start)),
        completed_at: Some(t(start + minutes)),
        html_url: Some(format!("https://github.com/o/r/runs/{id}")),
        output: String::new(),
        annotations: 0,
    }
}

/// A run of `name` that has not finished.
pub fn open_run(id: u64, name: &str, status: CheckStatus, start: Option<i64>) -> CheckObservation {
    CheckObservation {
        status,
        conclusion: None,
        started_at: start.map(t),
        completed_at: None,
        ..done_run(id, name, "success", 0, 0)
    }
}
