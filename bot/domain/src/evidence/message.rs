//! The sentence a `/done` refusal shows: which checks are missing, running, failing or not green, and what to do.

use std::fmt::Write;

use navin_ledger::model::Task;

use super::verdict::{FinishedCheck, NotApplicable, RunningCheck, Verdict};
use crate::render::text::{code, human_duration, inline, link, short_sha};

/// Names shown per list before "and N more".
const SHOWN: usize = 10;

/// Explains `verdict` for `step` in one short markdown paragraph, naming the
/// checks by name (linked to their runs) so the reader knows what to open.
/// Check names come from workflow files and are escaped.
pub fn missing_checks_message(step: &Task, verdict: &Verdict) -> String {
    let id = code(&step.id);
    let head = step
        .links
        .head_sha
        .as_deref()
        .map(|s| code(&short_sha(s)))
        .unwrap_or_else(|| "its head".to_owned());
    match verdict {
        Verdict::Green { evidence } => {
            let names: Vec<String> = evidence
                .iter()
                .map(|e| link(e.name.as_deref().unwrap_or("check"), e.url.as_deref(), 60))
                .collect();
            format!("Step {id} is proven on {head}: {} green.", list(&names))
        }
        Verdict::Red { failed, .. } => format!(
            "Step {id} is not done: required checks failed on {head}: {}. Fix the code and push; the new head's runs will be checked again.",
            list(&failed.iter().map(finished).collect::<Vec<_>>())
        ),
        Verdict::Pending {
            missing,
            running,
            not_green,
        } => {
            if missing.is_empty() && running.is_empty() && not_green.is_empty() {
                return format!(
                    "Step {id} is not done: no check run from a trusted app has reported on {head} yet. Wait for CI to start, or check that a workflow runs on this pull request."
                );
            }
            let mut out = format!("Step {id} is not done yet: on {head}");
            let mut parts = Vec::new();
            if !missing.is_empty() {
                let names: Vec<String> = missing.iter().map(|n| code(n)).collect();
                parts.push(format!(
                    " these required checks have not reported: {}",
                    list(&names)
                ));
            }
            if !running.is_empty() {
                parts.push(format!(
                    " these are still running: {}",
                    list(&running.iter().map(running_check).collect::<Vec<_>>())
                ));
            }
            if !not_green.is_empty() {
                parts.push(format!(
                    " these finished without passing and need a re-run (or a job that actually runs): {}",
                    list(&not_green.iter().map(finished).collect::<Vec<_>>())
                ));
            }
            out.push_str(&parts.join(";"));
            out.push('.');
            out
        }
        Verdict::NotApplicable { reason } => match reason {
            NotApplicable::NoLinkedHead => format!(
                "Step {id} has no linked pull request, so no check run can prove it. Add a line `Navin-Step: {}` to the pull request's description, or name its branch `navin/{}-…`.",
                step.id, step.id
            ),
            NotApplicable::NoRunNeeded { validation } => format!(
                "Step {id} has validation {} and no acceptance, so it needs no check run; a maintainer can close it with `/done {} <evidence>`.",
                code(validation.as_str()),
                step.id
            ),
        },
    }
}

fn finished(f: &FinishedCheck) -> String {
    let mut s = format!(
        "{} ({})",
        link(&f.name, f.url.as_deref(), 60),
        inline(&f.conclusion, 30)
    );
    if let Some(note) = &f.note {
        let _ = write!(s, ": {}", inline(note, 120));
    }
    s
}

fn running_check(r: &RunningCheck) -> String {
    let mut s = format!("{} ({}", link(&r.name, r.url.as_deref(), 60), r.status);
    if let Some(d) = r.for_how_long {
        let _ = write!(s, " for {}", human_duration(d));
    }
    s.push(')');
    s
}

fn list(items: &[String]) -> String {
    let mut out = items
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > SHOWN {
        let _ = write!(out, " and {} more", items.len() - SHOWN);
    }
    out
}
