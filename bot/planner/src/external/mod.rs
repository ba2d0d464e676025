//! Plan sources other than the built-in planner: an OpenAI-compatible chat endpoint or a configured command, both validated like any plan.
//!
//! Both get the request and a bounded summary of the repository from the
//! built-in planner's read-only map, and both get exactly one chance to fix
//! a plan the parser rejects. What they return is a [`PlanDocument`], so an
//! invalid plan can never leave this module.

mod command;
mod config;
mod error;
mod extract;
mod http;
mod prompt;
mod summary;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use navin_ledger::plan::{PlanDocument, PlanError};

pub use config::{
    split_command, ApiKey, ExternalConfig, DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_MAX_PROMPT_BYTES,
    DEFAULT_TIMEOUT, ENV_API_KEY, ENV_BASE_URL, ENV_COMMAND, ENV_FEEDBACK, ENV_MODEL, ENV_TIMEOUT,
};
pub use error::ExternalError;
pub use summary::{summarize, RepoSummary, SummaryFile};

use command::CommandSource;
use http::HttpSource;

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
}

/// Blocking entry point for the CLI: maps `repo_path`, asks the source, and
/// validates. Runs its own single-threaded runtime, so it must not be
/// called from async code (use [`generate_async`] there); doing so returns
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

/// Async entry point (for the server): like [`generate`], with the
/// repository scan moved to the blocking pool.
pub async fn generate_async(
    kind: ExternalKind,
    cfg: &ExternalConfig,
    repo_path: &Path,
    request: &str,
) -> Result<ExternalPlan, ExternalError> {
    let request = checked_request(kind, cfg, request)?;
    let path: PathBuf = repo_path.to_path_buf();
    let owned_request = request.to_owned();
    let summary = tokio::task::spawn_blocking(move || summarize(&path, &owned_request))
        .await
        .map_err(|e| ExternalError::Runtime(format!("the repository scan stopped: {e}")))??;
    generate_with_summary(kind, cfg, repo_path, request, &summary).await
}

/// For callers that already mapped the repository (the server maps through
/// the GitHub API with a `MemorySource`): `workdir` is only where a plan
/// command runs.
pub async fn generate_with_summary(
    kind: ExternalKind,
    cfg: &ExternalConfig,
    workdir: &Path,
    request: &str,
    summary: &RepoSummary,
) -> Result<ExternalPlan, ExternalError> {
    let request = checked_request(kind, cfg, request)?;
    let mut source = match kind {
        ExternalKind::Http => Source::Http(HttpSource::new(
            cfg,
            prompt::build(request, summary, cfg.max_prompt_bytes),
        )?),
        ExternalKind::Command => {
            Source::Command(CommandSource::new(cfg, workdir, request, summary)?)
        }
    };
    ask_with_one_retry(&mut source).await
}

impl ExternalConfig {
    /// Whether `kind` has what it needs, so a caller can report a missing
    /// variable before doing anything else. [`generate`] checks it too.
    pub fn check(&self, kind: ExternalKind) -> Result<(), ExternalError> {
        match kind {
            ExternalKind::Http => {
                self.chat_url()?;
                self.model_name()?;
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

#[derive(Debug)]
enum Source {
    Http(HttpSource),
    Command(CommandSource),
}

impl Source {
    fn origin(&self) -> String {
        match self {
            Source::Http(s) => s.origin(),
            Source::Command(s) => s.origin(),
        }
    }

    async fn ask(&mut self) -> Result<String, ExternalError> {
        match self {
            Source::Http(s) => s.ask().await,
            Source::Command(s) => s.ask().await,
        }
    }

    fn add_feedback(&mut self, error: &PlanError) {
        match self {
            Source::Http(s) => s.add_feedback(error),
            Source::Command(s) => s.add_feedback(error),
        }
    }
}

/// Asks, validates, and on rejection asks once more with the parser's
/// error; a second rejection is [`ExternalError::InvalidPlan`].
async fn ask_with_one_retry(source: &mut Source) -> Result<ExternalPlan, ExternalError> {
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

fn accepted(source: &Source, document: PlanDocument, attempts: u32) -> ExternalPlan {
    ExternalPlan {
        document,
        source: source.origin(),
        attempts,
    }
}
