//! Picks the mode to run after the checks every mode needs, and the two small modes (ready matrix, summary) that need no file of their own.

use navin_domain::render::{mission_panel, PanelContext, RepoRef};
use navin_ledger::model::{Ledger, MissionStatus, Task};
use serde_json::{json, Value};

use crate::commands;
use crate::env::{ActionEnv, Mode};
use crate::error::ActionError;
use crate::run::{load_config, status_outputs, Run};

/// Validates what every mode needs, then runs the mode.
pub fn run(env: &ActionEnv) -> Result<(), ActionError> {
    let token = env.token.as_deref().ok_or(ActionError::MissingToken)?;
    let repo = env.repository()?;
    match env.mode {
        Mode::Event => return crate::event::run(env, token, repo),
        // CI evidence has one flow, the engine's: evidence mode is event mode kept for
        // workflows that name it, limited to the event it was made for.
        Mode::Evidence if env.event_name == "workflow_run" => {
            return crate::event::run(env, token, repo)
        }
        Mode::Evidence => {
            println!(
                "{}",
                commands::notice(&format!(
                    "evidence mode handles workflow_run events; {:?} is not one: nothing to do",
                    env.event_name
                ))
            );
            return Ok(());
        }
        Mode::ReadyMatrix
        | Mode::Summary
        | Mode::Brief
        | Mode::Progress
        | Mode::Verify
        | Mode::Contain => {}
    }
    let config = load_config(env)?;
    let branch = env
        .ledger_branch
        .clone()
        .unwrap_or_else(|| config.ledger_branch.clone());
    let run = Run {
        env,
        token,
        repo,
        branch,
    };
    match env.mode {
        Mode::ReadyMatrix => ready_matrix(&run),
        Mode::Summary => summary(&run),
        Mode::Brief => crate::brief::brief(&run, &config),
        Mode::Progress => crate::progress::progress(&run),
        Mode::Verify => crate::verify::verify(&run),
        Mode::Contain => crate::contain::contain(&run),
        Mode::Event | Mode::Evidence => Ok(()),
    }
}

/// The matrix entry for one ready step.
pub fn matrix_entry(task: &Task) -> Value {
    json!({
        "id": task.id,
        "title": task.title,
        "validation": task.validation.as_str(),
        "agent": task.agent,
        "depends_on": task.depends_on,
    })
}

/// The ready queue as the `ready-steps` array. Only a running mission hands
/// out work: a draft is not approved yet, and paused, blocked or finished
/// missions must not start agents.
pub fn ready_steps(ledger: Option<&Ledger>) -> Value {
    match ledger {
        Some(l) if l.mission.status == MissionStatus::Running => {
            Value::Array(l.ready().into_iter().map(matrix_entry).collect())
        }
        _ => Value::Array(Vec::new()),
    }
}

fn ready_matrix(run: &Run<'_>) -> Result<(), ActionError> {
    let (_access, ledger) = run.read()?;
    let steps = ready_steps(ledger.as_ref());
    let count = steps.as_array().map_or(0, Vec::len);
    match &ledger {
        None => println!(
            "{}",
            commands::notice(&format!(
                "no mission yet: the ledger branch {} does not exist; ready-steps is []",
                run.branch
            ))
        ),
        Some(l) if l.mission.status != MissionStatus::Running => println!(
            "{}",
            commands::notice(&format!(
                "the mission is {}, not running: ready-steps is []",
                l.mission.status
            ))
        ),
        Some(l) => println!("mission v{}: {count} ready step(s)", l.mission.version),
    }
    let mut outputs = vec![("ready-steps", steps.to_string())];
    outputs.extend(status_outputs(ledger.as_ref()));
    run.outputs(&outputs)
}

fn summary(run: &Run<'_>) -> Result<(), ActionError> {
    let (_access, ledger) = run.read()?;
    let markdown = match &ledger {
        Some(l) => {
            let repo = RepoRef {
                full_name: run.repo.to_string(),
                html_base: run.env.server_url.clone(),
                ledger_branch: run.branch.clone(),
            };
            mission_panel(l, &PanelContext::new(repo))
        }
        None => format!(
            "## Navin\n\nNo mission yet: the ledger branch `{}` does not exist. \
             Comment `/mission <goal>` or approve a plan to start one.\n",
            run.branch
        ),
    };
    match &run.env.step_summary {
        Some(path) => commands::append(path, &format!("{markdown}\n"))?,
        None => print!("{markdown}"),
    }
    run.outputs(&status_outputs(ledger.as_ref()))
}
