//! What a verdict does to a step: done, record, fail or nothing, as ledger operations; shared by the engine and the Action.

use navin_ledger::model::{Board, Evidence, Task, TaskStatus};
use navin_ledger::Operation;

use super::link::step_from_pr_in;
use super::observation::{CheckObservation, ConclusionClass};
use super::verdict::{run_evidence, EvidencePolicy, Verdict, OWN_CHECK_PREFIX};
use crate::config::{DoneOn, RepoConfig};
use crate::render::text::short_sha;

/// The evidence policy `.github/navin.yml` describes (defaults when absent).
pub fn policy_from(config: &RepoConfig) -> EvidencePolicy {
    let e = &config.evidence;
    let mut required_checks = std::collections::HashMap::new();
    for (validation, names) in [
        (navin_ledger::Validation::Test, &e.required_checks.test),
        (navin_ledger::Validation::Lint, &e.required_checks.lint),
        (navin_ledger::Validation::Verify, &e.required_checks.verify),
    ] {
        if !names.is_empty() {
            required_checks.insert(validation, names.clone());
        }
    }
    EvidencePolicy {
        trusted_app_ids: e.trusted_apps.iter().copied().collect(),
        required_checks,
        min_ci_time: (!e.min_ci_time.is_zero()).then_some(e.min_ci_time),
        done_on: e.done_on,
        drafts: e.drafts,
        scope: e.scope,
    }
}

/// Steps whose linked head is `head_sha` and that a run can still move:
/// planned, in progress, or failed (a re-run that passes on the same head
/// closes a failed step). Fork PRs' runs list no pull requests, so the SHA is
/// the only link a run carries that always works.
pub fn steps_on_head<'b>(board: &'b Board, head_sha: &str) -> Vec<&'b Task> {
    let sha = head_sha.trim();
    if sha.is_empty() {
        return Vec::new();
    }
    board
        .tasks
        .iter()
        .filter(|t| {
            matches!(
                t.status,
                TaskStatus::Planned | TaskStatus::InProgress | TaskStatus::Failed
            )
        })
        .filter(|t| {
            t.links
                .head_sha
                .as_deref()
                .is_some_and(|h| h.trim().eq_ignore_ascii_case(sha))
        })
        .map(|t| &**t)
        .collect()
}

/// The step a run is for: a step linked to the run's head SHA, else the step
/// a linked pull request names (`(body, head ref)` pairs: `Navin-Step:` in the
/// body, or its `navin/<step>` branch), else the run's own `navin/<step>` head
/// branch. The Action uses the fallbacks because it may never have seen the
/// pull request event that links the step.
pub fn find_step(
    board: &Board,
    head_sha: &str,
    prs: &[(String, String)],
    head_branch: &str,
) -> Option<String> {
    let sha = head_sha.trim();
    if !sha.is_empty() {
        let linked = board.tasks.iter().find(|t| {
            t.links
                .head_sha
                .as_deref()
                .is_some_and(|h| h.trim().eq_ignore_ascii_case(sha))
        });
        if let Some(t) = linked {
            return Some(t.id.clone());
        }
    }
    prs.iter()
        .find_map(|(body, head_ref)| step_from_pr_in(body, head_ref, board))
        .or_else(|| step_from_pr_in("", head_branch, board))
}

/// What to do with a step after looking at the runs on its head.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Every required check is green: mark the step done. `evidence` is what
    /// the ledger has not recorded yet, the triggering run first (it becomes
    /// the done transition's own evidence); it may be empty. `retry` is set
    /// for a failed step whose failed checks were re-run and passed on the
    /// same head: it takes its next attempt first.
    Done {
        evidence: Vec<Evidence>,
        retry: bool,
    },
    /// Green runs to keep while the step cannot be done yet (other required
    /// checks pending, or dependencies not done), and why it waits.
    Record {
        evidence: Vec<Evidence>,
        why: String,
    },
    /// A required check failed on the step's head: one failed attempt.
    /// `evidence` holds every failed run not recorded yet, the triggering one first.
    Fail {
        evidence: Vec<Evidence>,
        reason: String,
    },
    /// Nothing to change, and why.
    Skip(String),
}

impl Decision {
    /// The ledger operations that carry the decision out for `step`, in order:
    /// extra evidence first, then the one status change (done or fail) with
    /// the leading evidence. Apply each with its own op id.
    pub fn operations(&self, step: &str) -> Vec<Operation> {
        let record = |e: &Evidence| Operation::RecordEvidence {
            step: step.to_owned(),
            evidence: e.clone(),
        };
        match self {
            Decision::Skip(_) => Vec::new(),
            Decision::Record { evidence, .. } => evidence.iter().map(record).collect(),
            Decision::Done { evidence, retry } => {
                let mut ops: Vec<Operation> = Vec::new();
                if *retry {
                    ops.push(Operation::Retry {
                        step: step.to_owned(),
                    });
                }
                ops.extend(evidence.iter().skip(1).map(record));
                ops.push(Operation::Done {
                    step: step.to_owned(),
                    evidence: evidence.first().cloned(),
                });
                ops
            }
            Decision::Fail { evidence, reason } => {
                let mut ops: Vec<Operation> = evidence.iter().skip(1).map(record).collect();
                ops.push(Operation::Fail {
                    step: step.to_owned(),
                    evidence: evidence.first().cloned(),
                    reason: reason.clone(),
                    outcome: navin_ledger::AttemptOutcome::CiRed,
                });
                ops
            }
        }
    }

