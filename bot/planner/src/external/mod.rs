//! Plan sources other than the built-in planner: a tool-using OpenAI-compatible chat model or a configured command, both validated like any plan.
//!
//! Both plan one commit read from git objects ([`CommitTree`]), start from
//! the built-in planner's map and ranking, and get exactly one chance to
//! fix a plan the parser rejects. What they return is a [`PlanDocument`],
//! so an invalid plan can never leave this module.

mod agent;
mod command;
mod config;
mod env;
mod error;
mod export;
mod extract;
mod http;
mod prompt;
mod summary;
mod tools;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use navin_ledger::plan::record::PlannerRun;
use navin_ledger::plan::PlanDocument;

use crate::detect::commit_tree::CommitTree;
use crate::{plan_repository, PlannerOptions};

pub use agent::AgentBudgets;
pub use config::{
    split_command, ApiKey, ExternalConfig, DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_MAX_PROMPT_BYTES,
    DEFAULT_TIMEOUT,
};
pub use env::{ENV_API_KEY, ENV_BASE_URL, ENV_COMMAND, ENV_FEEDBACK, ENV_MODEL, ENV_TIMEOUT};
pub use error::ExternalError;
pub use summary::{summarize, RepoSummary, SummaryFile};

use command::CommandSource;

/// How much of a rejected plan [`ExternalError::InvalidPlan`] keeps.
const REJECTED_EXCERPT_CHARS: usize = 2000;

/// Which external source writes the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExternalKind {
    /// `POST {NAVIN_LLM_BASE_URL}/chat/completions`.
    Http,
    /// `NAVIN_PLAN_COMMAND`, run in the repository.
    Command,
}

impl fmt::Display for ExternalKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ExternalKind::Http => "http",
            ExternalKind::Command => "command",
        })
    }
}

impl FromStr for ExternalKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "http" | "llm" | "openai" => Ok(ExternalKind::Http),
            "command" | "cmd" => Ok(ExternalKind::Command),
            other => Err(format!(
                "unknown plan source \"{other}\"; expected \"http\" or \"command\""
            )),
        }
    }
}

/// A validated plan from an external source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalPlan {
    pub document: PlanDocument,
    /// `http:<model>` or `command:<program>`.
    pub source: String,
    /// 1 when the first plan passed, 2 when it passed after feedback.
    pub attempts: u32,
    /// The tool calls and costs of a tool-using run (none for a command).
    pub run: Option<PlannerRun>,
}

/// Blocking entry point for the CLI: plans the commit at `HEAD` of the
/// repository at `repo_path` (never its working tree) with default budgets.
/// Runs its own single-threaded runtime, so it must not be called from
/// async code (use [`generate_async`] there); doing so returns
/// [`ExternalError::Runtime`] rather than panicking.
pub fn generate(
    kind: ExternalKind,
    cfg: &ExternalConfig,
    repo_path: &Path,
    request: &str,
) -> Result<ExternalPlan, ExternalError> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(ExternalError::Runtime(
            "generate() was called inside an async runtime; call generate_async() instead"
                .to_owned(),
        ));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ExternalError::Runtime(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(generate_async(kind, cfg, repo_path, request))
}

/// Async entry point: like [`generate`].
pub async fn generate_async(
    kind: ExternalKind,
    cfg: &ExternalConfig,
    repo_path: &Path,
    request: &str,
) -> Result<ExternalPlan, ExternalError> {
    let request = checked_request(kind, cfg, request)?;
    let tree = head_tree(repo_path)?;
    generate_at(kind, cfg, &AgentBudgets::default(), &tree, request).await
}

/// The commit at `HEAD` of the repository containing `path`.
pub fn head_tree(path: &Path) -> Result<CommitTree, ExternalError> {
    let root: PathBuf = match git2::Repository::discover(path) {
        Ok(repo) => repo
            .workdir()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| repo.path().to_path_buf()),
        Err(_) => {
            return Err(ExternalError::NotARepository {
                path: path.to_path_buf(),
            })
        }
    };
    CommitTree::open(&root, "HEAD").map_err(|_| ExternalError::NotARepository {
        path: path.to_path_buf(),
    })
}

