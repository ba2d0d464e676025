//! A repository's past commits as the planner reads them: each commit's subject and the files it changed, read from git where the checkout has history.

use git2::{Oid, Repository, Sort};

/// Commits touching more files than this are sweeps (formatting, renames,
/// releases of a monorepo): they say nothing about which files go together.
const MAX_FILES_PER_COMMIT: usize = 40;

/// One past commit: its subject and the files it changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PastCommit {
    pub subject: String,
    pub files: Vec<String>,
}

/// Past commits of the planned repository, newest first, starting at the planned
/// commit itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct History {
    pub commits: Vec<PastCommit>,
}

impl History {
    /// Up to `depth` commits from `head` back (first parents only; merges are
    /// skipped, their changes are in the commits they merge). A shallow clone ends
    /// where its history does.
    pub fn from_git(repo: &Repository, head: Oid, depth: usize) -> Result<History, git2::Error> {
        let mut walk = repo.revwalk()?;
        walk.push(head)?;
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)?;
        walk.simplify_first_parent()?;
        let mut commits = Vec::new();
        for oid in walk.take(depth) {
            let Ok(commit) = oid.and_then(|o| repo.find_commit(o)) else {
                break;
            };
            if commit.parent_count() != 1 {
                continue;
            }
            // A shallow clone's oldest commit lists a parent it does not have.
            let Ok(parent) = commit.parent(0) else {
                break;
            };
            let diff =
                repo.diff_tree_to_tree(Some(&parent.tree()?), Some(&commit.tree()?), None)?;
            if diff.deltas().len() > MAX_FILES_PER_COMMIT {
                continue;
            }
            let files: Vec<String> = diff
                .deltas()
                .filter_map(|d| d.new_file().path().or_else(|| d.old_file().path()))
                .map(|p| p.to_string_lossy().replace('\\', "/"))
                .collect();
            commits.push(PastCommit {
                subject: commit.summary().ok().flatten().unwrap_or("").to_string(),
                files,
            });
        }
        Ok(History { commits })
    }
}
