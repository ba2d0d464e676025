//! The context one event is handled in (installation client, repository config, who acted, the delivery's keys) and the features that run in it.

mod answers;
mod attempts;
mod auto_plan;
mod ci;
mod commands;
mod config_check;
mod dispatch;
mod finish;
mod gate;
mod links;
mod origin;
mod owners;
mod plan_button;
mod plan_file;
pub(crate) mod plan_save;
mod plan_types;
pub(crate) mod plans;
mod refusal;
mod step_drift;

use std::sync::Arc;

use chrono::Utc;
use navin_github::{GitHubError, InstallationClient};
use navin_ledger::store::{Store, StoreError};
use secrecy::ExposeSecret;

use crate::cache::permission;
use crate::effects::comments;
use crate::token_scope::{self, Need};
use crate::{ledger, Cx, Engine, EngineError, Report};
use navin_domain::config::RepoConfig;
use navin_domain::event::{html_base, Repository};
use navin_domain::render::reply;

pub(crate) use ci::Completion;
pub(crate) use origin::EventOrigin;
pub(crate) use refusal::Refusal;

/// How far back a retry whose receipt is unknown looks for its operations: the queue
/// remembers handled deliveries this long, so nothing older is ever redelivered to it.
const RETRY_LOOKBACK_DAYS: i64 = 8;

impl Engine {
    /// The context every handler works in: the installation's client, the repository's
    /// config (or why it is invalid), and where and by whom the event arose.
    pub(crate) async fn session(
        &self,
        cx: &Cx,
        need: Need,
        installation: u64,
        repository: &Repository,
        origin: EventOrigin,
    ) -> Result<Session<'_>, EngineError> {
        let granted = self.grants.get(&self.github, installation).await;
        let scope = token_scope::scope(repository.id, need, granted.as_deref());
        let admin_client = token_scope::administration_scope(repository.id, granted.as_deref())
            .map(|scope| self.github.installation_scoped(installation, scope));
        let client = self.github.installation_scoped(installation, scope);
        let config = match self.configs.get(&client, &repository.full_name).await {
            Ok(Ok(config)) => Ok(self.with_branch_override(config)),
            Ok(Err(invalid)) => {
                cx.report.config_invalid(&invalid);
                Err(invalid)
            }
            Err(e) if e.is_transient() => return Err(e.into()),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the repository config; using defaults");
                cx.report.github("read .github/navin.yml", &e);
                Ok(self.with_branch_override(Arc::new(RepoConfig::default())))
            }
        };
        // The ledger writes commits of its own: on the default branch they would land in
        // everyone's code (and fight its protection rules).
        let config = match (config, repository.default_branch.as_deref()) {
            (Ok(config), Some(default)) if config.ledger_branch == default => {
                let invalid = format!(
                    "`ledger_branch` is `{default}`, the repository's default branch: Navin's ledger commits would land in the code. Name a branch of its own, such as `navin/ledger`"
                );
                cx.report.config_invalid(&invalid);
                Err(invalid)
            }
            (config, _) => config,
        };
        Ok(Session {
            engine: self,
            client,
            config,
            repo: repository.full_name.clone(),
            repository_id: repository.id,
            default_branch: repository
                .default_branch
                .clone()
                .unwrap_or_else(|| "main".to_owned()),
            html_base: html_base(repository),
            origin,
            delivery: cx.delivery.clone(),
            report: cx.report.clone(),
            panel_batch: std::sync::Mutex::new(PanelBatch::Immediate),
            admin_client,
        })
    }
}

