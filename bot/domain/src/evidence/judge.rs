//! One judgement of a step by the CI runs on its linked head, shared by every front end that can close a step: a CI completion, `/done` and MCP `board_done`.
//!
//! The front ends differ only in where the runs come from (the webhook's run plus the
//! head's others, or the head's runs read now) and in how they phrase a refusal; what
//! the runs prove, and why a step is not done, is decided here once.

use chrono::{DateTime, Utc};
use navin_ledger::{Board, Task};

use super::{
    decide, evaluate, missing_checks_message, own_checks, CheckObservation, Decision,
    EvidencePolicy, Verdict,
};

/// What the runs on a step's head prove, and what to record for it.
#[derive(Debug, Clone)]
pub struct Judged {
    pub verdict: Verdict,
    pub decision: Decision,
}

/// Why a step's pull request, as GitHub reports it now, holds a green judgement back.
#[derive(Debug, Clone, PartialEq)]
pub enum Hold {
    /// The pull request is an open draft under `evidence.drafts: wait`.
    Draft(u64),
    /// Closing the step with the pull request's change is refused (it changes no file,
    /// or files outside the step's scope under `evidence.scope: refuse`).
    Refused {
        pr: u64,
        why: navin_ledger::RuleError,
    },
}

impl Judged {
    /// The judgement for a step whose pull request holds it back (see
    /// [`Decision::held_for_draft`], [`Decision::held_by_refusal`]).
    pub fn held(self, hold: Hold) -> Judged {
        let decision = match hold {
            Hold::Draft(pr) => self.decision.held_for_draft(pr),
            Hold::Refused { why, .. } => self.decision.held_by_refusal(&why),
        };
        Judged {
            verdict: self.verdict,
            decision,
        }
    }

    /// Whether this judgement would close the step, so whether its pull request's
    /// change is worth a request to check.
    pub fn closes(&self) -> bool {
        matches!(self.decision, Decision::Done { .. })
    }
}

/// Why a step a person or an agent asked to close is not done, typed so each front end
/// words it for its reader (a comment, a tool error) without matching on text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotDone {
    /// No pull request is linked, so no head has runs: `checks` names what must be
    /// green there.
    NoLinkedPr { checks: String },
    /// A required check failed on the head.
    Failed { message: String },
    /// Required checks are missing or still running.
    NotGreen { message: String },
    /// Green, but the step waits (for its merge, or for its dependencies).
    Waiting { why: String },
}

impl NotDone {
    /// The stable code a tool error carries.
    pub fn code(&self) -> &'static str {
        match self {
            NotDone::NoLinkedPr { .. } => "no_linked_pr",
            NotDone::Failed { .. } => "checks_failed",
            NotDone::NotGreen { .. } => "checks_not_green",
            NotDone::Waiting { .. } => "not_done_yet",
        }
    }
}

/// Judges `task` by `runs` (the runs on its linked head; `this` is the run a webhook
/// reported, when one did).
pub fn judge_step(
    task: &Task,
    board: &Board,
    runs: &[CheckObservation],
    this: Option<&CheckObservation>,
    policy: &EvidencePolicy,
    now: DateTime<Utc>,
) -> Judged {
    let verdict = evaluate(task, runs, policy, now);
    let decision = decide(task, board, this, &verdict, policy);
    Judged { verdict, decision }
}

/// What must be green on a linked head for `task`, in words: the required checks of
/// its validation and its own plan checks.
pub fn required_checks(task: &Task, policy: &EvidencePolicy) -> String {
    let required = policy.required_for(task.validation);
    let mut checks = if required.is_empty() {
        "every check run by a trusted app".to_owned()
    } else {
        required
            .iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for own in own_checks(task) {
        checks.push_str(&format!(" and `{own}`"));
    }
    checks
}

/// A step asked to close with no linked head.
pub fn unlinked(task: &Task, policy: &EvidencePolicy) -> NotDone {
    NotDone::NoLinkedPr {
        checks: required_checks(task, policy),
    }
}

/// Why `judged` does not close `task`; `None` when nothing stands in the way (its
/// decision marks it done, or a green step has nothing left to record).
pub fn not_done(task: &Task, judged: &Judged) -> Option<NotDone> {
    match (&judged.decision, &judged.verdict) {
        (Decision::Done { .. }, _) | (Decision::Skip(_), Verdict::Green { .. }) => None,
        (_, Verdict::Red { .. }) => Some(NotDone::Failed {
            message: missing_checks_message(task, &judged.verdict),
        }),
        (Decision::Record { why, .. }, Verdict::Green { .. }) => {
            Some(NotDone::Waiting { why: why.clone() })
        }
        (decision, Verdict::Green { .. }) => Some(NotDone::Waiting {
            why: decision.describe(&task.id),
        }),
        _ => Some(NotDone::NotGreen {
            message: missing_checks_message(task, &judged.verdict),
        }),
    }
}
