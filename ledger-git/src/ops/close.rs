//! Closing a step: the one judgement every front end's `done` goes through, from a checkout or from GitHub.

use super::done_gate::{check_done_gate, short};
use super::{Change, ChangeFrom, Ctx};
use crate::error::RuleError;
use crate::model::{BaseRun, Evidence, ScopePolicy, Task, TaskStatus};

/// Why a step may close, as [`close_step`] found it: what changed, what of that lies
/// outside the step's scope, and the evidence that proves it with what its run showed
/// against the step's base.
#[derive(Debug, Clone, PartialEq)]
pub struct StepVerdict {
    pub step: String,
    /// The change measured for the step (`None` for a step that runs nothing, or when
    /// the front end measured none: a person's `/done` on GitHub before any pull request).
    pub change: Option<Change>,
    /// Changed files outside the step's scope, reported under `evidence.scope: warn`.
    pub outside_scope: Vec<String>,
    /// Files the plan says the step must change that the change leaves untouched,
    /// reported under `evidence.scope: warn`.
    pub untouched_required: Vec<String>,
    /// The evidence that proves the step: the one given, or the best already recorded.
    pub proof: Option<Evidence>,
}

impl StepVerdict {
    /// What the proof's run showed against the step's base, when it ran both.
    pub fn baseline(&self) -> Option<&BaseRun> {
        self.proof.as_ref()?.run.as_ref()?.baseline.as_ref()
    }

    /// The tests the change repaired (failing or absent on the base, passing on the head).
    pub fn fail_to_pass(&self) -> &[String] {
        self.baseline().map_or(&[], |b| b.fail_to_pass.as_slice())
    }
}

/// Whether `task` may be marked done with `given` (plus what it already records) under
/// `ctx`: the evidence gate, then the change. The ledger's `done` calls it for the CLI,
/// `navin mcp` and the Action alike; the App calls it before it closes a step from CI
/// or `/done`, with the pull request's change, so a refusal holds the step instead of
/// failing the delivery.
pub fn close_step(
    task: &Task,
    given: Option<&Evidence>,
    ctx: &Ctx,
) -> Result<StepVerdict, RuleError> {
    let proof = check_done_gate(task, given, ctx)?;
    let (outside_scope, untouched_required) = check_change(task, ctx)?;
    Ok(StepVerdict {
        step: task.id.clone(),
        change: ctx.change.clone().filter(|_| task.validation.needs_run()),
        outside_scope,
        untouched_required,
        proof,
    })
}

/// At most ten paths, then how many more.
pub(super) fn listed(paths: &[String]) -> String {
    let mut shown = paths
        .iter()
        .take(10)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > 10 {
        shown.push_str(&format!(" and {} more", paths.len() - 10));
    }
    shown
}

/// A step whose work is code (its validation runs something) must change something: a
/// green run of the tree the step was handed proves the suite, not the step. From a
/// checkout the change runs from the step's base to `HEAD`; on GitHub it is the step's
/// pull request. Returns the changed paths outside the step's scope and the required
/// files it leaves untouched, each refused under [`ScopePolicy::Refuse`]. Nothing measured (a person's `/done` on GitHub, or an
/// operation made outside any checkout) checks nothing here: the evidence gate still
/// asks for CI on the step's head.
fn check_change(task: &Task, ctx: &Ctx) -> Result<(Vec<String>, Vec<String>), RuleError> {
    if !task.validation.needs_run() {
        return Ok((Vec::new(), Vec::new()));
    }
    let step = task.id.clone();
    let change = match ctx.change.as_ref() {
        Some(
            change @ Change {
                from: ChangeFrom::PullRequest { .. },
                ..
            },
        ) => change,
        // From a checkout, the change must start where the step did.
        _ if ctx.checkout.is_none() => return Ok((Vec::new(), Vec::new())),
        change => {
            let Some(base) = task.base.as_deref() else {
                // An agent that skips `start` would leave no base to measure from.
                // Steps started before bases were recorded keep the older rule.
                if ctx.actor.is_agent() && task.status == TaskStatus::Planned {
                    return Err(RuleError::NotStarted { step });
                }
                return Ok((Vec::new(), Vec::new()));
            };
            match change.filter(|c| c.from == ChangeFrom::Checkout && c.base == base) {
                Some(change) => change,
                None => {
                    return Err(RuleError::ChangeUnmeasured {
                        step,
                        base: short(base),
                    })
                }
            }
        }
    };
    if change.is_empty() {
        return Err(match change.from {
            ChangeFrom::PullRequest { number, .. } => {
                RuleError::EmptyPullRequest { step, pr: number }
            }
            ChangeFrom::Checkout => RuleError::NoChange {
                step,
                base: short(&change.base),
                head: short(&change.head),
            },
        });
    }
    let outside: Vec<String> = task
        .outside_scope(&change.files)
        .into_iter()
        .map(str::to_owned)
        .collect();
    if !outside.is_empty() && ctx.scope_policy == ScopePolicy::Refuse {
        return Err(RuleError::OutOfScope {
            step,
            files: listed(&outside),
            scope: listed(&task.scope),
        });
    }
    let untouched: Vec<String> = task
        .untouched_required(&change.files)
        .into_iter()
        .map(str::to_owned)
        .collect();
    if !untouched.is_empty() && ctx.scope_policy == ScopePolicy::Refuse {
        return Err(RuleError::RequiredUntouched {
            step,
            files: listed(&untouched),
        });
    }
    Ok((outside, untouched))
}
