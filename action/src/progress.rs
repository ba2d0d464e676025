//! `progress` mode: what an agent job's work on a step cost, and what its agent reported through MCP, recorded on the ledger.
//!
//! The agent workflow runs it after its agent job, with the agent's usage report
//! (`usage-file`: claude-code-action's execution file, Codex's JSON events, or a command
//! agent's `navin-usage:` lines) and its MCP journal (`journal`). Past a cap the ledger
//! pauses the mission (`budget`), and a paused mission dispatches nothing. A run that
//! reported nothing is debited 0 and marked, and the panel says the caps could not
//! see it.

use chrono::Utc;
use navin_ledger::ops::{Ctx, Operation};
use navin_ledger::store::{Committed, StoreError};
use navin_ledger::Actor;
use sha2::{Digest, Sha256};

use crate::commands;
use crate::error::ActionError;
use crate::journal::{self, Replay};
use crate::ledger;
use crate::run::{status_outputs, Run};
use crate::usage::{self, Source, Spend};

/// The `tokens` and `cost-usd` inputs, checked: a whole number of tokens, a finite cost
/// of 0 or more. `None` when neither is given.
fn explicit(run: &Run<'_>) -> Result<Option<Spend>, ActionError> {
    let env = run.env;
    if env.tokens.is_none() && env.cost_usd.is_none() {
        return Ok(None);
    }
    let tokens = match env.tokens.as_deref() {
        None => 0,
        Some(t) => t.parse::<u64>().map_err(|_| {
            ActionError::Step(format!(
                "the `tokens` input is {t:?}, not a whole number of tokens"
            ))
        })?,
    };
    let cost_usd = match env.cost_usd.as_deref() {
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
    Ok(Some(Spend {
        tokens,
        cost_usd,
        source: Source::UsageLines,
    }))
}

/// Reads an optional file input; a missing file is a warning, not a failure: the agent
/// job may have ended before writing it.
fn optional_file(path: Option<&std::path::Path>, what: &str) -> Option<String> {
    let path = path?;
    match std::fs::read(path) {
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) => {
            println!(
                "{}",
                commands::warning(&format!(
                    "the {what} {} cannot be read ({e}); going on without it",
                    path.display()
                ))
            );
            None
        }
    }
}

/// Posts an agent's question on the mission's issue once (a re-run finds its comment
/// by the op tag). A failure is a warning: the question is on the ledger and the panel.
fn ask_on_issue(
    run: &Run<'_>,
    access: &ledger::LedgerAccess,
    question: &str,
    op_id: &str,
    actor: &Actor,
) {
    let ledger = match access.store.read() {
        Ok(Some(s)) => s.ledger,
        _ => return,
    };
    let Some(issue) = navin_engine::effects::panel::panel_issue(&ledger, run.repo) else {
        return;
    };
    let n = ledger.question_number(question);
    let body = navin_domain::render::reply::agent_question(&actor.to_string(), question, n);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ActionError::io("starting the async runtime", e));
    let posted = runtime.and_then(|runtime| {
        // The client spawns its request buffer: build it inside the runtime.
        let _inside = runtime.enter();
        let github = crate::event::token_client(run.env, run.token)?;
        let client = github.installation(crate::event::ACTION_INSTALLATION);
        runtime
            .block_on(navin_engine::effects::comments::reply_once(
                &client, run.repo, issue, op_id, &body, true,
            ))
            .map_err(|e| crate::failure::from_github(&e))
    });
    if let Err(e) = posted {
        println!(
            "{}",
            commands::warning(&format!(
                "the agent's question is on the ledger, but posting it on #{issue} failed: {e}"
            ))
        );
    }
}

fn short_hash(text: &str) -> String {
    hex::encode(&Sha256::digest(text.as_bytes())[..8])
}

pub fn progress(run: &Run<'_>) -> Result<(), ActionError> {
    let step = run.env.step.clone().ok_or_else(|| {
        ActionError::Step("progress mode needs the `step` input: the step the usage is for".into())
    })?;
    let report = optional_file(run.env.usage_file.as_deref(), "usage file");
    let spend = match explicit(run)? {
        Some(spend) => Some(spend),
        None => report.as_deref().and_then(usage::read),
    };
    let journal = optional_file(run.env.journal.as_deref(), "MCP journal");

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

    let mut replayed = 0usize;
    if let Some(text) = journal.as_deref() {
        let (entries, bad) = journal::parse(text);
        for line in bad {
            println!("{}", commands::warning(&format!("{line}; skipped")));
        }
        for entry in &entries {
            match journal::replay(entry, &step) {
                Replay::Skip(why) => println!("{}", commands::notice(&why)),
                Replay::Apply { op, actor, op_id } => {
                    let ctx = Ctx::new(Utc::now(), actor.clone()).with_op_id(op_id.clone());
                    let landed = match access.store.transact(&op, &ctx) {
                        Ok(Committed::Written { .. }) => {
                            replayed += 1;
                            true
                        }
                        Ok(Committed::AlreadyApplied { .. }) => true,
                        // A rule refusal is the agent's report not fitting the ledger
                        // now (the step moved on): logged, never fatal to the spend.
                        Err(StoreError::Rule(rule)) => {
                            println!(
                                "{}",
                                commands::warning(&format!(
                                    "the agent's {} was not recorded: {rule}",
                                    entry.tool
                                ))
                            );
                            false
                        }
                        Err(e) => return Err(ledger::store_error(e, &run.branch)),
                    };
                    if let (true, Operation::Ask { question, .. }) = (landed, op.as_ref()) {
                        ask_on_issue(run, &access, question, &op_id, &actor);
                    }
                }
            }
        }
    }

    // The same report applies once per workflow run, whichever job attempt (re-run)
    // carries it; two runs reporting the same figures (two attempts of a fixed-cost
    // agent) are two debits. With no report, one per run attempt.
    let run_id = run.env.run_id.as_deref().unwrap_or("local");
    let op_id = match &report {
        Some(text) => format!(
            "{}#usage#{step}#{}",
            crate::event::delivery_id(run_id),
            short_hash(text)
        ),
        None => format!(
            "{}-a{}#usage#{step}",
            crate::event::delivery_id(run_id),
            run.env.run_attempt
        ),
    };
    let ctx = Ctx::new(Utc::now(), Actor::App("navin".to_owned())).with_op_id(op_id);
    let op = match &spend {
        Some(s) => Operation::Usage {
            step: step.clone(),
            tokens: s.tokens,
            cost_usd: s.cost_usd,
        },
        None => Operation::UsageUnreported { step: step.clone() },
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
    match &spend {
        Some(s) => println!(
            "{step}: {} tokens, {:.2} USD recorded from {}; the mission has used {} tokens and {:.2} USD ({})",
            s.tokens,
            s.cost_usd,
            s.source.describe(),
            p.tokens_used,
            p.cost_used_usd,
            after.mission.status
        ),
        None => println!(
            "{}",
            commands::warning(&format!(
                "{step}: the agent reported no tokens or cost (no execution file, JSON events or navin-usage lines): debited 0, and the mission panel says the caps could not see this run"
            ))
        ),
    }
    if replayed > 0 {
        println!("{step}: {replayed} report(s) from the agent's MCP journal recorded");
    }
    let mut outputs = vec![
        ("tokens-used", p.tokens_used.to_string()),
        ("cost-used-usd", format!("{:.2}", p.cost_used_usd)),
        ("spend-reported", spend.is_some().to_string()),
    ];
    outputs.extend(status_outputs(Some(&after)));
    run.outputs(&outputs)
}
