//! `mode: event`: the triggering webhook event handed to the same engine `navin serve` runs, with the job's token, then the outputs and job summary.

use std::sync::Arc;
use std::time::Duration;

use navin_domain::render::{mission_panel, PanelContext, RepoRef};
use navin_engine::effects::panel;
use navin_engine::{ledger as engine_ledger, parse_event, Delivery, Engine, EngineConfig, Event};
use navin_github::{GitHubApp, GitHubConfig, NoMetrics};
use navin_ledger::model::Ledger;
use navin_ledger::plan::record::PlanRecord;
use secrecy::SecretString;
use serde_json::Value;

use crate::capture::Captured;
use crate::commands;
use crate::env::ActionEnv;
use crate::error::ActionError;
use crate::failure;
use crate::run::{load_config, status_outputs, write_outputs};

/// Events `mode: event` hands to the engine.
pub const EVENTS: [&str; 9] = [
    "schedule",
    "issue_comment",
    "issues",
    "pull_request_review",
    "pull_request",
    "pull_request_target",
    "check_run",
    "check_suite",
    "workflow_run",
];

/// The lane the job's token is used on. Payloads under `GITHUB_TOKEN` carry no
/// installation; a token-mode client accepts any id, and this one is not the App lane
/// (0), so writes keep their spacing.
pub const ACTION_INSTALLATION: u64 = 1;

/// Gap between two writes of one job: GitHub asks for about a second between
/// content-creating requests; a job makes only a handful.
const WRITE_SPACING: Duration = Duration::from_millis(1000);

/// Attempts after the first when the engine reports a transient failure.
const EXTRA_ATTEMPTS: u32 = 2;
/// Wait before a retry, times the attempt number.
const RETRY_WAIT: Duration = Duration::from_secs(2);

/// The slug whose `[bot]` comments are the Action's own.
pub const ACTIONS_SLUG: &str = "github-actions";

/// The delivery id of this job's event: the workflow run id, which a re-run keeps, so
/// the ledger's op-id dedup and the engine's reply tags recognise a re-run as the same
/// delivery. The attempt number says whether effects may already have happened.
pub fn delivery_id(run_id: &str) -> String {
    let safe: String = run_id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    format!("actions-run-{safe}")
}

/// This job's delivery: the run id as its key and the run attempt as its attempt.
/// Payloads under `GITHUB_TOKEN` often carry no installation; the token-mode client
/// accepts any id, so [`ACTION_INSTALLATION`] stands in.
pub fn delivery(env: &ActionEnv) -> Result<Delivery, ActionError> {
    let run_id = env
        .run_id
        .as_deref()
        .ok_or(ActionError::MissingEnv("GITHUB_RUN_ID"))?;
    Ok(Delivery {
        id: delivery_id(run_id),
        attempt: env.run_attempt.max(1),
        installation: Some(ACTION_INSTALLATION),
        repository: env.repository.clone(),
        received_at: None,
        final_attempt: false,
    })
}

/// The head repository of a pull-request event from a fork. GitHub gives `pull_request`
/// and `pull_request_review` runs from forks a read-only token; `pull_request_target`
/// runs in the base repository with a write token, so it is not refused here.
pub fn read_only_fork(event_name: &str, payload: &Value, repo: &str) -> Option<String> {
    if !matches!(event_name, "pull_request" | "pull_request_review") {
        return None;
    }
    payload
        .pointer("/pull_request/head/repo/full_name")
        .and_then(Value::as_str)
        .filter(|head| !head.eq_ignore_ascii_case(repo))
        .map(str::to_owned)
}

/// The issue or pull request number the event is about, if any.
pub fn subject_number(payload: &Value) -> Option<u64> {
    payload
        .pointer("/issue/number")
        .or_else(|| payload.pointer("/pull_request/number"))
        .and_then(Value::as_u64)
}

