//! What the CLI and the MCP server share about working in a local checkout: the working tree, its `.github/navin.yml`, and how a write's effects read.
//!
//! Both front ends sit above this module; neither reaches into the other.

use std::path::{Path, PathBuf};

use navin_ledger::ops::{Change, ChangeFrom, Checkout};
use navin_ledger::store::Store;
use navin_ledger::{Ctx, Effect, Operation};

/// The repository's working tree: where commands run and `HEAD` is read.
pub struct WorkTree {
    repo: git2::Repository,
    root: PathBuf,
}

impl std::fmt::Debug for WorkTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkTree")
            .field("root", &self.root)
            .finish()
    }
}

impl WorkTree {
    /// The working tree `path` is in; an error names why there is none.
    pub fn discover(path: &Path) -> Result<Self, String> {
        let repo = git2::Repository::discover(path).map_err(|e| {
            format!(
                "{}: not inside a git repository ({})",
                path.display(),
                e.message()
            )
        })?;
        let root = repo
            .workdir()
            .ok_or_else(|| {
                format!(
                    "{}: a bare repository has no checkout to verify in",
                    path.display()
                )
            })?
            .to_path_buf();
        Ok(Self { repo, root })
    }

    /// The checkout's top directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The repository the checkout belongs to.
    pub fn repo(&self) -> &git2::Repository {
        &self.repo
    }

    /// `HEAD` and whether tracked or untracked (not ignored) files differ from it.
    pub fn checkout(&self) -> Result<Checkout, String> {
        let head = self
            .repo
            .head()
            .and_then(|h| h.peel_to_commit())
            .map_err(|e| {
                format!(
                    "the checkout has no commit checked out ({}); commit first",
                    e.message()
                )
            })?
            .id()
            .to_string();
        let mut opts = git2::StatusOptions::new();
        opts.include_untracked(true)
            .include_ignored(false)
            .recurse_untracked_dirs(true);
        let statuses = self
            .repo
            .statuses(Some(&mut opts))
            .map_err(|e| format!("reading the checkout's status: {e}"))?;
        let dirty = statuses.iter().any(|s| s.status() != git2::Status::CURRENT);
        Ok(Checkout { head, dirty })
    }

    /// The paths the commit `head` changes since `base` (`git diff --name-only base
    /// head`, renames as their new path): what a step's work changed. A base this
    /// repository does not have is refused by name, never read as "no change".
    pub fn change_since(&self, step: &str, base: &str, head: &str) -> Result<Change, BaseMissing> {
        let missing = || BaseMissing {
            step: step.to_owned(),
            base: base.to_owned(),
        };
        let tree = |sha: &str| {
            git2::Oid::from_str(sha)
                .and_then(|oid| self.repo.find_commit(oid))
                .and_then(|c| c.tree())
        };
        let base_tree = tree(base).map_err(|_| missing())?;
        let head_tree = tree(head).map_err(|_| missing())?;
        let diff = self
            .repo
            .diff_tree_to_tree(Some(&base_tree), Some(&head_tree), None)
            .map_err(|_| missing())?;
        let files = diff
            .deltas()
            .filter_map(|d| d.new_file().path().or_else(|| d.old_file().path()))
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        Ok(Change {
            base: base.to_owned(),
            head: head.to_owned(),
            files,
            from: ChangeFrom::Checkout,
        })
    }
}

/// A step's base commit that the checkout does not have: force-pushed away, or never
/// fetched. The change cannot be measured, so the step cannot be closed from here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{step} started from commit {base}, which this repository does not have (force-pushed away, or not fetched): fetch it (`git fetch origin {base}`), or have a person replan the step")]
pub struct BaseMissing {
    pub step: String,
    pub base: String,
}

/// `ctx` for `op` made in the checkout at `repo`, as the CLI and `navin mcp` both judge
/// it. A `start` records the checkout's `HEAD` as the step's base. A `done` is judged
/// against the checkout (an agent's recorded run counts only for the clean `HEAD` it
/// ran on), with what `HEAD` changes since the step's base (read from the ledger now;
/// the operation checks it is still the base) and `evidence.scope` from the default
/// branch. Other operations, and a directory that is no working tree with a commit, are
/// left as they are.
pub fn in_checkout(
    ctx: Ctx,
    repo: &Path,
    store: &Store,
    op: &Operation,
) -> Result<Ctx, BaseMissing> {
    let step = match op {
        Operation::Start { .. } => None,
        Operation::Done { step, .. } => Some(step),
        _ => return Ok(ctx),
    };
    let Some((tree, checkout)) = WorkTree::discover(repo)
        .ok()
        .and_then(|tree| tree.checkout().ok().map(|c| (tree, c)))
    else {
        return Ok(ctx);
    };
    let Some(step) = step else {
        return Ok(ctx.with_checkout(checkout));
    };
    let base = store
        .read()
        .ok()
        .flatten()
        .and_then(|s| s.ledger.board.task(step).and_then(|t| t.base.clone()));
    let ctx = match base {
        Some(base) => ctx.with_change(tree.change_since(step, &base, &checkout.head)?),
        None => ctx,
    };
    let ctx = match default_branch_config(repo) {
        Ok((config, _)) => ctx
            .with_scope_policy(config.evidence.scope)
            .with_fail_to_pass(config.evidence.fail_to_pass),
        Err(_) => ctx,
    };
    Ok(ctx.with_checkout(checkout))
}