/// Plans `tree` with `kind`, starting from the built-in planner's map of
/// the same commit.
pub async fn generate_at(
    kind: ExternalKind,
    cfg: &ExternalConfig,
    budgets: &AgentBudgets,
    tree: &CommitTree,
    request: &str,
) -> Result<ExternalPlan, ExternalError> {
    let request = checked_request(kind, cfg, request)?;
    let builtin = plan_repository(tree, request, &PlannerOptions::default())?;
    let summary = RepoSummary::from_output(&builtin);
    ask_source(kind, cfg, budgets, tree, request, &summary).await
}

async fn ask_source(
    kind: ExternalKind,
    cfg: &ExternalConfig,
    budgets: &AgentBudgets,
    tree: &CommitTree,
    request: &str,
    summary: &RepoSummary,
) -> Result<ExternalPlan, ExternalError> {
    match kind {
        ExternalKind::Http => agent::plan_with_tools(cfg, budgets, tree, request, summary).await,
        ExternalKind::Command => {
            let export = export::ReadOnlyExport::new(tree)?;
            let mut source = CommandSource::new(cfg, export.path(), request, summary)?;
            let result = ask_with_one_retry(&mut source).await;
            drop(export);
            result
        }
    }
}

/// A plan from whichever planner the repository chose, for the server, the
/// Action and the CLI alike.
#[derive(Debug, Clone)]
pub struct Planned {
    pub document: PlanDocument,
    /// `builtin`, `http:<model>` or `command:<program>`.
    pub source: String,
    pub run: Option<PlannerRun>,
    /// Set when the chosen planner failed and `fallback: builtin` posted the
    /// built-in plan instead: why, in words a maintainer can act on.
    pub fallback: Option<String>,
}

/// Plans `tree` with `kind` (`None` is the built-in planner). With
/// `fallback_builtin`, a failed external planner gives the built-in plan
/// and the reason instead of the error.
pub async fn plan_commit(
    kind: Option<ExternalKind>,
    cfg: &ExternalConfig,
    budgets: &AgentBudgets,
    fallback_builtin: bool,
    tree: &CommitTree,
    request: &str,
) -> Result<Planned, ExternalError> {
    let request = request.trim();
    if request.is_empty() {
        return Err(ExternalError::EmptyRequest);
    }
    let builtin = plan_repository(tree, request, &PlannerOptions::default())?;
    let builtin_doc = || {
        PlanDocument::from_plan(&builtin.plan).map_err(|e| {
            ExternalError::Runtime(format!(
                "the built-in planner produced an invalid plan ({e}); please report this"
            ))
        })
    };
    let builtin_run = |fallback: Option<String>| PlannerRun {
        attempts: 1,
        fallback,
        ..PlannerRun::new("builtin", tree.commit_id())
    };
    let Some(kind) = kind else {
        let mut planned = Planned {
            document: builtin_doc()?,
            source: "builtin".to_owned(),
            run: Some(builtin_run(None)),
            fallback: None,
        };
        planned.with_owners(tree);
        return Ok(planned);
    };
    let summary = RepoSummary::from_output(&builtin);
    let mut planned = ask_or_fall_back(
        kind,
        cfg,
        budgets,
        fallback_builtin,
        tree,
        request,
        &summary,
        builtin_doc,
        builtin_run,
    )
    .await?;
    planned.with_owners(tree);
    Ok(planned)
}

