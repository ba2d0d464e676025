//! The done gate: the evidence a step needs before it may be marked done.

use super::Ctx;
use crate::error::RuleError;
use crate::model::{Evidence, EvidenceKind, Task, Validation};

/// Why an agent's candidate evidence does not prove a step in its checkout.
enum AgentProof {
    Proves,
    /// Typed-in local-run evidence (no run record) or a red run: never counts.
    Never,
    Stale {
        run_head: String,
        head: String,
    },
    Dirty {
        where_: &'static str,
    },
}

/// What an agent's evidence is worth: complete CI evidence always proves; a local run
/// only when Navin recorded it green for the checkout's current `HEAD` of a clean tree.
fn agent_proof(e: &Evidence, checkout: Option<&super::Checkout>) -> AgentProof {
    match e.kind {
        EvidenceKind::CheckRun | EvidenceKind::WorkflowRun => AgentProof::Proves,
        EvidenceKind::Prose => AgentProof::Never,
        EvidenceKind::TestRun | EvidenceKind::LintRun | EvidenceKind::VerifyRun => {
            let Some(run) = e.run.as_ref().filter(|r| r.passed()) else {
                return AgentProof::Never;
            };
            let Some(checkout) = checkout else {
                return AgentProof::Never;
            };
            if run.dirty {
                AgentProof::Dirty {
                    where_: "it ran on uncommitted changes",
                }
            } else if run.head != checkout.head {
                AgentProof::Stale {
                    run_head: short(&run.head),
                    head: short(&checkout.head),
                }
            } else if checkout.dirty {
                AgentProof::Dirty {
                    where_: "the checkout now has uncommitted changes",
                }
            } else {
                AgentProof::Proves
            }
        }
    }
}

/// A run of a command the verifier chose (`navin board verify S1 -- true`): recorded,
/// but never evidence, since whoever runs it could make it say anything.
fn from_the_command_line(e: &Evidence) -> bool {
    e.run
        .as_ref()
        .is_some_and(|r| r.source == crate::model::CommandSource::Given)
}

pub(super) fn short(sha: &str) -> String {
    sha.chars().take(12).collect()
}

/// The hard gate: what evidence a step needs before it may be marked done. Returns the
/// evidence that proves it, when one does (a step with nothing to run and no acceptance
/// needs none).
pub(super) fn check_done_gate(
    task: &Task,
    given: Option<&Evidence>,
    ctx: &Ctx,
) -> Result<Option<Evidence>, RuleError> {
    let step = task.id.clone();
    if let Some(e) = given {
        if !e.ok {
            return Err(RuleError::EvidenceNotGreen {
                step,
                summary: e.summary.clone(),
            });
        }
        let missing = e.missing_run_fields();
        if !missing.is_empty() {
            return Err(RuleError::UntraceableRun {
                step,
                kind: e.kind.as_str(),
                missing: missing.join(", "),
            });
        }
    }
    let agent = ctx.actor.is_agent();
    let checkout = ctx.checkout.as_ref();
    // CI evidence counts only when it names the run it came from; for an agent, a local
    // run only when Navin recorded it for this checkout.
    let candidates = || {
        given
            .into_iter()
            .chain(task.evidence.iter())
            .filter(|e| e.ok && e.missing_run_fields().is_empty())
            .filter(|e| !from_the_command_line(e))
            .filter(move |e| !agent || matches!(agent_proof(e, checkout), AgentProof::Proves))
    };
    let human = ctx.actor.is_human();
    if task.validation.needs_run() {
        if let (true, Some(checkout)) = (agent, checkout) {
            // `navin board verify` records a step's commands in order and stops at the
            // first red one: the newest run for this commit speaks for all of them.
            let newest = task.evidence.iter().rev().find(|e| {
                e.kind.proves(task.validation)
                    && !from_the_command_line(e)
                    && e.run.as_ref().is_some_and(|r| r.head == checkout.head)
            });
            if let Some(red) = newest.filter(|e| !e.ok) {
                return Err(RuleError::RedRun {
                    step,
                    kind: red.kind.as_str(),
                    head: short(&checkout.head),
                    summary: red.summary.clone(),
                });
            }
            let repaired = |e: &Evidence| {
                e.run
                    .as_ref()
                    .and_then(|r| r.baseline.as_ref())
                    .is_some_and(|b| !b.fail_to_pass.is_empty())
            };
            if ctx.fail_to_pass.applies_to(task) && newest.is_some_and(|e| !repaired(e)) {
                return Err(RuleError::NoFailToPass {
                    step,
                    head: short(&checkout.head),
                });
            }
        }
        if let Some(proof) = candidates().find(|e| e.kind.proves(task.validation)) {
            return Ok(Some(proof.clone()));
        }
        if agent {
            // Say why the newest recorded run of the right kind does not count.
            let newest = task
                .evidence
                .iter()
                .rev()
                .find(|e| e.ok && e.run.is_some() && e.kind.proves(task.validation));
            if let Some(e) = newest {
                match agent_proof(e, checkout) {
                    AgentProof::Stale { run_head, head } => {
                        return Err(RuleError::StaleRun {
                            step,
                            kind: e.kind.as_str(),
                            run_head,
                            head,
                        })
                    }
                    AgentProof::Dirty { where_ } => {
                        return Err(RuleError::DirtyRun {
                            step,
                            kind: e.kind.as_str(),
                            where_,
                        })
                    }
                    AgentProof::Proves | AgentProof::Never => {}
                }
            }
        }
        if given.is_some_and(|e| e.kind == EvidenceKind::Prose) {
            return Err(RuleError::ProseNotAccepted {
                step,
                validation: task.validation,
            });
        }
        if task
            .evidence
            .iter()
            .any(|e| e.ok && from_the_command_line(e) && e.kind.proves(task.validation))
        {
            return Err(RuleError::GivenCommandRun { step });
        }
        let wanted = match task.validation {
            Validation::Test => "check_run, workflow_run or test_run",
            Validation::Lint => "check_run, workflow_run or lint_run",
            _ => "check_run, workflow_run or verify_run",
        };
        return Err(RuleError::EvidenceRequired {
            step,
            validation: task.validation,
            wanted,
        });
    }
    let manual = task.validation == Validation::Manual;
    let acceptable = |e: &Evidence| e.kind != EvidenceKind::Prose || (human && manual);
    if let Some(proof) = candidates().find(|e| acceptable(e)) {
        return Ok(Some(proof.clone()));
    }
    if task.has_acceptance() || (manual && !human) {
        if given.is_some_and(|e| e.kind == EvidenceKind::Prose) || candidates().next().is_some() {
            return Err(RuleError::ProseNotAccepted {
                step,
                validation: task.validation,
            });
        }
        if task.has_acceptance() {
            return Err(RuleError::AcceptanceEvidenceRequired { step });
        }
        return Err(RuleError::HumanOnly {
            operation: "close a manual step without run evidence",
            actor: ctx.actor.to_string(),
        });
    }
    Ok(None)
}
