//! What the CLI and the MCP server share about working in a local checkout: the working tree, its `.github/navin.yml`, and how a write's effects read.
//!
//! Both front ends sit above this module; neither reaches into the other.

use std::path::{Path, PathBuf};

use navin_ledger::ops::Checkout;
use navin_ledger::Effect;

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

/// The git config key holding a repository's ledger seal key (in `.git/config`).
pub const LEDGER_KEY_CONFIG: &str = "navin.ledgerkey";

/// The key the CLI and `navin mcp` seal ledger commits with: NAVIN_LEDGER_KEY (to
/// share one with the App or an Action writing the same ledger), else
/// `navin.ledgerKey` in the repository's own git config, created on first use. The
/// repository's config is not part of any commit, so the key never travels with a push.
pub fn ledger_key(
    path: &Path,
    env_key: Option<String>,
) -> Result<navin_ledger::store::SealKey, String> {
    use navin_ledger::store::SealKey;
    if let Some(text) = env_key.filter(|k| !k.trim().is_empty()) {
        return SealKey::from_text(&text).map_err(|e| format!("NAVIN_LEDGER_KEY: {e}"));
    }
    let repo = git2::Repository::discover(path).map_err(|e| {
        format!(
            "{} is not in a git repository: {}",
            path.display(),
            e.message()
        )
    })?;
    let mut config = repo
        .config()
        .and_then(|c| c.open_level(git2::ConfigLevel::Local))
        .map_err(|e| format!("cannot open the repository's git config: {}", e.message()))?;
    if let Ok(text) = config.get_string(LEDGER_KEY_CONFIG) {
        return SealKey::from_text(&text)
            .map_err(|e| format!("git config {LEDGER_KEY_CONFIG}: {e}"));
    }
    let text = SealKey::generate_text();
    config.set_str(LEDGER_KEY_CONFIG, &text).map_err(|e| {
        format!(
            "cannot store a new ledger key in the repository's git config ({LEDGER_KEY_CONFIG}): {}",
            e.message()
        )
    })?;
    SealKey::from_text(&text).map_err(|e| e.to_string())
}
