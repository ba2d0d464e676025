//! Human and JSON views of the ledger for the CLI: the mission, the ready queue, history, effects.

use navin_ledger::model::{Ledger, TaskStatus};
use navin_ledger::ops::Effect;
use navin_ledger::store::Store;
use serde_json::json;

use super::CliError;

pub(super) fn load(store: &Store) -> Result<Ledger, CliError> {
    match store.read()? {
        Some(snapshot) => Ok(snapshot.ledger),
        None => Err(CliError {
            message: format!(
                "no ledger on branch {}: start one with `navin ledger init --goal ...`",
                store.branch()
            ),
            code: super::EXIT_REFUSED,
        }),
    }
}

pub(super) fn mission(store: &Store, json: bool) -> Result<(), CliError> {
    let ledger = load(store)?;
    if json {
        let mission = navin_ledger::codec::mission_value(&ledger)
            .map_err(|e| CliError::usage(e.to_string()))?;
        println!("{}", json!({ "mission": mission, "board": ledger.board }));
        return Ok(());
    }
    let m = &ledger.mission;
    let p = &m.progress;
    let mut badges = Vec::new();
    if let Some(reason) = m.pause_reason {
        badges.push(format!("paused: {reason}"));
    }
    if p.loop_detected {
        badges.push("loop".to_string());
    }
    if p.stall_count > 0 {
        badges.push(format!("stall {}/{}", p.stall_count, p.budget.max_stalls));
    }
    let badges = if badges.is_empty() {
        String::new()
    } else {
        format!(" [{}]", badges.join(", "))
    };
    println!("Mission v{} · {}{badges}", m.version, m.status);
    println!("Goal: {}", m.goal);
    println!(
        "Budget: replans {}/{} · retries per step {} · stalls {}/{} · tokens {}{}",
        p.replan_count,
        p.budget.max_replans,
        p.budget.max_retries,
        p.stall_count,
        p.budget.max_stalls,
        p.tokens_used,
        p.budget
            .max_tokens
            .map(|m| format!("/{m}"))
            .unwrap_or_default()
    );
    if let Some(last) = m.history.last() {
        println!(
            "Last: {} ({} by {})",
            last.reason,
            last.at.format("%Y-%m-%d %H:%M"),
            last.actor
        );
    }
    for (label, items) in [
        ("Facts", &m.facts),
        ("Missing info", &m.missing_info),
        ("Constraints", &m.constraints),
    ] {
        if !items.is_empty() {
            println!("{label}: {}", items.join("; "));
        }
    }
    let tasks = &ledger.board.tasks;
    let done = tasks
        .iter()
        .filter(|t| t.status == TaskStatus::Done)
        .count();
    println!("Steps ({done}/{} done):", tasks.len());
    for t in tasks {
        let mark = match t.status {
            TaskStatus::Done => "[x]",
            TaskStatus::InProgress => "[>]",
            TaskStatus::Failed => "[!]",
            TaskStatus::Planned => "[ ]",
        };
        let mut notes = vec![t.validation.to_string()];
        if !t.depends_on.is_empty() {
            notes.push(format!("after {}", t.depends_on.join(", ")));
        }
        if t.retry_count > 0 {
            notes.push(format!("attempts {}/{}", t.retry_count, t.max_retries));
        }
        println!("  {mark} {} {} ({})", t.id, t.title, notes.join(", "));
    }
    let ready: Vec<&str> = ledger.ready().iter().map(|t| t.id.as_str()).collect();
    println!(
        "Ready: {}",
        if ready.is_empty() {
            "none".to_string()
        } else {
            ready.join(", ")
        }
    );
    Ok(())
}

pub(super) fn next(store: &Store, json: bool) -> Result<(), CliError> {
    let ledger = load(store)?;
    let ready = ledger.ready();
    if json {
        println!(
            "{}",
            serde_json::to_string(&ready).map_err(|e| CliError::usage(e.to_string()))?
        );
        return Ok(());
    }
    if ready.is_empty() {
        println!("no step is ready");
    }
    for t in ready {
        println!("{}\t{}\t({})", t.id, t.title, t.validation);
    }
    Ok(())
}

pub(super) fn history(store: &Store, limit: usize, json: bool) -> Result<(), CliError> {
    let commits = store.history(limit)?;
    if json {
        println!(
            "{}",
            serde_json::to_string(&commits).map_err(|e| CliError::usage(e.to_string()))?
        );
        return Ok(());
    }
    for c in commits {
        let reason = c
            .body
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default();
        println!(
            "{} {} {} — {}",
            &c.commit[..10],
            c.at.format("%Y-%m-%d %H:%M:%S"),
            c.subject,
            reason
        );
    }
    Ok(())
}

/// One line per effect, for people and for `--json` alike.
pub(super) fn effects(effects: &[Effect]) -> Vec<String> {
    crate::local::effect_lines(effects)
}

pub(super) fn digest(store: &Store, json: bool) -> Result<(), CliError> {
    let ledger = load(store)?;
    let d = navin_ledger::digest::digest(&ledger);
    if json {
        println!(
            "{}",
            serde_json::to_string(&d).map_err(|e| CliError::usage(e.to_string()))?
        );
    } else {
        println!("{}", d.text);
    }
    Ok(())
}

pub(super) fn brief(
    store: &Store,
    repo: &std::path::Path,
    id: &str,
    json: bool,
) -> Result<(), CliError> {
    let ledger = load(store)?;
    let task = ledger.board.task(id).ok_or_else(|| {
        CliError::from(navin_ledger::store::StoreError::Rule(
            navin_ledger::RuleError::UnknownStep { id: id.to_owned() },
        ))
    })?;
    let (title, body) = crate::mcp::brief(store, repo, &ledger, task).map_err(|e| CliError {
        message: e.text(),
        code: super::EXIT_ERROR,
    })?;
    if json {
        println!(
            "{}",
            serde_json::json!({ "step": id, "title": title, "brief": body })
        );
    } else {
        println!("# {title}\n\n{body}");
    }
    Ok(())
}
