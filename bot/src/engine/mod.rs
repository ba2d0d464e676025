//! The engine behind `navin serve`: slash commands in issue comments become ledger operations, plan records, replies, reactions and the sticky mission panel.
//!
//! Every effect is keyed so a redelivered or retried webhook changes nothing twice:
//! ledger operations carry the op id `<delivery id>#<command index>` (the ledger skips
//! an id already in its history), plan records remember the op ids applied to them,
//! the panel and plan comments are found by their hidden markers before one is
//! created, and replies carry a hidden op tag that a retry looks for first.

pub mod approvals;
mod checks;
mod ci;
mod commands;
pub mod comments;
mod dispatch;
mod gate;
pub mod ledger;
mod links;
pub mod panel;
pub mod payload;
pub mod permission;
pub mod plan_check;
mod plan_file;
pub mod plan_policy;
pub mod plan_record;
pub mod plans;
mod pulls;
pub mod repo_config;
mod reviews;
pub mod steps;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use navin_ledger::store::{Store, StoreError};
use secrecy::ExposeSecret;

use crate::command::{is_bot_author, new_commands, parse_comment};
use crate::github::{ApiRequest, GitHubApp, GitHubError, InstallationClient};
use crate::queue::{
    Delivery, DeliveryHandler, Dispatcher, EventHooks, HandlerError, HandlerFuture,
};
use crate::render::reply;

use payload::CommentEvent;
use permission::PermissionCache;
use repo_config::RepoConfigCache;

/// How long a looked-up role is trusted before GitHub is asked again.
pub const PERMISSION_TTL: Duration = Duration::from_secs(180);

/// What the engine needs besides the GitHub client.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Holds `ledgers/<owner>/<repo>.git`, the local clones of each ledger branch.
    pub data_dir: PathBuf,
    /// The App's slug, so `<slug>[bot]` comments are ignored. Looked up with
    /// `GET /app` on first use when not given.
    pub app_slug: Option<String>,
    /// How long a role or a `.github/navin.yml` is trusted before GitHub is asked again.
    pub permission_ttl: Duration,
    /// Replaces the repository config's `ledger_branch` (the Action's `ledger-branch`
    /// input, which the workflow author chose for this job).
    pub ledger_branch: Option<String>,
}

impl EngineConfig {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            app_slug: None,
            permission_ttl: PERMISSION_TTL,
            ledger_branch: None,
        }
    }
}

/// Why a command could not finish. Rule refusals are not errors: they become replies.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    GitHub(#[from] GitHubError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Internal(String),
}

impl EngineError {
    /// Errors a person should be told about (a refused rule, a broken or rewritten ledger
    /// branch) rather than retried: the message names what is wrong and holds no secret.
    fn refusal(&self) -> Option<String> {
        match self {
            EngineError::Store(
                e @ (StoreError::Rule(_)
                | StoreError::Corrupt { .. }
                | StoreError::ForcePushed { .. }
                | StoreError::BranchVanished { .. }
                | StoreError::Diverged { .. }
                | StoreError::Rewritten { .. }),
            ) => Some(e.to_string()),
            EngineError::Store(StoreError::Remote { message, .. }) if refused_by_git(message) => {
                Some(
                    "Navin may not write the ledger branch: the git server refused its credentials. \
                     Check that the App (or the workflow's token) has `contents: write` on this repository."
                        .to_owned(),
                )
            }
            _ => None,
        }
    }

    fn is_transient(&self) -> bool {
        match self {
            EngineError::GitHub(e) => e.is_transient(),
            // A refused push will be refused again: say so instead of retrying.
            EngineError::Store(StoreError::Remote { message, .. }) => !refused_by_git(message),
            EngineError::Store(e) => matches!(
                e,
                StoreError::Contention { .. } | StoreError::Io(_) | StoreError::Git(_)
            ),
            EngineError::Internal(_) => false,
        }
    }
}

/// Whether a git transport error is the server refusing us (401/403, no credentials),
/// not a network blip. libgit2 reports the HTTP status in its message.
fn refused_by_git(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    ["403", "401", "authentication", "permission to", "denied"]
        .iter()
        .any(|needle| m.contains(needle))
}

