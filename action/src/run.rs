//! What every mode shares: the checked run (token, repository, ledger branch), the repository config, the ledger snapshot and step outputs. It sits below the dispatcher in modes.rs so the modes it calls never import their caller.

use navin_domain::config::{parse_repo_config, RepoConfig};
use navin_ledger::model::Ledger;

use crate::commands;
use crate::env::ActionEnv;
use crate::error::ActionError;
use crate::ledger::{self, LedgerAccess};

/// What one mode run needs besides the environment.
pub struct Run<'a> {
    pub env: &'a ActionEnv,
    pub token: &'a str,
    pub repo: &'a str,
    pub branch: String,
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
