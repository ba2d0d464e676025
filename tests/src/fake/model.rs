//! In-memory state of the fake GitHub: the objects the REST API reads and writes.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde_json::Value;

/// GitHub Actions' app id: check runs made with a `GITHUB_TOKEN` carry it.
pub const GITHUB_ACTIONS_APP_ID: u64 = 15368;

/// The account kind GitHub reports as `type` on users.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserKind {
    User,
    Bot,
    Organization,
}

impl UserKind {
    pub fn as_str(self) -> &'static str {
        match self {
            UserKind::User => "User",
            UserKind::Bot => "Bot",
            UserKind::Organization => "Organization",
        }
    }
}

#[derive(Debug, Clone)]
pub struct User {
    pub id: u64,
    pub login: String,
    pub kind: UserKind,
}

/// The GitHub App the fake authenticates (Navin itself).
#[derive(Debug, Clone)]
pub struct AppInfo {
    pub id: u64,
    pub client_id: String,
    pub slug: String,
    pub name: String,
    pub owner: String,
    pub public_key_pem: String,
    pub bot_user_id: u64,
    /// What `POST /login/oauth/access_token` checks next to `client_id`.
    pub client_secret: String,
    /// The App's "Callback URL"s: `redirect_uri` must equal one of them exactly (GitHub
    /// allows up to 10; an absent `redirect_uri` means the first).
    pub callback_urls: Vec<String>,
}

impl AppInfo {
    pub fn bot_login(&self) -> String {
        format!("{}[bot]", self.slug)
    }
}

#[derive(Debug, Clone)]
pub struct Installation {
    pub id: u64,
    pub account: String,
    /// Full names (`owner/repo`) the installation can reach.
    pub repos: BTreeSet<String>,
    pub permissions: BTreeMap<String, String>,
    pub created_at: DateTime<Utc>,
}

/// Who a token acts as and what it may touch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenKind {
    /// `POST /app/installations/{id}/access_tokens`.
    Installation { installation_id: u64 },
    /// A workflow's `GITHUB_TOKEN`: one repository, GitHub Actions' app.
    Actions,
    /// A person's token, acting with that person's repository role.
    User,
    /// A GitHub App user access token (`ghu_`, from the web flow): acts as the person, but
    /// only on repositories both the person and the App reach, with the lesser of the two
    /// permissions.
    UserAccess,
}

impl TokenKind {
    /// Tokens that act as a person rather than as a bot (authorship, `/user` endpoints).
    pub fn is_person(&self) -> bool {
        matches!(self, TokenKind::User | TokenKind::UserAccess)
    }
}

#[derive(Debug, Clone)]
pub struct Token {
    pub token: String,
    pub kind: TokenKind,
    pub login: String,
    pub user_id: u64,
    /// `None` means every repository of the installation.
    pub repos: Option<BTreeSet<String>>,
    pub permissions: BTreeMap<String, String>,
    pub expires_at: DateTime<Utc>,
    pub app_id: Option<u64>,
    pub rate: RateCounter,
    pub revoked: bool,
}

/// Primary rate-limit accounting for one token (one-hour window).
#[derive(Debug, Clone)]
pub struct RateCounter {
    pub limit: u64,
    pub used: u64,
    pub reset: i64,
}

#[derive(Debug, Clone)]
pub struct Repo {
    pub id: u64,
    pub owner: String,
    pub name: String,
    pub default_branch: String,
    pub private: bool,
    pub git_dir: PathBuf,
    /// Role by login: admin, maintain, write, triage, read or a custom role name.
    pub roles: BTreeMap<String, String>,
    pub issues: BTreeMap<u64, Issue>,
    pub next_number: u64,
    pub workflows: BTreeMap<String, Workflow>,
    pub created_at: DateTime<Utc>,
    /// Branches with classic branch protection, and its settings.
    pub protected: BTreeMap<String, ClassicProtection>,
    /// Branch rulesets by id.
    pub rulesets: BTreeMap<u64, Ruleset>,
}

/// Classic protection of one branch, as `GET /branches/{b}/protection` reports it.
#[derive(Debug, Clone, Default)]
pub struct ClassicProtection {
    pub allow_force_pushes: bool,
    pub allow_deletions: bool,
    /// Whether the rules bind administrators too.
    pub enforce_admins: bool,
    /// Who may push at all (`restrictions`); `None`: anyone with write access.
    pub push_restrictions: Option<PushRestrictions>,
}

/// The users (logins), teams (slugs) and apps (slugs) a classic protection lets push.
#[derive(Debug, Clone, Default)]
pub struct PushRestrictions {
    pub users: Vec<String>,
    pub teams: Vec<String>,
    pub apps: Vec<String>,
}

