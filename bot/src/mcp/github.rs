//! `board_done` on GitHub: the step's linked head judged by its check runs, read from the REST API as the engine reads them.
//!
//! Inside a GitHub Actions job (`GITHUB_REPOSITORY` and a token in the environment) an
//! agent's `board_done` on a test, lint or verify step does not look for a local run:
//! the server reads every check run on the head of the step's linked pull request,
//! judges them with the repository's evidence policy (the engine's own functions), and
//! records the outcome as `app:navin`, exactly as a CI webhook would have.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use navin_domain::evidence;
use navin_engine::cache::repo_config::RepoConfigCache;
use navin_engine::reads::OnGitHub;
use navin_github::{GitHubApp, GitHubConfig, InstallationClient, NoMetrics};
use navin_ledger::{Actor, Ledger, Task};
use secrecy::SecretString;

use super::error::ToolError;

/// The installation id a token client is given; the token is used as it is.
const TOKEN_INSTALLATION: u64 = 1;

/// The REST client of the job and the repository it works on.
#[derive(Clone)]
pub struct GitHubCi {
    client: InstallationClient,
    repo: String,
    /// `.github/navin.yml` of the default branch, as the engine reads it.
    configs: Arc<RepoConfigCache>,
}

impl std::fmt::Debug for GitHubCi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitHubCi")
            .field("repo", &self.repo)
            .finish_non_exhaustive()
    }
}

impl GitHubCi {
    /// From the Actions environment (`lookup` reads a variable): `GITHUB_REPOSITORY`,
    /// `GITHUB_API_URL` (default `https://api.github.com`) and a token from
    /// `NAVIN_GITHUB_TOKEN` or `GITHUB_TOKEN`. `Ok(None)` outside Actions; an error
    /// names what is set but unusable.
    pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Result<Option<Self>, String> {
        let get = |k: &str| lookup(k).filter(|v| !v.trim().is_empty());
        let Some(repo) = get("GITHUB_REPOSITORY") else {
            return Ok(None);
        };
        let Some(token) = get("NAVIN_GITHUB_TOKEN").or_else(|| get("GITHUB_TOKEN")) else {
            tracing::warn!(
                "GITHUB_REPOSITORY is set but neither NAVIN_GITHUB_TOKEN nor GITHUB_TOKEN is: board_done judges recorded runs only"
            );
            return Ok(None);
        };
        if repo.split('/').count() != 2 || repo.split('/').any(str::is_empty) {
            return Err(format!("GITHUB_REPOSITORY is {repo:?}, not owner/name"));
        }
        let api = get("GITHUB_API_URL").unwrap_or_else(|| "https://api.github.com".to_owned());
        let server = get("GITHUB_SERVER_URL").unwrap_or_else(|| "https://github.com".to_owned());
        let config = GitHubConfig::with_token(
            api,
            SecretString::from(token),
            format!("{}/{{owner}}/{{repo}}.git", server.trim_end_matches('/')),
            Duration::from_secs(1),
        );
        let app = GitHubApp::new(config, Arc::new(NoMetrics))
            .map_err(|e| format!("cannot build the GitHub client: {e}"))?;
        Ok(Some(Self {
            client: app.installation(TOKEN_INSTALLATION),
            repo,
            configs: Arc::new(RepoConfigCache::new(Duration::from_secs(60))),
        }))
    }

    pub fn repo(&self) -> &str {
        &self.repo
    }

