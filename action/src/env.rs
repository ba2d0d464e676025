//! The inputs and runner variables `navin-action` reads, gathered once at startup.

use std::path::PathBuf;

use crate::error::ActionError;

/// What the action was asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Event,
    ReadyMatrix,
    Summary,
    Evidence,
    /// One step's brief, digest, branch and model as outputs, for an agent job.
    Brief,
    /// An agent job's usage (tokens, cost) debited against the mission's budget.
    Progress,
    /// A plan stage's verification commands run on its pull request (the
    /// `navin/verify` check).
    Verify,
    /// An agent's diff checked before it is pushed: no workflow, Navin config or git
    /// hook changes unless the plan names them.
    Contain,
}

impl Mode {
    pub fn parse(s: &str) -> Result<Self, ActionError> {
        match s.trim() {
            "event" => Ok(Mode::Event),
            "ready-matrix" => Ok(Mode::ReadyMatrix),
            "summary" => Ok(Mode::Summary),
            "evidence" => Ok(Mode::Evidence),
            "brief" => Ok(Mode::Brief),
            "progress" => Ok(Mode::Progress),
            "verify" => Ok(Mode::Verify),
            "contain" => Ok(Mode::Contain),
            other => Err(ActionError::UnknownMode(other.to_string())),
        }
    }
}

/// Everything read from the process environment and arguments. Built by
/// [`ActionEnv::from_lookup`] so tests can feed a map instead of the real environment.
#[derive(Clone)]
pub struct ActionEnv {
    pub mode: Mode,
    pub token: Option<String>,
    pub repository: Option<String>,
    /// `GITHUB_REPOSITORY_ID`: what the ledger's seals name, as the App's do.
    pub repository_id: Option<u64>,
    pub api_url: String,
    pub server_url: String,
    pub workspace: PathBuf,
    pub event_name: String,
    pub event_path: Option<PathBuf>,
    pub run_id: Option<String>,
    /// `GITHUB_RUN_ATTEMPT`: 1 for the first run, more for re-runs of the same run id.
    pub run_attempt: u32,
    pub output: Option<PathBuf>,
    pub step_summary: Option<PathBuf>,
    pub runner_temp: Option<PathBuf>,
    /// `INPUT_LEDGER_BRANCH`; empty means the config's (or the default) branch.
    pub ledger_branch: Option<String>,
    pub config: String,
    /// Overrides the ledger remote (`{server}/{repo}.git`): tests and unusual hosts.
    pub git_url: Option<String>,
    /// `NAVIN_WRITE_SPACING_MS`: the gap between two REST writes (default 1 s).
    pub write_spacing: Option<std::time::Duration>,
    /// `INPUT_STEP`: the step `brief` mode renders.
    pub step: Option<String>,
    /// `INPUT_AGENT_TOKEN`: a user token for assigning step issues to Copilot.
    pub agent_token: Option<String>,
    /// `INPUT_TOKENS` and `INPUT_COST_USD`: what `progress` mode debits.
    pub tokens: Option<String>,
    pub cost_usd: Option<String>,
    /// `progress` mode: the agent's usage report (execution file, JSON events or
    /// usage lines).
    pub usage_file: Option<PathBuf>,
    /// `progress` mode: the agent's `navin mcp --journal` file.
    pub journal: Option<PathBuf>,
    /// `contain` mode: the agent's diff.
    pub patch: Option<PathBuf>,
    /// `NAVIN_VERIFY_TIMEOUT`: seconds one command of `verify` mode may run.
    pub verify_timeout: Option<String>,
    /// `INPUT_PLANNER`: replaces `planner.source` when set.
    pub planner: Option<String>,
    /// `INPUT_PLANNER_BASE_URL`, `INPUT_PLANNER_MODEL`: the `llm` planner's endpoint
    /// and default model (GitHub Models unless the workflow says otherwise).
    pub planner_base_url: Option<String>,
    pub planner_model: Option<String>,
    /// `INPUT_PLANNER_API_KEY`: the endpoint's key; unset means the job's token.
    pub planner_api_key: Option<String>,
    /// `INPUT_LEDGER_KEY`: the key Navin seals its ledger commits with (a repository
    /// secret). A job has nowhere to keep one of its own, so without it the commits go
    /// unsealed and are told by committer and trailers.
    pub ledger_key: Option<String>,
}

