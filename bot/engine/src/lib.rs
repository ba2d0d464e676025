//! Navin's engine: typed GitHub events in, ledger operations, plan records, comments and checks out; shared by `navin serve` and the Action.
//!
//! Every effect is keyed so a redelivered or retried event changes nothing twice:
//! ledger operations carry the op id `<delivery id>#<command index>` (the ledger skips
//! an id already in its history), plan records remember the op ids applied to them,
//! the panel and plan comments are found by their hidden markers before one is
//! created, and replies carry a hidden op tag that a retry looks for first.
//!
//! Layout: `handlers/` has one file per event, each building the event's `RepoCtx`
//! (`features/mod.rs`: a valid config, the repository, its clients, the delivery and
//! the report) and calling the features that event drives; `features/` holds those
//! features as free functions taking that context first: `board.rs` reads and writes
//! the ledger, `panel.rs` writes the mission panel, `commands.rs` runs slash commands,
//! and one file each for plans, the plan gate, step links, CI evidence, dispatch and
//! attempts. The pure decisions (rules, evidence, config, commands, rendering) live in
//! navin-domain, so the local CLI builds without this crate; [`effects`] writes Navin's
//! comments and checks; [`cache`] keeps roles and repository configs briefly. Besides
//! events, [`Engine::edit_plan`] saves a plan from an editor outside GitHub
//! ([`plan_edit`]), through the same context and write as `/plan edit`.

pub mod act;
pub mod cache;
pub mod clones;
pub mod effects;
mod error;
mod features;
mod handlers;
pub mod ledger;
pub mod plan_edit;
pub mod reads;
pub mod source;
pub mod startup;
pub mod token_scope;
pub mod view;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use navin_domain::{config, rules, sweeps};
use navin_github::{ops, ApiRequest, GitHubApp, GitHubError, Permission};

use cache::grants::GrantCache;
use cache::permission::PermissionCache;
use cache::repo_config::RepoConfigCache;

pub use act::{ActOutcome, ActRequest, Action};
pub use error::{EngineError, Retry};
pub use navin_domain::event::{
    classify, parse_event, Classification, Delivery, Event, EventKind, Payload,
};
pub use plan_edit::{PlanEditOutcome, PlanEditRequest, MAX_PLAN_BYTES};

/// How long a looked-up role is trusted before GitHub is asked again.
pub const PERMISSION_TTL: Duration = Duration::from_secs(180);

/// How long an installation's grant is trusted; new grants need the owner's approval,
/// which takes longer than this anyway.
pub const GRANT_TTL: Duration = Duration::from_secs(600);

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
    /// A user token (fine-grained PAT or an App's user-to-server token) for the calls
    /// GitHub refuses to installation tokens: assigning step issues to the Copilot
    /// coding agent (`dispatch.agent: copilot`). Without it those steps are only opened
    /// as issues and the panel says why.
    pub agent_token: Option<secrecy::SecretString>,
    /// The operator's model endpoint, key and plan command, for repositories whose
    /// `planner.source` is `llm` or `command`. The model name is the repository's
    /// (`planner.model`, `models.plan`) when it sets one.
    pub planner: navin_planner::external::ExternalConfig,
    /// Replaces the repository's `planner.source` (the Action's `planner` input, which
    /// the workflow author chose for this job).
    pub planner_source: Option<navin_domain::config::PlannerSource>,
    /// The key Navin seals its ledger commits with and tells them by: the App's
    /// `NAVIN_LEDGER_KEY`, else one derived from its webhook secret; the Action's
    /// `ledger-key`. Without one (an Action job given none) Navin's commits are told by
    /// committer and trailers, which anyone with push access can copy.
    pub ledger_key: Option<navin_ledger::store::SealKey>,
    /// Commits `/plan` fetches with the planned commit, for the planner's history
    /// (0 or 1: the commit alone).
    pub source_depth: usize,
}

