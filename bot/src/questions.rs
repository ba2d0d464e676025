//! Missing info outside GitHub: a step that names an open question holds the mission, and an answer resumes it, as the App does.
//!
//! The CLI and the MCP server share these so a local mission pauses for missing info
//! exactly as one on GitHub: the hold is keyed like the App's (the same questions on
//! the same steps hold once), and it is written as Navin, so an answer from a person
//! resumes it.

use chrono::{DateTime, Utc};
use navin_ledger::model::{Actor, MissionStatus, PauseReason};
use navin_ledger::ops::{Ctx, Operation};
use navin_ledger::store::{Committed, Store, StoreError};

/// A step waits on questions only a person can answer; the mission is now paused.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    pub step: String,
    /// The open questions the step names, numbered as `answer` numbers them.
    pub questions: Vec<(usize, String)>,
}

impl Held {
    /// The sentence a person or an agent reads.
    pub fn message(&self) -> String {
        let listed: Vec<String> = self
            .questions
            .iter()
            .map(|(n, q)| format!("{n}. {q}"))
            .collect();
        format!(
            "{} waits on open questions, so the mission is paused (human) rather than guessed: {}",
            self.step,
            listed.join("; ")
        )
    }
}

/// The actor Navin's own decisions are written as.
pub fn navin() -> Actor {
    Actor::App("navin".to_owned())
}

/// Before `step` starts: when it names open missing info and the mission is running,
/// pause it (`human`) and say which questions. `Ok(None)`: go ahead (nothing open, or
/// this hold was made before and a person resumed without answering).
pub fn hold_before_start(
    store: &Store,
    step: &str,
    now: DateTime<Utc>,
) -> Result<Option<Held>, StoreError> {
    let Some(snapshot) = store.read()? else {
        return Ok(None);
    };
    let ledger = snapshot.ledger;
    if ledger.mission.status != MissionStatus::Running {
        return Ok(None);
    }
    let blocks = ledger.info_blocks();
    let Some(block) = blocks.iter().find(|b| b.step == step) else {
        return Ok(None);
    };
    let steps: Vec<&str> = blocks.iter().map(|b| b.step.as_str()).collect();
    let op = Operation::Pause {
        reason: PauseReason::Human,
        note: format!("{} needs an answer first", steps.join(", ")),
    };
    let ctx = Ctx::new(now, navin()).with_op_id(ledger.hold_id(&blocks));
    match store.transact(&op, &ctx)? {
        Committed::AlreadyApplied { .. } => Ok(None),
        Committed::Written { .. } => Ok(Some(Held {
            step: step.to_owned(),
            questions: block
                .items
                .iter()
                .map(|q| {
                    let n = ledger
                        .mission
                        .missing_info
                        .iter()
                        .position(|m| m == q)
                        .map_or(0, |i| i + 1);
                    (n, q.clone())
                })
                .collect(),
        })),
    }
}

/// After a person's edit: a mission paused for missing info whose questions are all
/// answered resumes, as that person. Returns the resume when one was written.
pub fn resume_if_answered(
    store: &Store,
    actor: &Actor,
    now: DateTime<Utc>,
) -> Result<Option<Committed>, StoreError> {
    if !actor.is_human() {
        return Ok(None);
    }
    let Some(snapshot) = store.read()? else {
        return Ok(None);
    };
    if !snapshot.ledger.answered() {
        return Ok(None);
    }
    let op = Operation::Resume {
        note: format!("answered by {actor}"),
    };
    let ctx = Ctx::new(now, actor.clone());
    store.transact(&op, &ctx).map(Some)
}