/// A repository ruleset on branches: its rule types and who may bypass them.
#[derive(Debug, Clone)]
pub struct Ruleset {
    pub id: u64,
    pub name: String,
    pub branches: Vec<String>,
    /// Rule types: `update`, `non_fast_forward`, `deletion`, …
    pub rules: Vec<String>,
    pub bypass_actors: Vec<BypassActor>,
}

/// One entry of a ruleset's `bypass_actors`.
#[derive(Debug, Clone)]
pub struct BypassActor {
    /// `Integration`, `OrganizationAdmin`, `RepositoryRole`, `Team`, `DeployKey`, `User`.
    pub actor_type: String,
    pub actor_id: Option<u64>,
    /// `always`, `pull_request` or `exempt`.
    pub bypass_mode: String,
}

impl Repo {
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }
}

#[derive(Debug, Clone)]
pub struct Workflow {
    pub id: u64,
    /// File name under `.github/workflows/`, as accepted for `{workflow_id}`.
    pub file: String,
    pub name: String,
}

#[derive(Debug, Clone)]
pub struct Issue {
    pub id: u64,
    pub number: u64,
    pub title: String,
    pub body: Option<String>,
    pub author: String,
    pub state: String,
    pub labels: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub closed_at: Option<DateTime<Utc>>,
    pub pull: Option<Pull>,
    /// Logins, in the order they were assigned (the Copilot coding agent is `Copilot`).
    pub assignees: Vec<String>,
    /// The `agent_assignment` of the request that assigned Copilot, as sent.
    pub agent_assignment: Option<serde_json::Value>,
    /// Copilot coding agent sessions started on the issue: one each time Copilot goes
    /// from unassigned to assigned (assigning it again while assigned starts none, as
    /// on GitHub).
    pub copilot_sessions: u32,
}

#[derive(Debug, Clone)]
pub struct Pull {
    pub id: u64,
    pub head_ref: String,
    pub head_sha: String,
    pub base_ref: String,
    pub base_sha: String,
    pub draft: bool,
    pub merged_at: Option<DateTime<Utc>>,
    pub files: Vec<PullFile>,
    /// Full name of the head repository when the PR comes from a fork.
    pub head_repo: Option<String>,
    /// Logins asked for a review and not yet reviewed, in request order.
    pub requested_reviewers: Vec<String>,
    /// Team slugs asked for a review, in request order.
    pub requested_teams: Vec<String>,
}

/// An organization's team: who is an active member.
#[derive(Debug, Clone)]
pub struct Team {
    pub id: u64,
    pub org: String,
    pub slug: String,
    /// Active members' logins, lowercase.
    pub members: BTreeSet<String>,
}

#[derive(Debug, Clone)]
pub struct PullFile {
    pub filename: String,
    pub status: String,
    pub additions: u64,
    pub deletions: u64,
    pub patch: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Comment {
    pub id: u64,
    pub repo: String,
    pub issue_number: u64,
    pub body: String,
    pub author: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Posted through the REST API (by the bot under test) rather than seeded by the test.
    pub via_api: bool,
    pub reactions: Vec<Reaction>,
}

#[derive(Debug, Clone)]
pub struct Reaction {
    pub id: u64,
    pub content: String,
    pub user: String,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone)]
pub struct Review {
    pub id: u64,
    pub repo: String,
    pub pull_number: u64,
    pub user: String,
    pub body: String,
    /// REST spelling: APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING.
    pub state: String,
    pub commit_id: String,
    pub submitted_at: DateTime<Utc>,
}

#[derive(Debug, Clone)]
pub struct CheckRun {
    pub id: u64,
    pub repo: String,
    pub head_sha: String,
    pub name: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub started_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
    pub app_id: u64,
    pub check_suite_id: u64,
    pub external_id: Option<String>,
    pub details_url: Option<String>,
    pub output: Value,
    /// Requested-action buttons (`{label, description, identifier}`) as last set. GitHub
    /// shows them on the run and never returns them in the API, so only tests read them.
    pub actions: Vec<Value>,
    /// Every action identifier the run ever showed: a page loaded before an update still
    /// offers the older button, and GitHub delivers its click.
    pub shown_identifiers: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct CheckSuite {
    pub id: u64,
    pub repo: String,
    pub head_sha: String,
    pub head_branch: Option<String>,
    pub app_id: u64,
    pub status: String,
    pub conclusion: Option<String>,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone)]