impl std::fmt::Debug for ActionEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActionEnv")
            .field("mode", &self.mode)
            .field("token", &self.token.as_ref().map(|_| "***"))
            .field("agent_token", &self.agent_token.as_ref().map(|_| "***"))
            .field(
                "planner_api_key",
                &self.planner_api_key.as_ref().map(|_| "***"),
            )
            .field("ledger_key", &self.ledger_key.as_ref().map(|_| "***"))
            .field("repository", &self.repository)
            .field("event_name", &self.event_name)
            .finish_non_exhaustive()
    }
}

/// The value of `--mode X` or `--mode=X` in `args`, if given.
pub fn mode_flag(args: &[String]) -> Option<String> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--mode" {
            return it.next().cloned();
        }
        if let Some(v) = a.strip_prefix("--mode=") {
            return Some(v.to_string());
        }
    }
    None
}

impl ActionEnv {
    /// Reads the contract: the mode from `--mode`, else `INPUT_MODE`, else
    /// `event` (the action's default); the token from `INPUT_GITHUB_TOKEN`,
    /// else `GITHUB_TOKEN`. Empty variables count as unset, as the runner
    /// passes unset inputs as empty strings.
    pub fn from_lookup(
        args: &[String],
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ActionError> {
        let var = |name: &str| get(name).filter(|v| !v.trim().is_empty());
        let mode = match mode_flag(args).or_else(|| var("INPUT_MODE")) {
            Some(m) => Mode::parse(&m)?,
            None => Mode::Event,
        };
        Ok(Self {
            mode,
            token: var("INPUT_GITHUB_TOKEN").or_else(|| var("GITHUB_TOKEN")),
            repository: var("GITHUB_REPOSITORY"),
            repository_id: var("GITHUB_REPOSITORY_ID").and_then(|id| id.trim().parse().ok()),
            api_url: var("GITHUB_API_URL").unwrap_or_else(|| "https://api.github.com".into()),
            server_url: var("GITHUB_SERVER_URL").unwrap_or_else(|| "https://github.com".into()),
            workspace: var("GITHUB_WORKSPACE")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(".")),
            event_name: var("GITHUB_EVENT_NAME").unwrap_or_default(),
            event_path: var("GITHUB_EVENT_PATH").map(PathBuf::from),
            run_id: var("GITHUB_RUN_ID"),
            run_attempt: var("GITHUB_RUN_ATTEMPT")
                .and_then(|a| a.trim().parse().ok())
                .unwrap_or(1),
            output: var("GITHUB_OUTPUT").map(PathBuf::from),
            step_summary: var("GITHUB_STEP_SUMMARY").map(PathBuf::from),
            runner_temp: var("RUNNER_TEMP").map(PathBuf::from),
            ledger_branch: var("INPUT_LEDGER_BRANCH"),
            config: var("INPUT_CONFIG").unwrap_or_else(|| ".github/navin.yml".into()),
            git_url: var("NAVIN_GIT_URL"),
            write_spacing: var("NAVIN_WRITE_SPACING_MS")
                .and_then(|ms| ms.trim().parse().ok())
                .map(std::time::Duration::from_millis),
            step: var("INPUT_STEP").map(|s| s.trim().to_owned()),
            agent_token: var("INPUT_AGENT_TOKEN").map(|t| t.trim().to_owned()),
            tokens: var("INPUT_TOKENS").map(|t| t.trim().to_owned()),
            cost_usd: var("INPUT_COST_USD").map(|c| c.trim().to_owned()),
            usage_file: var("INPUT_USAGE_FILE").map(|p| PathBuf::from(p.trim())),
            journal: var("INPUT_JOURNAL").map(|p| PathBuf::from(p.trim())),
            patch: var("INPUT_PATCH").map(|p| PathBuf::from(p.trim())),
            verify_timeout: var("NAVIN_VERIFY_TIMEOUT").map(|t| t.trim().to_owned()),
            planner: var("INPUT_PLANNER").map(|p| p.trim().to_owned()),
            planner_base_url: var("INPUT_PLANNER_BASE_URL").map(|u| u.trim().to_owned()),
            planner_model: var("INPUT_PLANNER_MODEL").map(|m| m.trim().to_owned()),
            planner_api_key: var("INPUT_PLANNER_API_KEY").map(|k| k.trim().to_owned()),
            ledger_key: var("INPUT_LEDGER_KEY"),
        })
    }

