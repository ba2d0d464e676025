//! `progress` mode: what an agent job's work on a step cost (tokens, dollars), debited on the ledger against the mission's budget.
//!
//! The agent workflow runs it after its agent step with the usage the agent's action
//! reports (claude-code-action's execution output, Codex's usage). Past a cap the
//! ledger pauses the mission (`budget`), and a paused mission dispatches nothing.

use chrono::Utc;
use navin_ledger::ops::{Ctx, Operation};
use navin_ledger::store::Committed;
use navin_ledger::Actor;

use crate::error::ActionError;
use crate::ledger;
use crate::modes::{status_outputs, Run};

/// The usage inputs, checked: a whole number of tokens, a finite cost of 0 or more.
fn usage(run: &Run<'_>) -> Result<(String, u64, f64), ActionError> {
    let env = run.env;
    let step = env.step.clone().ok_or_else(|| {
        ActionError::Step("progress mode needs the `step` input: the step the usage is for".into())
    })?;
    let tokens = match env.tokens.as_deref() {
        None => 0,
        Some(t) => t.parse::<u64>().map_err(|_| {
            ActionError::Step(format!(
                "the `tokens` input is {t:?}, not a whole number of tokens"
            ))
        })?,
    };
    let cost = match env.cost_usd.as_deref() {
        None => 0.0,
        Some(c) => c
            .trim_start_matches('$')
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| {
                ActionError::Step(format!(
                    "the `cost-usd` input is {c:?}, not an amount of 0 or more US dollars"
                ))
            })?,
    };
    Ok((step, tokens, cost))
}

pub fn progress(run: &Run<'_>) -> Result<(), ActionError> {
    let (step, tokens, cost_usd) = usage(run)?;
    let (access, ledger) = run.read()?;
    let Some(ledger) = ledger else {
        return Err(ActionError::Step(format!(
            "no mission yet: the ledger branch {} does not exist, so there is no step {step:?} to report on",
            run.branch
        )));
    };
    if ledger.board.task(&step).is_none() {
        return Err(ActionError::Step(format!(
            "there is no step {step:?} on the board"
        )));
    }
    // One report per step per run attempt: a re-run of the job is new spend, a retried
    // push of the same report is not.
    let run_id = run.env.run_id.as_deref().unwrap_or("local");
    let op_id = format!(
        "{}-a{}#usage#{step}",
        crate::event::delivery_id(run_id),
        run.env.run_attempt
    );
    let ctx = Ctx::new(Utc::now(), Actor::App("navin".to_owned())).with_op_id(op_id);
    let op = Operation::Usage {
        step: step.clone(),
        tokens,
        cost_usd,
    };
    let after = match access
        .store
        .transact(&op, &ctx)
        .map_err(|e| ledger::store_error(e, &run.branch))?
    {
        Committed::Written { ledger, .. } => *ledger,
        Committed::AlreadyApplied { .. } => access
            .store
            .read()
            .map_err(|e| ledger::store_error(e, &run.branch))?
            .map(|s| s.ledger)
            .unwrap_or(ledger),
    };
    let p = &after.mission.progress;
    println!(
        "{step}: {tokens} tokens, {cost_usd:.2} USD recorded; the mission has used {} tokens and {:.2} USD ({})",
        p.tokens_used, p.cost_used_usd, after.mission.status
    );
    let mut outputs = vec![
        ("tokens-used", p.tokens_used.to_string()),
        ("cost-used-usd", format!("{:.2}", p.cost_used_usd)),
    ];
    outputs.extend(status_outputs(Some(&after)));
    run.outputs(&outputs)
}
