//! A mission whose every step is done closes itself as done, on whichever event proved the last step.

use super::board::transact;
use super::RepoCtx;
use navin_ledger::model::{Actor, Ledger, MissionStatus};
use navin_ledger::{Operation, TaskStatus};

/// Whether `ledger` is a running mission with steps, all of them done. A paused or
/// blocked mission waits for a person, and a draft has not started.
pub(crate) fn finished(ledger: &Ledger) -> bool {
    ledger.mission.status == MissionStatus::Running
        && !ledger.board.tasks.is_empty()
        && ledger
            .board
            .tasks
            .iter()
            .all(|t| t.status == TaskStatus::Done)
}

/// Closes a finished mission as done (actor `app:navin`), once: the op id names the
/// version it closed, so a redelivered event finds it applied. On GitHub Navin is the
/// orchestrator, whose job includes closing a finished mission; nobody has to comment
/// `/mission close` after the last green run. A failed write is logged and leaves
/// the mission for the next event to close.
pub(super) async fn finish_if_done(cx: &RepoCtx<'_>, ledger: Ledger) -> Ledger {
    if !finished(&ledger) {
        return ledger;
    }
    let op = Operation::Close {
        status: MissionStatus::Done,
        reason: "every step is done".to_owned(),
    };
    let op_id = format!("finish:v{}", ledger.mission.version);
    match transact(cx, op, &op_id, Actor::App("navin".to_owned())).await {
        Ok(Some((after, _))) => after,
        Ok(None) => ledger,
        Err(e) => {
            tracing::warn!(error = %e, repo = %cx.repo, "closing the finished mission failed; the next event retries");
            ledger
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use navin_ledger::model::Validation;
    use navin_ledger::{Ctx, InitArgs, NewTask, Operation};

    fn ledger(statuses: &[TaskStatus], mission: MissionStatus) -> Ledger {
        let steps = (0..statuses.len())
            .map(|i| NewTask {
                id: format!("S{}", i + 1),
                title: "step".into(),
                validation: Validation::None,
                ..NewTask::default()
            })
            .collect();
        let ctx = Ctx::new(chrono::Utc::now(), Actor::Human("alice".into()));
        let op = Operation::Init(InitArgs {
            goal: "g".into(),
            steps,
            ..InitArgs::default()
        });
        let mut l = match navin_ledger::apply(None, &op, &ctx).expect("init") {
            navin_ledger::Outcome::Applied(applied) => applied.ledger,
            navin_ledger::Outcome::AlreadyApplied { .. } => unreachable!("no ledger yet"),
        };
        for (t, s) in l.board.tasks.iter_mut().zip(statuses) {
            std::sync::Arc::make_mut(t).status = *s;
        }
        l.mission.status = mission;
        l
    }

    #[test]
    fn only_a_running_mission_with_every_step_done_is_finished() {
        use MissionStatus::{Paused, Running};
        use TaskStatus::{Done, InProgress};
        assert!(finished(&ledger(&[Done, Done], Running)));
        assert!(!finished(&ledger(&[Done, InProgress], Running)));
        assert!(!finished(&ledger(&[Done], Paused)));
        assert!(!finished(&ledger(&[], Running)));
    }
}