    /// The decision for a step whose pull request `pr` is a draft, under
    /// `evidence.drafts: wait`: green runs are kept as evidence but close nothing, and
    /// a red run spends no attempt. Marking the pull request ready for review judges
    /// its head again.
    pub fn held_for_draft(self, pr: u64) -> Decision {
        match self {
            Decision::Done { evidence, .. } => Decision::Record {
                evidence,
                why: format!(
                    "green, but #{pr} is a draft: done once it is marked ready for review \
                     (evidence.drafts: wait)"
                ),
            },
            Decision::Fail { reason, .. } => Decision::Skip(format!(
                "{reason}; #{pr} is a draft, so no attempt is spent until it is marked \
                 ready for review (evidence.drafts: wait)"
            )),
            other => other,
        }
    }

    /// The decision for a step whose pull request's change the ledger would refuse to
    /// close it with (it changes no file: an empty commit pushed for green CI on the
    /// unchanged tree; or files outside the step's scope under `evidence.scope:
    /// refuse`): green runs are kept as evidence but close nothing, as the same rule
    /// refuses in a checkout. A red run still counts: the failure is real whatever the
    /// diff.
    pub fn held_by_refusal(self, why: &navin_ledger::RuleError) -> Decision {
        match self {
            Decision::Done { evidence, .. } => Decision::Record {
                evidence,
                why: format!("green, but {why}"),
            },
            other => other,
        }
    }

    /// One line for logs and Action notices.
    pub fn describe(&self, step: &str) -> String {
        match self {
            Decision::Done { .. } => format!("step {step} is proven: marking it done"),
            Decision::Record { evidence, why } => {
                format!(
                    "recording {} green run(s) on step {step}: {why}",
                    evidence.len()
                )
            }
            Decision::Fail { reason, .. } => format!("step {step} failed an attempt: {reason}"),
            Decision::Skip(why) => why.clone(),
        }
    }
}

/// Decides what `verdict` (the runs on `task`'s head, evaluated under
/// `policy`) means for `task` on `board`. `this` is the run whose completion
/// triggered the look, when there is one (a check suite names none).
///
/// * Only planned, in-progress and failed steps move, a failed one only to
///   done (a re-run passed; its failure on this head is already counted). A
///   run on another head than the linked one is ignored.
/// * Green with every dependency done: done. Green while a dependency is not
///   done: the green runs are recorded and the step waits (the ledger refuses
///   done out of dependency order; the engine comes back when the dependency
///   is done).
/// * Red: a failed attempt, unless every failed run is already recorded (a
///   redelivered or duplicate event).
/// * Pending: a green `this` that the policy would count is recorded; otherwise nothing.
pub fn decide(
    task: &Task,
    board: &Board,
    this: Option<&CheckObservation>,
    verdict: &Verdict,
    policy: &EvidencePolicy,
) -> Decision {
    let failed = task.status == TaskStatus::Failed;
    let movable = matches!(task.status, TaskStatus::Planned | TaskStatus::InProgress)
        || (failed && verdict.is_green());
    if !movable {
        return Decision::Skip(format!(
            "step {} is {}: nothing to record",
            task.id, task.status
        ));
    }
    let head = task.links.head_sha.as_deref().map(str::trim);
    if let (Some(head), Some(run)) = (head, this) {
        if !head.is_empty() && !head.eq_ignore_ascii_case(run.head_sha.trim()) {
            return Decision::Skip(format!(
                "run {} is on {} but step {} is linked to head {}: ignored",
                run.id,
                short_sha(&run.head_sha),
                task.id,
                short_sha(head)
            ));
        }
    }
    let this_first = |mut list: Vec<Evidence>| -> Vec<Evidence> {
        if let Some(run) = this {
            if let Some(pos) = list.iter().position(|e| same_run(e, run)) {
                let e = list.remove(pos);
                list.insert(0, e);
            }
        }
        list
    };
    let on = head.map(short_sha).unwrap_or_default();
    match verdict {
        Verdict::Green { .. } => {
            let unrecorded = this_first(verdict.unrecorded_evidence(task));
            let waiting = pending_dependencies(task, board);
            let unmerged = policy.done_on == DoneOn::Merged && task.links.merged_pr.is_none();
            let held = drift_hold(task);
            if waiting.is_empty() && !unmerged && held.is_none() {
                return Decision::Done {
                    evidence: unrecorded,
                    retry: failed,
                };
            }
            let why = if let Some(held) = held {
                format!("green on {on}, but {held}")
            } else if waiting.is_empty() {
                let pr = task
                    .links
                    .prs
                    .last()
                    .map(|n| format!("pull request #{n}"))
                    .unwrap_or_else(|| "its pull request".to_owned());
                format!("green on {on}; done when {pr} is merged (evidence.done_on: merged)")
            } else {
                format!(
                    "green on {on}, but it waits for {} to be done",
                    waiting.join(", ")
                )
            };
            if unrecorded.is_empty() || failed {
                Decision::Skip(format!("step {} is {why}", task.id))
            } else {
                Decision::Record {
                    evidence: unrecorded,
                    why,
                }
            }
        }
        Verdict::Red { failed, .. } => {
            let unrecorded = this_first(verdict.unrecorded_evidence(task));
            if unrecorded.is_empty() {
                return Decision::Skip(format!(
                    "the failure on {on} is already recorded for step {}",
                    task.id
                ));
            }
            let reason = failed
                .iter()
                .map(|f| match &f.note {
                    Some(note) => format!("{} {} ({note})", f.name, f.conclusion),
                    None => format!("{} {}", f.name, f.conclusion),
                })
                .collect::<Vec<_>>()
                .join(", ");
            Decision::Fail {
                evidence: unrecorded,
                reason: format!("{reason} on {on}"),
            }
        }
        Verdict::Pending {
            missing,
            running,
            not_green,
        } => {
            let counts = this.filter(|run| {
                policy.trusts(run.app_id)
                    && run.conclusion().map(|c| c.class()) == Some(ConclusionClass::Green)
                    && !not_green.iter().any(|f| f.run_id == run.id)
                    && is_required(policy, task, &run.name)
                    && !task.evidence.iter().any(|e| same_run(e, run))
            });
            let mut waiting: Vec<String> = missing.clone();
            waiting.extend(
                running
                    .iter()
                    .map(|r| format!("{} ({})", r.name, r.status.as_str())),
            );
            waiting.extend(
                not_green
                    .iter()
                    .map(|f| format!("{} ({})", f.name, f.conclusion)),
            );
            if waiting.is_empty() {
                waiting.push("a trusted check run".into());
            }
            let why = format!(
                "step {} is still waiting for {}",
                task.id,
                waiting.join(", ")
            );
            match counts {
                Some(run) => Decision::Record {
                    evidence: vec![run_evidence(run, true)],
                    why,
                },
                None => Decision::Skip(why),
            }
        }
        Verdict::NotApplicable { reason } => Decision::Skip(format!("step {}: {reason}", task.id)),
    }
}

