//! The built-in read-only planner: maps a repository, ranks files for a request, and drafts a typed `Plan`.
//!
//! Deterministic and offline: the same files and request always give the same
//! plan, and nothing is written anywhere. Sources only expose listing and
//! bounded reads (see [`RepoSource`]), so the read-only guarantee holds by
//! construction for the in-memory source and by the walker's use of
//! read-only opens for [`LocalSource`].

mod compose;
mod detect;
pub mod external;

mod lang;
mod rank;
mod request;
mod text;

pub use detect::codeowners;

use std::path::PathBuf;

use navin_ledger::plan::Plan;
use serde::Serialize;

pub use detect::commands::{DetectedCommand, RepoCommandKind};
pub use detect::commit_tree::CommitTree;
pub use detect::history::{History, PastCommit};
pub use detect::manifests::Manifest;
pub use detect::map::{
    CiConfig, EntryPoint, Framework, HubFile, LanguageStat, Module, RepoMap, TestConvention,
};
pub use detect::scan::ScanStats;
pub use detect::source::{LocalSource, MemorySource, RepoSource, SourceEntry};
pub use detect::symbols::{definitions, Symbol};
pub use detect::toolchain::{repository_toolchain, toolchain_of};
pub use rank::RankedFile;

/// Commits of history the planner reads by default: a few hundred cover months of a
/// busy repository at a small cost (docs/plan.md §10).
pub const DEFAULT_HISTORY_DEPTH: usize = 300;

/// Limits that keep planning fast on large repositories. Defaults plan a
/// 10k-file repository in well under the 2 s target on two cores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannerOptions {
    /// Files larger than this are listed (their paths still rank) but never read.
    pub max_file_bytes: u64,
    /// Reading stops once this many bytes were read in total; manifests are read first.
    pub max_total_bytes: u64,
    /// Listing stops after this many files.
    pub max_files: usize,
    /// At most this many files proposed for edit (tests and manifests come on top).
    pub max_edits: usize,
    /// How many ranked files the output keeps.
    pub max_ranked: usize,
    /// Past commits read where the source has git history (0: none). Ranking then
    /// weighs files changed together with the best candidates and files of past
    /// commits about the same thing; measured in docs/plan.md §10.
    pub history_depth: usize,
}

impl Default for PlannerOptions {
    fn default() -> Self {
        Self {
            max_file_bytes: 256 * 1024,
            max_total_bytes: 48 * 1024 * 1024,
            max_files: 200_000,
            max_edits: 6,
            max_ranked: 25,
            history_depth: DEFAULT_HISTORY_DEPTH,
        }
    }
}

/// Everything a plan run produced: the plan itself plus the evidence behind
/// it (the repository map and the ranking) for `--json` output and review.
#[derive(Debug, Clone, Serialize)]
pub struct PlannerOutput {
    pub plan: Plan,
    pub map: RepoMap,
    pub ranked: Vec<RankedFile>,
}

impl PlannerOutput {
    /// The repository files the plan names: Proposed Changes first (in plan
    /// order), then the files Impact Isolation lists for review, without
    /// duplicates. This is the list a recall measurement compares with the
    /// files a real change touched.
    pub fn planned_files(&self) -> Vec<String> {
        compose::build::planned_files(&self.plan)
    }
}

/// Why a plan could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum PlannerError {
    #[error("repository path {0} is not a directory")]
    NotADirectory(PathBuf),
    #[error("the plan request is empty")]
    EmptyRequest,
    #[error("the repository has no files to plan against")]
    EmptyRepository,
    #[error("path {0:?} is not a repository-relative path")]
    BadPath(String),
    #[error("reading {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("git: {0}")]
    Git(String),
}

/// Maps the repository, ranks its files for `request`, and drafts the plan.
/// Reads through `source` only; never writes.
pub fn plan_repository(
    source: &dyn RepoSource,
    request: &str,
    opts: &PlannerOptions,
) -> Result<PlannerOutput, PlannerError> {
    plan_repository_with(source, request, opts, None)
}

/// [`plan_repository`] with the repository's past commits, where the checkout has
/// them: ranking also weighs files changed together with the best candidates and
/// files of past commits about the same thing. `None` reads what the source has, up
/// to [`PlannerOptions::history_depth`] commits.
pub fn plan_repository_with(
    source: &dyn RepoSource,
    request: &str,
    opts: &PlannerOptions,
    history: Option<&History>,
) -> Result<PlannerOutput, PlannerError> {
    if request.trim().is_empty() {
        return Err(PlannerError::EmptyRequest);
    }
    let request = request::Request::parse(request);
    let scanned = detect::scan::scan(source, opts)?;
    if scanned.files.is_empty() {
        return Err(PlannerError::EmptyRepository);
    }
    let graph = detect::imports::build_graph(&scanned);
    let map = detect::map::build_map(&scanned, &graph);
    let ranked_all = rank::rank(&scanned, &graph, &request);
    // History given, else what the source has (a depth-1 fetch or an export has none).
    let read = match history {
        Some(_) => None,
        None if opts.history_depth > 0 => source.history(opts.history_depth),
        None => None,
    };
    let ranked_all = match history.or(read.as_ref()) {
        Some(h) if !h.commits.is_empty() => {
            rank::history::rerank(ranked_all, h, &request, |p| scanned.exists(p))
        }
        _ => ranked_all,
    };
    let plan = compose::build::build_plan(&scanned, &map, &graph, &ranked_all, &request, opts);
    let mut ranked = ranked_all;
    ranked.truncate(opts.max_ranked);
    Ok(PlannerOutput { plan, map, ranked })
}

/// What a file is, as a recall measurement groups touched files: tests, docs,
/// changelogs and manifests (lockfiles included) are easy to guess or often
/// incidental, so source files are counted on their own too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    Test,
    Changelog,
    Doc,
    Manifest,
    Source,
}

/// Classifies a repository path by the planner's own rules (see [`FileKind`]).
pub fn file_kind(path: &str) -> FileKind {
    let name = lang::file_name(path);
    if lang::is_test_path(path) {
        FileKind::Test
    } else if compose::targets::is_changelog_name(name) {
        FileKind::Changelog
    } else if lang::is_doc_path(path) {
        FileKind::Doc
    } else if detect::scan::is_manifest_name(name)
        || (lang::is_unread_text(name) && !name.contains(".min.") && !name.ends_with(".map"))
    {
        FileKind::Manifest
    } else {
        FileKind::Source
    }
}

/// Maps a repository without a request (for `navin plan --map-only` style output).
pub fn map_repository(
    source: &dyn RepoSource,
    opts: &PlannerOptions,
) -> Result<RepoMap, PlannerError> {
    let scanned = detect::scan::scan(source, opts)?;
    let graph = detect::imports::build_graph(&scanned);
    Ok(detect::map::build_map(&scanned, &graph))
}