/// One event's context: who, where, and the GitHub client for its installation. Nothing
/// in it changes once it is built, except the panel a comment's commands defer.
pub(crate) struct Session<'e> {
    pub(crate) engine: &'e Engine,
    pub(crate) client: InstallationClient,
    /// The repository's `.github/navin.yml`, or why it is invalid (then every command
    /// is refused with that reason and nothing changes).
    pub(crate) config: Result<Arc<RepoConfig>, String>,
    pub(crate) repo: String,
    /// The repository's numeric id, as the event gave it (kept for the sweep list).
    pub(crate) repository_id: Option<u64>,
    pub(crate) default_branch: String,
    pub(crate) html_base: String,
    /// Where and by whom the event arose; set before the session exists.
    pub(crate) origin: EventOrigin,
    /// The delivery being handled: its id keys every effect; on a retry
    /// ([`crate::Delivery::is_retry`]) effects may exist already, so look before posting.
    pub(crate) delivery: crate::Delivery,
    /// Where setbacks that do not stop the event are recorded.
    pub(crate) report: Report,
    /// Whether a panel refresh writes now or waits for the end of a comment's commands.
    pub(crate) panel_batch: std::sync::Mutex<PanelBatch>,
    /// A client whose token carries `administration` and nothing else, when the
    /// installation granted it: only the ledger branch's protection is read with it.
    pub(crate) admin_client: Option<InstallationClient>,
}

/// How panel refreshes are written: at once, or once per comment. A comment of ten
/// commands edits the panel once, with the newest ledger.
#[derive(Debug, Default)]
pub(crate) enum PanelBatch {
    /// Outside a comment's commands: each refresh writes the panel.
    #[default]
    Immediate,
    /// A comment's commands are running: a refresh notes its ledger here (the newest
    /// wins) for one write when they end; `None` while no refresh was asked for.
    Deferred(Option<Box<navin_ledger::Ledger>>),
}

/// How a command is answered when it went through.
pub(crate) enum Answer {
    /// A reaction on the command's comment is the whole answer.
    React(&'static str),
    /// A reply (with an `eyes` reaction): help, `/next`, or a pointer elsewhere.
    Reply(String),
    /// Nothing changed, and why.
    Refuse(Refusal),
}

impl Session<'_> {
    /// The same session with a fact about its origin learnt after it was built (an
    /// edit's issue is fetched with the session's own client).
    pub(crate) fn with_origin(self, learnt: impl FnOnce(EventOrigin) -> EventOrigin) -> Self {
        let origin = learnt(self.origin.clone());
        Session { origin, ..self }
    }

    /// Runs one command and says how to answer it; nothing is posted yet, so a comment's
    /// answers go out together ([`Session::answer_all`]).
    pub(crate) async fn run(
        &self,
        parsed: navin_domain::command::ParsedCommand,
        op_id: &str,
    ) -> Result<Answer, EngineError> {
        let answer = match (parsed.result, &self.config) {
            (Err(e), _) => Ok(Answer::Refuse(Refusal::Unparsed(e.to_string()))),
            (Ok(_), Err(invalid)) => Ok(Answer::Refuse(Refusal::ConfigInvalid(invalid.clone()))),
            (Ok(command), Ok(_)) => self.authorized(command, op_id).await,
        };
        let answer = match answer {
            Ok(answer) => answer,
            Err(e) => match e.refusal() {
                Some(reason) => {
                    if e.missing_permission().is_some() || e.needs_ledger_key() {
                        self.report.engine("write the ledger", &e);
                    }
                    Answer::Refuse(Refusal::Ledger(reason))
                }
                None if e.is_transient() => return Err(e),
                None => {
                    tracing::error!(error = %e, op = op_id, "command failed");
                    self.report.engine("run a command", &e);
                    Answer::Reply(reply::error(Some(&self.delivery.id)))
                }
            },
        };
        Ok(answer)
    }

    /// Tells the commenter that the delivery of their comment failed for good (its last
    /// attempt ended in `error`, which a retry would have met again): which commands ran
    /// is on the board, and how to get the rest run. Best effort, once per delivery: if
    /// GitHub refuses this comment too, the log says so.
    pub(crate) async fn tell_given_up(&self, error: &EngineError) {
        let why = match (error.missing_permission(), error) {
            (Some(permission), _) => format!(
                "GitHub refused Navin the `{permission}` permission here (an admin grants it in the App's settings)"
            ),
            (None, EngineError::GitHub(_)) => {
                "GitHub kept refusing or failing Navin's requests".to_owned()
            }
            (None, EngineError::Store(_)) => {
                "the ledger branch stayed busy or out of reach".to_owned()
            }
            (None, _) => "of an error on Navin's side".to_owned(),
        };
        let body = reply::given_up(&why, &self.delivery.id);
        let op_id = format!("{}#given-up", self.delivery.id);
        if let Err(e) = comments::reply_once(
            &self.client,
            &self.repo,
            self.origin.issue,
            &op_id,
            &body,
            true,
        )
        .await
        {
            tracing::warn!(repo = %self.repo, issue = self.origin.issue, error = %e, cause = %error, "cannot tell the commenter their comment failed");
        }
    }

