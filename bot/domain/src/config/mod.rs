//! Per-repository settings read from `.github/navin.yml` on the default branch.
//!
//! The whole file is parsed and validated before any of it is used: a broken file
//! yields one [`RepoConfigError`] naming line, column and key, and the caller keeps
//! running on the defaults (or the last good config) rather than half of a new one.

use std::collections::BTreeSet;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod agents;
mod duration;
mod evidence;
mod planner;
mod reference;
mod schema;
pub use agents::{AfterRed, Agents};
pub use evidence::{DoneOn, Drafts, Evidence, MergeMethod, RequiredChecks};
pub use planner::{Fallback, PlanMode, PlanScope, PlanSettings, PlannerConfig, PlannerSource};
pub use reference::reference_markdown;
pub use schema::{schema, schema_json};

/// Where a repository keeps its settings, on its default branch.
pub const CONFIG_PATH: &str = ".github/navin.yml";

/// GitHub Actions' app id: check runs from workflows carry it.
pub const GITHUB_ACTIONS_APP_ID: u64 = 15368;

/// Navin's rules for one repository (`.github/navin.yml`, read from the default
/// branch). Every key is optional: an empty or missing file means all defaults, and an
/// unknown key fails the whole file. Reference: docs/config.md.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RepoConfig {
    /// Branch holding the mission ledger; set it when `navin/ledger` clashes with your
    /// branch names or protection rules. Never the default branch (refused: the ledger's
    /// commits would land in the code). Default: `navin/ledger`.
    #[schemars(length(min = 1))]
    pub ledger_branch: String,
    /// Change classes for which a pull request needs an approved plan (its `navin/plan`
    /// check waits for one), e.g. `[multi-file-change, dependency-add]`. Default: none,
    /// no pull request needs a plan.
    #[schemars(with = "Vec<ChangeClass>")]
    pub require_plan_for: BTreeSet<ChangeClass>,
    /// When a plan is accepted without a person's approval. Default: never.
    pub auto_accept: AutoAccept,
    /// Who may approve plans and how many approvals a plan needs. Default: one writer
    /// other than the plan's author.
    pub approval: Approval,
    /// Which check runs count as CI evidence for a step, and when a step is done.
    /// Default: GitHub Actions' checks, done once merged.
    pub evidence: Evidence,
    /// Handing ready steps to agents or people as issues. Default: off; a mission moves
    /// only when someone opens a pull request for a step.
    pub dispatch: Dispatch,
    /// How long an agent's attempt at a step may sit (red CI without a push, no pull
    /// request at all) before Navin starts the next attempt. Default: 20m and 60m.
    pub agents: Agents,
    /// When a mission retries, replans or pauses. Default: 3 retries, 5 replans,
    /// 3 stalls, no token or cost cap.
    pub budgets: Budgets,
    /// Commands that change things and still run on a closed (or merged) or locked issue
    /// or pull request, by name as typed after `/` (`mission close`, `pause`); set it to
    /// wrap up missions after merging. Default: none; read commands always answer.
    #[schemars(with = "Vec<String>")]
    pub allow_on_closed: BTreeSet<String>,
    /// Bounds on the work one comment may cause. Default: 10 commands, 4096-byte texts,
    /// 20 answers per reader per hour across the installation.
    pub limits: Limits,
    /// Commands that validate a step in a checkout (`navin board verify`). Default: none
    /// (a step's own command, from its plan, is used when it has one).
    pub validation: ValidationConfig,
    /// Models named to agents for plan mode and for the steps of `/cruise` and `/mission`.
    /// Default: none (each agent's own).
    pub models: Models,
    /// Whether a finished stage of a staged mission waits for a writer's `/continue`
    /// (`pause`) or the next starts at once (`run-all`). Default: `pause`.
    pub stages: StagesPolicy,
    /// How a plan's open questions are treated once its mission starts. Default: a
    /// question's default answer stands at once.
    pub questions: Questions,
    /// Which planner writes `/plan`'s plans, its model and its budgets. Default: the
    /// built-in, offline planner.
    pub planner: PlannerConfig,
    /// How a pull request is held to its own plan, or a mission step's pull request to
    /// the plan its mission came from. Default: files outside the plan are reported, not
    /// failed.
    pub plan: PlanSettings,
    /// Plans without `/plan` for issues and pull requests the classifier finds risky.
    /// Default: off.
    pub plan_mode: PlanMode,
}