pub struct WorkflowRun {
    pub id: u64,
    pub repo: String,
    pub workflow_id: u64,
    pub name: String,
    pub head_sha: String,
    pub head_branch: String,
    pub event: String,
    pub status: String,
    pub conclusion: Option<String>,
    pub run_number: u64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A `workflow_dispatch` the API accepted.
#[derive(Debug, Clone)]
pub struct Dispatch {
    pub repo: String,
    pub workflow: String,
    pub git_ref: String,
    pub inputs: Value,
    pub by: String,
}

/// One attempt to deliver a webhook, as `GET /app/hook/deliveries` lists it.
#[derive(Debug, Clone)]
pub struct HookDelivery {
    pub id: u64,
    pub guid: String,
    pub delivered_at: DateTime<Utc>,
    pub redelivery: bool,
    pub duration: f64,
    pub status: String,
    pub status_code: u16,
    pub event: String,
    pub action: Option<String>,
    pub installation_id: Option<u64>,
    pub repository_id: Option<u64>,
}

/// A comment the bot created or edited through the API, in the order it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotComment {
    pub id: u64,
    pub repo: String,
    pub issue_number: u64,
    pub author: String,
    pub body: String,
}

/// Everything the fake knows. Tests reach it through `FakeGitHub::with_state`.
#[derive(Debug)]
pub struct Model {
    pub(crate) next_id: u64,
    pub app: AppInfo,
    pub users: BTreeMap<String, User>,
    pub installations: BTreeMap<u64, Installation>,
    pub tokens: HashMap<String, Token>,
    pub repos: BTreeMap<String, Repo>,
    pub comments: BTreeMap<u64, Comment>,
    pub reviews: BTreeMap<u64, Review>,
    pub check_runs: BTreeMap<u64, CheckRun>,
    pub check_suites: BTreeMap<u64, CheckSuite>,
    pub workflow_runs: BTreeMap<u64, WorkflowRun>,
    pub dispatches: Vec<Dispatch>,
    pub deliveries: Vec<HookDelivery>,
    /// Delivery ids for which a redelivery was requested, in order.
    pub redelivery_requests: Vec<u64>,
    /// Comments created through the API (consumed by `Scenario::next_comment`).
    pub bot_comments: Vec<BotComment>,
    /// Edits of comments through the API, in order.
    pub bot_comment_edits: Vec<BotComment>,
    pub token_format: TokenFormat,
    pub installation_rate_limit: u64,
    pub actions_rate_limit: u64,
    /// Rate accounting for requests made with the App JWT.
    pub app_rate: RateCounter,
    /// Codes of the App manifest flow not yet converted, by code (each converts once).
    pub manifest_codes: HashMap<String, ManifestApp>,
    /// The user sign-in (OAuth web flow) state.
    pub oauth: OAuthState,
    /// Organizations' teams by `org/slug`, lowercase.
    pub teams: BTreeMap<String, Team>,
}

/// The OAuth web flow's state: who is signed in, codes not yet exchanged, refresh tokens.
#[derive(Debug, Default)]
pub struct OAuthState {
    /// Who `/login/oauth/authorize` signs in when neither a `login=` hint nor the
    /// browser's fake session cookie names someone.
    pub default_user: Option<String>,
    /// Authorization codes by code; each is exchanged at most once.
    pub codes: HashMap<String, OAuthCode>,
    /// Refresh tokens (`ghr_`) by token; each is used at most once.
    pub refresh_tokens: HashMap<String, RefreshToken>,
}

/// A code `/login/oauth/authorize` issued, with what the exchange must repeat.
#[derive(Debug, Clone)]
pub struct OAuthCode {
    pub login: String,
    pub client_id: String,
    /// The `redirect_uri` the authorize request named, if it named one.
    pub redirect_uri: Option<String>,
    /// PKCE S256 challenge (base64url of SHA-256 of the verifier), when one was sent.
    pub code_challenge: Option<String>,
    pub expires_at: DateTime<Utc>,
}

/// A refresh token and the person it mints user access tokens for.
#[derive(Debug, Clone)]
pub struct RefreshToken {
    pub login: String,
    pub expires_at: DateTime<Utc>,
}

/// An App registered through the manifest flow, as `POST /app-manifests/{code}/conversions`
/// returns it once: credentials included.
#[derive(Clone)]
pub struct ManifestApp {
    pub code: String,
    pub id: u64,
    pub slug: String,
    pub name: String,
    pub client_id: String,
    pub client_secret: String,
    pub webhook_secret: String,
    /// The App's RSA private key, generated for this App.
    pub pem: String,
}

impl std::fmt::Debug for ManifestApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManifestApp")
            .field("id", &self.id)
            .field("slug", &self.slug)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// Installation token spelling: the classic 40 characters or the 2026 stateless ~520.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenFormat {
    Classic,
    Stateless,
}

