//! The modes and what they share: token and repository checks, config, the ledger snapshot and step outputs.

use navin_engine::config::{parse_repo_config, RepoConfig};
use navin_engine::render::{mission_panel, PanelContext, RepoRef};
use navin_ledger::model::{Ledger, MissionStatus, Task};
use serde_json::{json, Value};

use crate::commands;
use crate::env::{ActionEnv, Mode};
use crate::error::ActionError;
use crate::ledger::{self, LedgerAccess};

/// What one mode run needs besides the environment.
pub struct Run<'a> {
    pub env: &'a ActionEnv,
    pub token: &'a str,
    pub repo: &'a str,
    pub branch: String,
}

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

/// `.github/navin.yml` (or `config`) from the checked-out workspace; defaults when absent.
pub fn load_config(env: &ActionEnv) -> Result<RepoConfig, ActionError> {
    let path = env.workspace.join(&env.config);
    match std::fs::read_to_string(&path) {
        Ok(text) => parse_repo_config(&text).map_err(|e| ActionError::Config {
            path: env.config.clone(),
            message: e.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(RepoConfig::default()),
        Err(e) => Err(ActionError::io(format!("reading {}", path.display()), e)),
    }
}

impl Run<'_> {
    /// Opens the ledger and reads its tip; `None` when the branch does not exist yet.
    pub fn read(&self) -> Result<(LedgerAccess, Option<Ledger>), ActionError> {
        let access = ledger::open(self.env, self.token, &self.branch)?;
        let snapshot = access
            .store
            .read()
            .map_err(|e| ledger::store_error(e, &self.branch))?;
        Ok((access, snapshot.map(|s| s.ledger)))
    }

    /// Writes step outputs (or prints them when run outside a job).
    pub fn outputs(&self, outputs: &[(&str, String)]) -> Result<(), ActionError> {
        write_outputs(self.env, outputs)
    }
}

/// Appends step outputs to `GITHUB_OUTPUT` (or prints them when run outside a job).
pub fn write_outputs(env: &ActionEnv, outputs: &[(&str, String)]) -> Result<(), ActionError> {
    let text = commands::format_outputs(outputs, delimiter_seed());
    match &env.output {
        Some(path) => commands::append(path, &text),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

/// Varies the heredoc delimiter per run; its safety comes from the
/// containment check in [`commands::delimiter`], not from secrecy.
fn delimiter_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    nanos ^ (u64::from(std::process::id()) << 32)
}

/// `mission-status`, `mission-version` and `digest`, empty without a ledger.
pub fn status_outputs(ledger: Option<&Ledger>) -> Vec<(&'static str, String)> {
    match ledger {
        Some(l) => vec![
            ("mission-status", l.mission.status.as_str().to_string()),
            ("mission-version", l.mission.version.to_string()),
            ("digest", navin_ledger::digest::digest(l).text),
        ],
        None => vec![
            ("mission-status", String::new()),
            ("mission-version", String::new()),
            ("digest", String::new()),
        ],
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