impl EngineConfig {
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            app_slug: None,
            permission_ttl: PERMISSION_TTL,
            ledger_branch: None,
            agent_token: None,
            planner: navin_planner::external::ExternalConfig::default(),
            planner_source: None,
            ledger_key: None,
            source_depth: navin_planner::DEFAULT_HISTORY_DEPTH,
        }
    }
}

/// Something the engine could not do while still finishing an event (it answered the
/// command with an error reply, or fell back to defaults). The server only logs these;
/// the Action fails the job naming the missing permission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setback {
    /// What was being done, in a few words (`read .github/navin.yml`).
    pub what: String,
    /// The permission GitHub refused the call for lack of, if that was the cause.
    pub permission: Option<Permission>,
    /// The ledger is sealed and this writer was given no ledger key: a setting to add,
    /// never something a retry fixes.
    pub needs_ledger_key: bool,
    /// The error as logged (no secrets: GitHub errors carry none).
    pub message: String,
}

/// The setbacks of one event, collected across its repository contexts.
#[derive(Debug, Clone, Default)]
pub struct Report {
    setbacks: Arc<Mutex<Vec<Setback>>>,
    invalid_config: Arc<Mutex<Option<String>>>,
}

impl Report {
    pub(crate) fn github(&self, what: &str, error: &GitHubError) {
        self.push(what, error.missing_permission(), false, error);
    }

    pub(crate) fn engine(&self, what: &str, error: &EngineError) {
        self.push(
            what,
            error.missing_permission(),
            error.needs_ledger_key(),
            error,
        );
    }