/// The engine. Build it around the server's GitHub client and hand
/// [`Engine::handler`] to `server::start` / `server::run_with`.
#[derive(Debug)]
pub struct Engine {
    github: GitHubApp,
    config: EngineConfig,
    permissions: PermissionCache,
    configs: RepoConfigCache,
    slug: tokio::sync::OnceCell<String>,
}

impl Engine {
    pub fn new(github: GitHubApp, config: EngineConfig) -> Self {
        let permissions = PermissionCache::new(config.permission_ttl);
        let configs = RepoConfigCache::new(config.permission_ttl);
        Self {
            github,
            config,
            permissions,
            configs,
            slug: tokio::sync::OnceCell::new(),
        }
    }

    /// The delivery handler for the server's workers.
    pub fn handler(self) -> Arc<dyn DeliveryHandler> {
        Arc::new(Dispatcher::new(Arc::new(self)))
    }

    /// The repository config with [`EngineConfig::ledger_branch`] applied.
    fn with_branch_override(
        &self,
        config: Arc<crate::config::RepoConfig>,
    ) -> Arc<crate::config::RepoConfig> {
        match &self.config.ledger_branch {
            Some(branch) if *branch != config.ledger_branch => {
                let mut changed = (*config).clone();
                changed.ledger_branch = branch.clone();
                Arc::new(changed)
            }
            _ => config,
        }
    }

    async fn app_slug(&self) -> String {
        if let Some(slug) = &self.config.app_slug {
            return slug.clone();
        }
        let found = self
            .slug
            .get_or_try_init(|| async {
                let response = self.github.app_request(ApiRequest::get("/app")).await?;
                let app: serde_json::Value = response.json("/app")?;
                Ok::<_, GitHubError>(app["slug"].as_str().unwrap_or_default().to_owned())
            })
            .await;
        match found {
            Ok(slug) => slug.clone(),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the App's slug; relying on user.type");
                String::new()
            }
        }
    }

    async fn on_comment(&self, delivery: &Delivery) -> Result<(), HandlerError> {
        let event: CommentEvent = parse(delivery, "issue_comment")?;
        let author = &event.comment.user;
        let slug = self.app_slug().await;
        if is_bot_author(&author.login, author.kind.as_deref().unwrap_or(""), &slug) {
            return Ok(());
        }
        let body = event.comment.body.as_deref().unwrap_or("");
        let parsed = match event.action.as_str() {
            "created" => parse_comment(body),
            "edited" => {
                let before = event.changes.as_ref().and_then(|c| c.body.as_ref());
                match before {
                    Some(old) => new_commands(&old.from, body),
                    // No previous body: nothing says which commands are new, so none run.
                    None => Vec::new(),
                }
            }
            _ => Vec::new(),
        };
        if parsed.is_empty() {
            return Ok(());
        }
        let installation = installation_of(event.installation.as_ref(), delivery)?;
        let mut session = self
            .session(
                delivery,
                installation,
                &event.repository,
                event.issue.number,
                &author.login,
            )
            .await?;
        session.issue_body = event.issue.body.clone().unwrap_or_default();
        session.comment_id = Some(event.comment.id);
        session.on_pull_request = event.issue.pull_request.is_some();
        for (index, command) in parsed.into_iter().enumerate() {
            let op_id = format!("{}#{index}", delivery.delivery_id);
            session.run(command, &op_id).await?;
        }
        Ok(())
    }

    /// The context every handler works in: the installation's client, the repository's
    /// config (or why it is invalid), and who acted. `issue` is the issue or pull request
    /// number the event is about (0 when there is none, e.g. a check run on no PR).
    async fn session(
        &self,
        delivery: &Delivery,
        installation: u64,
        repository: &payload::Repository,
        issue: u64,
        actor: &str,
    ) -> Result<Session<'_>, HandlerError> {
        let client = self.github.installation(installation);
        let config = match self.configs.get(&client, &repository.full_name).await {
            Ok(Ok(config)) => Ok(self.with_branch_override(config)),
            Ok(invalid) => invalid,
            Err(e) if e.is_transient() => return Err(HandlerError::Transient(e.to_string())),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the repository config; using defaults");
                Ok(self.with_branch_override(Arc::new(crate::config::RepoConfig::default())))
            }
        };
        Ok(Session {
            engine: self,
            client,
            config,
            repo: repository.full_name.clone(),
            issue,
            issue_body: String::new(),
            default_branch: repository
                .default_branch
                .clone()
                .unwrap_or_else(|| "main".to_owned()),
            html_base: payload::html_base(repository),
            comment_id: None,
            on_pull_request: false,
            author: actor.to_owned(),
            delivery_id: delivery.delivery_id.clone(),
            recheck: delivery.attempt > 1,
        })
    }
}