    /// The `ledger-key` input as a seal key; too short a key is refused, naming the input.
    pub fn seal_key(&self) -> Result<Option<navin_ledger::store::SealKey>, ActionError> {
        self.ledger_key
            .as_deref()
            .map(navin_ledger::store::SealKey::from_text)
            .transpose()
            .map_err(|e| ActionError::Input {
                input: "ledger-key",
                message: e.to_string(),
            })
    }

    /// What this job's ledger seals name: the repository's id, as the App's seals do.
    pub fn seal_repository(&self) -> String {
        navin_ledger::store::github_repository(
            self.repository_id,
            self.repository.as_deref().unwrap_or_default(),
        )
    }

    /// `owner/name` of the repository the job runs in.
    pub fn repository(&self) -> Result<&str, ActionError> {
        self.repository
            .as_deref()
            .ok_or(ActionError::MissingEnv("GITHUB_REPOSITORY"))
    }

    /// The ledger's git remote.
    pub fn git_url(&self) -> Result<String, ActionError> {
        match &self.git_url {
            Some(url) => Ok(url.clone()),
            None => Ok(format!(
                "{}/{}.git",
                self.server_url.trim_end_matches('/'),
                self.repository()?
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)], args: &[&str]) -> Result<ActionEnv, ActionError> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        ActionEnv::from_lookup(&args, |k| map.get(k).cloned())
    }

    #[test]
    fn mode_flag_wins_over_input_mode() {
        let e = env(&[("INPUT_MODE", "summary")], &["--mode", "evidence"]).expect("env");
        assert_eq!(e.mode, Mode::Evidence);
        let e = env(&[("INPUT_MODE", "summary")], &["--mode=ready-matrix"]).expect("env");
        assert_eq!(e.mode, Mode::ReadyMatrix);
        let e = env(&[("INPUT_MODE", "summary")], &[]).expect("env");
        assert_eq!(e.mode, Mode::Summary);
    }

    #[test]
    fn rejects_an_unknown_mode() {
        let err = env(&[], &["--mode", "deploy"]).expect_err("unknown mode");
        assert!(err.to_string().contains("\"deploy\""));
    }

    #[test]
    fn empty_input_token_falls_back_to_github_token() {
        let e = env(
            &[("INPUT_GITHUB_TOKEN", ""), ("GITHUB_TOKEN", "ghs_x")],
            &[],
        )
        .expect("env");
        assert_eq!(e.token.as_deref(), Some("ghs_x"));
        assert!(!format!("{e:?}").contains("ghs_x"));
    }

    #[test]
    fn git_url_defaults_to_the_server_and_repository() {
        let e = env(
            &[
                ("GITHUB_REPOSITORY", "o/r"),
                ("GITHUB_SERVER_URL", "https://ghe.example/"),
            ],
            &[],
        )
        .expect("env");
        assert_eq!(e.git_url().expect("url"), "https://ghe.example/o/r.git");
    }
}