/// `stages:`: what happens when a stage of a staged mission is done.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StagesPolicy {
    /// The next stage waits for a writer's `/continue`, so someone looks at each stage.
    #[default]
    Pause,
    /// The next stage starts as soon as the last step of the current one is done.
    RunAll,
}

impl StagesPolicy {
    pub fn to_ledger(self) -> navin_ledger::model::StagePolicy {
        match self {
            StagesPolicy::Pause => navin_ledger::model::StagePolicy::Pause,
            StagesPolicy::RunAll => navin_ledger::model::StagePolicy::RunAll,
        }
    }
}

/// `questions:`: a plan's open questions once its mission runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Questions {
    /// How long people have to answer a plan question that has a default before the
    /// default becomes a fact (`48h`); set it to give reviewers time to object. Default:
    /// none, a default stands at once.
    #[serde(
        deserialize_with = "duration::deserialize_optional",
        serialize_with = "duration::serialize_optional",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(schema_with = "duration::schema")]
    pub default_after: Option<Duration>,
}

impl RepoConfig {
    /// The knobs plan conversion takes from this file.
    pub fn plan_knobs(&self) -> navin_ledger::plan::convert::Knobs {
        navin_ledger::plan::convert::Knobs {
            stages: self.stages.to_ledger(),
            default_after: self.questions.default_after.and_then(|d| {
                let wait = chrono::Duration::from_std(d).ok()?;
                Some((wait, duration::compact(d)))
            }),
            toolchain: None,
        }
    }
}

/// `validation:`: how `navin board verify` checks a step in a checkout.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ValidationConfig {
    /// One command line per validation kind. Default: none.
    pub commands: navin_ledger::model::ValidationCommands,
}

/// Bounds on the work one comment can cause, so a long comment cannot flood the ledger
/// or GitHub's content-creation limits (80 a minute, 500 an hour).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Commands run from one comment; the rest are skipped with one reply that lists
    /// them. At least 1. Default: 10.
    #[schemars(range(min = 1))]
    pub max_commands_per_comment: usize,
    /// Longest request, goal, reason, title or evidence text, in bytes; a longer one is
    /// refused and nothing is stored. At least 1. Default: 4096.
    #[schemars(range(min = 1))]
    pub max_text_bytes: usize,
    /// Answers (replies and reactions) one person without write access gets across the
    /// installation in an hour; past it their commands still run but nothing is posted
    /// to them. People with write access are always answered. 0: no cap. Default: 20.
    pub max_replies_per_person_per_hour: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_commands_per_comment: 10,
            max_text_bytes: 4096,
            max_replies_per_person_per_hour: 20,
        }
    }
}

impl Default for RepoConfig {
    fn default() -> Self {
        Self {
            ledger_branch: "navin/ledger".to_owned(),
            require_plan_for: BTreeSet::new(),
            auto_accept: AutoAccept::default(),
            approval: Approval::default(),
            evidence: Evidence::default(),
            dispatch: Dispatch::default(),
            agents: Agents::default(),
            budgets: Budgets::default(),
            allow_on_closed: BTreeSet::new(),
            limits: Limits::default(),
            validation: ValidationConfig::default(),
            models: Models::default(),
            stages: StagesPolicy::default(),
            questions: Questions::default(),
            planner: PlannerConfig::default(),
            plan: PlanSettings::default(),
            plan_mode: PlanMode::default(),
        }
    }
}

/// A kind of change, as `require_plan_for` (a pull request's files) and `auto_accept`
/// (a plan's proposed changes) see it; docs/config.md, "Change classes".
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeClass {
    /// A plan that changes no file and adds no dependency.
    ReadOnlyToolUse,
    /// A plan that edits or creates files.
    InWorkspaceFileEdit,
    /// A pull request changing more than one file.
    MultiFileChange,
    /// Counts as `in-workspace-file-edit`.
    FileCreate,
    /// Counts as `destructive-tool-use`; always needs a person.
    FileDelete,
    /// A plan that deletes files; always needs a person.
    DestructiveToolUse,
    /// A dependency manifest or lockfile changed (not removed); always needs a person.
    DependencyAdd,
    /// A migration or schema file changed; always needs a person.
    SchemaMigration,
}