    /// Answers every command of one comment at once: each reaction once, and all the
    /// replies and refusals in one comment (in command order), so a comment of many
    /// commands costs one reply, not one per command. A retry finds that reply by its
    /// op tag before posting again.
    pub(crate) async fn answer_all(
        &self,
        answers: Vec<Answer>,
        op_id: &str,
    ) -> Result<(), GitHubError> {
        let mut reactions: Vec<&'static str> = Vec::new();
        let mut bodies: Vec<String> = Vec::new();
        let mut seen = false;
        for answer in answers {
            match answer {
                Answer::React(content) => reactions.push(content),
                // A reply that answers a read gets an `eyes` reaction too; a refusal not.
                Answer::Reply(body) => {
                    seen = true;
                    bodies.push(body);
                }
                Answer::Refuse(refusal) => bodies.push(refusal.reply()),
            }
        }
        if seen {
            reactions.push("eyes");
        }
        let cap = self.config.as_ref().map_or(
            navin_domain::config::Limits::default().max_replies_per_person_per_hour,
            |c| c.limits.max_replies_per_person_per_hour,
        );
        let reacts = self.origin.comment_id.is_some() && !reactions.is_empty();
        // A retry may still owe the answer it counted the first time; past the cap,
        // people with write access are still answered (and not counted).
        let allowed = (bodies.is_empty() && !reacts)
            || self.delivery.is_retry()
            || self.engine.replies.take(
                self.delivery.installation.unwrap_or(0),
                &self.origin.author,
                cap,
                std::time::Instant::now(),
            )
            || self.may_write().await;
        if !allowed {
            tracing::warn!(repo = %self.repo, issue = self.origin.issue, author = %self.origin.author, cap, "answer cap reached for this person across the installation; their commands ran, nothing is posted");
            return Ok(());
        }
        if !bodies.is_empty() {
            let body = join_answers(&bodies);
            comments::reply_once(
                &self.client,
                &self.repo,
                self.origin.issue,
                op_id,
                &body,
                self.delivery.is_retry(),
            )
            .await?;
        }
        // Reactions come last and are best effort: the commands have applied and the
        // reply is posted, so a reaction GitHub refuses is logged, never a failed
        // delivery (whose retry would only try the reaction again).
        if let Some(id) = self.origin.comment_id {
            let mut done: Vec<&str> = Vec::new();
            for content in reactions {
                if !done.contains(&content) {
                    if let Err(e) = comments::react(&self.client, &self.repo, id, content).await {
                        tracing::warn!(repo = %self.repo, comment = id, content, error = %e, "reaction not posted; the commands applied");
                    }
                    done.push(content);
                }
            }
        }
        Ok(())
    }

    /// Whether the author has write access (a cached role lookup; a failed one is "no").
    async fn may_write(&self) -> bool {
        self.engine
            .permissions
            .role(
                &self.client,
                &self.repo,
                &self.origin.author,
                self.origin.author_id,
            )
            .await
            .is_ok_and(|role| permission::may_mutate(&role))
    }

    /// The answer for the commands past the per-comment cap: which were skipped and why.
    /// Nothing they asked for happens.
    pub(crate) fn skipped(
        &self,
        skipped: &[navin_domain::command::ParsedCommand],
        cap: usize,
    ) -> Answer {
        const LISTED: usize = 10;
        let mut lines: Vec<String> = skipped
            .iter()
            .take(LISTED)
            .map(|c| {
                let first: String = c.source.chars().take(80).collect();
                format!(
                    "line {}: {}",
                    c.line,
                    navin_domain::render::text::code(&first)
                )
            })
            .collect();
        if skipped.len() > LISTED {
            lines.push(format!("and {} more", skipped.len() - LISTED));
        }
        Answer::Refuse(Refusal::TooManyCommands {
            cap,
            skipped: skipped.len(),
            listed: lines,
        })
    }