/// Checks the validation command lines a mission or step is about to record against the
/// checkout at `root` (see `navin_runner::checks`): the first that can never run as
/// written, named with its reason. `what` says where the lines come from.
pub fn check_commands<'a>(
    root: &Path,
    what: &str,
    lines: impl IntoIterator<Item = &'a str>,
) -> Result<(), String> {
    for line in lines {
        navin_runner::checks::check_line(line, root).map_err(|e| format!("{what}: {e}"))?;
    }
    Ok(())
}

/// The checkout at `repo`: `HEAD` and whether the tree is dirty.
pub fn checkout(repo: &Path) -> Result<Checkout, String> {
    WorkTree::discover(repo)?.checkout()
}

/// `.github/navin.yml` of the checkout `repo` is in; defaults without one (or outside a
/// checkout). An invalid file is an error naming it.
pub fn repo_config(repo: &Path) -> Result<navin_domain::config::RepoConfig, String> {
    let Some(root) = git2::Repository::discover(repo)
        .ok()
        .and_then(|r| r.workdir().map(Path::to_path_buf))
    else {
        return Ok(Default::default());
    };
    let path = root.join(".github/navin.yml");
    match std::fs::read_to_string(&path) {
        Ok(text) => navin_domain::config::parse_repo_config(&text)
            .map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Default::default()),
        Err(e) => Err(format!("reading {}: {e}", path.display())),
    }
}

/// `.github/navin.yml` as the repository's default branch holds it, and that branch's
/// name: what `navin board verify` runs, so no edit in the checkout (or on the agent's
/// branch) can choose the command that proves a step. The default branch is
/// `origin/HEAD`, else `init.defaultBranch`, else `main` or `master`; defaults when there
/// is none or the file is not on it. An invalid file is an error naming the branch.
pub fn default_branch_config(
    repo: &Path,
) -> Result<(navin_domain::config::RepoConfig, Option<String>), String> {
    let Ok(git) = git2::Repository::discover(repo) else {
        return Ok((Default::default(), None));
    };
    let Some((branch, commit)) = default_branch(&git) else {
        return Ok((Default::default(), None));
    };
    let tree = commit
        .tree()
        .map_err(|e| format!("reading {branch}'s tree: {}", e.message()))?;
    let entry = match tree.get_path(Path::new(".github/navin.yml")) {
        Ok(entry) => entry,
        Err(e) if e.code() == git2::ErrorCode::NotFound => {
            return Ok((Default::default(), Some(branch)))
        }
        Err(e) => {
            return Err(format!(
                "reading .github/navin.yml on {branch}: {}",
                e.message()
            ))
        }
    };
    let blob = entry
        .to_object(&git)
        .and_then(|o| o.peel_to_blob())
        .map_err(|e| {
            format!(
                ".github/navin.yml on {branch} is not a file: {}",
                e.message()
            )
        })?;
    let text = std::str::from_utf8(blob.content())
        .map_err(|_| format!(".github/navin.yml on {branch} is not UTF-8 text"))?;
    navin_domain::config::parse_repo_config(text)
        .map(|config| (config, Some(branch.clone())))
        .map_err(|e| format!(".github/navin.yml on {branch}: {e}"))
}

/// The default branch's name and commit (see [`default_branch_config`]).
fn default_branch(git: &git2::Repository) -> Option<(String, git2::Commit<'_>)> {
    if let Ok(head) = git.find_reference("refs/remotes/origin/HEAD") {
        let target = head.symbolic_target().ok().flatten();
        let name = target
            .and_then(|t| t.strip_prefix("refs/remotes/"))
            .map(str::to_owned);
        if let (Some(name), Ok(commit)) = (name, head.resolve().and_then(|r| r.peel_to_commit())) {
            return Some((name, commit));
        }
    }
    let configured = git
        .config()
        .ok()
        .and_then(|c| c.get_string("init.defaultBranch").ok());
    configured
        .into_iter()
        .chain(["main".to_owned(), "master".to_owned()])
        .find_map(|name| {
            let commit = git
                .find_reference(&format!("refs/heads/{name}"))
                .and_then(|r| r.peel_to_commit())
                .ok()?;
            Some((name, commit))
        })
}

/// One line per effect of a write, for people and for JSON alike.
pub fn effect_lines(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::NowReady { steps } if !steps.is_empty() => {
                Some(format!("now ready: {}", steps.join(", ")))
            }
            Effect::Replanned { steps, .. } => {
                Some(format!("replanned: {} back to planned", steps.join(", ")))
            }
            Effect::LoopDetected { fingerprint } => {
                Some(format!("loop detected: {fingerprint} repeated"))
            }
            Effect::Paused { reason } => {
                Some(format!("mission paused ({reason}): a human must resume it"))
            }
            Effect::StepFailed {
                step,
                retry_count,
                max_retries,
            } => Some(format!(
                "{step} failed attempt {retry_count} of {max_retries}"
            )),
            _ => None,
        })
        .collect()
}