impl ChangeClass {
    /// Classes that auto-accept must never wave through, whatever the config says.
    pub const NEVER_AUTO_ACCEPTED: [Self; 4] = [
        Self::FileDelete,
        Self::DestructiveToolUse,
        Self::DependencyAdd,
        Self::SchemaMigration,
    ];

    fn yaml_name(self) -> &'static str {
        match self {
            Self::ReadOnlyToolUse => "read-only-tool-use",
            Self::InWorkspaceFileEdit => "in-workspace-file-edit",
            Self::MultiFileChange => "multi-file-change",
            Self::FileCreate => "file-create",
            Self::FileDelete => "file-delete",
            Self::DestructiveToolUse => "destructive-tool-use",
            Self::DependencyAdd => "dependency-add",
            Self::SchemaMigration => "schema-migration",
        }
    }
}

/// `auto_accept:`: when a plan needs no person's approval (docs/plan.md, "Policies").
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AutoAccept {
    /// Accept a plan without review once this many safe operations have passed; set it
    /// when routine plans wait too long for people. At least 1. Default: none
    /// (auto-accept is off).
    #[schemars(range(min = 1))]
    pub after_n_safe_operations: Option<u32>,
    /// Change classes counted as safe; the four that always need a person cannot be
    /// listed. Default: `read-only-tool-use`, `in-workspace-file-edit`.
    #[schemars(with = "Vec<ChangeClass>")]
    pub safe_operation_classes: BTreeSet<ChangeClass>,
    /// Classes that always need a person, added to the built-in `file-delete`,
    /// `destructive-tool-use`, `dependency-add`, `schema-migration`. Default: those four.
    #[schemars(with = "Vec<ChangeClass>")]
    pub require_approval_for: BTreeSet<ChangeClass>,
}

impl Default for AutoAccept {
    fn default() -> Self {
        Self {
            after_n_safe_operations: None,
            safe_operation_classes: [
                ChangeClass::ReadOnlyToolUse,
                ChangeClass::InWorkspaceFileEdit,
            ]
            .into_iter()
            .collect(),
            require_approval_for: ChangeClass::NEVER_AUTO_ACCEPTED.into_iter().collect(),
        }
    }
}

/// `approval:`: who may approve a plan.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Approval {
    /// Whether the person who asked for a plan (or opened the pull request it is on) may
    /// approve it; set it in a repository with one maintainer. Default: false (as GitHub's
    /// own rule for pull requests).
    pub allow_author_approval: bool,
    /// Distinct approving writers a plan needs. At least 1. Default: 1.
    #[schemars(range(min = 1))]
    pub required_approvals: u32,
    /// Count only approvals by code owners of the plan's proposed files (CODEOWNERS):
    /// every owned file needs one of its owners' approval, as GitHub's "Require review
    /// from Code Owners". Team owners need the organization permission `members: read`.
    /// Default: false (any writer's approval counts).
    pub require_codeowners: bool,
}

impl Default for Approval {
    fn default() -> Self {
        Self {
            allow_author_approval: false,
            required_approvals: 1,
            require_codeowners: false,
        }
    }
}

/// `dispatch:`: how a step that becomes ready is handed out. Off by default: a mission
/// only moves when someone opens a pull request for a step.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Dispatch {
    /// Open one issue per ready step carrying the sub-agent brief (Role, Goal, Context
    /// paths, Constraints, Done when, Do not). Default: false.
    pub issues: bool,
    /// Labels put on those issues; the first also finds them again after a crash.
    /// Default: `[navin-step]`.
    pub labels: Vec<String>,
    /// Agent workflow file under `.github/workflows/` (e.g. `agent.yml`, with
    /// `on: workflow_dispatch` and inputs `step` and `issue`) started on the default
    /// branch for each step handed out as an issue (so only with `issues: true`).
    /// Default: none.
    pub workflow: Option<String>,
    /// Who works a step handed out as an issue: `copilot` assigns the issue to the
    /// Copilot coding agent (needs a user token: the server's `--agent-token-file`, the
    /// Action's `agent-token`), `workflow` starts `workflow`, `none` only opens the
    /// issue. Setting it opens issues whatever `issues` says. Default: `workflow` when
    /// `workflow` is set, else `none`.
    pub agent: Option<AgentKind>,
}