    fn push(
        &self,
        what: &str,
        permission: Option<Permission>,
        needs_ledger_key: bool,
        error: &dyn std::fmt::Display,
    ) {
        self.setbacks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Setback {
                what: what.to_owned(),
                permission,
                needs_ledger_key,
                message: error.to_string(),
            });
    }

    pub(crate) fn config_invalid(&self, why: &str) {
        *self
            .invalid_config
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(why.to_owned());
    }

    /// Why the repository's `.github/navin.yml` was not applied, when the event met an
    /// invalid one (commands were refused, evidence and gates skipped).
    pub fn invalid_config(&self) -> Option<String> {
        self.invalid_config
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn setbacks(&self) -> Vec<Setback> {
        self.setbacks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// One event being handled: its delivery and the report its repository contexts add to.
#[derive(Debug)]
pub(crate) struct Inbound {
    pub delivery: Delivery,
    pub report: Report,
}

/// How long a ledger branch's protection is trusted before it is read again.
const PROTECTION_TTL: std::time::Duration = std::time::Duration::from_secs(600);

/// The engine. Build it around a GitHub client and hand it [`Event`]s.
#[derive(Debug)]
pub struct Engine {
    github: GitHubApp,
    config: EngineConfig,
    permissions: PermissionCache,
    configs: RepoConfigCache,
    grants: GrantCache,
    /// The App's slug and id, from `GET /app`.
    identity: tokio::sync::OnceCell<(String, Option<u64>)>,
    /// The client acting with [`EngineConfig::agent_token`], when one is set.
    agent: Option<GitHubApp>,
    /// Answers sent per person per installation, for `limits.max_replies_per_person_per_hour`.
    replies: cache::replies::ReplyBudget,
    /// Whether each repository's ledger branch is guarded, for the panel's warning.
    protection: cache::protection::ProtectionCache,
    /// When the dashboard last fetched each repository's ledger clone.
    fetch_times: view::FetchTimes,
    /// Repositories with a live mission, for the server's sweeper.
    pub(crate) sweeps: sweeps::Sweeps,
}

impl Engine {
    pub fn new(github: GitHubApp, config: EngineConfig) -> Self {
        let permissions = PermissionCache::new(config.permission_ttl);
        let configs = RepoConfigCache::new(config.permission_ttl);
        let grants = GrantCache::new(GRANT_TTL);
        let agent = config.agent_token.clone().and_then(|token| {
            github
                .with_token(token)
                .map_err(|e| tracing::error!(error = %e, "cannot build the agent-token client; Copilot dispatch is off"))
                .ok()
        });
        Self {
            agent,
            replies: cache::replies::ReplyBudget::default(),
            protection: cache::protection::ProtectionCache::new(PROTECTION_TTL),
            fetch_times: view::FetchTimes::default(),
            sweeps: sweeps::Sweeps::new(&config.data_dir),
            github,
            config,
            permissions,
            configs,
            grants,
            identity: tokio::sync::OnceCell::new(),
        }
    }

    /// The client acting with the configured user token, if any.
    pub(crate) fn agent_app(&self) -> Option<&GitHubApp> {
        self.agent.as_ref()
    }

    /// Handles one event. `Ok` carries what went wrong without stopping the event; an
    /// `Err` says (by [`EngineError::retry`]) whether the event is worth another attempt.
    pub async fn handle(&self, event: &Event) -> Result<Report, EngineError> {
        let inbound = Inbound {
            delivery: event.delivery.clone(),
            report: Report::default(),
        };
        let span = tracing::info_span!(
            "event",
            delivery = %inbound.delivery.id,
            event = event.kind().as_str(),
            repository = inbound.delivery.repository.as_deref().unwrap_or(""),
            attempt = inbound.delivery.attempt,
        );
        tracing::Instrument::instrument(self.route(&event.payload, &inbound), span).await?;
        Ok(inbound.report)
    }

    async fn route(&self, payload: &Payload, inbound: &Inbound) -> Result<(), EngineError> {
        match payload {
            Payload::IssueComment(e) => handlers::issue_comment::on_comment(self, e, inbound).await,
            Payload::Issues(e) => handlers::issues::on_issue(self, e, inbound).await,
            Payload::Sweep(e) => handlers::sweep::on_sweep(self, e, inbound).await,
            Payload::PullRequest(e) => {
                handlers::pull_request::on_pull_request(self, e, inbound).await
            }
            Payload::PullRequestReview(e) => {
                handlers::pull_request_review::on_review(self, e, inbound).await
            }
            Payload::CheckRun(e) => handlers::ci_completed::on_check_run(self, e, inbound).await,
            Payload::CheckRunAction(e) => {
                handlers::check_run_action::on_check_run_action(self, e, inbound).await
            }
            Payload::CheckSuite(e) => {
                handlers::ci_completed::on_check_suite(self, e, inbound).await
            }
            Payload::WorkflowRun(e) => {
                handlers::ci_completed::on_workflow_run(self, e, inbound).await
            }
            Payload::Installation(e) => {
                handlers::installation::on_installation(self, e, false, inbound).await
            }
            Payload::InstallationRepositories(e) => {
                handlers::installation::on_installation(self, e, true, inbound).await
            }
        }
    }

    /// The repository config with [`EngineConfig::ledger_branch`] applied.
    fn with_branch_override(&self, config: Arc<config::RepoConfig>) -> Arc<config::RepoConfig> {
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
        self.identity().await.0
    }

    /// Navin itself, so that its own exemptions from the ledger branch's protection
    /// are not reported.
    pub(crate) async fn me(&self) -> rules::protection::Me {
        let (slug, app_id) = self.identity().await;
        rules::protection::Me {
            app_id,
            slug: self.config.app_slug.clone().unwrap_or(slug),
        }
    }

    /// The App's slug and id, read once (`GET /app`); empty when that fails.
    async fn identity(&self) -> (String, Option<u64>) {
        let found = self
            .identity
            .get_or_try_init(|| async {
                let path = ops::app();
                let response = self.github.app_request(ApiRequest::get(&path)).await?;
                let app: serde_json::Value = response.json(&path)?;
                Ok::<_, GitHubError>((
                    app["slug"].as_str().unwrap_or_default().to_owned(),
                    app["id"].as_u64(),
                ))
            })
            .await;
        match found {
            Ok(identity) => identity.clone(),
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the App's slug and id; relying on user.type");
                (String::new(), None)
            }
        }
    }
}
