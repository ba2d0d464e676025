//! `RepoCtx`, the context one event is handled in (the repository, its valid config, the installation's clients, the delivery, the report, who acted and where), and in the child files the features, as free functions taking it first.

pub(crate) mod answers;
pub(crate) mod attempts;
pub(crate) mod auto_plan;
pub(crate) mod board;
pub(crate) mod checks;
pub(crate) mod ci;
pub(crate) mod commands;
pub(crate) mod config_check;
pub(crate) mod dispatch;
pub(crate) mod finish;
pub(crate) mod gate;
pub(crate) mod links;
pub(crate) mod origin;
pub(crate) mod owners;
pub(crate) mod panel;
pub(crate) mod plan_button;
pub(crate) mod plan_file;
pub(crate) mod plan_save;
pub(crate) mod plan_types;
pub(crate) mod plans;
pub(crate) mod pulls;
pub(crate) mod records;
pub(crate) mod refusal;
pub(crate) mod replies;
pub(crate) mod reviews;
pub(crate) mod step_drift;
pub(crate) mod workers;

use std::sync::Arc;

use chrono::Utc;
use navin_github::InstallationClient;
use navin_ledger::store::StoreError;

use crate::cache::permission;
use crate::effects::comments;
use crate::token_scope::{self, Need};
use crate::{Engine, EngineError, Inbound, Report};
use navin_domain::config::RepoConfig;
use navin_domain::event::{html_base, Repository};
use navin_domain::render::RepoRef;

pub(crate) use ci::Completion;
pub(crate) use origin::EventOrigin;
pub(crate) use refusal::Refusal;

/// How far back a retry whose receipt is unknown looks for its operations: the queue
/// remembers handled deliveries this long, so nothing older is ever redelivered to it.
const RETRY_LOOKBACK_DAYS: i64 = 8;

impl<'e> RepoCtx<'e> {
    /// The context every handler works in: the installation's client, the repository's
    /// config (or why it is invalid), and where and by whom the event arose.
    pub(crate) async fn open(
        engine: &'e Engine,
        inbound: &Inbound,
        need: Need,
        installation: u64,
        repository: &Repository,
        origin: EventOrigin,
    ) -> Result<RepoCtx<'e>, EngineError> {
        let granted = engine.grants.get(&engine.github, installation).await;
        let scope = token_scope::scope(repository.id, need, granted.as_deref());
        let admin_client = token_scope::administration_scope(repository.id, granted.as_deref())
            .map(|scope| engine.github.installation_scoped(installation, scope));
        let client = engine.github.installation_scoped(installation, scope);
        let config = match engine.configs.get(&client, &repository.full_name).await {
            Ok(Ok(config)) => Ok(engine.with_branch_override(config)),
            Ok(Err(invalid)) => {
                inbound.report.config_invalid(&invalid);
                Err(invalid)
            }
            Err(e) if e.is_transient() => return Err(e.into()),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the repository config; using defaults");
                inbound.report.github("read .github/navin.yml", &e);
                Ok(engine.with_branch_override(Arc::new(RepoConfig::default())))
            }
        };
        // The ledger writes commits of its own: on the default branch they would land in
        // everyone's code (and fight its protection rules).
        let config = match (config, repository.default_branch.as_deref()) {
            (Ok(config), Some(default)) if config.ledger_branch == default => {
                let invalid = format!(
                    "`ledger_branch` is `{default}`, the repository's default branch: Navin's ledger commits would land in the code. Name a branch of its own, such as `navin/ledger`"
                );
                inbound.report.config_invalid(&invalid);
                Err(invalid)
            }
            (config, _) => config,
        };
        let (config, config_error) = match config {
            Ok(config) => (config, None),
            Err(invalid) => (Arc::new(RepoConfig::default()), Some(invalid)),
        };
        Ok(RepoCtx {
            engine,
            client,
            config,
            config_error,
            repo: repository.full_name.clone(),
            repository_id: repository.id,
            default_branch: repository
                .default_branch
                .clone()
                .unwrap_or_else(|| "main".to_owned()),
            html_base: html_base(repository),
            origin,
            delivery: inbound.delivery.clone(),
            report: inbound.report.clone(),
            panel_batch: std::sync::Mutex::new(PanelBatch::Immediate),
            admin_client,
        })
    }
}

/// One event's context: the repository and its config, the clients, the delivery, and
/// who acted where. Nothing in it changes once it is built, except the panel a
/// comment's commands defer. Every feature takes it first, so what a feature can reach
/// is what this holds.
pub(crate) struct RepoCtx<'e> {
    pub(crate) engine: &'e Engine,
    pub(crate) client: InstallationClient,
    /// The repository's valid `.github/navin.yml` (with the front end's branch override),
    /// or the defaults when it is unreadable or invalid.
    pub(crate) config: Arc<RepoConfig>,
    /// Why the repository's `.github/navin.yml` is invalid, when it is: then `config` is
    /// the defaults, every command is refused with this reason and nothing changes.
    pub(crate) config_error: Option<String>,
    pub(crate) repo: String,
    /// The repository's numeric id, as the event gave it (kept for the sweep list).
    pub(crate) repository_id: Option<u64>,
    pub(crate) default_branch: String,
    pub(crate) html_base: String,
    /// Where and by whom the event arose; set before the context exists.
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

impl RepoCtx<'_> {
    /// The same context with a fact about its origin learnt after it was built (an
    /// edit's issue is fetched with the context's own client).
    pub(crate) fn with_origin(self, learnt: impl FnOnce(EventOrigin) -> EventOrigin) -> Self {
        let origin = learnt(self.origin.clone());
        RepoCtx { origin, ..self }
    }

    /// Where links in Navin's comments point: the repository and its ledger branch.
    pub(crate) fn repo_ref(&self) -> RepoRef {
        let mut repo = RepoRef::new(self.repo.clone(), self.html_base.clone());
        repo.ledger_branch = self.repo_config().ledger_branch.clone();
        repo
    }

    /// The valid config (commands never run with an invalid one).
    pub(crate) fn repo_config(&self) -> Arc<RepoConfig> {
        Arc::clone(&self.config)
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