impl EventHooks for Engine {
    fn issue_comment<'a>(&'a self, delivery: &'a Delivery) -> HandlerFuture<'a> {
        Box::pin(self.on_comment(delivery))
    }
    fn pull_request<'a>(&'a self, delivery: &'a Delivery) -> HandlerFuture<'a> {
        Box::pin(self.on_pull_request(delivery))
    }
    fn pull_request_review<'a>(&'a self, delivery: &'a Delivery) -> HandlerFuture<'a> {
        Box::pin(self.on_review(delivery))
    }
    fn check_run<'a>(&'a self, delivery: &'a Delivery) -> HandlerFuture<'a> {
        Box::pin(self.on_check_run(delivery))
    }
    fn check_suite<'a>(&'a self, delivery: &'a Delivery) -> HandlerFuture<'a> {
        Box::pin(self.on_check_suite(delivery))
    }
    fn workflow_run<'a>(&'a self, delivery: &'a Delivery) -> HandlerFuture<'a> {
        Box::pin(self.on_workflow_run(delivery))
    }
}

/// The installation a delivery acts for: the payload's, else the queue's record of it.
fn installation_of(
    payload: Option<&payload::Installation>,
    delivery: &Delivery,
) -> Result<u64, HandlerError> {
    payload
        .map(|i| i.id)
        .or(delivery.installation_id)
        .ok_or_else(|| HandlerError::Permanent("delivery without installation id".into()))
}

/// A payload that does not parse will never parse: fail the delivery, naming the event.
fn parse<T: serde::de::DeserializeOwned>(
    delivery: &Delivery,
    event: &str,
) -> Result<T, HandlerError> {
    delivery
        .payload()
        .map_err(|e| HandlerError::Permanent(format!("{event} payload: {e}")))
}

/// One comment's context: who, where, and the GitHub client for its installation.
struct Session<'e> {
    engine: &'e Engine,
    client: InstallationClient,
    /// The repository's `.github/navin.yml`, or why it is invalid (then every command
    /// is refused with that reason and nothing changes).
    config: Result<Arc<crate::config::RepoConfig>, String>,
    repo: String,
    issue: u64,
    issue_body: String,
    default_branch: String,
    html_base: String,
    /// The comment that carried the command, for reactions; `None` for other events.
    comment_id: Option<u64>,
    /// The command came from a pull request's conversation (its issue number is the PR's).
    on_pull_request: bool,
    /// Who acted: the comment's or review's author, or the event's sender.
    author: String,
    delivery_id: String,
    /// A retried delivery may have applied some effects already: look before posting.
    recheck: bool,
}