/// The pull request to merge now under `evidence.merge`: the step's last linked one,
/// when every required check is green on its head (`verdict`), the step waits only for
/// that merge (`done_on: merged`, not merged yet, dependencies done, no drift hold) and
/// is not done. `None` otherwise; the caller also skips drafts and a merge that is off.
pub fn pr_to_merge(
    task: &Task,
    board: &Board,
    verdict: &Verdict,
    policy: &EvidencePolicy,
) -> Option<u64> {
    let waits_for_merge = policy.done_on == DoneOn::Merged
        && task.links.merged_pr.is_none()
        && task.status != TaskStatus::Done;
    let green = matches!(verdict, Verdict::Green { .. });
    let free = pending_dependencies(task, board).is_empty() && drift_hold(task).is_none();
    (waits_for_merge && green && free && task.links.head_sha.is_some())
        .then(|| task.links.prs.last().copied())
        .flatten()
}

/// Why `task` is held on its linked head by `plan.scope: strict`: files its pull request
/// changes outside the mission's plan (or its stage), as recorded for that very head. A
/// record for another head, or an advisory one, holds nothing.
pub fn drift_hold(task: &Task) -> Option<String> {
    let drift = task
        .plan_drift
        .as_ref()
        .filter(|d| d.strict && !d.is_empty())?;
    let head = task.links.head_sha.as_deref()?;
    if !drift.head_sha.trim().eq_ignore_ascii_case(head.trim()) {
        return None;
    }
    let n = drift.count();
    Some(format!(
        "{n} file{} changed outside the plan (`plan.scope: strict`): it is done once the plan covers them (`/plan edit`) or they are reverted",
        if n == 1 { "" } else { "s" }
    ))
}

/// Dependencies of `task` that are not done yet.
pub fn pending_dependencies(task: &Task, board: &Board) -> Vec<String> {
    task.depends_on
        .iter()
        .filter(|d| board.task(d).is_none_or(|t| t.status != TaskStatus::Done))
        .cloned()
        .collect()
}

fn is_required(policy: &EvidencePolicy, task: &Task, name: &str) -> bool {
    if super::verdict::own_checks(task).iter().any(|c| c == name) {
        return true;
    }
    let required = policy.required_for(task.validation);
    if required.is_empty() {
        !name.starts_with(OWN_CHECK_PREFIX)
    } else {
        required.iter().any(|r| r.trim() == name)
    }
}

fn same_run(e: &Evidence, run: &CheckObservation) -> bool {
    match run.kind {
        super::RunKind::CheckRun => e.check_run_id == Some(run.id),
        super::RunKind::WorkflowRun => e.workflow_run_id == Some(run.id),
    }
}