    /// What CI proves for `task` now: the operations to record (as `app:navin`) with
    /// the judgement they come from (whose [`OnGitHub::ctx`] they are written under), or
    /// why the step is not done, as a tool error naming what is missing.
    pub fn judge(
        &self,
        handle: &tokio::runtime::Handle,
        ledger: &Ledger,
        task: &Task,
    ) -> Result<(Vec<navin_ledger::Operation>, OnGitHub), ToolError> {
        let config = handle
            .block_on(self.configs.get(&self.client, &self.repo))
            .map_err(|e| unavailable(&self.repo, &e, "`.github/navin.yml` on the default branch"))?
            .map_err(|invalid| {
                ToolError::new("config_invalid", invalid)
                    .hint("a maintainer fixes `.github/navin.yml` on the default branch")
            })?;
        let policy = evidence::policy_from(&config);
        let Some(head) = task.links.head_sha.as_deref().map(str::trim) else {
            return Err(refusal(task, &evidence::unlinked(task, &policy)));
        };
        // With done_on: merged, a merge on GitHub the ledger has not heard of yet counts.
        let merged_now = handle
            .block_on(navin_engine::reads::unrecorded_merge(
                &self.client,
                &self.repo,
                task,
                &policy,
            ))
            .map_err(|e| unavailable(&self.repo, &e, "the pull request"))?;
        // Judged as the ledger will have it once the merge is recorded.
        let mut task = task.clone();
        if let Some(navin_ledger::Operation::Merged { pr, head_sha, .. }) = &merged_now {
            task.links.merged_pr = Some(*pr);
            task.links.head_sha = Some(head_sha.clone());
        }
        let head = task
            .links
            .head_sha
            .clone()
            .unwrap_or_else(|| head.to_owned());
        let task = &task;
        let runs = handle
            .block_on(navin_engine::reads::check_runs(
                &self.client,
                &self.repo,
                &head,
            ))
            .map_err(|e| unavailable(&self.repo, &e, &format!("the check runs of {head}")))?;
        let on = handle
            .block_on(navin_engine::reads::judge_step_on_github(
                &self.client,
                &self.repo,
                task,
                &ledger.board,
                &runs,
                None,
                &policy,
                Utc::now(),
            ))
            .map_err(|e| unavailable(&self.repo, &e, "the pull request"))?;
        if let Some(why) = evidence::not_done(task, &on.judged) {
            return Err(refusal(task, &why));
        }
        let decision = &on.judged.decision;
        let ops: Vec<_> = merged_now
            .into_iter()
            .chain(decision.operations(&task.id))
            .collect();
        if ops.is_empty() {
            return Err(ToolError::new(
                "nothing_to_record",
                decision.describe(&task.id),
            ));
        }
        Ok((ops, on))
    }
}

impl GitHubCi {
    /// Posts an agent's question on the mission's issue, once per op id (a retried
    /// call finds its comment and posts nothing). `false` when the mission has no
    /// issue in this repository or GitHub refused; the question is on the ledger
    /// either way, and the log says why.
    pub fn ask(
        &self,
        handle: &tokio::runtime::Handle,
        ledger: &Ledger,
        question: &str,
        op_id: &str,
        actor: &Actor,
    ) -> bool {
        let Some(issue) = navin_engine::effects::panel::panel_issue(ledger, &self.repo) else {
            tracing::warn!(repo = %self.repo, "the mission has no issue in this repository; the question is on the ledger only");
            return false;
        };
        let n = ledger.question_number(question);
        let body = navin_domain::render::reply::agent_question(&actor.to_string(), question, n);
        match handle.block_on(navin_engine::effects::comments::reply_once(
            &self.client,
            &self.repo,
            issue,
            op_id,
            &body,
            true,
        )) {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!(error = %e, repo = %self.repo, issue, "cannot post the question; it is on the ledger");
                false
            }
        }
    }
}

/// Why `board_done` did not close `task`, as the agent should hear it: the judgement's
/// own code and message, and what to do.
fn refusal(task: &Task, why: &evidence::NotDone) -> ToolError {
    use evidence::NotDone;
    let step = &task.id;
    match why {
        NotDone::NoLinkedPr { checks } => ToolError::new(
            why.code(),
            format!(
                "`{step}` has validation `{}`: on GitHub it is done only when {checks} is green on a linked pull request's head, and no pull request is linked yet",
                task.validation
            ),
        )
        .hint(format!(
            "push branch navin/{step}-… and open a pull request whose body has a `Navin-Step: {step}` line; then call board_done again once CI is green"
        )),
        NotDone::Failed { message } | NotDone::NotGreen { message } => {
            ToolError::new(why.code(), message.clone()).hint(
                "fix and push, or wait for CI; call board_done again when the checks are green",
            )
        }
        NotDone::Waiting { why: because } => ToolError::new(why.code(), format!("`{step}`: {because}"))
            .hint("Navin marks the step done when its pull request is merged (or its dependencies are done); nothing for you to call"),
    }
}

/// A read that failed, as the agent should hear it (details go to the log).
fn unavailable(repo: &str, e: &navin_github::GitHubError, what: &str) -> ToolError {
    tracing::warn!(error = %e, repo, what, "cannot read from GitHub");
    let why = if e.is_transient() {
        "GitHub did not answer"
    } else {
        "GitHub refused the request"
    };
    ToolError::new(
        "github_unavailable",
        format!("{why} when reading {what}; nothing changed"),
    )
    .hint("call board_done again in a minute; the job's token needs `checks: read` and `pull-requests: read`")
}
