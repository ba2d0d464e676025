//! Rule tests for the pure operations, one per seed rule: shared builders.

use chrono::{DateTime, TimeZone, Utc};

use super::*;
use crate::model::*;

pub(super) fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 30, 12, 0, 0)
        .single()
        .expect("valid time")
}

pub(super) fn human() -> Ctx {
    Ctx::new(t0(), Actor::Human("alice".into()))
}

pub(super) fn agent() -> Ctx {
    Ctx::new(t0(), Actor::Main)
}

/// Navin itself, recording CI evidence it read from GitHub.
pub(super) fn navin() -> Ctx {
    Ctx::new(t0(), Actor::App("navin".into()))
}

pub(super) fn task(id: &str, deps: &[&str], validation: Validation) -> NewTask {
    NewTask {
        id: id.into(),
        title: format!("do {id}"),
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        validation,
        ..NewTask::default()
    }
}

pub(super) fn applied(ledger: Option<&Ledger>, op: Operation, ctx: &Ctx) -> Applied {
    match apply(ledger, &op, ctx) {
        Ok(Outcome::Applied(a)) => *a,
        other => panic!("{} was not applied: {other:?}", op.name()),
    }
}

pub(super) fn run(ledger: &Ledger, op: Operation, ctx: &Ctx) -> Ledger {
    applied(Some(ledger), op, ctx).ledger
}

pub(super) fn refused(ledger: Option<&Ledger>, op: Operation, ctx: &Ctx) -> RuleError {
    match apply(ledger, &op, ctx) {
        Err(e) => e,
        Ok(o) => panic!("{} should have been refused, got {o:?}", op.name()),
    }
}

/// S1 -> S2 -> S3 chain plus an independent S4, all validation none.
pub(super) fn mission_with(tasks: Vec<NewTask>) -> Ledger {
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

pub(super) fn chain() -> Ledger {
    mission_with(vec![
        task("S1", &[], Validation::None),
        task("S2", &["S1"], Validation::None),
        task("S3", &["S2"], Validation::None),
        task("S4", &[], Validation::None),
    ])
}

pub(super) fn status(l: &Ledger, id: &str) -> TaskStatus {
    l.board.task(id).expect("task exists").status
}

/// Green evidence of `kind`; CI kinds name their run as CI records them.
pub(super) fn green(kind: EvidenceKind) -> Evidence {
    let mut e = Evidence::run(kind, true, "all green");
    match kind {
        EvidenceKind::CheckRun => e.check_run_id = Some(41),
        EvidenceKind::WorkflowRun => e.workflow_run_id = Some(42),
        _ => return e,
    }
    e.app_id = Some(15368);
    e.head_sha = Some("8f14e45fceea167a5a36dedd4bea2543a1b2c3d4".into());
    e.conclusion = Some("success".into());
    e
}

pub(super) fn ready_ids(l: &Ledger) -> Vec<String> {
    l.ready().iter().map(|t| t.id.clone()).collect()
}

pub(super) fn finish_s1_s2(l: &Ledger) -> Ledger {
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

pub(super) fn progress(step: &str, real: bool, fp: Option<&str>) -> Operation {
    Operation::Progress(ProgressArgs {
        step: step.into(),
        real_progress: real,
        fingerprint: fp.map(String::from),
        ..ProgressArgs::default()
    })
}

mod agents;
mod attempts;
mod budgets;
mod change;
mod gate;
mod mission;
mod questions;
mod rounds;
mod stages;