impl Model {
    pub(crate) fn new(app: AppInfo) -> Self {
        let mut model = Model {
            next_id: 1000,
            users: BTreeMap::new(),
            installations: BTreeMap::new(),
            tokens: HashMap::new(),
            repos: BTreeMap::new(),
            comments: BTreeMap::new(),
            reviews: BTreeMap::new(),
            check_runs: BTreeMap::new(),
            check_suites: BTreeMap::new(),
            workflow_runs: BTreeMap::new(),
            dispatches: Vec::new(),
            deliveries: Vec::new(),
            redelivery_requests: Vec::new(),
            bot_comments: Vec::new(),
            bot_comment_edits: Vec::new(),
            token_format: TokenFormat::Classic,
            installation_rate_limit: 5000,
            actions_rate_limit: 1000,
            app_rate: RateCounter {
                limit: 5000,
                used: 0,
                reset: (Utc::now() + chrono::Duration::hours(1)).timestamp(),
            },
            manifest_codes: HashMap::new(),
            oauth: OAuthState::default(),
            teams: BTreeMap::new(),
            app,
        };
        let bot = model.app.bot_login();
        let bot_id = model.app.bot_user_id;
        model.users.insert(
            bot.clone(),
            User {
                id: bot_id,
                login: bot,
                kind: UserKind::Bot,
            },
        );
        model.users.insert(
            "github-actions[bot]".into(),
            User {
                id: 41898282,
                login: "github-actions[bot]".into(),
                kind: UserKind::Bot,
            },
        );
        model
    }

    /// Fresh id, unique across every object kind.
    pub fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// The user with this login, created as a plain user on first sight.
    pub fn user(&mut self, login: &str) -> User {
        if let Some(user) = self.users.get(login) {
            return user.clone();
        }
        let kind = if login.ends_with("[bot]") || login == "Copilot" {
            UserKind::Bot
        } else {
            UserKind::User
        };
        let user = User {
            id: self.next_id(),
            login: login.to_string(),
            kind,
        };
        self.users.insert(login.to_string(), user.clone());
        user
    }

    pub fn repo(&self, owner: &str, name: &str) -> Option<&Repo> {
        self.repos.get(&repo_key(owner, name))
    }

    pub fn repo_mut(&mut self, owner: &str, name: &str) -> Option<&mut Repo> {
        self.repos.get_mut(&repo_key(owner, name))
    }

    pub fn repo_by_id(&self, id: u64) -> Option<&Repo> {
        self.repos.values().find(|r| r.id == id)
    }

    /// The check suite for (repo, sha, app), created on first use like GitHub does.
    pub fn suite_for(
        &mut self,
        repo: &str,
        head_sha: &str,
        app_id: u64,
        head_branch: Option<String>,
    ) -> u64 {
        if let Some(suite) = self
            .check_suites
            .values()
            .find(|s| s.repo == repo && s.head_sha == head_sha && s.app_id == app_id)
        {
            return suite.id;
        }
        let id = self.next_id();
        self.check_suites.insert(
            id,
            CheckSuite {
                id,
                repo: repo.to_string(),
                head_sha: head_sha.to_string(),
                head_branch,
                app_id,
                status: "queued".into(),
                conclusion: None,
                created_at: Utc::now(),
            },
        );
        id
    }

    /// Recomputes a suite's status and conclusion from its runs (highest-priority conclusion wins).
    pub fn refresh_suite(&mut self, suite_id: u64) {
        let runs: Vec<&CheckRun> = self
            .check_runs
            .values()
            .filter(|r| r.check_suite_id == suite_id)
            .collect();
        let all_done = !runs.is_empty() && runs.iter().all(|r| r.status == "completed");
        let any_started = runs.iter().any(|r| r.status != "queued");
        const ORDER: [&str; 9] = [
            "action_required",
            "cancelled",
            "timed_out",
            "failure",
            "startup_failure",
            "stale",
            "neutral",
            "success",
            "skipped",
        ];
        let conclusion = if all_done {
            ORDER
                .iter()
                .find(|c| runs.iter().any(|r| r.conclusion.as_deref() == Some(**c)))
                .map(|c| c.to_string())
        } else {
            None
        };
        if let Some(suite) = self.check_suites.get_mut(&suite_id) {
            suite.status = if all_done {
                "completed".into()
            } else if any_started {
                "in_progress".into()
            } else {
                "queued".into()
            };
            suite.conclusion = conclusion;
        }
    }
}

/// Repository keys are case-insensitive on GitHub.
pub fn repo_key(owner: &str, name: &str) -> String {
    format!(
        "{}/{}",
        owner.to_ascii_lowercase(),
        name.to_ascii_lowercase()
    )
}