/// `dispatch.agent`: who works a step handed out as an issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentKind {
    /// Assign the issue to the Copilot coding agent (needs a user token).
    Copilot,
    /// Start `dispatch.workflow` on the default branch.
    Workflow,
    /// Only open the issue, for people.
    None,
}

impl Default for Dispatch {
    fn default() -> Self {
        Self {
            issues: false,
            labels: vec!["navin-step".to_owned()],
            workflow: None,
            agent: None,
        }
    }
}

impl AgentKind {
    /// The name a step's attempts record for this kind of worker.
    pub fn attempt_agent(self) -> &'static str {
        match self {
            AgentKind::Copilot => "copilot",
            AgentKind::Workflow => "workflow",
            AgentKind::None => "people",
        }
    }
}

impl Dispatch {
    /// The label that marks Navin's step issues.
    pub fn label(&self) -> &str {
        self.labels.first().map_or("navin-step", String::as_str)
    }

    /// The agent in effect (see [`Dispatch::agent`] for the default).
    pub fn agent(&self) -> AgentKind {
        self.agent.unwrap_or(if self.workflow.is_some() {
            AgentKind::Workflow
        } else {
            AgentKind::None
        })
    }

    /// Whether ready steps are handed out at all.
    pub fn opens_issues(&self) -> bool {
        self.issues || self.agent.is_some_and(|a| a != AgentKind::None)
    }
}

/// `models:`: model names handed to agents, by kind of work. Navin passes them on
/// (workflow input `model`, the Copilot assignment's `model`, the brief) and never
/// interprets them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Models {
    /// For plan mode (`/plan`, `navin mcp --mode plan`), often a cheaper model. 1 to
    /// 100 characters. Default: none (the agent's own).
    #[schemars(length(min = 1, max = 100))]
    pub plan: Option<String>,
    /// For the steps of a `/cruise` mission. 1 to 100 characters. Default: none.
    #[schemars(length(min = 1, max = 100))]
    pub dev: Option<String>,
    /// For the steps of a staged `/mission`, often the strongest model. 1 to 100
    /// characters. Default: none.
    #[schemars(length(min = 1, max = 100))]
    pub deep: Option<String>,
}

impl Models {
    /// The model for steps of a mission run in `mode`.
    pub fn for_mode(&self, mode: navin_ledger::model::MissionMode) -> Option<&str> {
        match mode {
            navin_ledger::model::MissionMode::Cruise => self.dev.as_deref(),
            navin_ledger::model::MissionMode::Staged => self.deep.as_deref(),
        }
    }
}

/// `budgets:`: when a mission retries, replans or pauses. The defaults are the ledger's
/// own, so there is one set of them; costs are in US dollars, as the ledger keeps them.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Budgets {
    /// Failed attempts of one step before a local replan. Default: 3.
    pub max_retries: u32,
    /// Replans before the mission pauses for a person. Default: 5.
    pub max_replans: u32,
    /// Progress reports in a row without progress: a replan, the next time a pause.
    /// Default: 3.
    pub max_stalls: u32,
    /// Tokens agents may spend, as they report them with `progress`; going over pauses
    /// the mission. Default: none (no cap).
    pub max_tokens: Option<u64>,
    /// US dollars agents may spend (`2.5`), as they report them with `progress`; going
    /// over pauses the mission. Default: none (no cap).
    pub max_cost_usd: Option<f64>,
}

impl Default for Budgets {
    fn default() -> Self {
        let b = navin_ledger::Budget::default();
        Self {
            max_retries: b.max_retries,
            max_replans: b.max_replans,
            max_stalls: b.max_stalls,
            max_tokens: b.max_tokens,
            max_cost_usd: b.max_cost_usd,
        }
    }
}

impl Budgets {
    /// The mission budget these settings give.
    pub fn to_budget(&self) -> navin_ledger::Budget {
        navin_ledger::Budget {
            max_retries: self.max_retries,
            max_replans: self.max_replans,
            max_stalls: self.max_stalls,
            max_tokens: self.max_tokens,
            max_cost_usd: self.max_cost_usd,
        }
    }
}