impl Planned {
    /// Names the code owners of the plan's files in its run record.
    fn with_owners(&mut self, tree: &CommitTree) {
        let Some(owners) = crate::codeowners::CodeOwners::from_source(tree) else {
            return;
        };
        let list = self
            .document
            .plan()
            .changes
            .iter()
            .map(|c| navin_ledger::plan::record::FileOwners {
                path: c.path.clone(),
                owners: owners.owners_of(&c.path).to_vec(),
            })
            .filter(|f| !f.owners.is_empty())
            .collect();
        if let Some(run) = self.run.as_mut() {
            run.owners = list;
        }
    }
}

#[allow(
    clippy::too_many_arguments,
    reason = "one call site, every argument distinct"
)]
async fn ask_or_fall_back(
    kind: ExternalKind,
    cfg: &ExternalConfig,
    budgets: &AgentBudgets,
    fallback_builtin: bool,
    tree: &CommitTree,
    request: &str,
    summary: &RepoSummary,
    builtin_doc: impl Fn() -> Result<PlanDocument, ExternalError>,
    builtin_run: impl Fn(Option<String>) -> PlannerRun,
) -> Result<Planned, ExternalError> {
    let asked = match cfg.check(kind) {
        Ok(()) => ask_source(kind, cfg, budgets, tree, request, summary).await,
        Err(e) => Err(e),
    };
    match asked {
        Ok(plan) => Ok(Planned {
            document: plan.document,
            run: plan.run.or_else(|| {
                Some(PlannerRun {
                    attempts: plan.attempts,
                    ..PlannerRun::new(plan.source.clone(), tree.commit_id())
                })
            }),
            source: plan.source,
            fallback: None,
        }),
        Err(e) if fallback_builtin => {
            let why = e.to_string();
            Ok(Planned {
                document: builtin_doc()?,
                source: "builtin".to_owned(),
                run: Some(builtin_run(Some(why.clone()))),
                fallback: Some(why),
            })
        }
        Err(e) => Err(e),
    }
}

impl ExternalConfig {
    /// Whether `kind` has what it needs, so a caller can report a missing
    /// variable before doing anything else. [`generate`] checks it too.
    pub fn check(&self, kind: ExternalKind) -> Result<(), ExternalError> {
        match kind {
            ExternalKind::Http => {
                self.chat_url()?;
                self.model_name()?;
                if !cfg!(feature = "llm") {
                    return Err(ExternalError::NotBuilt);
                }
            }
            ExternalKind::Command => {
                self.command_line()?;
            }
        }
        Ok(())
    }
}

/// Fails before any work when the request is empty or the chosen source
/// is not configured, so the user hears about a missing variable first.
fn checked_request<'a>(
    kind: ExternalKind,
    cfg: &ExternalConfig,
    request: &'a str,
) -> Result<&'a str, ExternalError> {
    cfg.check(kind)?;
    let request = request.trim();
    if request.is_empty() {
        return Err(ExternalError::EmptyRequest);
    }
    Ok(request)
}

/// Asks, validates, and on rejection asks once more with the parser's
/// error; a second rejection is [`ExternalError::InvalidPlan`].
async fn ask_with_one_retry(source: &mut CommandSource) -> Result<ExternalPlan, ExternalError> {
    let first = source.ask().await?;
    let error = match PlanDocument::parse(extract::extract_plan(&first)) {
        Ok(document) => return Ok(accepted(source, document, 1)),
        Err(error) => error,
    };
    source.add_feedback(&error);
    let second = source.ask().await?;
    let plan_text = extract::extract_plan(&second);
    match PlanDocument::parse(plan_text) {
        Ok(document) => Ok(accepted(source, document, 2)),
        Err(error) => Err(ExternalError::InvalidPlan {
            origin: source.origin(),
            attempts: 2,
            error: Box::new(error),
            output_excerpt: plan_text.chars().take(REJECTED_EXCERPT_CHARS).collect(),
        }),
    }
}

fn accepted(source: &CommandSource, document: PlanDocument, attempts: u32) -> ExternalPlan {
    ExternalPlan {
        document,
        source: source.origin(),
        attempts,
        run: None,
    }
}