    pub(crate) async fn authorized(
        &self,
        command: navin_domain::command::Command,
        op_id: &str,
    ) -> Result<Answer, EngineError> {
        let limit = self.repo_config().limits.max_text_bytes;
        if let Some((name, text)) = command
            .free_texts()
            .into_iter()
            .find(|(_, text)| text.len() > limit)
        {
            return Ok(Answer::Refuse(Refusal::TextTooLong {
                command: command.name().to_owned(),
                part: name,
                bytes: text.len(),
                limit,
            }));
        }
        if let (true, Some(why)) = (command.is_mutating(), self.origin.closed) {
            let allowed = self
                .repo_config()
                .allow_on_closed
                .iter()
                .any(|name| name.trim_start_matches('/') == command.name());
            if !allowed {
                return Ok(Answer::Refuse(Refusal::ClosedForChanges {
                    command: command.name().to_owned(),
                    on_pull_request: self.origin.on_pull_request,
                    why,
                }));
            }
        }
        if command.is_mutating() {
            let role = self
                .engine
                .permissions
                .role(
                    &self.client,
                    &self.repo,
                    &self.origin.author,
                    self.origin.author_id,
                )
                .await?;
            if !permission::may_mutate(&role) {
                return Ok(Answer::Refuse(Refusal::NeedsWrite {
                    command: command.name().to_owned(),
                    repo: self.repo.clone(),
                    author: self.origin.author.clone(),
                    role: role.to_string(),
                }));
            }
        }
        self.execute(command, op_id).await
    }

    /// The ledger store for this repository, with a fresh installation token for git.
    pub(crate) async fn store(&self) -> Result<Arc<Store>, EngineError> {
        let token = self.client.token().await?;
        let data_dir = self.engine.config.data_dir.clone();
        let repo = self.repo.clone();
        let url = self.engine.github.git_remote_url(&self.repo);
        let branch = self.repo_config().ledger_branch.clone();
        let token = token.expose_secret().to_owned();
        let key = self.engine.config.ledger_key.clone();
        let id = self.repository_id;
        blocking(move || ledger::open_store(&data_dir, &repo, &url, &branch, token, key, id)).await
    }

    /// The valid config (commands never run with an invalid one).
    pub(crate) fn repo_config(&self) -> Arc<RepoConfig> {
        match &self.config {
            Ok(config) => Arc::clone(config),
            Err(_) => Arc::new(RepoConfig::default()),
        }
    }

    pub(crate) fn now(&self) -> chrono::DateTime<Utc> {
        Utc::now()
    }

    /// The ledger context for this event's operations: who, when, the op id, and on a
    /// retried delivery how far back its earlier operations may be (the receipt, or the
    /// queue's 8-day dedup window when that is unknown), so none is applied twice.
    pub(crate) fn ledger_ctx(&self, actor: navin_ledger::Actor, op_id: &str) -> navin_ledger::Ctx {
        let now = self.now();
        let ctx = navin_ledger::Ctx::new(now, actor).with_op_id(op_id);
        if self.delivery.is_retry() {
            let since = self
                .delivery
                .received_at
                .unwrap_or_else(|| now - chrono::Duration::days(RETRY_LOOKBACK_DAYS));
            ctx.with_retry_since(since)
        } else {
            ctx
        }
    }
}

/// Runs git work off the async workers.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, EngineError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result.map_err(EngineError::from),
        Err(e) => Err(EngineError::Internal(format!("ledger task failed: {e}"))),
    }
}

/// Several answers as one comment body, in order, within GitHub's comment size: answers
/// that would not fit are counted at the end instead.
fn join_answers(bodies: &[String]) -> String {
    let mut out = String::new();
    for (i, body) in bodies.iter().enumerate() {
        let body = body.trim_end();
        if out.len() + body.len() + 16 > navin_domain::render::COMMENT_BUDGET {
            out.push_str(&format!(
                "\n\n---\n\n{} more answers did not fit in this comment.",
                bodies.len() - i
            ));
            break;
        }
        if !out.is_empty() {
            out.push_str("\n\n---\n\n");
        }
        out.push_str(body);
    }
    out
}