/// Why `.github/navin.yml` was not applied. `line`/`column` are 1-based and point at the
/// offending token when YAML reports one; `key` is the dotted path (`evidence.min_ci_time`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(".github/navin.yml{}: {key_part}{message}", location_text(*line, *column), key_part = key_text(key))]
pub struct RepoConfigError {
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub key: Option<String>,
    pub message: String,
}

impl RepoConfigError {
    /// The error as one line about `file`, for a copy checked before it is pushed
    /// (`navin config validate`), where the file is not necessarily `.github/navin.yml`.
    pub fn in_file(&self, file: &str) -> String {
        // serde_yaml_ng starts its message with the path it was in (`evidence: unknown
        // field`); the key already says where, so it is not repeated.
        let message = self
            .key
            .as_deref()
            .and_then(|key| {
                let (path, rest) = self.message.split_once(": ")?;
                let inside = key == path
                    || key
                        .strip_prefix(path)
                        .is_some_and(|tail| tail.starts_with(['.', '[']));
                inside.then_some(rest)
            })
            .unwrap_or(&self.message);
        format!(
            "{file}{}: {}{message}",
            location_text(self.line, self.column),
            key_text(&self.key),
        )
    }
}

fn location_text(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(" line {l} column {c}"),
        (Some(l), None) => format!(" line {l}"),
        _ => String::new(),
    }
}

fn key_text(key: &Option<String>) -> String {
    key.as_ref()
        .map(|k| format!("key `{k}`: "))
        .unwrap_or_default()
}

/// Parses and validates the whole file. Nothing partial is ever returned.
pub fn parse_repo_config(text: &str) -> Result<RepoConfig, RepoConfigError> {
    within_bounds(text)?;
    // An empty file, or one holding only comments, means "all defaults".
    let is_empty = serde_yaml_ng::from_str::<serde_yaml_ng::Value>(text)
        .map(|v| v.is_null())
        .unwrap_or(false);
    if is_empty {
        return Ok(RepoConfig::default());
    }
    let deserializer = serde_yaml_ng::Deserializer::from_str(text);
    let config: RepoConfig = serde_path_to_error::deserialize(deserializer).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        let location = inner.location();
        RepoConfigError {
            line: location.as_ref().map(serde_yaml_ng::Location::line),
            column: location.as_ref().map(serde_yaml_ng::Location::column),
            key: (path != "." && !path.is_empty()).then_some(path),
            message: strip_location(&inner.to_string()),
        }
    })?;
    validate(&config)?;
    Ok(config)
}

/// The largest `.github/navin.yml` parsed. The real ones are a few hundred bytes; the
/// file may come from anyone's pull request head, and the parser's cost grows faster
/// than the file (40 KB of nested brackets took 4 s).
pub const CONFIG_MAX_BYTES: usize = 64 * 1024;

/// The deepest nesting parsed, counting indentation levels and `[`/`{` together. The
/// deepest key of the schema is three levels down.
pub const CONFIG_MAX_DEPTH: usize = 32;

/// Refuses, before any parsing, a file too large or too deeply nested to be a config:
/// naming the limit, and the line where the nesting went past it.
fn within_bounds(text: &str) -> Result<(), RepoConfigError> {
    let refuse = |line: Option<usize>, message: String| RepoConfigError {
        line,
        column: None,
        key: None,
        message,
    };
    if text.len() > CONFIG_MAX_BYTES {
        return Err(refuse(
            None,
            format!(
                "the file is {} bytes; Navin reads a config of at most {} KiB",
                text.len(),
                CONFIG_MAX_BYTES / 1024
            ),
        ));
    }
    let mut indents: Vec<usize> = Vec::new();
    let mut flow = 0usize;
    for (n, line) in text.lines().enumerate() {
        let body = line.trim_start_matches([' ', '-']);
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        let indent = line.len() - body.len();
        if flow == 0 {
            while indents.last().is_some_and(|&i| i >= indent) {
                indents.pop();
            }
            indents.push(indent);
        }
        let mut quote: Option<char> = None;
        for c in body.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => quote = Some(c),
                (None, '#') => break,
                (None, '[' | '{') => flow += 1,
                (None, ']' | '}') => flow = flow.saturating_sub(1),
                _ => {}
            }
            if indents.len() + flow > CONFIG_MAX_DEPTH {
                return Err(refuse(
                    Some(n + 1),
                    format!("the file nests deeper than {CONFIG_MAX_DEPTH} levels; a config needs three"),
                ));
            }
        }
    }
    Ok(())
}