/// How a command is answered when it went through.
enum Answer {
    /// A reaction on the command's comment is the whole answer.
    React(&'static str),
    /// A reply (with an `eyes` reaction): help, `/next`, or a pointer elsewhere.
    Reply(String),
    /// Nothing changed: a reason and what to do instead.
    Refuse { reason: String, todo: String },
}

impl Answer {
    fn refuse(reason: impl Into<String>, todo: impl Into<String>) -> Self {
        Answer::Refuse {
            reason: reason.into(),
            todo: todo.into(),
        }
    }
}

impl Session<'_> {
    async fn run(
        &self,
        parsed: crate::command::ParsedCommand,
        op_id: &str,
    ) -> Result<(), HandlerError> {
        let answer = match (parsed.result, &self.config) {
            (Err(e), _) => Ok(Answer::refuse(e.to_string(), "")),
            (Ok(_), Err(invalid)) => Ok(Answer::refuse(
                invalid.clone(),
                "Fix the file on the default branch, then repeat the command.",
            )),
            (Ok(command), Ok(_)) => self.authorized(command, op_id).await,
        };
        let answer = match answer {
            Ok(answer) => answer,
            Err(e) => match e.refusal() {
                Some(reason) => Answer::refuse(reason, ""),
                None if e.is_transient() => {
                    return Err(HandlerError::Transient(e.to_string()));
                }
                None => {
                    tracing::error!(error = %e, op = op_id, "command failed");
                    Answer::Reply(reply::error(Some(&self.delivery_id)))
                }
            },
        };
        self.answer(answer, op_id).await.map_err(|e| {
            if e.is_transient() {
                HandlerError::Transient(e.to_string())
            } else {
                HandlerError::Permanent(e.to_string())
            }
        })
    }

    async fn authorized(
        &self,
        command: crate::command::Command,
        op_id: &str,
    ) -> Result<Answer, EngineError> {
        if command.is_mutating() {
            let role = self
                .engine
                .permissions
                .role(&self.client, &self.repo, &self.author)
                .await?;
            if !permission::may_mutate(&role) {
                return Ok(Answer::refuse(
                    format!(
                        "`/{}` changes the mission, which needs write access to {}; @{}'s role is `{role}`.",
                        command.name(),
                        self.repo,
                        self.author
                    ),
                    "Ask a maintainer to run it, or use `/status` and `/next`, which anyone may.",
                ));
            }
        }
        self.execute(command, op_id).await
    }

    async fn answer(&self, answer: Answer, op_id: &str) -> Result<(), GitHubError> {
        // A reply that answers a read gets an `eyes` reaction too; a refusal only the reply.
        let (body, seen) = match answer {
            Answer::React(content) => {
                return match self.comment_id {
                    Some(id) => comments::react(&self.client, &self.repo, id, content).await,
                    None => Ok(()),
                };
            }
            Answer::Reply(body) => (body, true),
            Answer::Refuse { reason, todo } => (reply::refusal(&reason, &todo), false),
        };
        comments::reply_once(
            &self.client,
            &self.repo,
            self.issue,
            op_id,
            &body,
            self.recheck,
        )
        .await?;
        if let (true, Some(id)) = (seen, self.comment_id) {
            comments::react(&self.client, &self.repo, id, "eyes").await?;
        }
        Ok(())
    }

    /// The ledger store for this repository, with a fresh installation token for git.
    async fn store(&self) -> Result<Arc<Store>, EngineError> {
        let token = self.client.token().await?;
        let data_dir = self.engine.config.data_dir.clone();
        let repo = self.repo.clone();
        let url = self.engine.github.git_remote_url(&self.repo);
        let branch = self.repo_config().ledger_branch.clone();
        let token = token.expose_secret().to_owned();
        blocking(move || ledger::open_store(&data_dir, &repo, &url, &branch, token)).await
    }

    /// The valid config (commands never run with an invalid one).
    fn repo_config(&self) -> Arc<crate::config::RepoConfig> {
        match &self.config {
            Ok(config) => Arc::clone(config),
            Err(_) => Arc::new(crate::config::RepoConfig::default()),
        }
    }

    fn now(&self) -> chrono::DateTime<Utc> {
        Utc::now()
    }
}

/// Runs git work off the async workers.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, EngineError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result.map_err(EngineError::from),
        Err(e) => Err(EngineError::Internal(format!("ledger task failed: {e}"))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests {
    use super::*;

    fn remote(message: &str) -> EngineError {
        EngineError::Store(StoreError::Remote {
            remote: "origin".into(),
            message: message.into(),
        })
    }

    #[test]
    fn a_refused_ledger_push_is_reported_not_retried_and_a_network_blip_is_retried() {
        let refused = remote("unexpected http status code: 403");
        assert!(!refused.is_transient());
        assert!(refused.refusal().unwrap().contains("contents: write"));
        let blip = remote("failed to connect: connection reset by peer");
        assert!(blip.is_transient());
        assert!(blip.refusal().is_none());
    }
}