/// Runs the event. Unknown events and actions the engine ignores end with one notice.
pub fn run(env: &ActionEnv, token: &str, repo: &str) -> Result<(), ActionError> {
    let name = env.event_name.as_str();
    if !EVENTS.contains(&name) {
        println!(
            "{}",
            commands::notice(&format!(
                "event mode handles {}; {name:?} is not one of them: nothing to do",
                EVENTS.join(", ")
            ))
        );
        return Ok(());
    }
    // A scheduled run is Navin's clock: the engine's sweep of this repository (the
    // closed agent loop's waits), whatever the schedule payload holds.
    let tick_path = std::path::PathBuf::from("(schedule)");
    let (name, path, body) = if name == "schedule" {
        let tick = serde_json::json!({ "action": "tick", "repository": { "full_name": repo } });
        let body = tick.to_string().into_bytes();
        (navin_domain::event::SWEEP_EVENT, tick_path.as_path(), body)
    } else {
        let path = env
            .event_path
            .as_deref()
            .ok_or(ActionError::MissingEnv("GITHUB_EVENT_PATH"))?;
        let body = std::fs::read(path).map_err(|e| ActionError::Payload {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        (name, path, body)
    };
    let payload: Value = serde_json::from_slice(&body).map_err(|e| ActionError::Payload {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    if let Some(fork) = read_only_fork(name, &payload, repo) {
        println!(
            "{}",
            commands::notice(&format!(
                "pull request from the fork {fork}: GitHub gives such runs a read-only token, \
                 so Navin cannot write the ledger here and changed nothing (the Navin App has no such limit)"
            ))
        );
        return Ok(());
    }
    let action = payload["action"].as_str().unwrap_or_default().to_owned();
    let parsed = parse_event(delivery(env)?, name, &body).map_err(|e| ActionError::Payload {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    let Some(event) = parsed else {
        println!(
            "{}",
            commands::notice(&format!(
                "{name} with action {action:?} is not one Navin acts on: nothing to do"
            ))
        );
        return Ok(());
    };
    let branch = match &env.ledger_branch {
        Some(b) => b.clone(),
        None => load_config(env)?.ledger_branch,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ActionError::io("starting the async runtime", e))?;
    let captured = crate::capture::install();
    let work = Work {
        env,
        token,
        repo,
        branch,
        event,
        action,
        subject: subject_number(&payload),
        captured,
    };
    runtime.block_on(work.run())
}

/// One event run: the pieces the engine and the outputs share.
struct Work<'a> {
    env: &'a ActionEnv,
    token: &'a str,
    repo: &'a str,
    branch: String,
    event: Event,
    action: String,
    subject: Option<u64>,
    captured: Captured,
}

impl Work<'_> {
    async fn run(self) -> Result<(), ActionError> {
        let github = token_client(self.env, self.token)?;
        let data_dir = ledger_dir(self.env)?;
        let (planner, planner_source) = planner_settings(self.env, self.token)?;
        let config = EngineConfig {
            app_slug: Some(ACTIONS_SLUG.to_owned()),
            ledger_branch: Some(self.branch.clone()),
            agent_token: self.env.agent_token.clone().map(SecretString::from),
            planner,
            planner_source,
            ledger_key: self.env.seal_key()?,
            ..EngineConfig::new(data_dir.path())
        };
        let engine = Engine::new(github.clone(), config);
        let mut event = self.event.clone();
        let handled = loop {
            // The last try tells the commenter if it fails: the job has no later.
            event.delivery.final_attempt =
                event.delivery.attempt >= self.event.delivery.attempt + EXTRA_ATTEMPTS;
            match engine.handle(&event).await {
                // The server would queue a transient failure for later; a job has no
                // later, so it tries again now, a bounded number of times. Every
                // effect is keyed by the delivery, so a retry repeats nothing.
                Err(e)
                    if e.is_transient()
                        && e.missing_permission().is_none()
                        && event.delivery.attempt
                            < self.event.delivery.attempt + EXTRA_ATTEMPTS =>
                {
                    println!("transient failure, trying again: {e}");
                    tokio::time::sleep(RETRY_WAIT * event.delivery.attempt).await;
                    event.delivery.attempt += 1;
                }
                other => break other,
            }
        };
        // What the engine logged goes to the job log; what decides the job's outcome is
        // the typed result and report below, never these lines.
        for line in self
            .captured
            .errors()
            .iter()
            .chain(&self.captured.warnings())
        {
            println!("{}", commands::warning(line));
        }
        let report = handled.map_err(|e| failure::from_engine(&e, &self.branch))?;
        // An invalid `.github/navin.yml` changed nothing; the job fails naming the key.
        if let Some(why) = report.invalid_config() {
            return Err(ActionError::InvalidRepoConfig(why));
        }
        // The engine answered a refused call with an error reply: still a failure of
        // this job, and the permission it lacked is what to fix.
        if let Some(e) = failure::from_setbacks(&report.setbacks(), &self.branch) {
            return Err(e);
        }
        let url = github.git_remote_url(self.repo);
        let ledger = self.read_ledger(data_dir.path(), &url).await?;
        let plan_url = self.plan_url(&github, data_dir.path(), &url).await?;
        let mut outputs = status_outputs(ledger.as_ref());
        outputs.push(("plan-url", plan_url.clone().unwrap_or_default()));
        write_outputs(self.env, &outputs)?;
        self.summary(ledger.as_ref(), plan_url.as_deref())
    }

    /// The ledger after the event, from the clone the engine used (fetched again).
    async fn read_ledger(
        &self,
        data_dir: &std::path::Path,
        url: &str,
    ) -> Result<Option<Ledger>, ActionError> {
        let store = self.store(data_dir, url)?;
        let branch = self.branch.clone();
        tokio::task::spawn_blocking(move || store.read())
            .await
            .map_err(|e| ActionError::Ledger {
                branch: branch.clone(),
                message: format!("ledger task failed: {e}"),
            })?
            .map(|s| s.map(|s| s.ledger))
            .map_err(|e| crate::ledger::store_error(e, &self.branch))
    }

    fn store(
        &self,
        data_dir: &std::path::Path,
        url: &str,
    ) -> Result<Arc<navin_ledger::store::Store>, ActionError> {
        engine_ledger::open_store(
            data_dir,
            self.repo,
            url,
            &self.branch,
            self.token.to_owned(),
            self.env.seal_key()?,
            self.env.repository_id,
        )
        .map_err(|e| crate::ledger::store_error(e, &self.branch))
    }

    /// The plan comment's URL when this event's commands wrote or re-showed the plan of
    /// the issue it is about (the plan record remembers their op ids).
    async fn plan_url(
        &self,
        github: &GitHubApp,
        data_dir: &std::path::Path,
        url: &str,
    ) -> Result<Option<String>, ActionError> {
        let Some(issue) = self.subject else {
            return Ok(None);
        };
        let store = self.store(data_dir, url)?;
        // An issue's plan, or on a pull request the PR's own plan.
        for id in panel::plan_ids(issue) {
            let path = panel::plan_record_path(&id);
            let reader = std::sync::Arc::clone(&store);
            let raw = tokio::task::spawn_blocking(move || reader.read_file(&path))
                .await
                .map_err(|e| ActionError::Ledger {
                    branch: self.branch.clone(),
                    message: format!("ledger task failed: {e}"),
                })?
                .map_err(|e| crate::ledger::store_error(e, &self.branch))?;
            let touched = raw
                .as_deref()
                .and_then(|bytes| serde_json::from_slice::<PlanRecord>(bytes).ok())
                .is_some_and(|record| panel::plan_touched_by(&record, &self.event.delivery.id));
            if touched {
                let client = github.installation(ACTION_INSTALLATION);
                return panel::plan_comment_url(&client, self.repo, issue, &id)
                    .await
                    .map_err(|e| failure::from_github(&e));
            }
        }
        Ok(None)
    }

    /// One line on what ran, the plan link, and the mission panel.
    fn summary(&self, ledger: Option<&Ledger>, plan_url: Option<&str>) -> Result<(), ActionError> {
        let action = &self.action;
        let on = match self.subject {
            Some(n) => format!(" on {}#{n}", self.repo),
            None => format!(" on {}", self.repo),
        };
        let mut text = format!(
            "## Navin\n\nHandled `{}.{action}`{on} (run {}, attempt {}).\n",
            self.env.event_name,
            self.env.run_id.as_deref().unwrap_or("?"),
            self.event.delivery.attempt
        );
        if let Some(url) = plan_url {
            text.push_str(&format!("\nPlan: {url}\n"));
        }
        match ledger {
            Some(l) => {
                let repo = RepoRef {
                    full_name: self.repo.to_owned(),
                    html_base: self.env.server_url.clone(),
                    ledger_branch: self.branch.clone(),
                };
                text.push('\n');
                text.push_str(&mission_panel(l, &PanelContext::new(repo)));
                text.push('\n');
            }
            None => text.push_str(&format!(
                "\nNo mission yet: the ledger branch `{}` does not exist.\n",
                self.branch
            )),
        }
        println!(
            "navin: handled {}.{action}{on}; mission {}",
            self.env.event_name,
            ledger.map_or_else(
                || "none".to_owned(),
                |l| format!("v{} {}", l.mission.version, l.mission.status)
            )
        );
        match &self.env.step_summary {
            Some(path) => commands::append(path, &text),
            None => Ok(()),
        }
    }
}

/// The engine's GitHub client on the job's token (never a JWT, never minted).
pub fn token_client(env: &ActionEnv, token: &str) -> Result<GitHubApp, ActionError> {
    let template = match &env.git_url {
        Some(url) => url.clone(),
        None => format!(
            "{}/{{owner}}/{{repo}}.git",
            env.server_url.trim_end_matches('/')
        ),
    };
    let config = GitHubConfig::with_token(
        env.api_url.clone(),
        SecretString::from(token.to_owned()),
        template,
        env.write_spacing.unwrap_or(WRITE_SPACING),
    );
    GitHubApp::new(config, Arc::new(NoMetrics)).map_err(|e| ActionError::Api {
        method: "GET",
        path: String::new(),
        message: e.to_string(),
    })
}

/// A throwaway data directory for the engine's ledger clone, under `RUNNER_TEMP`.
pub fn ledger_dir(env: &ActionEnv) -> Result<tempfile::TempDir, ActionError> {
    let mut builder = tempfile::Builder::new();
    builder.prefix("navin-engine-");
    match &env.runner_temp {
        Some(t) => builder.tempdir_in(t),
        None => builder.tempdir(),
    }
    .map_err(|e| ActionError::io("creating the ledger work directory", e))
}

/// GitHub Models' OpenAI-compatible base URL, which takes the job's own token.
pub const GITHUB_MODELS_URL: &str = "https://models.github.ai/inference";
/// The model the Action's `llm` planner asks for when nothing names one.
pub const GITHUB_MODELS_DEFAULT: &str = "openai/gpt-4.1";

/// The `planner*` inputs: the endpoint (GitHub Models by default), its key (the job's
/// token unless `planner-api-key` is given) and the source override.
fn planner_settings(
    env: &ActionEnv,
    token: &str,
) -> Result<
    (
        navin_planner::external::ExternalConfig,
        Option<navin_domain::config::PlannerSource>,
    ),
    ActionError,
> {
    let source = match env.planner.as_deref() {
        None => None,
        Some(raw) => Some(raw.parse().map_err(|message| ActionError::Input {
            input: "planner",
            message,
        })?),
    };
    let key = env
        .planner_api_key
        .clone()
        .unwrap_or_else(|| token.to_owned());
    let cfg = navin_planner::external::ExternalConfig {
        base_url: Some(
            env.planner_base_url
                .clone()
                .unwrap_or_else(|| GITHUB_MODELS_URL.to_owned()),
        ),
        model: Some(
            env.planner_model
                .clone()
                .unwrap_or_else(|| GITHUB_MODELS_DEFAULT.to_owned()),
        ),
        api_key: Some(navin_planner::external::ApiKey::new(key)),
        command: navin_planner::external::ExternalConfig::from_env()
            .ok()
            .and_then(|c| c.command),
        ..navin_planner::external::ExternalConfig::default()
    };
    Ok((cfg, source))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_rerun_keeps_the_delivery_id_of_its_run() {
        assert_eq!(delivery_id("123456"), "actions-run-123456");
        assert_eq!(delivery_id("12 3;x"), "actions-run-123x");
    }

    #[test]
    fn only_fork_runs_with_a_read_only_token_are_refused() {
        let pr = json!({"pull_request": {"head": {"repo": {"full_name": "mallory/hello"}}}});
        assert_eq!(
            read_only_fork("pull_request", &pr, "octo-org/hello").as_deref(),
            Some("mallory/hello")
        );
        assert!(read_only_fork("pull_request_review", &pr, "octo-org/hello").is_some());
        assert!(read_only_fork("pull_request_target", &pr, "octo-org/hello").is_none());
        assert!(read_only_fork("pull_request", &pr, "Mallory/Hello").is_none());
    }

    #[test]
    fn the_subject_is_the_issue_or_the_pull_request() {
        assert_eq!(subject_number(&json!({"issue": {"number": 4}})), Some(4));
        assert_eq!(
            subject_number(&json!({"pull_request": {"number": 9}})),
            Some(9)
        );
        assert_eq!(subject_number(&json!({"check_run": {}})), None);
    }
}