/// serde_yaml_ng appends " at line L column C"; we report those as fields instead.
fn strip_location(message: &str) -> String {
    match message.find(" at line ") {
        Some(idx) => message[..idx].to_owned(),
        None => message.to_owned(),
    }
}

fn validate(config: &RepoConfig) -> Result<(), RepoConfigError> {
    let semantic = |key: &str, message: String| RepoConfigError {
        line: None,
        column: None,
        key: Some(key.to_owned()),
        message,
    };
    if config.ledger_branch.trim().is_empty()
        || config.ledger_branch.starts_with('/')
        || config.ledger_branch.contains("..")
        || config.ledger_branch.contains(char::is_whitespace)
    {
        return Err(semantic(
            "ledger_branch",
            format!("`{}` is not a usable branch name", config.ledger_branch),
        ));
    }
    if config.limits.max_commands_per_comment == 0 {
        return Err(semantic(
            "limits.max_commands_per_comment",
            "must be at least 1".to_owned(),
        ));
    }
    if config.limits.max_text_bytes == 0 {
        return Err(semantic(
            "limits.max_text_bytes",
            "must be at least 1".to_owned(),
        ));
    }
    if let Some(unknown) = config.allow_on_closed.iter().find(|name| {
        !crate::command::CommandKind::ALL
            .iter()
            .any(|k| k.spec().name == name.trim_start_matches('/'))
    }) {
        return Err(semantic(
            "allow_on_closed",
            format!("`{unknown}` is not a Navin command (see `/help` for the names)"),
        ));
    }
    if let Some(class) = config
        .auto_accept
        .safe_operation_classes
        .iter()
        .find(|c| ChangeClass::NEVER_AUTO_ACCEPTED.contains(c))
    {
        return Err(semantic(
            "auto_accept.safe_operation_classes",
            format!(
                "`{}` always needs a human approval and cannot be a safe class",
                class.yaml_name()
            ),
        ));
    }
    if config.auto_accept.after_n_safe_operations == Some(0) {
        return Err(semantic(
            "auto_accept.after_n_safe_operations",
            "must be at least 1 (leave it out to turn auto-accept off)".to_owned(),
        ));
    }
    if config.approval.required_approvals == 0 {
        return Err(semantic(
            "approval.required_approvals",
            "must be at least 1".to_owned(),
        ));
    }
    if config.dispatch.agent == Some(AgentKind::Workflow) && config.dispatch.workflow.is_none() {
        return Err(semantic(
            "dispatch.agent",
            "`workflow` needs `dispatch.workflow`, the agent workflow's file name (e.g. `navin-agent.yml`)".to_owned(),
        ));
    }
    if let Some((key, _)) = [
        ("models.plan", &config.models.plan),
        ("models.dev", &config.models.dev),
        ("models.deep", &config.models.deep),
    ]
    .into_iter()
    .find(|(_, m)| {
        m.as_deref()
            .is_some_and(|m| m.trim().is_empty() || m.len() > 100 || m.contains(char::is_control))
    }) {
        return Err(semantic(
            key,
            "must be a model name (1 to 100 characters, one line)".to_owned(),
        ));
    }
    if config.plan_mode.auto_threshold == Some(0) {
        return Err(semantic(
            "plan_mode.auto_threshold",
            "must be at least 1 (leave it out to turn automatic plans off)".to_owned(),
        ));
    }
    if let Some((key, message)) = config.planner.invalid() {
        return Err(semantic(key, message));
    }
    if config.evidence.trusted_apps.is_empty() {
        return Err(semantic(
            "evidence.trusted_apps",
            "must name at least one app id, or no check run could ever count".to_owned(),
        ));
    }
    Ok(())
}

impl AutoAccept {
    /// The effective never-auto-accept set: the built-ins plus whatever config adds.
    pub fn needs_human(&self, class: ChangeClass) -> bool {
        ChangeClass::NEVER_AUTO_ACCEPTED.contains(&class)
            || self.require_approval_for.contains(&class)
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "a failing unwrap is a failing test")]
mod tests;
